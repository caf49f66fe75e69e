"""``clawplane mcp``: work with the MCP servers a folder declares (``probe`` for now).

``clawplane mcp probe PATH [NAME] [--json]`` is modelled on ``openclaw mcp probe --json``:
it starts every enabled server (or just NAME), lists its tools, tears it down and prints
the sanitized tool names, the filtered counts and any diagnostics. Exit 1 when a server
could not be probed (or the folder does not validate).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_OK, err, out, print_diagnostic
from clawplane.models import McpServer
from clawplane.validation import validate_paths

if TYPE_CHECKING:
    from clawplane.runtimes import ProbeReport, ProbeTarget

app = typer.Typer(
    name="mcp",
    help="Work with declared MCP servers.",
    epilog=(
        "`clawplane mcp serve PATH` serves the control plane itself over stdio "
        "(see `clawplane mcp serve --help`)."
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _targets(path: Path) -> list[ProbeTarget]:
    from clawplane.runtimes import ProbeTarget  # the MCP SDK is slow to import; only probing needs it

    result = validate_paths([path])
    if result.diagnostics.has_errors:
        for diagnostic in result.diagnostics.sorted():
            print_diagnostic(err, diagnostic)
        err.print("the folder does not validate; run `clawplane validate` for details", markup=False)
        raise typer.Exit(EXIT_INVALID)
    return [
        ProbeTarget(name=item.resource.name, spec=item.resource.spec, base_dir=Path(item.source.file).parent)
        for item in result.resources
        if isinstance(item.resource, McpServer)
    ]


def _select(targets: list[ProbeTarget], name: str | None, path: Path) -> list[ProbeTarget]:
    if name is None:
        return targets
    chosen = [t for t in targets if t.name == name]
    if not chosen:
        err.print(f'No MCP server named "{name}" in {path}.', markup=False)
        raise typer.Exit(EXIT_INVALID)
    if not chosen[0].spec.enabled:
        err.print(
            f'MCP server "{name}" is disabled in {path}; set `enabled: true` to probe it.', markup=False
        )
        raise typer.Exit(EXIT_INVALID)
    return chosen


def _print_text(report: ProbeReport, path: Path) -> None:
    out.print(f"MCP probe ({path}):", markup=False)
    for name in sorted(report.servers):
        server = report.servers[name]
        extras = "".join(
            f", {kind}" for kind, on in (("resources", server.resources), ("prompts", server.prompts)) if on
        )
        filtered = f" ({server.filtered_tools} filtered)" if server.filtered_tools else ""
        out.print(
            f"- {name}: {server.tools} tools{filtered}{extras}, Codex approval {server.codex_approval_mode}",
            markup=False,
        )
        if server.approval_hint:
            out.print(f"  i {server.approval_hint}", markup=False)
        for entry in report.catalog:
            if entry.server == name:
                out.print(f"    {entry.name}", markup=False)
    for diagnostic in report.diagnostics:
        out.print(f"! {diagnostic.server_name}: {diagnostic.message}", markup=False)
        for line in diagnostic.stderr:
            out.print(f"    stderr: {line}", markup=False)


@app.command("probe")
def probe(
    path: Annotated[Path, typer.Argument(help="Resource file or folder declaring McpServer resources.")],
    name: Annotated[str | None, typer.Argument(help="Probe only this server.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (the shape of `openclaw mcp probe --json`).")
    ] = False,
) -> None:
    """Connect to the declared MCP servers, list their tools, then stop them."""
    targets = _select(_targets(path), name, path)
    if not any(t.spec.enabled for t in targets):
        out.print(f"No enabled MCP servers in {path}.", markup=False)
        raise typer.Exit(EXIT_OK)
    from clawplane.runtimes import probe_servers

    report = anyio.run(probe_servers, targets)
    for server in report.servers.values():
        for warning in server.warnings:
            err.print(f'warning: MCP server "{server.name}": {warning}', markup=False)
    for entry in report.renamed:
        err.print(
            f'info: tool "{entry.tool}" from server "{entry.server}" registered as "{entry.name}" '
            "to keep the tool name provider-safe.",
            markup=False,
        )
    if as_json:
        out.print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), markup=False, soft_wrap=True)
    else:
        _print_text(report, path)
    if report.diagnostics:
        first = report.diagnostics[0]
        err.print(f'MCP probe failed for "{first.server_name}" in {path}: {first.message}', markup=False)
        raise typer.Exit(EXIT_INVALID)
