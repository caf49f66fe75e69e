"""``clawplane diff``: the plan a change between two git revisions or folders implies.

A revision is read with ``git ls-tree`` and ``git cat-file --batch`` into a temporary
folder; the working tree is never checked out or touched. Each side is validated and
compiled, and the ``--from`` side stands in for the observed state (see
``planning.staticdiff``). Per-agent prompt sizes are counted as if each side's files lay
where the folder really is (the working tree for revisions), so temp paths never show up
as prompt deltas.
"""

from __future__ import annotations

import enum
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, err, out

if TYPE_CHECKING:
    from clawplane.desired import DesiredState

EXIT_CHANGES = 2


class DiffFormat(enum.StrEnum):
    """How the diff is printed."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


class DiffError(Exception):
    """A side that cannot be read or does not validate."""


@dataclass(frozen=True)
class Side:
    """One side of the diff: a label for messages and the folder to compile."""

    which: str
    label: str
    folder: Path
    root: Path
    real: Path
    """Where ``root``'s files really live (the repository for a revision, else ``root``)."""
    real_folder: Path
    """The resource folder at its real place (its ``.clawplane`` state holds inline skills)."""


def _git(args: list[str], cwd: Path, data: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise DiffError("git is not installed (or not on PATH); install git to diff revisions") from None
    if proc.returncode != 0:
        raise DiffError(proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return proc.stdout


def _repo_and_prefix(path: Path) -> tuple[Path, str]:
    """The repository top level and ``path`` relative to it (posix, '' for the root)."""
    start = path if path.is_dir() else path.parent
    try:
        top = Path(_git(["rev-parse", "--show-toplevel"], start).decode().strip())
    except DiffError as exc:
        raise DiffError(
            f"{path} is not inside a git repository ({exc}); to compare revisions run this in a "
            "checkout, or pass two folders as --from and --to"
        ) from None
    try:
        rel = path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError as exc:
        raise DiffError(f"{path} is not inside the git repository {top}") from exc
    return top, "" if rel == "." else rel


def materialize(rev: str, repo: Path, prefix: str, into: Path) -> Path:
    """Write the files under ``prefix`` at ``rev`` into ``into``; returns the folder to compile."""
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo).decode().strip()
    except DiffError:
        # --quiet leaves git silent: say what was looked for, and where.
        raise DiffError(
            f"{rev!r} is neither a folder nor a commit in the git repository {repo}; "
            "check the name (`git log --oneline`), or fetch it first (`git fetch origin`)"
        ) from None
    spec = ["--", prefix] if prefix else []
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", commit, *spec], repo)
    entries: list[tuple[str, str]] = []
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        meta, _, raw_name = raw.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob" and mode != "120000":
            entries.append((sha, raw_name.decode("utf-8", "surrogateescape")))
    if entries:
        batch = _git(["cat-file", "--batch"], repo, "".join(f"{sha}\n" for sha, _ in entries).encode())
        pos = 0
        for _sha, name in entries:
            header_end = batch.index(b"\n", pos)
            size = int(batch[pos:header_end].split()[2])
            body = batch[header_end + 1 : header_end + 1 + size]
            pos = header_end + 1 + size + 1
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
    folder = into / prefix if prefix else into
    if not folder.exists():
        raise DiffError(f"{prefix or '.'} does not exist at {rev}")
    return folder


def _side(value: str, path: Path, tmp: Path, name: str) -> Side:
    candidate = Path(value)
    if candidate.is_dir():
        root = candidate.resolve()
        return Side(name, value, candidate, root, root, root)
    repo, prefix = _repo_and_prefix(path)
    into = tmp / name
    into.mkdir()
    folder = materialize(value, repo, prefix, into)
    real = repo.resolve()
    return Side(name, value, folder, into.resolve(), real, real / prefix if prefix else real)


def _prompts(side: Side, desired: DesiredState, tmp: Path) -> dict[str, int]:
    from clawplane.planning.prompts import prompt_chars
    from clawplane.workspace import Workspace

    state = tmp / f"state-{side.which}"  # never the real state dir: diff writes nothing there
    real_state = Workspace.for_folder(side.real_folder).state_dir
    relocate = [(str(state), str(real_state)), (str(side.root), str(side.real))]
    return prompt_chars(desired, state_dir=state, relocate=relocate)


def _compile(side: Side) -> DesiredState:
    from clawplane.desired import Compiler
    from clawplane.diagnostics import format_text
    from clawplane.planning.staticdiff import portable
    from clawplane.validation import validate_paths

    result = validate_paths([side.folder])
    if result.diagnostics.has_errors:
        root = str(side.root)
        for d in result.diagnostics.sorted():
            text = format_text(d).replace(root + "/", f"{side.label}:").replace(root, f"{side.label}:")
            err.print(text, markup=False)
        raise DiffError(f"the --{side.which} side ({side.label}) does not validate")
    desired = Compiler().compile(result, folder=side.folder)
    return portable(desired, side.folder)


def diff(
    from_: Annotated[str, typer.Option("--from", help="Git revision or folder of the old side.")],
    to: Annotated[str, typer.Option("--to", help="Git revision or folder of the new side.")],
    path: Annotated[
        Path, typer.Argument(help="Resource folder inside the repository (for revisions).")
    ] = Path("."),
    output: Annotated[
        DiffFormat, typer.Option("--format", "-f", help="text, json or markdown (for PR comments).")
    ] = DiffFormat.TEXT,
    detailed_exitcode: Annotated[
        bool, typer.Option("--detailed-exitcode", help="Exit 0 with no changes, 2 with changes, 1 on error.")
    ] = False,
) -> None:
    """Show the plan a change implies, statically: the --from side plays the observed state."""
    from clawplane.planning.staticdiff import render_markdown, render_text, static_diff
    from clawplane.state import utcnow

    try:
        with tempfile.TemporaryDirectory(prefix="clawplane-diff-") as tmp:
            old, new = _side(from_, path, Path(tmp), "from"), _side(to, path, Path(tmp), "to")
            before, after = _compile(old), _compile(new)
            prompts = (_prompts(old, before, Path(tmp)), _prompts(new, after, Path(tmp)))
            result = static_diff(before, after, created_at=utcnow(), prompts=prompts)
    except DiffError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    if output is DiffFormat.JSON:
        out.print(result.to_json(), markup=False)
    elif output is DiffFormat.MARKDOWN:
        out.print(render_markdown(result, title=f"clawplane diff `{from_}` → `{to}`"), markup=False, end="")
    else:
        out.print(render_text(result), markup=False)
    if detailed_exitcode and result.has_changes:
        raise typer.Exit(EXIT_CHANGES)
