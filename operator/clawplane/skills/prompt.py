"""The skills catalog an agent's system prompt carries, character for character as OpenClaw 2026.9.6.

Layout (``formatSkillsForPromptCore``): two newlines and a heading sentence,
how to load a skill, how to resolve relative paths, an empty line, then
``<available_skills>`` with one ``<skill>`` block per skill; lines are joined
with ``\\n`` and there is no trailing newline. Names, descriptions and
locations are XML-escaped (``&``, ``<``, ``>``, ``"``, ``'`` in that order).

Lengths are UTF-16 code units: in full mode the text is 370 units plus 97 per
skill plus the escaped name, description and location. The seed document said
195: that figure matches no released OpenClaw (pi-coding-agent 0.73.1 gives
368, @earendil-works/pi-coding-agent 1.6.0 gives 304) and the real 2026.9.6
output is 370, so 370 it is.

Budget (``prepareSkillsForPrompt``): skills sorted by name, at most
``maxSkillsInPrompt`` (150), and the text at most ``maxSkillsPromptChars``
(18000, an agent's ``skillsLimits`` overriding). When the full text does not
fit: the longest prefix that fits in compact form without descriptions, then
the longest description cut (4 to 220 units, whitespace collapsed, ``...``
appended) that still fits, with a warning line in front of the catalog.
Locations under the home directory are written ``~/…``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clawplane.jscompat import JS_WHITESPACE, js_trim, utf16_cut, utf16_len

__all__ = [
    "DEFAULT_MAX_SKILLS_IN_PROMPT",
    "DEFAULT_MAX_SKILLS_PROMPT_CHARS",
    "PromptResult",
    "PromptSkill",
    "compact_home_path",
    "compact_home_paths",
    "escape_xml",
    "format_compact",
    "format_full",
    "prepare_prompt",
]

DEFAULT_MAX_SKILLS_IN_PROMPT = 150
DEFAULT_MAX_SKILLS_PROMPT_CHARS = 18000
COMPACT_DESCRIPTION_MIN_CHARS = 4
COMPACT_DESCRIPTION_MAX_CHARS = 220

_HEADING = "\n\nThe following skills provide specialized instructions for specific tasks."
_LOAD_FULL = "Read a skill's file at its listed location when the task matches its description."
_LOAD_COMPACT = "Read a skill's file at its listed location when the task matches its name or description."
_LOAD_NAMES = "Read a skill's file at its listed location when the task matches its name."
_RELATIVE = (
    "When a skill file references a relative path, resolve it against the skill directory "
    "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."
)
_WHITESPACE_RUN = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")


@dataclass(frozen=True, slots=True)
class PromptSkill:
    """What the catalog shows of one skill."""

    name: str
    description: str
    file_path: str


@dataclass(frozen=True, slots=True)
class PromptResult:
    """The catalog text and how it was fitted."""

    text: str
    skills: tuple[str, ...]
    format: str
    """``full``, ``compact`` or ``empty``."""
    description_max_chars: int | None
    truncated: bool
    total: int


def escape_xml(text: str) -> str:
    """OpenClaw's ``escapeSkillXml``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _catalog(
    skills: Sequence[PromptSkill], loading: str, describe: Callable[[PromptSkill], str | None]
) -> str:
    if not skills:
        return ""
    lines = [_HEADING, loading, _RELATIVE, "", "<available_skills>"]
    for skill in skills:
        lines.append("  <skill>")
        lines.append(f"    <name>{escape_xml(skill.name)}</name>")
        description = describe(skill)
        if description is not None:
            lines.append(f"    <description>{escape_xml(description)}</description>")
        lines.append(f"    <location>{escape_xml(skill.file_path)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def format_full(skills: Sequence[PromptSkill]) -> str:
    """The full catalog (``formatSkillsForPromptCore``)."""
    return _catalog(skills, _LOAD_FULL, lambda s: s.description)


def format_compact(skills: Sequence[PromptSkill], description_max_chars: int) -> str:
    """The compact catalog: descriptions cut to ``description_max_chars`` units, or omitted at 0."""
    limit = max(0, description_max_chars)
    if limit == 0:
        return _catalog(skills, _LOAD_NAMES, lambda s: None)
    return _catalog(skills, _LOAD_COMPACT, lambda s: truncate_description(s.description, limit) or None)


def truncate_description(description: str, max_chars: int) -> str:
    """Collapse whitespace and cut to ``max_chars`` UTF-16 units, ending in ``...``."""
    normalized = js_trim(_WHITESPACE_RUN.sub(" ", description))
    if utf16_len(normalized) <= max_chars:
        return normalized
    if max_chars <= 3:
        return _cut_safe(normalized, max_chars)
    return _cut_safe(normalized, max_chars - 3).rstrip(JS_WHITESPACE) + "..."


def _cut_safe(text: str, limit: int) -> str:
    """``truncateUtf16Safe``: cut in UTF-16 units, never leaving half a surrogate pair."""
    cut = utf16_cut(text, max(0, limit))
    if cut and "\ud800" <= cut[-1] <= "\udbff":
        return cut[:-1]
    return cut


def _limit_note(
    *, truncated: bool, compact: bool, description_max_chars: int, included: int, total: int
) -> str:
    details = "descriptions shortened" if description_max_chars > 0 else "descriptions omitted"
    if truncated:
        shape = f" (compact format, {details})" if compact else ""
        return (
            f"⚠️ Skills truncated: included {included} of {total}{shape}. "
            "Run `openclaw skills check` to audit."
        )
    if compact:
        return f"⚠️ Skills catalog using compact format ({details}). Run `openclaw skills check` to audit."
    return ""


class _Fitter:
    """``prepareSkillsForPrompt``'s search for the largest catalog within the budget."""

    def __init__(self, total: int, max_chars: int) -> None:
        self.total = total
        self.max_chars = max_chars

    def render(self, skills: Sequence[PromptSkill], desc: int | None, note: bool = True) -> str:
        """Note line and catalog; ``desc`` None = full format, else the compact cut."""
        compact = desc is not None
        body = format_compact(skills, desc) if desc is not None else format_full(skills)
        head = (
            _limit_note(
                truncated=len(skills) < self.total,
                compact=compact,
                description_max_chars=desc or 0,
                included=len(skills),
                total=self.total,
            )
            if note
            else ""
        )
        return "\n".join(part for part in (head, body) if part)

    def fits(self, skills: Sequence[PromptSkill], desc: int | None, note: bool = True) -> bool:
        """Whether that rendering is within the character budget."""
        return utf16_len(self.render(skills, desc, note)) <= self.max_chars

    def largest_prefix(self, skills: Sequence[PromptSkill], note: bool) -> int:
        """How many leading skills fit in compact form without descriptions."""
        lo, hi = 0, len(skills)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits(skills[:mid], 0, note):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def largest_description(self, skills: Sequence[PromptSkill], note: bool) -> int:
        """The longest description cut (4 to 220 units) that still fits."""
        lo, hi = COMPACT_DESCRIPTION_MIN_CHARS, COMPACT_DESCRIPTION_MAX_CHARS
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits(skills, mid, note):
                lo = mid
            else:
                hi = mid - 1
        return lo


def prepare_prompt(
    skills: Sequence[PromptSkill],
    *,
    max_skills: int | None = None,
    max_chars: int | None = None,
    sort_key: Callable[[str], Any] | None = None,
) -> PromptResult:
    """The catalog for ``skills`` within the budget, sorted by ``sort_key`` of the name."""
    count = DEFAULT_MAX_SKILLS_IN_PROMPT if max_skills is None else max_skills
    chars = DEFAULT_MAX_SKILLS_PROMPT_CHARS if max_chars is None else max_chars
    ordered = sorted(skills, key=lambda s: sort_key(s.name)) if sort_key else list(skills)
    by_count = ordered[: max(0, count)]
    fitter = _Fitter(len(ordered), chars)
    full = fitter.render(by_count, None)
    if utf16_len(full) <= chars:
        return _result(full, by_count, "full" if full else "empty", None, len(ordered))
    chosen = by_count
    if not fitter.fits(chosen, 0):
        chosen = chosen[: fitter.largest_prefix(chosen, True)]
    if not chosen and by_count:
        bare = fitter.render(by_count, None, note=False)
        if utf16_len(bare) <= chars:
            return _result(bare, by_count, "full", None, len(ordered))
        prefix = fitter.largest_prefix(by_count, False)
        if prefix > 0:
            chosen = by_count[:prefix]
    note = fitter.fits(chosen, 0)
    desc = 0
    if chosen and fitter.fits(chosen, COMPACT_DESCRIPTION_MIN_CHARS, note):
        desc = fitter.largest_description(chosen, note)
    text = fitter.render(chosen, desc, note)
    if utf16_len(text) > chars:
        text = ""
    return _result(text, chosen if text else [], "compact" if text else "empty", desc, len(ordered))


def _result(
    text: str, skills: Sequence[PromptSkill], shape: str, desc: int | None, total: int
) -> PromptResult:
    return PromptResult(
        text=text,
        skills=tuple(s.name for s in skills),
        format=shape,
        description_max_chars=desc,
        truncated=len(skills) < total,
        total=total,
    )


def compact_home_paths(skills: Sequence[PromptSkill], home: str | None) -> list[PromptSkill]:
    """Write locations under ``home`` (or its real path) as ``~/…``, longest prefix first."""
    if not home:
        return list(skills)
    prefixes = _home_prefixes(home)
    return [PromptSkill(s.name, s.description, _compact(s.file_path, prefixes)) for s in skills]


def compact_home_path(path: str, home: str | None) -> str:
    """``path`` written ``~/…`` when it lies under ``home`` (OpenClaw's ``compactSkillPath``)."""
    return _compact(path, _home_prefixes(home)) if home else path


def _home_prefixes(home: str) -> list[str]:
    homes = {os.path.normpath(home), os.path.realpath(home)}
    return [h if h.endswith("/") else h + "/" for h in sorted(homes, key=len, reverse=True)]


def _compact(path: str, prefixes: Sequence[str]) -> str:
    for prefix in prefixes:
        if path.startswith(prefix):
            return "~/" + path[len(prefix) :]
    return path
