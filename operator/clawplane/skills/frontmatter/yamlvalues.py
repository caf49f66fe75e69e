"""YAML nodes → the values the ``yaml`` package's ``toJS`` gives under the YAML 1.2 core schema.

``yes``/``on`` stay strings, ``1.0`` is the number 1 (every number a JavaScript
double), there are no timestamps, map keys must be unique (compared like
JavaScript ``===``), keys become property names the way ``toJS`` spells them,
and alias expansion is bounded.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clawplane.jscompat import js_string, json_stringify
from clawplane.skills.frontmatter.yamlcore import IMPLICIT_TAG, YamlIssue

__all__ = ["node_to_js", "resolve_plain"]

_TAG = "tag:yaml.org,2002:"
_MAX_NODES = 10_000

_NULL_RE = re.compile(r"^(?:~|[Nn]ull|NULL)?$")
_BOOL_RE = re.compile(r"^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$")
_OCT_RE = re.compile(r"^0o[0-7]+$")
_INT_RE = re.compile(r"^[-+]?[0-9]+$")
_HEX_RE = re.compile(r"^0x[0-9a-fA-F]+$")
_NAN_RE = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$")
_EXP_RE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$")
_NON_STRING_STARTS = frozenset("~NnTtFf0123456789+-.")


def node_to_js(node: Node) -> Any:
    """The value ``doc.toJS()`` gives for ``node`` (dicts keep JS key order rules at stringify)."""
    return _Builder().build(node)


class _Builder:
    """Turns composed nodes into values, bounding alias expansion like ``yaml``'s guard."""

    def __init__(self) -> None:
        self._budget = _MAX_NODES
        self._active: set[int] = set()

    def build(self, node: Node) -> Any:
        """The value of ``node``."""
        self._budget -= 1
        if self._budget < 0:
            raise YamlIssue("YAML_EXCEPTION", "Excessive alias count indicates a resource exhaustion attack")
        if isinstance(node, ScalarNode):
            return _scalar(node)
        if id(node) in self._active:
            raise YamlIssue("YAML_EXCEPTION", "recursive alias")
        self._active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.build(item) for item in node.value]
            if isinstance(node, MappingNode):
                return self._mapping(node)
            raise YamlIssue("YAML_EXCEPTION", f"unexpected node {type(node).__name__}")
        finally:
            self._active.discard(id(node))

    def _mapping(self, node: MappingNode) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: list[tuple[str, Any]] = []
        for key_node, value_node in node.value:
            key = self.build(key_node)
            if isinstance(key_node, ScalarNode):
                identity = (type(key).__name__, key)
                if any(_same_key(identity, other) for other in seen):
                    mark = key_node.start_mark
                    raise YamlIssue("DUPLICATE_KEY", "Map keys must be unique", mark.line, mark.column)
                seen.append(identity)
            result[_key_string(key)] = self.build(value_node)
        return result


def _same_key(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    # `yaml` compares scalar keys with ===, so NaN never equals itself and 1 !== "1".
    if a[0] != b[0]:
        return False
    if isinstance(a[1], float) and math.isnan(a[1]):
        return False
    return bool(a[1] == b[1])


def _key_string(key: Any) -> str:
    """How ``toJS`` turns a key into an object property name."""
    if key is None:
        return ""
    if isinstance(key, dict | list):
        return json_stringify(key)
    return js_string(key)


def _scalar(node: ScalarNode) -> Any:
    value: str = node.value
    tag = _tag_text(node)
    if tag == IMPLICIT_TAG:
        return resolve_plain(value) if not node.style else value
    if tag == _TAG + "str":
        return value
    resolved = resolve_plain(value)
    expected = {"null": type(None), "bool": bool, "int": float, "float": float}.get(tag.removeprefix(_TAG))
    if expected is not None and isinstance(resolved, expected):
        return resolved
    return value  # unknown or mismatched tags resolve as strings (yaml only warns)


def _tag_text(node: Node) -> str:
    """The node's tag without ruamel's per-access URI decoding (a hot path)."""
    ctag = node.ctag
    if ctag.handle is None:
        return str(ctag.suffix)
    return str(ctag)


def resolve_plain(value: str) -> Any:
    """A plain scalar under the YAML 1.2 core schema, numbers as JavaScript doubles."""
    if value and value[0] not in _NON_STRING_STARTS:
        return value  # every null, bool and number spelling starts with one of those
    if _NULL_RE.match(value):
        return None
    if _BOOL_RE.match(value):
        return value[0] in "tT"
    if _OCT_RE.match(value):
        return _double(int(value[2:], 8))
    if _INT_RE.match(value):
        # Past a few hundred digits the double is infinite anyway; int() would refuse 4300+.
        return _double(int(value)) if len(value) < 400 else (-math.inf if value[0] == "-" else math.inf)
    if _HEX_RE.match(value):
        return _double(int(value[2:], 16))
    if _NAN_RE.match(value):
        if value[-3:].lower() == "nan":
            return math.nan
        return -math.inf if value[0] == "-" else math.inf
    if _EXP_RE.match(value) or _FLOAT_RE.match(value):
        return float(value)
    return value


def _double(value: int) -> float:
    """``parseInt`` result: a double, ``Infinity`` past the largest one."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
