"""YAML text → plain Python documents plus positions, with the safety checks a loader needs.

One pass over ruamel's event stream (its C parser when installed) builds the values
ourselves, so that every key and value keeps its line and column, duplicate keys are
caught with both places, custom tags are refused, and alias expansion is bounded before
anything large is built (an alias bomb costs only the count).

Depth and node count are checked on every event, before anything deeper is read: ruamel's
C composer would recurse in C and crash the process at ~25,000 levels, libyaml's scanner
slows down quadratically with flow depth, and a flat 4 MB list composes into about 2
million nodes; none of them gets to see more than the limits. Aliases are counted as if
expanded, so repeated aliases cannot multiply a document past the node limit either.

Which problem a document reports is fixed, whatever order its parts come in: a depth or
node-count limit wherever it is hit, then a syntax error or an alias/anchor problem of
the composer (whichever comes first), then an alias expansion problem, then a problem in
the values (tags, merge, complex or duplicate keys); within each, the first in document
order. Earlier documents report first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from io import StringIO
from typing import Any

from ruamel.yaml.composer import ComposerError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from clawplane.loading.positions import PathT, Positions
from clawplane.loading.yamlproblems import (
    Pos,
    YamlProblem,
    key_problem,
    syntax_problem,
    tag_problem,
    too_deep,
    too_large,
)
from clawplane.loading.yamlscalars import yaml_float, yaml_int

# YamlProblem is re-exported: parse_documents raises it, callers catch it from here.
__all__ = ["MAX_DEPTH", "MAX_NODES_PER_DOCUMENT", "ParsedDocument", "YamlProblem", "parse_documents"]

try:  # the C parser is ~10x faster; the pure one behaves the same
    from ruamel.yaml.cyaml import CSafeLoader as _Loader

    _C_LOADER = True  # reader errors give UTF-8 byte offsets
except ImportError:  # pragma: no cover - depends on the platform's wheels
    from ruamel.yaml.loader import SafeLoader as _Loader  # type: ignore[assignment]

    _C_LOADER = False  # reader errors give character offsets

MAX_NODES_PER_DOCUMENT = 200_000
# Collections nested in collections; resources need about ten. Keeps every recursion
# (ours, pydantic's) far from Python's recursion limit.
MAX_DEPTH = 100


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ, _MERGE = _TAG + "str", _TAG + "map", _TAG + "seq", _TAG + "merge"
# The resolver's answer for a (kind, value, implicit) triple never changes: the loader
# has no path resolvers, so it depends on nothing else. Bounded, as any input can fill it.
_RESOLVED: dict[tuple[type, str | None, Any], str] = {}
_RESOLVED_MAX = 8192
_RESOLVED_TEXT_MAX = 64


@dataclass(slots=True)
class ParsedDocument:
    """One YAML document: its value, where each part came from, and its first line."""

    data: Any
    positions: Positions
    line: int
    index: int


def parse_documents(text: str) -> list[ParsedDocument]:
    """Parse every document of ``text``; raises ``YamlProblem`` on the first problem."""
    loader = _Loader(StringIO(text))
    try:
        return _Reader(loader).documents()
    except MarkedYAMLError as exc:
        raise syntax_problem(exc, text) from None
    except ReaderError as exc:
        raise _reader_problem(exc, text) from None
    except YAMLError as exc:
        raise YamlProblem("yaml.syntax", f"invalid YAML: {exc}", 0, 0) from None
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose is not None:
            dispose()


class _ComposeFailed(Exception):
    """An undefined alias or a duplicate anchor: the document is read no further."""

    def __init__(self, error: ComposerError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(slots=True, eq=False)
class _Anchor:
    """A node that has an anchor, as its aliases repeat it."""

    mark: Any
    pos: Pos
    tag: str
    text: str | None = None
    """A scalar's text; None for a collection."""
    open: bool = False
    """A collection whose end is not read yet (an alias to it would be recursive)."""
    total: int = 1
    """Nodes in it, aliases expanded."""
    height: int = 0
    """Collections from it down to its deepest leaf (0 for a scalar, at least 1 while open)."""
    value: Any = None
    values: list[tuple[PathT, Pos]] = field(default_factory=list)
    """Positions of its values, relative to it (when it was built)."""
    keys: list[tuple[PathT, Pos]] = field(default_factory=list)


