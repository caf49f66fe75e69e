"""Composing a YAML frontmatter block into nodes, with errors placed where OpenClaw's parser puts them.

OpenClaw parses SKILL.md frontmatter with ``yaml`` (eemeli, YAML 1.2). We compose
with ruamel (its libyaml-based C parser when installed, the pure one otherwise)
and leave every untagged scalar unresolved, so that ``yamlvalues`` applies the
1.2 core schema itself. Where libyaml (YAML 1.1) is stricter than YAML 1.2 (line
separators, control characters, redefined anchors) the block is adjusted or the
pure parser takes over. Errors carry the line and column that OpenClaw's
recovery step needs.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import BaseResolver, VersionedResolver
from ruamel.yaml.tag import Tag

__all__ = ["IMPLICIT_TAG", "YamlIssue", "compose_block"]

IMPLICIT_TAG = "?implicit"
"""The tag untagged scalars get, so that the core schema can be applied later."""


class YamlIssue(Exception):
    """A YAML problem: an eemeli-style code, a message and a 0-based position (or -1)."""

    def __init__(self, code: str, message: str, line: int = -1, column: int = -1) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.line = line
        self.column = column


class _Resolver(BaseResolver):
    """Leaves every untagged scalar unresolved, so that we apply the core schema ourselves."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """``IMPLICIT_TAG`` for untagged scalars; the defaults for collections."""
        if kind is ScalarNode:
            return IMPLICIT_TAG
        return super().resolve(kind, value, implicit)


def _c_composer() -> Callable[[str], Any] | None:
    """ruamel's C (libyaml) parser with our resolver, when the extension is installed."""
    try:
        from ruamel.yaml import cyaml
    except ImportError:  # pragma: no cover - depends on the platform's wheels
        return None
    parser: Any = getattr(cyaml, "CParser", None)
    if parser is None:  # pragma: no cover
        return None

    class _CComposer(parser, _Resolver):  # type: ignore[misc]
        def __init__(self, text: str) -> None:
            parser.__init__(self, text)
            _Resolver.__init__(self)

    return _CComposer


_C_COMPOSER = _c_composer()  # ~15x faster than the pure parser; same documents accepted here


# libyaml (YAML 1.1) refuses a ":" inside a plain scalar in a flow collection
# (``[http://x]``, ``{a:b}``) and a lone ``:`` or ``?`` there; YAML 1.2 reads them.
_FLOW_1_1_LIMITS = (
    "found unexpected ':'",
    "did not find expected node content",
    "did not find expected ',' or ']'",
    "did not find expected ',' or '}'",
)


def _compose(text: str) -> Node | None:
    if _C_COMPOSER is not None:
        try:
            node: Node | None = _C_COMPOSER(text).get_single_node()
            return node
        except MarkedYAMLError as exc:
            message = f"{exc.context} {exc.problem}"
            if any(limit in message for limit in _FLOW_1_1_LIMITS):
                return _compose_flow_1_2(text, exc)
            # YAML 1.2 lets an anchor be redefined (later wins); libyaml refuses.
            if "duplicate anchor" not in message:
                raise
    return _compose_pure(text)


def _compose_flow_1_2(text: str, refusal: MarkedYAMLError) -> Node | None:
    """The pure parser's reading of flow text libyaml refused, where it agrees with ``yaml``."""
    try:
        node = _compose_pure(text)
    except YAMLError:
        raise refusal from None
    # ``[a:]`` and ``[:, x]`` are one-pair mappings to ``yaml`` but strings to ruamel: keep
    # refusing those rather than giving a different value.
    if node is not None and any(scalar.value.endswith(":") for scalar in _flow_plain_scalars(node)):
        raise refusal
    return node


def _flow_plain_scalars(root: Node) -> Iterator[ScalarNode]:
    """The plain scalars inside flow collections."""
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, in_flow = stack.pop()
        if isinstance(node, ScalarNode):
            if in_flow and not node.style:
                yield node
            continue
        flow = in_flow or bool(getattr(node, "flow_style", False))
        if isinstance(node, MappingNode):
            stack.extend((item, flow) for pair in node.value for item in pair)
        elif isinstance(node, SequenceNode):
            stack.extend((item, flow) for item in node.value)


