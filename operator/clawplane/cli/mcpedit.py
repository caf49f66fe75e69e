"""``clawplane mcp list|show|set|unset|tools PATH …``: ``openclaw mcp …`` verbs over McpServer resources.

Same verbs, messages and JSON shapes as OpenClaw's, but the "config" is a resource folder:
``set`` canonicalizes like ``openclaw mcp set``, replaces the named server's spec in place
(or appends a document to ``--file``), validates the whole folder in a temporary copy and
writes nothing when the result would not validate. ``unset`` removes the document.
``tools`` edits ``toolFilter`` as ``openclaw mcp tools`` does: comma lists, trimmed,
de-duplicated and sorted; an empty list drops its key, ``--clear`` drops the filter.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Annotated, Any

import typer

from clawplane.cli.console import EXIT_INVALID, err, out

DEFAULT_FILE = "mcp-servers.yaml"


def _print_json(value: Any) -> None:
    out.print(json.dumps(value, indent=2, ensure_ascii=False, default=str), markup=False, soft_wrap=True)


def _servers(path: Path) -> dict[str, Any]:
    from clawplane.editing import find_servers

    if not path.exists():
        err.print(f"{path} does not exist.", markup=False)
        raise typer.Exit(EXIT_INVALID)
    return dict(find_servers(path))


def mcp_list(
    path: Annotated[Path, typer.Argument(help="Resource folder (or file) declaring McpServer resources.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print {name: server} as JSON.")] = False,
) -> None:
    """List the declared MCP servers (like `openclaw mcp list`)."""
    from clawplane.editing import redact

    servers = _servers(path)
    if as_json:
        _print_json({name: redact(doc.spec) for name, doc in servers.items()})
        return
    if not servers:
        out.print(f"No MCP servers configured in {path}.", markup=False)
        return
    for name in servers:
        out.print(name, markup=False)


def mcp_show(
    path: Annotated[Path, typer.Argument(help="Resource folder (or file) declaring McpServer resources.")],
    name: Annotated[str, typer.Argument(help="Server name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the server object as JSON.")] = False,
) -> None:
    """Show one declared MCP server (like `openclaw mcp show NAME`)."""
    from clawplane.editing import redact

    servers = _servers(path)
    doc = servers.get(name)
    if doc is None:
        err.print(
            f'No MCP server named "{name}" in {path}. Run clawplane mcp list to see configured servers.',
            markup=False,
        )
        raise typer.Exit(EXIT_INVALID)
    shown = redact(doc.spec)
    if as_json:
        _print_json(shown)
        return
    out.print(f"MCP server {name} ({doc.file}):", markup=False)
    out.print(json.dumps(shown, indent=2, ensure_ascii=False, default=str), markup=False, soft_wrap=True)


def _target(path: Path, file: str | None) -> Path:
    if path.is_file():
        return path
    target = Path(file or DEFAULT_FILE)
    if not target.is_absolute():
        target = path / target
    try:
        target.resolve().relative_to(path.resolve())
    except ValueError:
        err.print(f"--file must be inside {path}.", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    return target


def _not_resources(folder: str, names: list[str]) -> set[str]:
    """What the validation copy leaves out: folders validation skips, and anything not a file.

    A running supervisor keeps its control socket in ``.clawplane/``; copying a socket fails.
    """
    from clawplane.loading import SKIPPED_DIRS

    skipped = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            skipped.add(name)
            continue
        if name in SKIPPED_DIRS or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skipped.add(name)
    return skipped


def _write_checked(path: Path, target: Path, new_text: str | None, *, warn_for: str = "") -> None:
    """Validate ``path`` with ``target`` replaced by ``new_text`` (None = deleted), then write.

    Warnings about the resource ``warn_for`` (e.g. an unknown ``type`` kept as OpenClaw keeps
    it) are printed; the folder's other warnings are not this edit's business.
    """
    import shutil
    import tempfile

    from clawplane._utils.atomicfile import atomic_write_bytes
    from clawplane.diagnostics import format_text
    from clawplane.validation import validate_paths

    root = path if path.is_dir() else path.parent
    with tempfile.TemporaryDirectory(prefix="clawplane-mcp-") as tmp:
        copy = Path(tmp) / "folder"
        shutil.copytree(root, copy, symlinks=True, ignore=_not_resources)
        rel = target.resolve().relative_to(root.resolve())
        staged = copy / rel
        if new_text is None:
            staged.unlink(missing_ok=True)
        else:
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_text(new_text, encoding="utf-8")
        checked = copy if path.is_dir() else staged
        result = validate_paths([checked]) if checked.exists() else None
        if result is not None and result.diagnostics.has_errors:
            for diagnostic in result.diagnostics.sorted():
                if diagnostic.is_error:
                    err.print(format_text(diagnostic).replace(str(copy), str(root)), markup=False)
            err.print(f"Config invalid after MCP edit; nothing written to {target}.", markup=False)
            raise typer.Exit(EXIT_INVALID)
        for diagnostic in result.diagnostics.sorted() if result is not None and warn_for else ():
            if diagnostic.resource == warn_for and not diagnostic.is_error:
                err.print(format_text(diagnostic).replace(str(copy), str(root)), markup=False)
    if new_text is None:
        target.unlink()
    else:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        atomic_write_bytes(target, new_text.encode("utf-8"), mode=mode)


def mcp_set(
    path: Annotated[Path, typer.Argument(help="Resource folder (or file) declaring McpServer resources.")],
    name: Annotated[str, typer.Argument(help="Server name.")],
    config: Annotated[str, typer.Argument(help="The server object as JSON.")],
    file: Annotated[
        str | None,
        typer.Option("--file", help=f"File for a new server, relative to PATH (default {DEFAULT_FILE})."),
    ] = None,
) -> None:
    """Add or replace an MCP server (like `openclaw mcp set NAME JSON`)."""
    from clawplane.editing import canonicalize, set_server_text

    try:
        raw = json.loads(config)
    except json.JSONDecodeError as exc:
        err.print(f"Invalid JSON for MCP server config: {exc.msg}.", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    if not isinstance(raw, dict):
        err.print("MCP server config must be a JSON object.", markup=False)
        raise typer.Exit(EXIT_INVALID)
    if not path.exists():
        path.mkdir(parents=True)
    spec = canonicalize(raw)
    existing = _servers(path).get(name)
    target = existing.file if existing is not None else _target(path, file)
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    _write_checked(path, target, set_server_text(text, name, spec), warn_for=f"McpServer/{name}")
    out.print(f'Saved MCP server "{name}" to {target}.', markup=False)


def mcp_unset(
    path: Annotated[Path, typer.Argument(help="Resource folder (or file) declaring McpServer resources.")],
    name: Annotated[str, typer.Argument(help="Server name.")],
) -> None:
    """Remove an MCP server document (like `openclaw mcp unset NAME`)."""
    from clawplane.editing import has_documents, remove_server_text

    existing = _servers(path).get(name)
    text = existing.file.read_text(encoding="utf-8") if existing is not None else ""
    new_text = remove_server_text(text, name) if existing is not None else None
    if existing is None or new_text is None:
        err.print(
            f'No MCP server named "{name}" in {path}. Run clawplane mcp list to see configured servers.',
            markup=False,
        )
        raise typer.Exit(EXIT_INVALID)
    _write_checked(path, existing.file, new_text if has_documents(new_text) else None)
    out.print(f'Removed MCP server "{name}" from {existing.file}.', markup=False)


def _csv(value: str) -> list[str]:
    """OpenClaw's list option: split on commas, trim, drop empties, de-duplicate, sort."""
    return sorted({part.strip() for part in value.split(",") if part.strip()})


