"""The examples in the README and docs/: fenced blocks, and the ``clawplane`` commands in them.

Shared by the tests of tests/unit/docs and tests/integration/docs, which hold every example
to the code: YAML resources are validated, commands parsed against the CLI and the cheap
ones run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_A_RESOURCE = "<!-- not-a-resource -->"
SHELL_LANGUAGES = ("sh", "bash", "console")
_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
# Where a shell word is in command position: a line's start, a substitution, after a pipe,
# a list operator, or the `--` that hands a command line to another program.
_COMMAND_AT = re.compile(
    r"(?:^|\$\(|&&|\|\||[;|]| -- )\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:\.venv/bin/)?clawplane(?=\s|$)"
)
_INLINE = re.compile(r"(?<!`)`(clawplane [^`]+)`(?!`)")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and text, and whether it is marked exempt."""

    path: Path
    line: int
    language: str
    text: str
    exempt: bool

    @property
    def where(self) -> str:
        """``file:line`` of the block's opening fence, relative to the repository."""
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Invocation:
    """One ``clawplane …`` command found in the docs, with the words after ``clawplane``."""

    where: str
    words: tuple[str, ...]
    comment: str
    source: str


def doc_files() -> list[Path]:
    """The README and every page of the docs site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def command_files() -> list[Path]:
    """Where commands are documented: the docs, and the developer's and contributor's guides."""
    return [*doc_files(), ROOT / "DEVELOPMENT.md", ROOT / "CONTRIBUTING.md"]


def blocks(paths: list[Path] | None = None) -> list[Block]:
    """Every fenced code block of ``paths`` (default: the README and the docs)."""
    found = []
    for path in paths if paths is not None else doc_files():
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            before = text[: match.start()].rstrip()
            found.append(
                Block(
                    path=path,
                    line=text.count("\n", 0, match.start()) + 1,
                    language=match.group(1),
                    text=match.group(2),
                    exempt=before.endswith(NOT_A_RESOURCE),
                )
            )
    return found


def _logical_lines(text: str) -> list[str]:
    """Shell lines with backslash continuations joined and console prompts removed."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line.removeprefix("$ ") for line in joined.splitlines()]


def _split_comment(line: str) -> tuple[str, str]:
    """A shell line and its trailing ``# comment`` (a ``#`` outside quotes after a blank)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i], line[i + 1 :].strip()
    return line, ""


def _words(rest: str) -> tuple[str, ...]:
    """The words of one command, up to where the shell would end it."""
    # A bare `|` between words is the docs' "one of" (`mcp list|show`); a pipe has blanks around it.
    end = re.search(r"\s*(?:\)|\|\||&&|;|\s\|\s|\s>)", rest)
    rest = rest[: end.start()] if end else rest
    try:
        return tuple(shlex.split(rest))
    except ValueError:
        return tuple(rest.split())


def invocations() -> list[Invocation]:
    """Every ``clawplane`` command in the shell blocks and inline code spans of the docs."""
    found = []
    for block in blocks(command_files()):
        if block.language not in SHELL_LANGUAGES:
            continue
        for offset, raw in enumerate(_logical_lines(block.text), start=1):
            line, comment = _split_comment(raw)
            for match in _COMMAND_AT.finditer(line):
                where = f"{block.where}+{offset}"
                found.append(Invocation(where, _words(line[match.end() :]), comment, line.strip()))
    for path in command_files():
        text = _FENCE.sub("", path.read_text(encoding="utf-8"))
        for match in _INLINE.finditer(text):
            where = f"{path.relative_to(ROOT)} (inline)"
            found.append(Invocation(where, tuple(match.group(1).split()[1:]), "", match.group(1)))
    return found
