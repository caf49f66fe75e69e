"""``clawplane doctor``: find (and fix) legacy keys, stale references and risky settings."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from clawplane.cli.console import EXIT_INVALID, out


def _known_skills(paths: list[Path]) -> set[str] | None:
    """Every skill name discovered for the folder, or None when it does not validate."""
    from clawplane.skills import GatewaySkills, Host, Placed, SkillsEngine
    from clawplane.validation import validate_paths

    result = validate_paths(paths)
    if not result.ok:
        return None

    def placed(kind: str) -> list[Placed[Any]]:
        return [Placed(r.resource, Path(r.source.file).resolve().parent) for r in result.of_kind(kind)]

    gateways = placed("Gateway")
    with tempfile.TemporaryDirectory() as state:  # inline skills are materialised, never into the folder
        setup = GatewaySkills.from_resources(
            gateways[0] if gateways else None, placed("Agent"), placed("Skill"), Path(state)
        )
        setup.materialize()
        engine, names = SkillsEngine(), set()
        for agent_id in setup.agent_ids():
            inputs, _ = setup.inputs_for(agent_id, Host.current())
            names |= {s.name for s in engine.evaluate(inputs).snapshot.skills}
    return names


_OPENCLAW_CODES = ("openclaw.", "schema.unknown-field", "gateway.section-of-another-kind")
"""Validation's findings against OpenClaw's schema: doctor has no check of its own for them."""


def _openclaw_findings(paths: list[Path]) -> list[dict[str, Any]]:
    """What OpenClaw's config schema refuses in the folder, as ``clawplane validate`` reports it."""
    from clawplane.validation import validate_paths

    return [
        d.to_dict()
        for d in validate_paths(paths).diagnostics.sorted()
        if d.severity.value in ("error", "warning") and d.code.startswith(_OPENCLAW_CODES)
    ]


def _render_problems(paths: list[Path]) -> list[dict[str, Any]]:
    """What the rendered configs of each folder would leave out (``render.*``), as plan shows it."""
    from clawplane.reconcile.engine import Engine, InvalidFolderError
    from clawplane.reconcile.rendered.writing import is_render_problem, problem_doc
    from clawplane.state import ObservedState
    from clawplane.workspace import Workspace

    problems: list[dict[str, Any]] = []
    for folder in (p for p in paths if p.is_dir()):
        with tempfile.TemporaryDirectory() as state:  # nothing is written into the folder
            engine = Engine(Workspace.for_folder(folder, state_dir=Path(state)))
            try:
                desired, _ = engine.load()
            except InvalidFolderError:
                continue  # the validation findings above say why
            observed = ObservedState()
            engine.renderer.render(desired, observed, expected_urls=engine.expected_urls(desired, observed))
            problems.extend(problem_doc(d) for d in engine.renderer.diagnostics if is_render_problem(d))
    return problems


def doctor(
    paths: Annotated[list[Path], typer.Argument(help="Resource files or folders.", exists=True)],
    fix: Annotated[
        bool, typer.Option("--fix", help="Rewrite fixable findings in place (comments and layout kept).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print findings as JSON.")] = False,
) -> None:
    """Find legacy keys, stale references, literal secrets, missing commands and name collisions."""
    from clawplane.editing import doctor_paths

    report = doctor_paths(list(paths), fix=fix, known_skills=_known_skills(paths))
    schema = _openclaw_findings(list(paths))
    rendering = _render_problems(list(paths))
    render_errors = any(p["severity"] == "error" for p in [*rendering, *schema])
    if as_json:
        doc = {
            "ok": not report.has_errors and not render_errors,
            "findings": [f.to_dict() for f in report.findings],
            "openclawSchema": schema,
            "renderProblems": rendering,
            "written": report.written,
        }
        out.print(json.dumps(doc, indent=2, ensure_ascii=False), markup=False)
    else:
        for f in report.findings:
            state = " [fixed]" if f.fixed else ""
            where = f"{f.file}:{f.line}:{f.column}"
            out.print(f"{where}: {f.severity}[{f.code}]: {f.message}{state}", markup=False)
            if f.hint:
                out.print(f"  hint: {f.hint}", markup=False)
            if f.fix:
                verb = "fixed" if f.fixed else "fix"
                out.print(f"  {verb}: {f.fix}" + ("" if f.fixed else " (run with --fix)"), markup=False)
        for d in schema:
            out.print(
                f"{d['file']}:{d['line']}:{d['column']}: {d['severity']}[{d['code']}]: {d['message']}",
                markup=False,
            )
            if d.get("hint"):
                out.print(f"  hint: {d['hint']}", markup=False)
        for problem in rendering:
            where = f"{problem['resource']}: " if problem.get("resource") else ""
            at = f" (at {problem['path']})" if problem.get("path") else ""
            out.print(
                f"{where}{problem['severity']}[{problem['code']}]: {problem['message']}{at}", markup=False
            )
            if problem.get("hint"):
                out.print(f"  hint: {problem['hint']}", markup=False)
        for path in report.written:
            out.print(f"wrote {path}", markup=False)
        fixed = sum(1 for f in report.findings if f.fixed)
        remaining = len(report.remaining) + len(schema)
        fixable = sum(1 for f in report.remaining if f.fix)
        out.print(
            f"{len(report.findings) + len(schema)} finding(s): {fixed} fixed, {remaining} remaining"
            + (f" ({fixable} fixable with --fix)" if fixable else ""),
            markup=False,
        )
    if report.has_errors or render_errors:
        raise typer.Exit(EXIT_INVALID)