def _pos(event: Event) -> Pos:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1)


def _copy(value: Any) -> Any:
    # An alias yields a value of its own each time, as composing and building it again would.
    if value.__class__ is dict:
        return {k: _copy(v) for k, v in value.items()}
    if value.__class__ is list:
        return [_copy(v) for v in value]
    return value


class _Reader:
    """Builds the documents of one stream from its events (see the module docstring)."""

    def __init__(self, loader: Any) -> None:
        self._next = loader.get_event
        self._resolve = loader.resolve
        self._depth = self._nodes = 0
        self._root: Any = None
        self._anchors: dict[str, _Anchor] = {}
        self._values: list[tuple[PathT, Pos]] = []
        self._keys: list[tuple[PathT, Pos]] = []
        self._building = True
        self._size_problem: YamlProblem | None = None
        self._value_problem: YamlProblem | None = None

    def documents(self) -> list[ParsedDocument]:
        """Every document of the stream, or the first problem (see the module docstring)."""
        docs: list[ParsedDocument] = []
        self._next()  # the stream start
        while (event := self._next()) is not None and event.__class__ is not StreamEndEvent:
            self._depth = self._nodes = 0  # event is a document start
            self._root = None
            self._anchors, self._values, self._keys = {}, [], []
            self._building = True
            self._size_problem = self._value_problem = None
            root = self._event()
            try:
                data = self._node(root, (), 1)[0]
            except _ComposeFailed as failed:
                self._drain(failed.error)
            self._next()  # the document end
            problem = self._size_problem or self._value_problem
            if problem is not None:
                raise problem
            positions = Positions(values=dict(self._values), keys=dict(self._keys))
            docs.append(ParsedDocument(data, positions, _pos(root)[0], len(docs)))
        return docs

    def _drain(self, error: ComposerError) -> None:
        """Read the rest of a failed document for its limits only, then report ``error``."""
        try:
            while self._event().__class__ is not DocumentEndEvent:
                pass
        except YAMLError:
            pass  # the composer had stopped before this syntax error
        raise error

    # -- events and limits ---------------------------------------------------------------------

    def _event(self) -> Any:
        """The next event, counted against the depth and node limits."""
        event = self._next()
        cls = event.__class__
        if cls is ScalarEvent or cls is AliasEvent:
            pass
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise too_deep(*_pos(event), MAX_DEPTH)
        else:
            if cls is MappingEndEvent or cls is SequenceEndEvent:
                self._depth -= 1
            return event
        self._nodes += 1
        if self._root is None:
            self._root = event.start_mark
        if self._nodes > MAX_NODES_PER_DOCUMENT:
            raise YamlProblem(
                "yaml.too-large",
                f"document has more than {MAX_NODES_PER_DOCUMENT} nodes",
                self._root.line + 1,
                self._root.column + 1,
                "split it into smaller files; clawplane resources are small",
            )
        return event

    def _size(self, problem: YamlProblem) -> None:
        if self._size_problem is None:
            self._size_problem = problem
        self._building = False

    def _fail(self, problem: YamlProblem) -> None:
        if self._value_problem is None:
            self._value_problem = problem
        self._building = False

    def _add(
        self, total: int, height: int, child: tuple[int, int, _Anchor | None], level: int, pos: Pos
    ) -> tuple[int, int]:
        """Count a child into its parent's expanded size (a scalar is checked at the end only)."""
        sub_total, sub_height, alias = child
        if not sub_height:
            return total + 1, height
        if alias is not None:
            if alias.open:
                self._size(YamlProblem(
                    "yaml.recursive-alias", "recursive YAML alias", *alias.pos,
                    "remove the alias that refers to its own ancestor",
                ))  # fmt: skip
                return total, height
            if level + sub_height > MAX_DEPTH:  # an alias whose target is deep in itself
                self._size(too_deep(*pos, MAX_DEPTH))
                return total, height
        total += sub_total
        if total > MAX_NODES_PER_DOCUMENT:
            self._size(too_large(pos, MAX_NODES_PER_DOCUMENT))
        return total, max(height, sub_height)

    def _close(self, total: int, height: int, pos: Pos) -> tuple[int, int]:
        if total > MAX_NODES_PER_DOCUMENT:
            self._size(too_large(pos, MAX_NODES_PER_DOCUMENT))
        return total, height + 1

    # -- nodes ---------------------------------------------------------------------------------

    def _tag(self, event: Any, kind: type) -> str:
        tag = event.ctag
        if tag is not None and tag != "!":
            return tag if tag.__class__ is str else str(tag)
        key = (kind, event.value if kind is ScalarNode else None, event.implicit)
        resolved = _RESOLVED.get(key)
        if resolved is None:
            resolved = str(self._resolve(*key))
            if key[1] is None or len(key[1]) <= _RESOLVED_TEXT_MAX:
                if len(_RESOLVED) >= _RESOLVED_MAX:
                    _RESOLVED.clear()
                _RESOLVED[key] = resolved
        return resolved

    def _define(self, name: str, anchor: _Anchor) -> None:
        first = self._anchors.get(name)
        if first is not None:
            first_only = "found duplicate anchor; first occurrence"
            raise _ComposeFailed(ComposerError(first_only, first.mark, "second occurrence", anchor.mark))
        self._anchors[name] = anchor

    def _alias(self, event: Any) -> _Anchor:
        anchor = self._anchors.get(event.anchor)
        if anchor is None:
            raise _ComposeFailed(ComposerError(None, None, "found undefined alias", event.start_mark))
        return anchor

    def _node(self, event: Any, path: PathT, level: int) -> tuple[Any, int, int, _Anchor | None]:
        """Build the node ``event`` starts at ``path`` (a collection at ``level``).

        Returns its value, its size and height with aliases expanded, and the anchor it
        repeats when it is an alias of a collection.
        """
        cls = event.__class__
        if cls is ScalarEvent:
            tag = self._tag(event, ScalarNode)
            pos = _pos(event)
            if event.anchor is not None:
                self._define(event.anchor, _Anchor(event.start_mark, pos, tag, event.value))
            if not self._building:
                return None, 1, 0, None
            self._values.append((path, pos))
            return self._scalar(tag, event.value, pos), 1, 0, None
        if cls is AliasEvent:
            target = self._alias(event)
            value = self._repeat(target, path) if self._building else None
            if target.text is not None:
                return value, 1, 0, None
            return value, target.total, target.height, target
        is_map = cls is MappingStartEvent
        tag = self._tag(event, MappingNode if is_map else SequenceNode)
        pos = _pos(event)
        anchor: _Anchor | None = None
        if event.anchor is not None:
            anchor = _Anchor(event.start_mark, pos, tag, open=True, height=1)
            self._define(event.anchor, anchor)
            marks = len(self._values), len(self._keys)
        if self._building:
            self._values.append((path, pos))
            if tag != (_MAP if is_map else _SEQ):
                self._fail(tag_problem(tag, pos))
        if is_map:
            value, total, height = self._mapping(path, level, pos)
        else:
            value, total, height = self._sequence(path, level, pos)
        if anchor is not None:
            anchor.open, anchor.total, anchor.height = False, total, height
            if self._building:
                n = len(path)
                anchor.value = value
                anchor.values = [(p[n:], at) for p, at in self._values[marks[0] :]]
                anchor.keys = [(p[n:], at) for p, at in self._keys[marks[1] :]]
        return value, total, height, None

    def _repeat(self, anchor: _Anchor, path: PathT) -> Any:
        """An alias's value at ``path``, with the positions of what it repeats."""
        if anchor.text is not None:
            self._values.append((path, anchor.pos))
            return self._scalar(anchor.tag, anchor.text, anchor.pos)
        if anchor.open:
            return None  # recursive: the parent reports it
        self._values.extend(((*path, *rel), at) for rel, at in anchor.values)
        self._keys.extend(((*path, *rel), at) for rel, at in anchor.keys)
        return _copy(anchor.value)

    def _sequence(self, path: PathT, level: int, pos: Pos) -> tuple[list[Any], int, int]:
        out: list[Any] = []
        total, height, index = 1, 0, 0
        while (event := self._event()).__class__ is not SequenceEndEvent:
            value, sub_total, sub_height, alias = self._node(
                event, (*path, index) if self._building else (), level + 1
            )
            index += 1
            if self._building:
                out.append(value)
            total, height = self._add(total, height, (sub_total, sub_height, alias), level, pos)
        return out, *self._close(total, height, pos)

    def _mapping(self, path: PathT, level: int, pos: Pos) -> tuple[dict[str, Any], int, int]:
        out: dict[str, Any] = {}
        seen: dict[str, Pos] = {}
        total, height = 1, 0
        while (event := self._event()).__class__ is not MappingEndEvent:
            key, total, height = self._key(event, seen, path, level, pos, total, height)
            # No key (a problem was recorded) means nothing is built any more.
            value, sub_total, sub_height, alias = self._node(
                self._event(), (*path, key) if key is not None else (), level + 1
            )
            if key is not None and self._building:
                out[key] = value
            total, height = self._add(total, height, (sub_total, sub_height, alias), level, pos)
        return out, *self._close(total, height, pos)

    def _key(
        self, event: Any, seen: dict[str, Pos], path: PathT, level: int, pos: Pos, total: int, height: int
    ) -> tuple[str | None, int, int]:
        """Read one mapping key; returns it (None when it cannot be one) and the parent's size."""
        cls = event.__class__
        text: str | None = None
        if cls is ScalarEvent:
            tag, kpos, text = self._tag(event, ScalarNode), _pos(event), event.value
            if event.anchor is not None:
                self._define(event.anchor, _Anchor(event.start_mark, kpos, tag, text))
            total += 1
        elif cls is AliasEvent:
            anchor = self._alias(event)
            tag, kpos, text = anchor.tag, anchor.pos, anchor.text
            if text is not None:
                total += 1
            else:
                total, height = self._add(total, height, (anchor.total, anchor.height, anchor), level, pos)
        else:  # a collection as a key: refused before what is in it is looked at
            kind = MappingNode if cls is MappingStartEvent else SequenceNode
            tag, kpos = self._tag(event, kind), _pos(event)
            if self._building:
                self._fail(key_problem(tag == _MERGE, kpos))
            _, sub_total, sub_height, _ = self._node(event, (), level + 1)
            return None, *self._add(total, height, (sub_total, sub_height, None), level, pos)
        if not self._building:
            return None, total, height
        if tag == _MERGE or text is None:
            self._fail(key_problem(tag == _MERGE, kpos))
            return None, total, height
        first = seen.get(text)
        if first is not None:
            self._fail(YamlProblem(
                "yaml.duplicate-key", f"duplicate key {text!r} (first defined at line {first[0]})", *kpos,
                "remove one of the two; YAML keeps only one of them",
            ))  # fmt: skip
            return None, total, height
        seen[text] = kpos
        self._keys.append(((*path, text), kpos))
        return text, total, height

    def _scalar(self, tag: str, text: str, pos: Pos) -> Any:
        if tag == _STR or tag == "!":
            return text
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "bool":
            return text.lower() == "true"
        if tag == _TAG + "int":
            return yaml_int(text)
        if tag == _TAG + "float":
            return yaml_float(text)
        if tag in (_TAG + "timestamp", _TAG + "binary"):
            return text
        self._fail(tag_problem(tag, pos))
        return None


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
