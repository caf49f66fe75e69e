"""``clawplane explain KIND[.field.path] [PATH]``: a field's type, default, allowed values and description."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, err, out


def explain(
    target: Annotated[
        str, typer.Argument(help="KIND or KIND.field.path, e.g. mcpserver.spec.transport (case-insensitive).")
    ],
    path: Annotated[
        str | None,
        typer.Argument(help="A field path of KIND, e.g. spec.sandbox (the same as KIND.spec.sandbox)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the explanation as JSON.")] = False,
) -> None:
    """Explain a kind or one of its fields (OpenClaw's keys under spec too), like `kubectl explain`."""
    from clawplane.schema.explain import ExplainError, render_text
    from clawplane.schema.explain import explain as explain_field

    try:
        info = explain_field(target, path)
    except ExplainError as exc:
        err.print(f"error: {exc}", markup=False)
        if exc.suggestions:
            err.print(f"did you mean: {', '.join(exc.suggestions)}?", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    if as_json:
        out.print(json.dumps(info.to_dict(), indent=2, ensure_ascii=False, default=str), markup=False)
    else:
        out.print(render_text(info), markup=False)
