"""SKILL.md frontmatter → a mapping of strings, exactly as OpenClaw reads it.

Steps (OpenClaw ``packages/markdown-core/src/frontmatter.ts``): strip one BOM,
turn CRLF and CR into LF, require ``---`` on the first line and a closing ``---``
line, then parse the block as YAML (core schema). A line-based ``key: value``
reader runs too and fills in keys YAML lacks. When YAML fails on a free-text
field (``description`` always, ``summary``/``read_when`` for "a: b" text), that
line is re-quoted and parsed again. Scalars become trimmed strings, numbers and
booleans their JavaScript spelling, and lists or mappings JSON text (which is
how a YAML-block ``metadata`` reaches the manifest reader).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ruamel.yaml.nodes import MappingNode

from clawplane.jscompat import JS_WHITESPACE, js_object_keys, js_string, js_trim, json_stringify
from clawplane.skills.frontmatter.simpleblock import parse_simple_block
from clawplane.skills.frontmatter.yamlcore import YamlIssue, compose_block
from clawplane.skills.frontmatter.yamlindent import check_continuation_indent
from clawplane.skills.frontmatter.yamlvalues import node_to_js

__all__ = ["FrontmatterError", "extract_block", "normalize_content", "parse_skill_frontmatter"]

_WS = re.escape(JS_WHITESPACE)
_WS_NO_NL = re.escape(JS_WHITESPACE.replace("\n", ""))
_OPENING = re.compile(rf"^---[{_WS_NO_NL}]*\n")
_CLOSING_REST = re.compile(rf"[{_WS_NO_NL}]*(?:\n|\Z)")
# JavaScript's `.` stops at line terminators and `\w` is ASCII-only.
_LINE = re.compile(rf"^([A-Za-z0-9_-]+):[{_WS}]*([^\n\r\u2028\u2029]*)\Z")
_FIELD_LINE = re.compile(
    rf"^(?:([A-Za-z0-9_-]+)|\"([A-Za-z0-9_-]+)\"|'([A-Za-z0-9_-]+)'):([{_WS}]*)([^\n\r\u2028\u2029]*)\Z"
)
_INDENTED = re.compile(r"^[ \t]")
_NEWLINE = re.compile("\n")
_BLOCK_SCALAR = re.compile(r"^[|>](?:[1-9][+-]?|[+-][1-9]?)?\Z")
_FREEFORM = ("description", "read_when", "summary")


class FrontmatterError(Exception):
    """Frontmatter OpenClaw rejects; ``str()`` is OpenClaw's message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"invalid frontmatter: {code}: {message}")
        self.code = code
        self.message = message


def normalize_content(content: str) -> str:
    """Drop one leading BOM and turn CRLF and lone CR into LF."""
    if content.startswith("\ufeff"):
        content = content[1:]
    if "\r" not in content:
        return content
    return content.replace("\r\n", "\n").replace("\r", "\n")


def extract_block(normalized: str) -> tuple[str, str] | None:
    """``(block, body)`` of a complete leading frontmatter block, else ``None``."""
    opening = _OPENING.match(normalized)
    if not opening:
        return None
    start = opening.end()
    # The closing line: "---" at the block's start or after a newline, then only spaces.
    # (``find`` gives -1 when there is none, so ``dashes`` is 0: the opening holds no "---".)
    dashes = start if normalized.startswith("---", start) else normalized.find("\n---", start) + 1
    while dashes:
        rest = _CLOSING_REST.match(normalized, dashes + 3)
        if rest is not None:
            return normalized[start : max(dashes - 1, start)], normalized[rest.end() :]
        dashes = normalized.find("\n---", dashes) + 1
    return None


def parse_skill_frontmatter(content: str, json_values: dict[str, Any] | None = None) -> dict[str, str]:
    """The frontmatter as strings; raises ``FrontmatterError`` where OpenClaw would.

    ``json_values``, when given, receives the parsed value of each key whose string is
    one-line JSON text read on the fast path (see ``parse_simple_block``).
    """
    try:
        return _parse(content, json_values)
    except RecursionError:
        # OpenClaw's parser runs out of stack on deeply nested values too; the exact depth
        # differs (V8's stack versus Python's recursion limit) but either way it is rejected.
        raise FrontmatterError("RESOURCE_EXHAUSTION", "Maximum call stack size exceeded") from None


