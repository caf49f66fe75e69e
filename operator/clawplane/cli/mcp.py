"""``clawplane mcp``: work with the MCP servers a folder declares (``probe`` for now).

``clawplane mcp probe PATH [NAME] [--json]`` is modelled on ``openclaw mcp probe --json``:
it starts every enabled server (or just NAME), lists its tools, tears it down and prints
the sanitized tool names, the filtered counts and any diagnostics. ``--url URL``
(``--transport``, ``--header``) probes one remote server without a folder, and ``--call
TOOL --args JSON`` calls one tool of the probed server and prints its result. Exit 1 when a
server could not be probed, the folder does not validate or the call failed; 2 for a wrong
command line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_OK, err, out, print_diagnostic
from clawplane.cli.probing import (
    TRANSPORTS,
    Secrets,
    escape,
    parse_args,
    parse_headers,
    print_call,
    url_target,
    usage_error,
)
from clawplane.models import McpServer
from clawplane.validation import validate_paths

if TYPE_CHECKING:
    from clawplane.runtimes import ProbeCall, ProbeReport, ProbeTarget

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


def _print_text(report: ProbeReport, where: str, redact: Secrets) -> None:
    out.print(redact(f"MCP probe ({where}):"), markup=False)
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
        out.print(redact(escape(f"! {diagnostic.server_name}: {diagnostic.message}")), markup=False)
        for line in diagnostic.stderr:
            out.print(redact(escape(f"    stderr: {line}")), markup=False)


@app.command("probe")
def probe(
    path: Annotated[
        Path | None, typer.Argument(help="Resource file or folder declaring McpServer resources.")
    ] = None,
    name: Annotated[str | None, typer.Argument(help="Probe only this server.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (the shape of `openclaw mcp probe --json`).")
    ] = False,
    url: Annotated[
        str | None, typer.Option("--url", help="Probe the MCP server at this URL instead of a folder's.")
    ] = None,
    transport: Annotated[
        str, typer.Option("--transport", help=f"Transport of --url: {' or '.join(TRANSPORTS)}.")
    ] = "streamable-http",
    header: Annotated[
        list[str] | None,
        typer.Option("--header", help="HTTP header 'Name: value' for --url (repeatable; shown redacted)."),
    ] = None,
    call: Annotated[
        str | None, typer.Option("--call", help="Call this tool (its MCP name) and print its result.")
    ] = None,
    args: Annotated[
        str | None, typer.Option("--args", help="Arguments of --call, a JSON object (default {}).")
    ] = None,
) -> None:
    """Connect to MCP servers (a folder's, or one at --url), list their tools, then stop them."""
    if args is not None and call is None:
        raise usage_error("--args needs --call TOOL: the arguments are for that tool")
    arguments = parse_args(args)
    if url is not None:
        if path is not None:
            raise usage_error("give either PATH (a folder's servers) or --url, not both")
        headers = parse_headers(header or [])
        redact = Secrets(list(headers.values()))
        targets = [url_target(url, transport, headers)]
        from clawplane.runtimes import redact_url

        where = redact(redact_url(url))
    else:
        if path is None:
            raise usage_error("give PATH (a resource file or folder) or --url URL; see --help")
        if header or transport != "streamable-http":
            raise usage_error("--header and --transport apply to --url; a folder's servers declare their own")
        redact = Secrets()
        targets = _select(_targets(path), name, path)
        where = str(path)
        if not any(t.spec.enabled for t in targets):
            out.print(f"No enabled MCP servers in {path}.", markup=False)
            raise typer.Exit(EXIT_OK)
    planned = _planned_call(call, arguments, targets, name)
    from clawplane.runtimes import probe_servers

    report = anyio.run(lambda: probe_servers(targets, call=planned))
    hint = None
    if url is not None:
        hint = (
            f"check that an MCP server answers at {where} over {transport} (an SSE server is usually "
            "at .../sse, with --transport sse) and that every --header it needs is given"
        )
    _report(report, where, redact, as_json=as_json, hint=hint)


def _planned_call(
    tool: str | None, arguments: dict[str, object], targets: list[ProbeTarget], name: str | None
) -> ProbeCall | None:
    if tool is None:
        return None
    enabled = [t for t in targets if t.spec.enabled]
    if len(enabled) != 1:
        raise usage_error(f"--call needs one server: give its NAME after PATH ({len(enabled)} enabled here)")
    from clawplane.runtimes import ProbeCall

    return ProbeCall(server=enabled[0].name, tool=tool, arguments=arguments)


def _report(report: ProbeReport, where: str, redact: Secrets, *, as_json: bool, hint: str | None) -> None:
    for server in report.servers.values():
        for warning in server.warnings:
            err.print(redact(f'warning: MCP server "{server.name}": {warning}'), markup=False)
    for entry in report.renamed:
        err.print(
            f'info: tool "{entry.tool}" from server "{entry.server}" registered as "{entry.name}" '
            "to keep the tool name provider-safe.",
            markup=False,
        )
    if as_json:
        text = json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
        out.print(redact(text), markup=False, soft_wrap=True, highlight=False)
    else:
        _print_text(report, where, redact)
        if report.call is not None:
            print_call(report.call, redact)
    if report.diagnostics:
        first = report.diagnostics[0]
        message = f'MCP probe failed for "{first.server_name}" in {where}: {first.message}'
        err.print(redact(escape(message)), markup=False)
        if hint:
            err.print(hint, markup=False)
        raise typer.Exit(EXIT_INVALID)
    outcome = report.call
    if outcome is not None and outcome.error is not None:
        err.print(
            redact(escape(f'calling tool "{outcome.tool}" on "{outcome.server}" failed: {outcome.error}')),
            markup=False,
        )
        raise typer.Exit(EXIT_INVALID)
    if outcome is not None and not outcome.ok:
        message = f'tool "{outcome.tool}" reported an error (its result is above); check the --args given'
        err.print(escape(message), markup=False)
        raise typer.Exit(EXIT_INVALID)
