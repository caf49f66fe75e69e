"""``clawplane skills list|check|prompt``: what each agent gets from its skills, as OpenClaw would give it."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from clawplane.cli.console import EXIT_INVALID, EXIT_OK, err, out, print_diagnostic
from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Agent, Gateway, Skill
from clawplane.validation import validate_paths

if TYPE_CHECKING:  # the skills engine is imported when a command runs, so other commands start fast
    from clawplane.skills import AgentSnapshot, GatewaySkills, SkillStatus

skills_app = typer.Typer(
    name="skills",
    help="Show which skills each agent gets, why others are left out, and the prompt text.",
    no_args_is_help=True,
)

PathArg = Annotated[Path, typer.Argument(help="Resource file or folder.", exists=True)]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="Agent id (default: the only agent).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (keys as OpenClaw's --json).")]


@dataclass(frozen=True)
class _Evaluated:
    snapshot: AgentSnapshot
    diagnostics: list[Diagnostic]


def _evaluate(path: Path, agent: str | None) -> _Evaluated:
    from clawplane.skills import GatewaySkills, Host, Placed, SkillsEngine

    """Validate the folder, write inline skills, and evaluate one agent."""
    result = validate_paths([path])
    if result.diagnostics.has_errors:
        for d in result.diagnostics.sorted():
            print_diagnostic(err, d)
        err.print("the resources do not validate", markup=False)
        raise typer.Exit(EXIT_INVALID)
    folder = path if path.is_dir() else path.parent
    gateways = [
        Placed(r.resource, Path(r.source.file).parent)
        for r in result.of_kind("Gateway")
        if isinstance(r.resource, Gateway)
    ]
    agents = [
        Placed(r.resource, Path(r.source.file).parent)
        for r in result.of_kind("Agent")
        if isinstance(r.resource, Agent)
    ]
    skills = [
        Placed(r.resource, Path(r.source.file).parent)
        for r in result.of_kind("Skill")
        if isinstance(r.resource, Skill)
    ]
    setup = GatewaySkills.from_resources(
        gateways[0] if gateways else None, agents, skills, folder.resolve() / ".clawplane"
    )
    agent_id = _agent_id(setup, agent)
    diags = setup.materialize()
    inputs, problems = setup.inputs_for(agent_id, Host.current())
    evaluation = SkillsEngine().evaluate(inputs)
    return _Evaluated(evaluation.snapshot, [*diags, *problems, *evaluation.diagnostics])


def _agent_id(setup: GatewaySkills, agent: str | None) -> str:
    from clawplane.skills.adapter import normalize_agent_id

    ids = setup.agent_ids()
    if agent is not None:
        wanted = normalize_agent_id(agent)
        if wanted not in ids:
            err.print(f'error: unknown agent id "{agent}" (agents: {", ".join(ids)})', markup=False)
            raise typer.Exit(EXIT_INVALID)
        return wanted
    chosen = setup.default_agent_id()
    if chosen is None:
        err.print(f"error: several agents are declared ({', '.join(ids)}); pass --agent ID", markup=False)
        raise typer.Exit(EXIT_INVALID)
    return chosen


def _print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _print_diagnostics(diags: list[Diagnostic]) -> None:
    for d in diags:
        if d.severity is not Severity.INFO:
            print_diagnostic(err, d)


def _status_word(status: SkillStatus) -> str:
    if status.disabled:
        return "[yellow]disabled[/]"
    if status.blocked_by_allowlist:
        return "[yellow]blocked[/]"
    if status.blocked_by_agent_filter:
        return "[yellow]excluded[/]"
    if status.eligible:
        return "[green]ready[/]"
    return "[yellow]needs setup[/]"


@skills_app.command("list")
def list_skills(
    path: PathArg,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
    eligible: Annotated[bool, typer.Option("--eligible", help="Only skills ready for the agent.")] = False,
) -> None:
    """List every discovered skill with its status for one agent."""
    evaluated = _evaluate(path, agent)
    snapshot = evaluated.snapshot
    if as_json:
        from clawplane.skills.report import list_document

        _print_json(list_document(snapshot, evaluated.diagnostics, eligible_only=eligible))
        raise typer.Exit(EXIT_OK)
    _print_diagnostics(evaluated.diagnostics)
    shown = [s for s in snapshot.skills if not eligible or (s.eligible and not s.blocked_by_agent_filter)]
    ready = sum(1 for s in shown if s.eligible and not s.blocked_by_agent_filter)
    out.print(f"[bold]Skills[/] for agent {escape(snapshot.agent_id)} ({ready}/{len(shown)} ready)")
    table = Table(box=None, pad_edge=False)
    for column in ("Status", "Skill", "Source", "Why left out", "Description"):
        table.add_column(column)
    for s in shown:
        table.add_row(
            _status_word(s), escape(s.name), s.source, escape(", ".join(s.reasons)), escape(s.description)
        )
    out.print(table)
    out.print(
        f"prompt: {snapshot.prompt.chars} characters, {len(snapshot.prompt.skills)} skills "
        f"({snapshot.prompt.format})",
        markup=False,
    )


@skills_app.command("check")
def check_skills(path: PathArg, agent: AgentOpt = None, as_json: JsonOpt = False) -> None:
    """Summary counts and the reason behind every skill an agent does not get."""
    evaluated = _evaluate(path, agent)
    from clawplane.skills.report import check_document

    doc = check_document(evaluated.snapshot, evaluated.diagnostics)
    if as_json:
        _print_json(doc)
        raise typer.Exit(EXIT_OK)
    _print_diagnostics(evaluated.diagnostics)
    summary = doc["summary"]
    out.print(f"[bold]Skills check[/] for agent {escape(evaluated.snapshot.agent_id)}")
    for key, label in (
        ("total", "Total"),
        ("eligible", "Eligible"),
        ("modelVisible", "Visible to model"),
        ("commandVisible", "Available as command"),
        ("disabled", "Disabled"),
        ("blocked", "Blocked by allowlist"),
        ("agentFiltered", "Excluded by agent allowlist"),
        ("notInjected", "Ready but hidden from model prompt"),
        ("missingRequirements", "Missing requirements"),
    ):
        out.print(f"  {label}: {summary[key]}", markup=False)
    for status in evaluated.snapshot.skills:
        if status.reasons:
            out.print(f"  {status.name}: {', '.join(status.reasons)}{_missing_text(status)}", markup=False)
    prompt = evaluated.snapshot.prompt
    out.print(
        f"prompt: {prompt.chars} characters, {len(prompt.skills)} skills ({prompt.format})", markup=False
    )


def _missing_text(status: SkillStatus) -> str:
    parts = [f"{key}: {', '.join(values)}" for key, values in status.missing.to_dict().items() if values]
    return f" ({'; '.join(parts)})" if parts else ""


@skills_app.command("prompt")
def prompt_text(
    path: PathArg,
    agent: Annotated[str, typer.Option("--agent", "-a", help="Agent id.")],
) -> None:
    """Print exactly the skills catalog text of the agent's prompt, nothing else."""
    evaluated = _evaluate(path, agent)
    sys.stdout.write(evaluated.snapshot.prompt.text)
    sys.stdout.flush()
