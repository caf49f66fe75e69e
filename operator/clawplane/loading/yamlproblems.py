"""Problems in YAML text: ``YamlProblem``, the limits a document must keep, and their messages.

Each problem says what is wrong, where (1-based line and column) and how to fix it; the
reader (``yamlparse``) raises the first one a document has. The limits are the reader's
(``yamlparse.MAX_DEPTH``, ``MAX_NODES_PER_DOCUMENT``) and are passed in, as they are read there.
"""

from __future__ import annotations

from ruamel.yaml.error import MarkedYAMLError

__all__ = [
    "Pos",
    "YamlProblem",
    "key_problem",
    "syntax_problem",
    "tag_problem",
    "too_deep",
    "too_large",
]

Pos = tuple[int, int]


class YamlProblem(Exception):
    """A problem in the YAML text itself, with its 1-based position."""

    def __init__(self, code: str, message: str, line: int, column: int, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint


def too_large(pos: Pos, limit: int) -> YamlProblem:
    """A document that expands (aliases counted as copies) past ``limit`` nodes."""
    return YamlProblem(
        "yaml.too-large",
        f"document expands to more than {limit} nodes (alias bomb?)",
        *pos,
        "remove repeated aliases; clawplane resources are small",
    )


def key_problem(merge: bool, pos: Pos) -> YamlProblem:
    """A mapping key that is not a plain scalar (``merge``: a ``<<`` merge key)."""
    if merge:
        return YamlProblem(
            "yaml.merge-key", "YAML merge keys (<<) are not supported", *pos,
            "write the keys out; resources should be explicit",
        )  # fmt: skip
    return YamlProblem("yaml.complex-key", "mapping keys must be plain scalars", *pos, "use a string key")


def tag_problem(tag: str, pos: Pos) -> YamlProblem:
    """A tag clawplane does not accept (only plain YAML values are)."""
    return YamlProblem(
        "yaml.tag",
        f"unsupported YAML tag {tag!r}",
        *pos,
        "remove the tag; clawplane accepts plain YAML values only",
    )


def too_deep(line: int, column: int, limit: int) -> YamlProblem:
    """Collections nested deeper than ``limit``."""
    return YamlProblem(
        "yaml.too-deep",
        f"YAML is nested more than {limit} levels deep",
        line,
        column,
        "flatten the structure; clawplane resources nest only a few levels deep",
    )


def syntax_problem(exc: MarkedYAMLError, text: str) -> YamlProblem:
    """A syntax error of the parser or composer, with a hint for the usual mistakes."""
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
