"""Resource documents → YAML text that clawplane's own loader reads back unchanged."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML

from clawplane.loading.yamlparse import YamlProblem, parse_documents


def dump_documents(documents: Sequence[dict[str, Any]], *, header: str = "") -> str:
    """``documents`` as a YAML stream (block style, or JSON style where only that reads back unchanged)."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    parts: list[str] = []
    for doc in documents:
        buffer = io.StringIO()
        yaml.dump(doc, buffer)
        text = buffer.getvalue()
        if not _reads_back(text, doc):
            # JSON is YAML too, and its scalars leave the resolver nothing to guess.
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        parts.append(text)
    return header + "---\n".join(parts)


def _reads_back(text: str, doc: dict[str, Any]) -> bool:
    try:
        parsed = parse_documents(text)
    except YamlProblem:
        return False
    return len(parsed) == 1 and parsed[0].data == doc