class _PureResolver(VersionedResolver):
    """The pure parser's resolver, leaving untagged scalars to us like ``_Resolver``."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """As ``_Resolver.resolve``, in the ``Tag`` objects the pure composer needs."""
        if kind is ScalarNode:
            return Tag(suffix=IMPLICIT_TAG)
        return super().resolve(kind, value, implicit)


def _compose_pure(text: str) -> Node | None:
    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = _PureResolver
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns about the reused anchor
        pure: Node | None = yaml.compose(text)
    return pure


# libyaml (YAML 1.1) breaks lines at NEL, LS and PS and refuses control characters, BOMs
# and U+FFFE/U+FFFF inside a document; OpenClaw's YAML 1.2 parser reads them all as ordinary
# characters. They are swapped for private-use stand-ins while libyaml reads the block.
_AWKWARD = "".join(
    chr(c)
    for c in (
        *range(0x00, 0x09),
        0x0B,
        0x0C,
        *range(0x0E, 0x20),
        *range(0x7F, 0xA0),
        0x2028,
        0x2029,
        0xFEFF,
        0xFFFE,
        0xFFFF,
    )
)
_STAND_INS = "".join(chr(0xF700 + i) for i in range(len(_AWKWARD)))
_HIDE = str.maketrans(_AWKWARD, _STAND_INS)
_SHOW = str.maketrans(_STAND_INS, _AWKWARD)
_AWKWARD_RE = re.compile(f"[{re.escape(_AWKWARD)}]")
_STAND_IN_RE = re.compile(f"[{_STAND_INS[0]}-{_STAND_INS[-1]}]")


def compose_block(block: str) -> Node | None:
    """The block's root node (``None`` for an empty or comment-only block); raises ``YamlIssue``."""
    hide = bool(_AWKWARD_RE.search(block)) and not _STAND_IN_RE.search(block)
    try:
        node = _compose(block.translate(_HIDE) if hide else block)
        if node is not None and ("[" in block or "{" in block):
            _refuse_flow_dashes(node, block)
        if hide and node is not None:
            _show_breaks(node)
        return node
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        return _raise(_code_for(message), message or str(exc), mark)
    except YAMLError as exc:
        raise YamlIssue("YAML_EXCEPTION", str(exc)) from None


def _refuse_flow_dashes(root: Node, block: str) -> None:
    """Raise where a lone ``-`` in a flow collection is not a key: ``yaml`` reads a block sequence.

    libyaml and ruamel read ``[-, x]`` or ``{a: -}`` as the string ``-``; ``yaml`` refuses
    them (``{-: x}``, a key, it accepts).
    """
    for scalar in _flow_plain_scalars(root):
        mark = scalar.end_mark
        if scalar.value == "-" and not block[mark.index :].lstrip(" ").startswith(":"):
            raise YamlIssue(
                "BLOCK_IN_FLOW",
                "Block collections are not allowed within flow collections",
                mark.line,
                mark.column,
            )


def _show_breaks(root: Node) -> None:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            node.value = node.value.translate(_SHOW)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, MappingNode):
            stack.extend(item for pair in node.value for item in pair)


def _raise(code: str, message: str, mark: Any) -> Node | None:
    line = getattr(mark, "line", -1) if mark is not None else -1
    column = getattr(mark, "column", -1) if mark is not None else -1
    raise YamlIssue(code, message, line, column)


def _code_for(message: str) -> str:
    """The eemeli error code for the libyaml messages whose code OpenClaw's recovery reads."""
    if "mapping values are not allowed" in message:
        return "BLOCK_AS_IMPLICIT_KEY"
    if "undefined alias" in message:
        return "YAML_EXCEPTION"
    return "YAML_SYNTAX"
