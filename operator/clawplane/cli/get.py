"""``clawplane get``: list the resources a folder declares, one line each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from clawplane.cli.console import EXIT_INVALID, out, print_diagnostic
from clawplane.models import Agent, Channel, Gateway, McpServer, Resource, Skill
from clawplane.naming import redact_url_userinfo
from clawplane.validation import validate_paths


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


def summarize(res: Resource) -> str:
    """A one-line description of a resource that never shows a secret."""
    if isinstance(res, McpServer):
        spec = res.spec
        transport = spec.effective_transport.value if spec.effective_transport else "?"
        target = " ".join([spec.command or "", *spec.args]).strip() if transport == "stdio" else ""
        if spec.url:
            target = redact_url_userinfo(spec.url)[0]
        state = "" if spec.enabled else " (disabled)"
        return f"{transport} {target}{state}".strip()
    if isinstance(res, Agent):
        skills = (
            "inherits skills"
            if res.spec.skills is None
            else f"skills: {', '.join(res.spec.skills) or 'none'}"
        )
        servers = (
            "all servers" if res.spec.mcp_servers is None else f"servers: {', '.join(res.spec.mcp_servers)}"
        )
        return f"{skills}; {servers}"
    if isinstance(res, Channel):
        agent = f" -> {res.spec.agent}" if res.spec.agent else ""
        return f"{res.spec.type} dm={res.spec.dm_policy.value} groups={res.spec.group_policy.value}{agent}"
    if isinstance(res, Skill):
        return res.spec.description
    if isinstance(res, Gateway):
        defaults = res.spec.agents.defaults.skills
        return "default skills: " + ("unrestricted" if defaults is None else ", ".join(defaults) or "none")
    return ""
