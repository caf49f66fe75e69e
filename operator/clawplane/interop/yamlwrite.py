"""Resource documents → YAML text that clawplane's loader, and any YAML 1.1 reader, read back unchanged.

clawplane reads YAML 1.2, where ``on``, ``off``, ``yes``, ``no``, ``y`` and ``n`` are plain
strings and ruamel writes them unquoted. PyYAML and many Kubernetes tools read YAML 1.1, where
those (and ``010``, ``1:20``, ``1_000``, ``2001-12-14``, ``<<`` …) are booleans, numbers,
timestamps or merge keys. Every key and string value that a 1.1 resolver would read as
anything but a string is therefore written double-quoted.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from clawplane.loading import YamlProblem, parse_documents

_STR_TAG = "tag:yaml.org,2002:str"
_YAML_1_1 = VersionedResolver(version=(1, 1))


def dump_documents(documents: Sequence[dict[str, Any]], *, header: str = "") -> str:
    """``documents`` as a YAML stream (block style, or JSON style where only that reads back unchanged)."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    parts: list[str] = []
    for doc in documents:
        buffer = io.StringIO()
        yaml.dump(quote_for_yaml_1_1(doc), buffer)
        text = buffer.getvalue()
        if not _reads_back(text, doc):
            # JSON is YAML too, and its scalars leave the resolver nothing to guess.
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        parts.append(text)
    return header + "---\n".join(parts)


def reads_differently_in_yaml_1_1(text: str) -> bool:
    """True when a YAML 1.1 reader would take the plain scalar ``text`` for something other than a string."""
    tag: str = _YAML_1_1.resolve(ScalarNode, text, (True, False))
    return tag != _STR_TAG


def quote_for_yaml_1_1(value: Any) -> Any:
    """A copy of ``value`` whose ambiguous keys and strings are marked for double quotes."""
    if isinstance(value, dict):
        return {_quoted(k) if isinstance(k, str) else k: quote_for_yaml_1_1(v) for k, v in value.items()}
    if isinstance(value, list):
        return [quote_for_yaml_1_1(v) for v in value]
    if isinstance(value, str):
        return _quoted(value)
    return value


def _quoted(text: str) -> str:
    return DoubleQuotedScalarString(text) if reads_differently_in_yaml_1_1(text) else text


def _reads_back(text: str, doc: dict[str, Any]) -> bool:
    try:
        parsed = parse_documents(text)
    except YamlProblem:
        return False
    return len(parsed) == 1 and parsed[0].data == doc
