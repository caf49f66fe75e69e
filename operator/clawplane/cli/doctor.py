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


def doctor(
    paths: Annotated[list[Path], typer.Argument(help="Resource files or folders.", exists=True)],
    fix: Annotated[
        bool, typer.Option("--fix", help="Rewrite fixable findings in place (comments and layout kept).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print findings as JSON.")] = False,
) -> None:
    """Find legacy keys, stale references, literal secrets, missing commands and name collisions."""
    from clawplane.validation.doctor import doctor_paths

    report = doctor_paths(list(paths), fix=fix, known_skills=_known_skills(paths))
    if as_json:
        doc = {
            "ok": not report.has_errors,
            "findings": [f.to_dict() for f in report.findings],
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
        for path in report.written:
            out.print(f"wrote {path}", markup=False)
        fixed = sum(1 for f in report.findings if f.fixed)
        remaining = len(report.remaining)
        fixable = sum(1 for f in report.remaining if f.fix)
        out.print(
            f"{len(report.findings)} finding(s): {fixed} fixed, {remaining} remaining"
            + (f" ({fixable} fixable with --fix)" if fixable else ""),
            markup=False,
        )
    if report.has_errors:
        raise typer.Exit(EXIT_INVALID)
