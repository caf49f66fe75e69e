"""``clawplane get``: list the resources a folder declares, one line each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from clawplane.cli.console import EXIT_INVALID, out, print_diagnostic
from clawplane.validation import validate_paths
from clawplane.validation.summary import summarize


def get(
    paths: Annotated[list[Path], typer.Argument(help="Resource files or folders.")],
    kind: Annotated[str | None, typer.Option("--kind", "-k", help="Only this kind (e.g. McpServer).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List declared resources with a short summary of each (secrets redacted)."""
    result = validate_paths(paths)
    if result.diagnostics.has_errors:
        for d in result.diagnostics.sorted():
            print_diagnostic(out, d)
        out.print("the folder does not validate; run `clawplane validate` for details", markup=False)
        raise typer.Exit(EXIT_INVALID)
    rows = [
        (item.resource.kind, item.resource.name, summarize(item.resource), item.source.file)
        for item in result.resources
        if kind is None or item.resource.kind.lower() == kind.lower()
    ]
    if as_json:
        doc = [{"kind": k, "name": n, "summary": s, "file": f} for k, n, s, f in rows]
        out.print(json.dumps(doc, indent=2), markup=False)
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("KIND", "NAME", "SUMMARY", "FILE"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    out.print(table)
