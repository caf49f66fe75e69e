"""``clawplane import``: turn an existing config into clawplane resource YAML files.

Reads openclaw.json (and the other formats ``clawplane.interop.sources`` knows), writes
gateway.yaml, mcp-servers.yaml, model-providers.yaml, agents.yaml and channels.yaml (only
those with resources) into ``--out``, then prints every change, carry-over and loss with its
file:line. A loss never costs the rest: exit 0 when something was imported (losses are
warnings); 1 when nothing could be imported or the written files do not validate; 2 usage
(unreadable input, unknown format, files in the way).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_OK, EXIT_USAGE, err, out, print_diagnostic
from clawplane.diagnostics import Severity
from clawplane.validation import validate_paths


def import_config(
    config: Annotated[
        Path,
        typer.Argument(
            help=(
                "The file to import: openclaw.json, .mcp.json, claude_desktop_config.json, .vscode/mcp.json, "
                ".cursor/mcp.json, .gemini/settings.json, a Codex config.toml or an MCP Registry server.json."
            )
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write the resource files into.")
    ] = Path("."),
    source_format: Annotated[
        str | None,
        typer.Option("--format", "-f", help="The file's format (default: recognised from name and content)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite resource files that already exist.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors and warnings.")] = False,
) -> None:
    """Import a config as resources: exit 0 when something was imported, 1 when nothing could be."""
    from clawplane.interop.result import severity_counts
    from clawplane.interop.sources import import_file
    from clawplane.render import write_if_changed

    _check_limits(config, source_format)
    try:
        result = import_file(config, format=source_format)
    except (OSError, ValueError) as exc:
        err.print(f"error: cannot read {config}: {exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    files = result.files(source=config.name)
    in_the_way = [name for name in files if (out_dir / name).exists()]
    if in_the_way and not force:
        err.print(
            f"error: {', '.join(in_the_way)} already exist in {out_dir}; use --force to overwrite",
            markup=False,
        )
        raise typer.Exit(EXIT_USAGE)
    for name, text in files.items():
        # 0600: imported literal secrets stay where they were, but no more readable than before.
        try:
            write_if_changed(out_dir / name, text, option="--out DIR")
        except OSError as exc:
            err.print(f"error: cannot write {out_dir / name}: {exc.strerror or exc}", markup=False)
            raise typer.Exit(EXIT_INVALID) from None
    shown = [d for d in result.diagnostics if not quiet or d.severity is not Severity.INFO]
    for diagnostic in shown:
        print_diagnostic(out, diagnostic)
    checked = validate_paths([out_dir / name for name in files]) if files else None
    if checked is not None:
        for diagnostic in checked.diagnostics.errors:
            print_diagnostic(out, diagnostic)
    lost, warnings = severity_counts(result)
    count = result.count
    out.print(
        f"imported {count} resource{'s' if count != 1 else ''} from {result.format} into {out_dir} "
        f"({', '.join(files) or 'no files'}): {lost} not imported, {warnings} warning"
        f"{'s' if warnings != 1 else ''}",
        markup=False,
    )
    invalid = checked is not None and checked.diagnostics.has_errors
    raise typer.Exit(EXIT_INVALID if count == 0 or invalid else EXIT_OK)


def _check_limits(config: Path, source_format: str | None) -> None:
    """Exit 1 with the cause and the fix when ``config`` is too large or nests too deeply for any reader.

    Every format's parser (and every walk after it) recurses once per level, and the JSON5
    one takes time per character: the limits are checked on at most ``MAX_IMPORT_BYTES`` + 1
    bytes before any of them runs. What cannot be read at all is left to the import to report.
    """
    from clawplane.interop.jsonload import MAX_IMPORT_BYTES, ImportLimitError, check_limits, check_size

    try:
        with config.open("rb") as fh:
            data = fh.read(MAX_IMPORT_BYTES + 1)
            check_size(max(len(data), os.fstat(fh.fileno()).st_size), str(config))
        toml = source_format == "codex" or (source_format is None and config.suffix == ".toml")
        check_limits(data.decode("utf-8"), str(config), toml=toml)
    except ImportLimitError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    except (OSError, ValueError):
        return
