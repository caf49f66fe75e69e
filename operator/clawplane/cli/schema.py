"""``clawplane schema``: write or check the generated JSON Schemas and CRDs."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_USAGE, err, out
from clawplane.schema import CHART_CRD_DIR, stale_among, stale_files, write_among, write_files
from clawplane.schema import openclaw as openclaw_schema


def schema(
    root: Annotated[Path, typer.Option("--root", help="Repository root to write into.")] = Path("."),
    check: Annotated[
        bool, typer.Option("--check", help="Only check; exit 1 naming every stale file.")
    ] = False,
    openclaw_command: Annotated[
        str | None,
        typer.Option(
            "--openclaw-command",
            help="Also take OpenClaw's config schema from this OpenClaw (e.g. 'openclaw' or "
            "'node …/openclaw.mjs'): what its `config schema` prints, with its licence.",
        ),
    ] = None,
) -> None:
    """Generate schemas/*.schema.json and manifests/crds/*.yaml (and the chart's CRDs and the docs
    references) from the models, the CLI and OpenClaw's config schema."""
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
    # The docs references exist only in a checkout with the docs site (not in a chart-only copy).
    pages = _reference_pages() if (root / "docs" / "reference").is_dir() else {}
    if openclaw_command is not None:
        _openclaw_schema(shlex.split(openclaw_command), check=check)
    if check:
        stale = stale_files(root, include_chart=include_chart) + stale_among(root, pages)
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
    written = write_files(root, include_chart=include_chart) + write_among(root, pages)
    for rel in written:
        out.print(f"wrote {rel}", markup=False)
    out.print(
        f"{len(written)} file(s) written" if written else "generated files are up to date", markup=False
    )


def _reference_pages() -> dict[Path, str]:
    """docs/reference/*.md, from the CLI and the models (imported only when a checkout has docs)."""
    from clawplane.cli.reference import reference_pages

    return reference_pages()


def _openclaw_schema(command: list[str], *, check: bool) -> None:
    """OpenClaw's config schema as ``command`` prints it: compared, or written and then used."""
    from clawplane.schema.openclaw.generate import GenerateError, print_schema, stale, write

    try:
        printed = print_schema(command)
    except GenerateError as exc:
        err.print(f"cannot take OpenClaw's config schema: {exc}", markup=False)
        raise typer.Exit(EXIT_INVALID) from None
    found = f"OpenClaw {printed.version} ({printed.build})"
    if check:
        for path in stale(printed):
            err.print(f"stale: {path} (differs from what {found} prints)", markup=False)
        if stale(printed):
            raise typer.Exit(EXIT_INVALID)
        out.print(f"OpenClaw's config schema is what {found} prints", markup=False)
        return
    for path in write(printed):
        out.print(f"wrote {path} (from {found})", markup=False)
    # The files derived from it (schemas/, CRDs) are generated next from the new copy.
    openclaw_schema.reload()
