"""Inline ``Skill`` resources written out as SKILL.md folders, so they load like any other skill.

Each Skill becomes ``<dir>/<name>/SKILL.md`` (plus a marker file, so stale
folders of removed Skills can be cleaned up without touching anything else).
The frontmatter uses JSON-quoted strings and a one-line JSON ``metadata``, which
OpenClaw and clawplane read identically. Files are replaced atomically and only
when their content changes, so an unchanged Skill keeps its inode and mtime
(and the scan cache stays warm). The folder (in the state directory) is opened once and
written through its descriptor, so no other user can aim these writes (``open_dir``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from clawplane._utils.safedir import SafeDir, open_dir
from clawplane.diagnostics import Diagnostic
from clawplane.models import Skill
from clawplane.skills import codes

__all__ = ["MARKER", "materialize_inline_skills", "render_skill_md"]

MARKER = ".clawplane-inline-skill"
_ESCAPE_EXTRA = {0x85, 0x2028, 0x2029, 0xFEFF}


def _json(value: object) -> str:
    """JSON that YAML reads back to the same value (flow mapping or double-quoted scalar)."""
    text = json.dumps(value, ensure_ascii=False)
    # YAML treats NEL, LS, PS as line breaks and BOM specially; escape them (and C1 controls).
    return "".join(
        f"\\u{ord(ch):04x}" if (0x7F <= ord(ch) <= 0x9F or ord(ch) in _ESCAPE_EXTRA) else ch for ch in text
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
    for key, value in (
        ("command-dispatch", spec.command_dispatch),
        ("command-tool", spec.command_tool),
        ("command-arg-mode", spec.command_arg_mode),
    ):
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
    skills = list(skills)
    try:
        root = open_dir(directory, option="--state-dir DIR")
    except OSError as exc:
        return [_cannot_write(skill, directory, exc) for skill in skills]
    with root:
        wanted: set[str] = set()
        for skill in skills:
            name = skill.metadata.name
            wanted.add(name)
            try:
                with root.child(name) as folder:
                    folder.write_if_changed("SKILL.md", render_skill_md(skill).encode("utf-8"))
                    folder.write_if_changed(MARKER, b"written by clawplane from a Skill resource\n")
            except OSError as exc:
                diags.append(_cannot_write(skill, directory, exc))
        _remove_stale(root, wanted)
    return diags


def _cannot_write(skill: Skill, directory: Path, exc: OSError) -> Diagnostic:
    name = skill.metadata.name
    return codes.skill_diagnostic(
        codes.INLINE_SKILL, f"cannot write inline skill {name}: {exc.strerror or exc}",
        str(directory / name / "SKILL.md"), resource=skill.key)  # fmt: skip


def _remove_stale(root: SafeDir, wanted: set[str]) -> None:
    try:
        children = os.listdir(root.fd)
    except OSError:
        return
    for name in children:
        if name in wanted:
            continue
        info = root.lstat(name)
        if info is None or not stat.S_ISDIR(info.st_mode):
            continue  # a link is never followed, let alone emptied
        try:
            with root.child(name, create=False) as folder:
                marked = folder.lstat(MARKER)
        except OSError:
            continue
        if marked is not None and stat.S_ISREG(marked.st_mode):
            shutil.rmtree(name, ignore_errors=True, dir_fd=root.fd)