def _parse(content: str, json_values: dict[str, Any] | None) -> dict[str, str]:
    normalized = normalize_content(content)
    extracted = extract_block(normalized)
    if extracted is None:
        if _OPENING.match(normalized):
            raise FrontmatterError("UNTERMINATED_FRONTMATTER", "missing closing --- delimiter")
        return {}
    block = extracted[0]
    if not block:
        return {}
    simple = parse_simple_block(block, json_values)
    if simple is not None:
        return simple
    fallback = parse_line_frontmatter(block)
    result, issue = _parse_yaml_once(block, fallback)
    recovered = block
    for _ in _FREEFORM:
        if issue is None:
            break
        following = _requote_freeform_field(recovered, issue)
        if following == recovered:
            break
        recovered = following
        result, issue = _parse_yaml_once(recovered, fallback)
    if issue is not None:
        raise FrontmatterError(issue.code, issue.message)
    return result


def parse_line_frontmatter(block: str) -> dict[str, str]:
    """OpenClaw's line-based reader: ``key: value`` lines, indented continuation blocks."""
    result: dict[str, str] = {}
    lines = block.split("\n")
    i = 0
    while i < len(lines):
        match = _LINE.match(lines[i])
        if match:
            key, value = match.group(1), js_trim(match.group(2))
            if not value and i + 1 < len(lines) and _INDENTED.match(lines[i + 1]):
                continuation: list[str] = []
                while i + 1 < len(lines) and (not lines[i + 1] or _INDENTED.match(lines[i + 1])):
                    continuation.append(lines[i + 1])
                    i += 1
                value = js_trim("\n".join(continuation))
            else:
                value = _strip_quotes(value)
            if value:
                result[key] = value
        i += 1
    return result


def _strip_quotes(value: str) -> str:
    if value[:1] in ('"', "'") and value[-1:] == value[:1]:
        return value[1:-1]
    return value


def _parse_yaml_once(block: str, fallback: dict[str, str]) -> tuple[dict[str, str], YamlIssue | None]:
    """One YAML attempt: the merged strings, or the fallback and the first issue."""
    try:
        node = compose_block(block)
        if not isinstance(node, MappingNode):
            return fallback, YamlIssue("INVALID_ROOT", "frontmatter must be a YAML mapping")
        check_continuation_indent(block, node)
        parsed = node_to_js(node)
    except YamlIssue as issue:
        return fallback, issue
    inline_colon = _inline_colon_keys(block, node)
    result: dict[str, str] = {}
    for raw_key in js_object_keys(parsed):
        key = js_trim(raw_key)
        value = parsed[raw_key]
        if not key or value is None:
            continue
        if isinstance(value, dict | list):
            # A one-line JSON object keeps its raw text (the line reader's view) rather than
            # YAML's re-serialisation of the flow mapping.
            use_raw = key in inline_colon and key in fallback
            result[key] = fallback[key] if use_raw else json_stringify(value)
        else:
            result[key] = js_trim(value) if isinstance(value, str) else js_string(value)
    for key, value in fallback.items():
        result.setdefault(key, value)
    return result, None


def _inline_colon_keys(block: str, node: MappingNode) -> set[str]:
    """Top-level keys whose value, on the key's own line, contains a colon."""
    starts = _line_starts(block)
    keys: set[str] = set()
    for key_node, _value in node.value:
        mark = key_node.start_mark
        start = starts[mark.line] + mark.column if mark.line < len(starts) else len(block)
        end = block.find("\n", start)
        match = _LINE.match(block[start : end if end != -1 else len(block)])
        if match and ":" in match.group(2):
            keys.add(match.group(1))
    return keys


def _line_starts(block: str) -> list[int]:
    return [0, *(match.end() for match in _NEWLINE.finditer(block))]


def _requote_freeform_field(block: str, issue: YamlIssue) -> str:
    """Re-quote the free-text field on the error's line, as OpenClaw's recovery does."""
    if issue.line < 0 or issue.code == "INVALID_ROOT":
        return block
    starts = _line_starts(block)
    pos = min(starts[min(issue.line, len(starts) - 1)] + max(issue.column, 0), len(block))
    line_start = block.rfind("\n", 0, pos + 1) + 1
    line_end = block.find("\n", pos)
    end = len(block) if line_end == -1 else line_end
    match = _FIELD_LINE.match(block[line_start:end])
    if not match:
        return block
    key = match.group(1) or match.group(2) or match.group(3)
    if not match.group(4) and match.group(5):
        return block  # "key:value" is one plain scalar in YAML, not the field `key`
    raw = js_trim(match.group(5))
    # `yaml` reports a tab before "a: b" text as TAB_AS_INDENT, which is not recovered.
    rich_text = issue.code == "BLOCK_AS_IMPLICIT_KEY" and ": " in raw and "\t" not in match.group(4)
    if not raw or key not in _FREEFORM or (key != "description" and not rich_text):
        return block
    if _BLOCK_SCALAR.match(raw):
        return block
    replacement = f"{key}: {json.dumps(_strip_quotes(raw), ensure_ascii=False)}"
    return block[:line_start] + replacement + block[end:]
