"""``clawplane schema``: write or check the generated JSON Schemas and CRDs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_USAGE, err, out
from clawplane.schema import CHART_CRD_DIR, stale_files, write_files


def schema(
    root: Annotated[Path, typer.Option("--root", help="Repository root to write into.")] = Path("."),
    check: Annotated[
        bool, typer.Option("--check", help="Only check; exit 1 naming every stale file.")
    ] = False,
) -> None:
    """Generate schemas/*.schema.json and manifests/crds/*.yaml (and the chart's CRDs) from the models."""
    if not (root / "schemas").is_dir() or not (root / "pyproject.toml").is_file():
        # Outside a checkout every generated file would look "stale": say where they live instead.
        err.print(
            f"{root.resolve()} is not a clawplane checkout (no schemas/ and pyproject.toml there); "
            "the generated files live in the repository's schemas/, manifests/crds/ and "
            "charts/clawplane/crds/: run this from the repository root, or pass --root",
            markup=False,
        )
        raise typer.Exit(EXIT_USAGE)
    include_chart = (root / CHART_CRD_DIR).parent.is_dir()
    if check:
        stale = stale_files(root, include_chart=include_chart)
        for rel in stale:
            err.print(f"stale: {rel}", markup=False)
        if stale:
            err.print(
                f"{len(stale)} generated file(s) are stale; run `clawplane schema` and commit them",
                markup=False,
            )
            raise typer.Exit(EXIT_INVALID)
        out.print("generated files are up to date", markup=False)
        return
    written = write_files(root, include_chart=include_chart)
    for rel in written:
        out.print(f"wrote {rel}", markup=False)
    out.print(
        f"{len(written)} file(s) written" if written else "generated files are up to date", markup=False
    )
