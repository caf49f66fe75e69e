"""Per-agent skills-prompt sizes of a desired state, for ``clawplane diff``.

The skills engine builds each agent's snapshot from the folder as it lies on disk. A
static diff compiles git revisions in temporary folders, and skill locations are part
of the prompt text, so the catalog is fitted again with every location moved back to
where the files really live (``relocate``): both sides of a diff then count the same
paths, and a change that touches no skill shows no prompt delta. The size is OpenClaw's
``snapshot.prompt.chars``: UTF-16 code units of the budgeted catalog.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clawplane.desired import DesiredState
from clawplane.jscompat import locale_sort_key, utf16_len
from clawplane.models import Agent, Gateway, Skill
from clawplane.skills import (
    AgentSnapshot,
    GatewaySkills,
    Host,
    Placed,
    PromptSkill,
    SkillsEngine,
    prepare_prompt,
)
from clawplane.skills.prompt import compact_home_paths

Relocation = tuple[str, str]
"""``(where the files are now, where they really live)``: absolute folder paths."""


def prompt_chars(
    desired: DesiredState, *, state_dir: Path, relocate: Sequence[Relocation] = (), host: Host | None = None
) -> dict[str, int]:
    """Prompt size per agent (keyed like ``desired.agents``); inline skills go under ``state_dir``."""
    setup = GatewaySkills.from_resources(
        _first(_placed(desired, Gateway)), _placed(desired, Agent), _placed(desired, Skill), state_dir
    )
    setup.materialize()
    host = host or Host.current()
    engine = SkillsEngine()
    engine.cache.begin_pass()  # agents share roots: scan each root once
    out: dict[str, int] = {}
    for agent in desired.agents:
        inputs, _ = setup.inputs_for(agent, host)
        out[agent] = relocated_chars(engine.evaluate(inputs).snapshot, relocate, host.home)
    return out


def relocated_chars(snapshot: AgentSnapshot, relocate: Sequence[Relocation], home: str | None) -> int:
    """The snapshot's prompt size with skill locations moved by ``relocate``."""
    shown = [s for s in snapshot.skills if s.model_visible and s.prompt_eligible]
    entries = [PromptSkill(s.name, s.description, moved(s.file_path, relocate)) for s in shown]
    if all(e.file_path == s.file_path for e, s in zip(entries, shown, strict=True)):
        return snapshot.prompt.chars  # nothing moved: the engine's own count
    info = snapshot.prompt
    prompt = prepare_prompt(
        compact_home_paths(entries, home),
        max_skills=info.max_skills,
        max_chars=info.max_chars,
        sort_key=locale_sort_key,
    )
    return utf16_len(prompt.text)


def moved(path: str, relocate: Sequence[Relocation]) -> str:
    """``path`` under the first matching source folder, rewritten under its target."""
    for source, target in relocate:
        if path == source or path.startswith(source.rstrip(os.sep) + os.sep):
            return target + path[len(source.rstrip(os.sep)) :]
    return path


def _placed(desired: DesiredState, kind: type[Any]) -> list[Placed[Any]]:
    found = desired.resources.values()
    return [Placed(r.resource, r.base_dir) for r in found if isinstance(r.resource, kind)]


def _first(items: list[Placed[Any]]) -> Placed[Any] | None:
    return items[0] if items else None


__all__ = ["Relocation", "moved", "prompt_chars", "relocated_chars"]
