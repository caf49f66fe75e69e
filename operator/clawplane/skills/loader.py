"""Reading one candidate's SKILL.md into a ``SkillRecord``, with OpenClaw's file rules.

The file must be a regular file (a symlink is followed inside its folder), not
hardlinked (bundled skills excepted), and at most ``maxSkillFileBytes`` long.
Its frontmatter must parse and give a description; the name defaults to the
folder name. Managed and personal skills are recorded under their real path.
Every skip is a diagnostic, never an exception. Parsed files are cached by
their ``stat`` identity.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat as stat_mod
from dataclasses import dataclass
from typing import Any

from clawplane._utils.fastinit import fast_init
from clawplane.diagnostics import Diagnostic
from clawplane.jscompat import js_trim
from clawplane.skills import codes
from clawplane.skills.frontmatter import FrontmatterError, parse_skill_frontmatter
from clawplane.skills.fs.discovery import Candidate
from clawplane.skills.fs.pathfacts import PathFacts, child_path, is_path_inside
from clawplane.skills.manifest import Invocation, Manifest, parse_invocation, parse_manifest
from clawplane.skills.types import SkillRecord, Source

__all__ = ["load_candidate"]

_MAX_SOURCE_ORIGIN_BYTES = 16384


@fast_init
@dataclass(frozen=True, slots=True)
class _Parsed:
    """What a SKILL.md's content alone determines."""

    frontmatter: dict[str, str] | None
    error: str | None
    manifest: Manifest | None
    invocation: Invocation
    content_hash: str


def _parse_content(raw: bytes) -> _Parsed:
    try:
        content, whole = _frontmatter_text(raw)
        digest = hashlib.sha256(raw).hexdigest()  # valid UTF-8: the text encodes back to raw
    except UnicodeDecodeError:
        content, whole = raw.decode("utf-8", errors="replace"), True
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
    json_values: dict[str, Any] = {}
    try:
        try:
            frontmatter = parse_skill_frontmatter(content, json_values)
        except FrontmatterError as exc:
            if whole or exc.code != "UNTERMINATED_FRONTMATTER":
                raise
            # The first "---" line after the opening did not close the block: read it all.
            frontmatter = parse_skill_frontmatter(raw.decode("utf-8"), json_values)
    except FrontmatterError as exc:
        return _Parsed(None, str(exc), None, Invocation(), digest)
    manifest = parse_manifest(frontmatter, json_values)
    return _Parsed(frontmatter, None, manifest, parse_invocation(frontmatter), digest)


def _frontmatter_text(raw: bytes) -> tuple[str, bool]:
    """The text the frontmatter reader needs, and whether it is the whole file.

    Only the frontmatter is parsed, so where a ``---`` line follows the opening one the
    text stops after it, and the body (most of the file) is checked to be UTF-8 but not
    decoded. Raises ``UnicodeDecodeError`` when the file is not valid UTF-8.
    """
    close = raw.find(b"\n---")
    line_end = raw.find(b"\n", close + 4) if close != -1 else -1
    if line_end == -1 or b"\r" in raw:
        return raw.decode("utf-8"), True
    # The cut is at a newline, so the two parts decode (and fail) exactly as the whole would.
    head, rest = raw[: line_end + 1], raw[line_end + 1 :]
    text = head.decode("utf-8")
    if not rest.isascii():
        rest.decode("utf-8")
    return text, False


def load_candidate(
    facts: PathFacts, candidate: Candidate, source: Source, max_bytes: int, diags: list[Diagnostic]
) -> SkillRecord | None:
    """The candidate's skill, or ``None`` with a diagnostic explaining why it was skipped."""
    skill_md = child_path(candidate.skill_dir, "SKILL.md")
    real_md = facts.real(skill_md)
    if real_md is None:
        diags.append(
            codes.skill_diagnostic(
                codes.UNRESOLVED_PATH, "SKILL.md could not be resolved (broken symlink?)", skill_md
            )
        )
        return None
    md_stat, _present = facts.skill_md(candidate.skill_dir)
    direct = md_stat is not None and not stat_mod.S_ISLNK(md_stat.st_mode)
    st = md_stat if direct else facts.view.lstat(real_md)
    problem = _file_problem(st, source, max_bytes)
    if problem is not None or st is None:
        code, message = problem or (codes.UNREADABLE, "SKILL.md could not be read")
        diags.append(codes.skill_diagnostic(code, message, skill_md))
        return None
    try:
        parsed = facts.view.cached_file(real_md, st, lambda: _parse_content(_read(real_md)))
    except OSError as exc:
        diags.append(
            codes.skill_diagnostic(codes.UNREADABLE, f"SKILL.md could not be read: {exc.strerror}", skill_md)
        )
        return None
    if not isinstance(parsed, _Parsed):  # pragma: no cover - the loader only stores _Parsed
        return None
    return _record(facts, candidate, source, skill_md, real_md, parsed, diags)


