"""JSON documents of ``clawplane skills list/check``, keyed like OpenClaw's ``skills list/check --json``.

Keys OpenClaw prints keep its names and meaning (``eligible``, ``blockedByAllowlist``,
``modelVisible``, ``summary.notInjected``…; absent optional values are left out as
``JSON.stringify`` leaves out ``undefined``). clawplane adds ``agentId`` to the
listing, ``reasons`` and ``inPrompt`` per skill, a ``prompt`` summary, and the
``diagnostics``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawplane.diagnostics import Diagnostic
from clawplane.skills.snapshot import AgentSnapshot, SkillStatus

__all__ = ["check_document", "list_document"]


def _prompt_summary(snapshot: AgentSnapshot) -> dict[str, Any]:
    prompt = snapshot.prompt
    return {
        "chars": prompt.chars,
        "format": prompt.format,
        "truncated": prompt.truncated,
        "skills": list(prompt.skills),
        "contentHash": snapshot.content_hash,
    }


def _list_entry(status: SkillStatus) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": status.name, "description": status.description}
    if status.emoji:
        entry["emoji"] = status.emoji
    entry.update(
        {
            "eligible": status.eligible,
            "disabled": status.disabled,
            "blockedByAllowlist": status.blocked_by_allowlist,
            "blockedByAgentFilter": status.blocked_by_agent_filter,
            "modelVisible": status.model_visible,
            "userInvocable": status.user_invocable,
            "commandVisible": status.command_visible,
            "source": status.source,
            "bundled": status.bundled,
        }
    )
    if status.primary_env is not None:
        entry["primaryEnv"] = status.primary_env
    if status.homepage:
        entry["homepage"] = status.homepage
    entry["missing"] = status.missing.to_dict()
    entry["inPrompt"] = status.in_prompt
    entry["reasons"] = list(status.reasons)
    return entry


def list_document(
    snapshot: AgentSnapshot, diagnostics: Sequence[Diagnostic], *, eligible_only: bool = False
) -> dict[str, Any]:
    """``skills list --json``."""
    skills = [
        s for s in snapshot.skills if not eligible_only or (s.eligible and not s.blocked_by_agent_filter)
    ]
    return {
        "agentId": snapshot.agent_id,
        "workspaceDir": snapshot.workspace_dir,
        "managedSkillsDir": snapshot.managed_skills_dir,
        "skills": [_list_entry(s) for s in skills],
        "prompt": _prompt_summary(snapshot),
        "diagnostics": [d.to_dict() for d in diagnostics],
    }


def _missing_requirements(status: SkillStatus) -> bool:
    return not status.eligible and not status.disabled and not status.blocked_by_allowlist


def check_document(snapshot: AgentSnapshot, diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    """``skills check --json``: counts, names per category, and what is missing."""
    skills = snapshot.skills
    eligible = [s for s in skills if s.eligible]
    model = [s for s in skills if s.model_visible]
    command = [s for s in skills if s.command_visible]
    disabled = [s for s in skills if s.disabled]
    blocked = [s for s in skills if s.blocked_by_allowlist and not s.disabled]
    filtered = [s for s in skills if s.blocked_by_agent_filter]
    hidden = [s for s in skills if s.eligible and not s.blocked_by_agent_filter and not s.model_visible]
    missing = [s for s in skills if _missing_requirements(s)]
    doc: dict[str, Any] = {"agentId": snapshot.agent_id}
    if snapshot.skill_filter is not None:
        doc["agentSkillFilter"] = list(snapshot.skill_filter)
    doc.update(
        {
            "workspaceDir": snapshot.workspace_dir,
            "managedSkillsDir": snapshot.managed_skills_dir,
            "summary": {
                "total": len(skills),
                "eligible": len(eligible),
                "modelVisible": len(model),
                "commandVisible": len(command),
                "disabled": len(disabled),
                "blocked": len(blocked),
                "agentFiltered": len(filtered),
                "notInjected": len(hidden),
                "missingRequirements": len(missing),
            },
            "eligible": [s.name for s in eligible],
            "modelVisible": [s.name for s in model],
            "commandVisible": [s.name for s in command],
            "disabled": [s.name for s in disabled],
            "blocked": [s.name for s in blocked],
            "agentFiltered": [s.name for s in filtered],
            "notInjected": [{"name": s.name, "reason": "disable-model-invocation"} for s in hidden],
            "missingRequirements": [
                {
                    "name": s.name,
                    "missing": s.missing.to_dict(),
                    "install": [option.to_dict() for option in s.install],
                }
                for s in missing
            ],
            "prompt": _prompt_summary(snapshot),
            "diagnostics": [d.to_dict() for d in diagnostics],
        }
    )
    return doc
