"""The indentation rule ``yaml`` applies and libyaml does not: continuation lines of flow values.

In a block collection, every continuation line of a multi-line flow collection
or quoted scalar must be indented past the collection's own column (the closing
bracket of the outermost flow collection may sit at that column). libyaml
accepts such text; OpenClaw's parser rejects it, so we reject it too.
"""

from __future__ import annotations

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clawplane.skills.frontmatter.yamlcore import YamlIssue

__all__ = ["check_continuation_indent"]


def check_continuation_indent(block: str, root: Node) -> None:
    """Raise where ``yaml`` rejects a flow collection or quoted scalar that libyaml accepts.

    ``yaml`` requires every continuation line of a multi-line flow collection or
    quoted scalar inside a block collection to be indented past that collection
    (the closing bracket of the outermost flow collection may sit at its column).
    """
    lines = block.split("\n")
    stack: list[tuple[Node, int]] = [(root, -1)]
    while stack:
        node, parent_indent = stack.pop()
        if isinstance(node, MappingNode) and not node.flow_style:
            indent = node.start_mark.column
            stack.extend((value, indent) for _key, value in node.value)
        elif isinstance(node, SequenceNode) and not node.flow_style:
            indent = node.start_mark.column
            stack.extend((item, indent) for item in node.value)
        elif parent_indent >= 0:
            _check_node_lines(lines, node, parent_indent)


def _check_node_lines(lines: list[str], node: Node, parent_indent: int) -> None:
    quoted = isinstance(node, ScalarNode) and getattr(node, "style", None) in ("'", '"')
    flow = isinstance(node, MappingNode | SequenceNode)
    if not (quoted or flow):
        return
    start, end = node.start_mark, node.end_mark
    for number in range(start.line + 1, min(end.line, len(lines) - 1) + 1):
        text = lines[number]
        body = text.lstrip(" ")
        if not body.strip(" \t") or (flow and body.startswith("#")):
            continue
        indent = len(text) - len(body)
        closes_outer = flow and number == end.line and indent == end.column - 1
        if indent > parent_indent or (closes_outer and indent >= parent_indent):
            continue
        raise YamlIssue(*_indent_problem(node), number, 0)


def _indent_problem(node: Node) -> tuple[str, str]:
    if isinstance(node, MappingNode):
        return "BAD_INDENT", "Flow map in block collection must be sufficiently indented and end with a }"
    if isinstance(node, SequenceNode):
        return "BAD_INDENT", (
            "Flow sequence in block collection must be sufficiently indented and end with a ]"
        )
    return "MISSING_CHAR", f"Missing closing {getattr(node, 'style', '')}quote"