def _read(path: str) -> bytes:
    # os.read on a descriptor: a third of the cost of open() and its buffered reader.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _file_problem(st: os.stat_result | None, source: Source, max_bytes: int) -> tuple[str, str] | None:
    """The reason OpenClaw refuses to read this SKILL.md, if any (its own message words)."""
    if st is None:
        return codes.UNREADABLE, "SKILL.md could not be read"
    if not stat_mod.S_ISREG(st.st_mode):
        return codes.NOT_A_FILE, "path does not have the required file type"
    if not source.bundled and st.st_nlink > 1:
        return codes.HARDLINKED, "path must not be hardlinked"
    if st.st_size > max_bytes:
        return codes.FILE_TOO_LARGE, f"File exceeds {max_bytes} bytes"
    return None


def _record(
    facts: PathFacts,
    candidate: Candidate,
    source: Source,
    skill_md: str,
    real_md: str,
    parsed: _Parsed,
    diags: list[Diagnostic],
) -> SkillRecord | None:
    if parsed.frontmatter is None:
        diags.append(codes.skill_diagnostic(codes.INVALID_FRONTMATTER, parsed.error or "", skill_md))
        return None
    frontmatter = parsed.frontmatter
    name = js_trim(frontmatter.get("name", "")) or js_trim(os.path.basename(candidate.skill_dir))
    description = js_trim(frontmatter["description"]) if "description" in frontmatter else ""
    if not name or not description:
        code = codes.MISSING_NAME if not name else codes.MISSING_DESCRIPTION
        message = "name is required" if not name else "description is required"
        diags.append(
            codes.skill_diagnostic(code, message, skill_md, hint="add a description: line to the frontmatter")
        )
        return None
    # Discovery builds candidate paths from the normalized root and plain entry names.
    base_dir, file_path = candidate.skill_dir, skill_md
    if not source.contained:  # managed and personal skills are known by their real folder
        base_dir = candidate.real_dir
        file_path = child_path(base_dir, "SKILL.md")
    skill_key = (
        parsed.manifest.skill_key
        if parsed.manifest and parsed.manifest.skill_key
        else _source_origin_slug(facts, base_dir)
    ) or name
    return SkillRecord(
        name=name,
        description=description,
        file_path=file_path,
        base_dir=base_dir,
        source=source,
        frontmatter=frontmatter,
        manifest=parsed.manifest,
        invocation=parsed.invocation,
        skill_key=skill_key,
        content_hash=parsed.content_hash,
        real_file_path=real_md,
    )


def _source_origin_slug(facts: PathFacts, skill_dir: str) -> str | None:
    """The ``slug`` of ``.openclaw/source-origin.json`` (a ClawHub install's skill key)."""
    meta_dir = child_path(skill_dir, ".openclaw")
    if facts.view.lstat(meta_dir) is None:
        return None
    meta_real = facts.view.realpath(meta_dir)
    skill_real = facts.view.realpath(skill_dir)
    if meta_real is None or skill_real is None or not is_path_inside(skill_real, meta_real):
        return None
    path = child_path(meta_real, "source-origin.json")
    st = facts.view.lstat(path)
    if st is None or not stat_mod.S_ISREG(st.st_mode) or st.st_size > _MAX_SOURCE_ORIGIN_BYTES:
        return None
    try:
        data = json.loads(_read(path).decode("utf-8"))
    except (OSError, ValueError):
        return None
    slug = data.get("slug") if isinstance(data, dict) else None
    return (js_trim(slug) or None) if isinstance(slug, str) else None
