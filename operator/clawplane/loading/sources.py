"""Find resource files and read them safely into documents.

Reads ``*.yaml``/``*.yml`` files from the paths given (directories recursively, in a
stable order), refusing oversized, binary and non-UTF-8 files with a diagnostic
before any parsing, and expands ``kind: List`` documents into their items. Nothing
here knows about resource kinds beyond the List envelope.
"""

from __future__ import annotations

import codecs
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Diagnostics, Location, Severity
from clawplane.loading.positions import Positions
from clawplane.loading.walk import SKIPPED_DIRS, YAML_SUFFIXES, WalkCache, walk_resource_files
from clawplane.loading.yamlparse import YamlProblem, parse_documents

MAX_FILE_BYTES = 4 * 1024 * 1024
__all__ = [
    "MAX_FILE_BYTES",
    "SKIPPED_DIRS",
    "YAML_SUFFIXES",
    "ReadResult",
    "SourceDocument",
    "discover_files",
    "read_file",
    "read_sources",
    "read_text",
]


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """One resource document as read from a file, before model validation."""

    file: str
    index: int
    data: Any
    positions: Positions
    line: int

    def location(self, line_col: tuple[int, int]) -> Location:
        """A Location in this document's file."""
        return Location(self.file, line_col[0], line_col[1])


@dataclass(slots=True)
class ReadResult:
    """Documents found, files read, and what went wrong."""

    documents: list[SourceDocument]
    files: list[str]
    diagnostics: Diagnostics


def discover_files(
    paths: Iterable[str | os.PathLike[str]], diags: Diagnostics, walk: WalkCache | None = None
) -> list[Path]:
    """Expand files and directories into resource files, sorted and de-duplicated.

    With ``walk``, listings of unchanged directories are reused (one ``stat`` each).
    """
    found: list[Path] = []
    inputs = list(paths)
    links = len(inputs) > 1
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            files, saw_links = walk_resource_files(path, walk)
            found.extend(files)
            links = links or saw_links
        elif path.is_file():
            found.append(path)
        else:
            diags.add(
                Diagnostic(
                    Severity.ERROR,
                    "input.not-found",
                    f"no such file or directory: {raw}",
                    Location(str(raw)),
                    hint="check the path",
                )
            )
    if not links:
        return found  # one walk without symlinks never reaches a file twice
    seen: set[Path] = set()
    unique = []
    for path in found:
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            _unresolvable(path, diags)
            continue
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def _unresolvable(path: Path, diags: Diagnostics) -> None:
    loop = path.is_symlink()
    diags.add(
        Diagnostic(
            Severity.ERROR,
            "input.symlink-loop" if loop else "input.unreadable",
            "symbolic link loop (or a link to nothing)" if loop else "cannot resolve the path",
            Location(str(path)),
            hint="point the link at a real file, or remove it",
        )
    )


def read_sources(paths: Iterable[str | os.PathLike[str]]) -> ReadResult:
    """Read every resource document under ``paths``; problems become diagnostics."""
    diags = Diagnostics()
    files = discover_files(paths, diags)
    documents: list[SourceDocument] = []
    for path in files:
        documents.extend(read_file(path, diags))
    return ReadResult(documents, [str(f) for f in files], diags)


def read_file(path: Path, diags: Diagnostics) -> list[SourceDocument]:
    """Read one file into documents, adding diagnostics for anything unreadable."""
    text = _read_text(path, diags)
    if text is None:
        return []
    return read_text(str(path), text, diags)


def read_text(name: str, text: str, diags: Diagnostics) -> list[SourceDocument]:
    """Parse YAML ``text`` as if it were the file ``name`` (same checks as ``read_file``)."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "input.too-large",
                f"text is larger than {MAX_FILE_BYTES} bytes, the most a resource file may hold",
                Location(name),
                hint="split it or remove data that is not a resource",
            )
        )
        return []
    if "\x00" in text:
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "input.binary",
                "text is binary (contains NUL characters)",
                Location(name),
                hint="resource files must be UTF-8 YAML text",
            )
        )
        return []
    text = text.removeprefix("\ufeff")
    try:
        parsed = parse_documents(text)
    except YamlProblem as problem:
        diags.add(
            Diagnostic(
                Severity.ERROR,
                problem.code,
                problem.message,
                Location(name, problem.line, problem.column),
                hint=problem.hint,
            )
        )
        return []
    docs = [d for d in parsed if d.data is not None]
    if not docs:
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "input.empty-file",
                "file contains no resources",
                Location(name),
                hint="add a resource or delete the file",
            )
        )
        return []
    out: list[SourceDocument] = []
    for doc in docs:
        out.extend(_expand_list(SourceDocument(name, doc.index, doc.data, doc.positions, doc.line), diags))
    return out


def _read_text(path: Path, diags: Diagnostics) -> str | None:
    name = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            diags.add(
                Diagnostic(
                    Severity.ERROR,
                    "input.too-large",
                    f"file is {size} bytes; resource files may be at most {MAX_FILE_BYTES} bytes",
                    Location(name),
                    hint="split the file or remove data that is not a resource",
                )
            )
            return None
        raw = path.read_bytes()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            _unresolvable(path, diags)
            return None
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "input.unreadable",
                f"cannot read file: {exc.strerror}",
                Location(name),
                hint="check the file's permissions",
            )
        )
        return None
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "input.binary",
                "file is binary (contains NUL bytes)",
                Location(name, line, 1),
                hint="resource files must be UTF-8 YAML text",
            )
        )
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # utf-8-sig counts offsets after the BOM; the column counts characters, as YAML's do
        # (the bytes before the first bad one are valid UTF-8).
        bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
        offset = bom + exc.start
        line_start = max(raw.rfind(b"\n", 0, offset) + 1, bom)
        line = raw.count(b"\n", 0, offset) + 1
        col = len(raw[line_start:offset].decode("utf-8")) + 1
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "input.encoding",
                f"file is not valid UTF-8 (byte 0x{raw[offset]:02x} at offset {offset})",
                Location(name, line, col),
                hint="save the file as UTF-8",
            )
        )
        return None
    return text


def _expand_list(doc: SourceDocument, diags: Diagnostics) -> list[SourceDocument]:
    data = doc.data
    if not (isinstance(data, dict) and data.get("kind") == "List"):
        return [doc]
    items = data.get("items")
    if not isinstance(items, list):
        diags.add(
            Diagnostic(
                Severity.ERROR,
                "schema.list-items",
                "a List needs an 'items' sequence",
                doc.location(doc.positions.of_value(("kind",))),
                path="items",
                hint="put the resources under 'items:' as a YAML sequence",
            )
        )
        return []
    parts = doc.positions.split_items(("items",))
    return [
        SourceDocument(
            doc.file,
            doc.index,
            item,
            parts.get(i) or Positions(),
            doc.positions.of_value(("items", i))[0],
        )
        for i, item in enumerate(items)
    ]
