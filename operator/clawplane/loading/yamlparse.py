"""YAML text → plain Python documents plus positions, with the safety checks a loader needs.

We compose YAML nodes (with ruamel's C parser when it is installed) and build the
values ourselves, so that every key and value keeps its line and column, duplicate
keys are caught with both places, custom tags are refused, and alias expansion is
bounded before anything large is built (an alias bomb costs only the count).

Depth and size are checked twice: once on the event stream before anything is composed
(ruamel's C composer recurses in C and crashes the process at ~25,000 levels, libyaml's
scanner slows down quadratically with flow depth, and a flat 4 MB list composes into
about 2 million nodes), and once on the composed nodes with aliases expanded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from io import StringIO
from itertools import chain
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    ScalarEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from clawplane.loading.positions import PathT, Positions

try:  # the C parser is ~10x faster; the pure one behaves the same
    from ruamel.yaml.cyaml import CSafeLoader as _Loader

    _C_LOADER = True  # reader errors give UTF-8 byte offsets
except ImportError:  # pragma: no cover - depends on the platform's wheels
    from ruamel.yaml.loader import SafeLoader as _Loader  # type: ignore[assignment]

    _C_LOADER = False  # reader errors give character offsets

MAX_NODES_PER_DOCUMENT = 200_000
# Collections nested in collections; resources need about ten. Keeps every recursion
# (the composer's, ours, pydantic's) far from Python's recursion limit.
MAX_DEPTH = 100

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
    oversized = _prescan(text)
    loader = _Loader(StringIO(text))
    docs: list[ParsedDocument] = []
    composed = 0
    try:
        while loader.check_node():
            if oversized is not None and composed == oversized[0]:
                raise oversized[1]
            composed += 1
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
    except ReaderError as exc:
        raise _reader_problem(exc, text) from None
    except YAMLError as exc:
        raise YamlProblem("yaml.syntax", f"invalid YAML: {exc}", 0, 0) from None
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose is not None:
            dispose()
    return docs


def _prescan(text: str) -> tuple[int, YamlProblem] | None:
    """The first document nested deeper than ``MAX_DEPTH`` or bigger than the node limit.

    Streams events without composing and stops at the first such document, so hostile
    input costs no more than the limits. Returns its 0-based index and the problem to
    report when the composer gets there (earlier documents' problems come first). Syntax
    errors are left to the composer, so they read exactly as without this pass.
    """
    loader = _Loader(StringIO(text))
    get_event = loader.get_event  # None after the end of the stream
    document = -1
    depth = nodes = 0
    root: Any = None  # the mark of the document's first node
    try:
        while (event := get_event()) is not None:
            if isinstance(event, ScalarEvent | AliasEvent):
                nodes += 1
            elif isinstance(event, CollectionStartEvent):
                nodes += 1
                depth += 1
                if depth > MAX_DEPTH:
                    return document, _too_deep(event.start_mark.line + 1, event.start_mark.column + 1)
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
                continue
            elif isinstance(event, DocumentStartEvent):
                document += 1
                depth = nodes = 0
                root = None
                continue
            else:
                continue
            if root is None:
                root = event.start_mark
            if nodes > MAX_NODES_PER_DOCUMENT:
                return document, YamlProblem(
                    "yaml.too-large",
                    f"document has more than {MAX_NODES_PER_DOCUMENT} nodes",
                    root.line + 1,
                    root.column + 1,
                    "split it into smaller files; clawplane resources are small",
                )
    except YAMLError:
        return None
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose is not None:
            dispose()
    return None


def _too_deep(line: int, column: int) -> YamlProblem:
    return YamlProblem(
        "yaml.too-deep",
        f"YAML is nested more than {MAX_DEPTH} levels deep",
        line,
        column,
        "flatten the structure; clawplane resources nest only a few levels deep",
    )


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


def _reader_problem(exc: ReaderError, text: str) -> YamlProblem:
    """A character YAML does not allow (control characters, U+FFFE, ...), at its position."""
    offset = int(exc.position)
    if _C_LOADER:
        offset = len(text.encode("utf-8")[:offset].decode("utf-8", errors="ignore"))
    before = text[:offset]
    line = before.count("\n") + 1
    column = offset - (before.rfind("\n") + 1) + 1
    char = exc.character
    code = ord(char) if isinstance(char, str) else int(char)
    return YamlProblem(
        "yaml.syntax",
        f"invalid YAML: unacceptable character #x{code:04x}: {exc.reason}",
        line,
        column,
        "remove the character, or write it as an escape in a double-quoted string",
    )


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
    """Count nodes and nesting as they would be after alias expansion, without expanding them."""
    # collection id -> (nodes, collection height) of its subtree, aliases expanded
    measured: dict[int, tuple[int, int]] = {}
    on_stack: set[int] = set()

    def measure(node: MappingNode | SequenceNode, level: int) -> tuple[int, int]:
        # ``level``: collections from the root down to ``node`` (the root collection is 1).
        if level > MAX_DEPTH:
            raise _too_deep(*_pos(node))
        key = id(node)
        on_stack.add(key)
        children = node.value if isinstance(node, SequenceNode) else chain.from_iterable(node.value)
        total, height = 1, 0
        for child in children:
            if isinstance(child, ScalarNode):
                total += 1
                continue
            sub = measured.get(id(child))
            if sub is None:
                if id(child) in on_stack:
                    line, col = _pos(child)
                    raise YamlProblem(
                        "yaml.recursive-alias",
                        "recursive YAML alias",
                        line,
                        col,
                        "remove the alias that refers to its own ancestor",
                    )
                sub = measure(child, level + 1)
            elif level + sub[1] > MAX_DEPTH:  # an alias whose target is deep in itself
                raise _too_deep(*_pos(node))
            total += sub[0]
            height = max(height, sub[1])
            if total > MAX_NODES_PER_DOCUMENT:
                break
        on_stack.discard(key)
        measured[key] = (total, height + 1)
        if total > MAX_NODES_PER_DOCUMENT:
            line, col = _pos(node)
            raise YamlProblem(
                "yaml.too-large",
                f"document expands to more than {MAX_NODES_PER_DOCUMENT} nodes (alias bomb?)",
                line,
                col,
                "remove repeated aliases; clawplane resources are small",
            )
        return total, height + 1

    if isinstance(root, MappingNode | SequenceNode):
        measure(root, 1)


class _Builder:
    def __init__(self) -> None:
        self.positions = Positions()

    def build(self, node: Node, path: PathT) -> Any:
        self.positions.values[path] = _pos(node)
        if isinstance(node, MappingNode):
            if node.tag != _TAG + "map":
                raise _tag_problem(node)
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _TAG + "seq":
                raise _tag_problem(node)
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
    raise _tag_problem(node)


def _tag_problem(node: Node) -> YamlProblem:
    line, col = _pos(node)
    return YamlProblem(
        "yaml.tag",
        f"unsupported YAML tag {node.tag!r}",
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
