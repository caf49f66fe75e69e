"""Inline ``Skill`` resources written out as SKILL.md folders, so they load like any other skill.

Each Skill becomes ``<dir>/<name>/SKILL.md`` (plus a marker file, so stale
folders of removed Skills can be cleaned up without touching anything else).
The frontmatter uses JSON-quoted strings and a one-line JSON ``metadata``, which
OpenClaw and clawplane read identically. Files are replaced atomically and only
when their content changes, so an unchanged Skill keeps its inode and mtime
(and the scan cache stays warm).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from clawplane._utils.atomicfile import atomic_write_bytes
from clawplane.diagnostics import Diagnostic
from clawplane.models.skill import Skill
from clawplane.skills import codes

__all__ = ["MARKER", "materialize_inline_skills", "render_skill_md"]

MARKER = ".clawplane-inline-skill"
_ESCAPE_EXTRA = {0x85, 0x2028, 0x2029, 0xFEFF}


def _json(value: object) -> str:
    """JSON that YAML reads back to the same value (flow mapping or double-quoted scalar)."""
    text = json.dumps(value, ensure_ascii=False)
    # YAML treats NEL, LS, PS as line breaks and BOM specially; escape them (and C1 controls).
    return "".join(
        f"\\u{ord(ch):04x}" if (0x7F <= ord(ch) <= 0x9F or ord(ch) in _ESCAPE_EXTRA) else ch
        for ch in text
    )


def _quote(text: str) -> str:
    return _json(text)


def render_skill_md(skill: Skill) -> str:
    """The SKILL.md text of an inline Skill."""
    spec = skill.spec
    lines = ["---", f"name: {_quote(skill.metadata.name)}", f"description: {_quote(spec.description)}"]
    if spec.homepage is not None:
        lines.append(f"homepage: {_quote(spec.homepage)}")
    if not spec.user_invocable:
        lines.append("user-invocable: false")
    if spec.disable_model_invocation:
        lines.append("disable-model-invocation: true")
    for key, value in (("command-dispatch", spec.command_dispatch),
                       ("command-tool", spec.command_tool),
                       ("command-arg-mode", spec.command_arg_mode)):
        if value is not None:
            lines.append(f"{key}: {_quote(value)}")
    if spec.openclaw is not None:
        manifest = spec.openclaw.model_dump(mode="json", by_alias=True, exclude_none=True)
        lines.append(f"metadata: {_json({'openclaw': manifest})}")
    lines.append("---")
    body = spec.body if spec.body.endswith("\n") or not spec.body else spec.body + "\n"
    return "\n".join(lines) + "\n" + body


def materialize_inline_skills(skills: Iterable[Skill], directory: Path) -> list[Diagnostic]:
    """Write every Skill under ``directory`` and remove folders of Skills that are gone."""
    diags: list[Diagnostic] = []
    wanted: set[str] = set()
    for skill in skills:
        name = skill.metadata.name
        wanted.add(name)
        folder = directory / name
        try:
            _write_if_changed(folder / "SKILL.md", render_skill_md(skill))
            _write_if_changed(folder / MARKER, "written by clawplane from a Skill resource\n")
        except OSError as exc:
            diags.append(codes.skill_diagnostic(
                codes.INLINE_SKILL, f"cannot write inline skill {name}: {exc.strerror}",
                str(folder / "SKILL.md"), resource=skill.key))
    _remove_stale(directory, wanted)
    return diags


def _write_if_changed(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    atomic_write_bytes(path, data)


def _remove_stale(directory: Path, wanted: set[str]) -> None:
    try:
        children = list(directory.iterdir())
    except OSError:
        return
    for child in children:
        if child.name not in wanted and (child / MARKER).is_file() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
