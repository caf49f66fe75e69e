"""Precedence merge: one skill per name, the later tier winning, collisions reported.

Records are fed tier by tier (extra, bundled, workshop, managed, personal,
workspace), roots in their configured order within a tier; the bundled tier is
first sorted by name and source (so custodian beats bundled). A later record
with the same name replaces the earlier one; the final list is sorted by name
the way ``localeCompare(…, "en")`` sorts. A replacement from a different file is
a collision, reported unless both files are identical in content, name,
description and model visibility (OpenClaw stays quiet about those too); its message
writes paths under the home directory as ``~/…``, as OpenClaw's console line does.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawplane.diagnostics import Diagnostic
from clawplane.jscompat import locale_sort_key
from clawplane.skills import codes
from clawplane.skills.prompt import compact_home_path
from clawplane.skills.types import TIER_ORDER, SkillRecord, SkillRoot, Tier

__all__ = ["merge_records"]


def merge_records(
    loads: Sequence[tuple[SkillRoot, Sequence[SkillRecord]]],
    home: str | None = None,
) -> tuple[list[SkillRecord], list[Diagnostic]]:
    """The winning record per skill name, sorted by name, and the collision diagnostics."""
    grouped: dict[Tier, list[SkillRecord]] = {tier: [] for tier in TIER_ORDER}
    for root, records in loads:
        grouped[root.tier].extend(records)
    grouped[Tier.BUNDLED].sort(key=lambda r: (locale_sort_key(r.name), locale_sort_key(r.source)))
    merged: dict[str, SkillRecord] = {}
    diags: list[Diagnostic] = []
    for tier in TIER_ORDER:
        for record in grouped[tier]:
            loser = merged.get(record.name)
            moved = loser is not None and loser.real_file_path != record.real_file_path
            if moved and loser is not None and not _same_skill(record, loser):
                diags.append(_collision(record, loser, home))
            merged[record.name] = record
    return sorted(merged.values(), key=lambda r: locale_sort_key(r.name)), diags


def _same_skill(a: SkillRecord, b: SkillRecord) -> bool:
    return (
        a.content_hash == b.content_hash
        and a.name == b.name
        and a.description == b.description
        and a.invocation.disable_model_invocation == b.invocation.disable_model_invocation
    )


def _collision(winner: SkillRecord, loser: SkillRecord, home: str | None) -> Diagnostic:
    won, lost = compact_home_path(winner.file_path, home), compact_home_path(loser.file_path, home)
    message = (
        f'Skill precedence collision: skill="{winner.name[:128]}" '
        f"winner={winner.source}:{won} loser={loser.source}:{lost}"
    )
    return codes.skill_diagnostic(
        codes.COLLISION, message, winner.file_path, hint=f"the {loser.source} copy at {lost} is ignored"
    )