def tool_filter(current: Any, include: str | None, exclude: str | None, clear: bool) -> dict[str, Any]:
    """The toolFilter after an ``mcp tools`` edit (empty: no filter at all)."""
    if clear:
        return {}
    updated = dict(current) if isinstance(current, dict) else {}
    for key, value in (("include", include), ("exclude", exclude)):
        if value is None:
            continue
        items = _csv(value)
        if items:
            updated[key] = items
        else:
            updated.pop(key, None)
    return updated


def mcp_tools(
    path: Annotated[Path, typer.Argument(help="Resource folder (or file) declaring McpServer resources.")],
    name: Annotated[str, typer.Argument(help="Server name.")],
    include: Annotated[
        str | None, typer.Option("--include", help="Comma-separated MCP tool names or '*' globs to expose.")
    ] = None,
    exclude: Annotated[
        str | None, typer.Option("--exclude", help="Comma-separated MCP tool names or '*' globs to hide.")
    ] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Clear this server's MCP tool filter.")] = False,
) -> None:
    """Update a server's tool include/exclude filter (like `openclaw mcp tools NAME`)."""
    from clawplane.editing import set_server_text, to_plain

    if include is None and exclude is None and not clear:
        err.print("Specify --include, --exclude, or --clear.", markup=False)
        raise typer.Exit(EXIT_INVALID)
    existing = _servers(path).get(name)
    if existing is None:
        err.print(
            f'No MCP server named "{name}" in {path}. Run clawplane mcp list to see configured servers.',
            markup=False,
        )
        raise typer.Exit(EXIT_INVALID)
    spec = dict(to_plain(existing.spec))
    updated = tool_filter(spec.get("toolFilter"), include, exclude, clear)
    spec.pop("toolFilter", None)
    if updated:
        spec["toolFilter"] = updated
    text = existing.file.read_text(encoding="utf-8")
    _write_checked(path, existing.file, set_server_text(text, name, spec), warn_for=f"McpServer/{name}")
    out.print(f'Updated MCP tool selection for "{name}" in {existing.file}.', markup=False)
