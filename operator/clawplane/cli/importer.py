"""``clawplane import``: turn an existing openclaw.json into clawplane resource YAML files.

Writes gateway.yaml, mcp-servers.yaml, agents.yaml and channels.yaml (only those with
resources) into ``--out``, then prints every change, carry-over and loss. Exit codes:
0 everything imported; 1 something could not be imported (what could be was still
written) or the written files do not validate; 2 usage (unreadable input, files in the way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_OK, EXIT_USAGE, err, out, print_diagnostic
from clawplane.diagnostics import Severity
from clawplane.validation import validate_paths


def import_config(
    config: Annotated[Path, typer.Argument(help="The openclaw.json to import (JSON5 accepted).")],
    out_dir: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write the resource files into.")
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite resource files that already exist.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors and warnings.")] = False,
) -> None:
    """Import an OpenClaw config as resources: exit 0 when all of it mapped, 1 when something did not."""
    from clawplane.interop import import_openclaw_config, load_openclaw_file
    from clawplane.render import write_if_changed

    try:
        data = load_openclaw_file(config)
    except (OSError, ValueError) as exc:
        err.print(f"error: cannot read {config}: {exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    result = import_openclaw_config(data, source=str(config))
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
        write_if_changed(out_dir / name, text)
    shown = [d for d in result.diagnostics if not quiet or d.severity is not Severity.INFO]
    for diagnostic in shown:
        print_diagnostic(out, diagnostic)
    checked = validate_paths([out_dir / name for name in files]) if files else None
    if checked is not None:
        for diagnostic in checked.diagnostics.errors:
            print_diagnostic(out, diagnostic)
    lost = len([d for d in result.diagnostics if d.is_error])
    warnings = len([d for d in result.diagnostics if d.severity is Severity.WARNING])
    count = sum(len(docs) for docs in result.documents.values())
    out.print(
        f"imported {count} resource{'s' if count != 1 else ''} into {out_dir} "
        f"({', '.join(files) or 'no files'}): {lost} not imported, {warnings} warning"
        f"{'s' if warnings != 1 else ''}",
        markup=False,
    )
    invalid = checked is not None and checked.diagnostics.has_errors
    raise typer.Exit(EXIT_INVALID if lost or invalid else EXIT_OK)
