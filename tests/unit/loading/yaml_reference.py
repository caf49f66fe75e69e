"""The YAML loader as it was before the one-pass reader: a reference to check it against.

Three passes: the event stream scanned for depth and node count, ruamel's (C) composer,
then the composed nodes measured with aliases expanded and built into values. Slower,
but its behaviour is what ``clawplane.loading.yamlparse.parse_documents`` must keep
exactly (values, positions and every problem), which ``test_yaml_reader_differential``
checks on a corpus and on generated text. Limits are read from ``yamlparse`` at call
time, so a test that lowers them lowers them for both.
"""

from __future__ import annotations

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

from clawplane.loading import yamlparse
from clawplane.loading.positions import PathT, Positions
from clawplane.loading.yamlparse import ParsedDocument, YamlProblem, _Loader, _reader_problem
from clawplane.loading.yamlproblems import syntax_problem, too_deep
from clawplane.loading.yamlscalars import yaml_float, yaml_int

_TAG = "tag:yaml.org,2002:"


def parse_documents(text: str) -> list[ParsedDocument]:
    """Parse every document of ``text``; raises ``YamlProblem`` on the first problem."""
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
        raise syntax_problem(exc, text) from None
    except ReaderError as exc:
        raise _reader_problem(exc, text) from None
    except YAMLError as exc:
        raise YamlProblem("yaml.syntax", f"invalid YAML: {exc}", 0, 0) from None
    finally:
        loader.dispose()
    return docs


def _prescan(text: str) -> tuple[int, YamlProblem] | None:
    limit, max_depth = yamlparse.MAX_NODES_PER_DOCUMENT, yamlparse.MAX_DEPTH
    loader = _Loader(StringIO(text))
    document = -1
    depth = nodes = 0
    root: Any = None
    try:
        while (event := loader.get_event()) is not None:
            if isinstance(event, ScalarEvent | AliasEvent):
                nodes += 1
            elif isinstance(event, CollectionStartEvent):
                nodes += 1
                depth += 1
                if depth > max_depth:
                    return document, too_deep(event.start_mark.line + 1, event.start_mark.column + 1, max_depth)
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
            if nodes > limit:
                return document, YamlProblem(
                    "yaml.too-large", f"document has more than {limit} nodes", root.line + 1,
                    root.column + 1, "split it into smaller files; clawplane resources are small",
                )  # fmt: skip
    except YAMLError:
        return None
    finally:
        loader.dispose()
    return None


def _pos(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1)


def _check_size(root: Node) -> None:
    limit, max_depth = yamlparse.MAX_NODES_PER_DOCUMENT, yamlparse.MAX_DEPTH
    measured: dict[int, tuple[int, int]] = {}
    on_stack: set[int] = set()

    def measure(node: MappingNode | SequenceNode, level: int) -> tuple[int, int]:
        if level > max_depth:
            raise too_deep(*_pos(node), max_depth)
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
                    raise YamlProblem(
                        "yaml.recursive-alias", "recursive YAML alias", *_pos(child),
                        "remove the alias that refers to its own ancestor",
                    )  # fmt: skip
                sub = measure(child, level + 1)
            elif level + sub[1] > max_depth:
                raise too_deep(*_pos(node), max_depth)
            total += sub[0]
            height = max(height, sub[1])
            if total > limit:
                break
        on_stack.discard(key)
        measured[key] = (total, height + 1)
        if total > limit:
            raise YamlProblem(
                "yaml.too-large", f"document expands to more than {limit} nodes (alias bomb?)",
                *_pos(node), "remove repeated aliases; clawplane resources are small",
            )  # fmt: skip
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
                raise YamlProblem(
                    "yaml.merge-key", "YAML merge keys (<<) are not supported", *_pos(key_node),
                    "write the keys out; resources should be explicit",
                )  # fmt: skip
            if not isinstance(key_node, ScalarNode):
                raise YamlProblem(
                    "yaml.complex-key", "mapping keys must be plain scalars", *_pos(key_node), "use a string key"
                )
            key = str(key_node.value)
            kpos = _pos(key_node)
            if key in seen:
                raise YamlProblem(
                    "yaml.duplicate-key", f"duplicate key {key!r} (first defined at line {seen[key][0]})",
                    *kpos, "remove one of the two; YAML keeps only one of them",
                )  # fmt: skip
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
        return yaml_int(value)
    if tag == _TAG + "float":
        return yaml_float(value)
    if tag in (_TAG + "timestamp", _TAG + "binary"):
        return value
    raise _tag_problem(node)


def _tag_problem(node: Node) -> YamlProblem:
    return YamlProblem(
        "yaml.tag", f"unsupported YAML tag {node.tag!r}", *_pos(node),
        "remove the tag; clawplane accepts plain YAML values only",
    )  # fmt: skip
