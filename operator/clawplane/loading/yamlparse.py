"""YAML text → plain Python documents plus positions, with the safety checks a loader needs.

We compose YAML nodes (with ruamel's C parser when it is installed) and build the
values ourselves, so that every key and value keeps its line and column, duplicate
keys are caught with both places, custom tags are refused, and alias expansion is
bounded before anything large is built (an alias bomb costs only the count).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from io import StringIO
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clawplane.loading.positions import PathT, Positions

try:  # the C parser is ~10x faster; the pure one behaves the same
    from ruamel.yaml.cyaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the platform's wheels
    from ruamel.yaml.loader import SafeLoader as _Loader  # type: ignore[assignment]

MAX_NODES_PER_DOCUMENT = 200_000

_TAG = "tag:yaml.org,2002:"
_INT_RE = re.compile(r"^[-+]?(0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+)$")


class YamlProblem(Exception):
    """A problem in the YAML text itself, with its 1-based position."""

    def __init__(self, code: str, message: str, line: int, column: int, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint


@dataclass(slots=True)
class ParsedDocument:
    """One YAML document: its value, where each part came from, and its first line."""

    data: Any
    positions: Positions
    line: int
    index: int


def parse_documents(text: str) -> list[ParsedDocument]:
    """Parse every document of ``text``; raises ``YamlProblem`` on the first syntax problem."""
    loader = _Loader(StringIO(text))
    docs: list[ParsedDocument] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _check_size(node)
            builder = _Builder()
            data = builder.build(node, ())
            line, _ = _pos(node)
            docs.append(ParsedDocument(data, builder.positions, line, len(docs)))
    except MarkedYAMLError as exc:
        raise _syntax_problem(exc, text) from None
    except YAMLError as exc:
        raise YamlProblem("yaml.syntax", f"invalid YAML: {exc}", 0, 0) from None
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose is not None:
            dispose()
    return docs


def _syntax_problem(exc: MarkedYAMLError, text: str) -> YamlProblem:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
    problem = (exc.problem or "invalid YAML").strip()
    context = (exc.context or "").strip()
    message = f"invalid YAML: {context}: {problem}" if context else f"invalid YAML: {problem}"
    if context and exc.context_mark is not None:
        message += f" (started at line {exc.context_mark.line + 1})"
    lines = text.splitlines()
    offending = lines[line - 1][col - 1 : col] if 0 < line <= len(lines) else ""
    return YamlProblem("yaml.syntax", message, line, col, _syntax_hint(problem + " " + context, offending))


def _syntax_hint(problem: str, offending: str) -> str:
    if offending == "\t" or "\\t" in problem:
        return "YAML indentation must use spaces, not tabs"
    if "quoted" in problem or "quote" in problem:
        return "close the quoted string on the same line, or use a block scalar (|)"
    if "could not find expected ':'" in problem or "mapping values" in problem:
        return "check the indentation and that every key is followed by ': '"
    return "fix the YAML syntax at this position"


def _pos(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1)


def _check_size(root: Node) -> None:
    """Count nodes as they would be after alias expansion, without expanding them."""
    sizes: dict[int, int] = {}
    on_stack: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in on_stack:
            line, col = _pos(node)
            raise YamlProblem(
                "yaml.recursive-alias",
                "recursive YAML alias",
                line,
                col,
                "remove the alias that refers to its own ancestor",
            )
        on_stack.add(key)
        total = 1
        if isinstance(node, MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
                if total > MAX_NODES_PER_DOCUMENT:
                    break
        elif isinstance(node, SequenceNode):
            for item in node.value:
                total += size(item)
                if total > MAX_NODES_PER_DOCUMENT:
                    break
        on_stack.discard(key)
        sizes[key] = total
        if total > MAX_NODES_PER_DOCUMENT:
            line, col = _pos(node)
            raise YamlProblem(
                "yaml.too-large",
                f"document expands to more than {MAX_NODES_PER_DOCUMENT} nodes (alias bomb?)",
                line,
                col,
                "remove repeated aliases; clawplane resources are small",
            )
        return total

    size(root)


class _Builder:
    def __init__(self) -> None:
        self.positions = Positions()

    def build(self, node: Node, path: PathT) -> Any:
        self.positions.values[path] = _pos(node)
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, ScalarNode)
        return _scalar(node)

    def _mapping(self, node: MappingNode, path: PathT) -> dict[str, Any]:
        out: dict[str, Any] = {}
        seen: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                line, col = _pos(key_node)
                raise YamlProblem(
                    "yaml.merge-key",
                    "YAML merge keys (<<) are not supported",
                    line,
                    col,
                    "write the keys out; resources should be explicit",
                )
            if not isinstance(key_node, ScalarNode):
                line, col = _pos(key_node)
                raise YamlProblem(
                    "yaml.complex-key", "mapping keys must be plain scalars", line, col, "use a string key"
                )
            key = str(key_node.value)
            kpos = _pos(key_node)
            if key in seen:
                first = seen[key]
                raise YamlProblem(
                    "yaml.duplicate-key",
                    f"duplicate key {key!r} (first defined at line {first[0]})",
                    kpos[0],
                    kpos[1],
                    "remove one of the two; YAML keeps only one of them",
                )
            seen[key] = kpos
            self.positions.keys[(*path, key)] = kpos
            out[key] = self.build(value_node, (*path, key))
        return out


def _scalar(node: ScalarNode) -> Any:
    tag, value = node.tag, node.value
    if tag == _TAG + "str" or tag == "!":
        return value
    if tag == _TAG + "null":
        return None
    if tag == _TAG + "bool":
        return value.lower() == "true"
    if tag == _TAG + "int":
        return _int(value)
    if tag == _TAG + "float":
        return _float(value)
    if tag in (_TAG + "timestamp", _TAG + "binary"):
        return value
    line, col = _pos(node)
    raise YamlProblem(
        "yaml.tag",
        f"unsupported YAML tag {tag!r}",
        line,
        col,
        "remove the tag; clawplane accepts plain YAML values only",
    )


def _int(text: str) -> int | str:
    clean = text.replace("_", "")
    if not _INT_RE.match(clean):
        return text
    sign = -1 if clean.startswith("-") else 1
    digits = clean.lstrip("+-")
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    return sign * int(digits)


def _float(text: str) -> float | str:
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return math.inf
    if lowered == "-.inf":
        return -math.inf
    if lowered == ".nan":
        return math.nan
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return text
