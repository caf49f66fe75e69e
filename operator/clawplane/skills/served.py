"""An agent's eligible skills as files a server may hand out: the SEP-2640 view of a snapshot.

``served_skills(snapshot)`` keeps exactly the skills the agent may use (eligible and not
filtered out by its ``skills`` list), in the snapshot's order, and lists each one's files
under its folder with SHA-256 digests and sizes (``sha256:<hex>`` of the raw bytes, as
SEP-2640 defines them). The folder is the skill's ``baseDir``; a file is listed only when
its real path stays inside the folder's real path (a symlink pointing out is left out),
its name and every folder above it do not start with ``.`` (no ``.git``, ``.env``), and it
fits the bounds below (SEP-2640's own SHOULD limits). ``read_file`` serves a listed file
only, again checking the real path, the size and the digest it was listed with, so a file
changed since the listing is refused rather than handed out unverifiable.

Skill files are outside input: names and paths are never trusted to be printable, and
callers escape them wherever they are shown.
"""

from __future__ import annotations

import hashlib
import math
import os
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

from clawplane.skills.frontmatter import (
    FrontmatterError,
    extract_block,
    normalize_content,
    parse_skill_frontmatter,
)
from clawplane.skills.frontmatter.yamlcore import YamlIssue, compose_block
from clawplane.skills.frontmatter.yamlvalues import node_to_js
from clawplane.skills.fs.pathfacts import is_path_inside
from clawplane.skills.snapshot import AgentSnapshot, SkillStatus

__all__ = [
    "MAX_FILES_PER_SKILL",
    "MAX_FILE_BYTES",
    "MAX_SKILL_BYTES",
    "SKILL_SCHEME",
    "DigestCache",
    "ServedFile",
    "ServedSkill",
    "SkillFileError",
    "served_skills",
]

SKILL_SCHEME: Final = "skill://"
MAX_FILES_PER_SKILL: Final = 512
"""SEP-2640: a server SHOULD NOT serve a skill of more than 512 files (SKILL.md included)."""
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024
"""SEP-2640: nor one whose files add up to more than 16 MiB."""
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
"""One file larger than this is left out of the listing and refused on read."""
_MAX_DEPTH: Final = 16


class SkillFileError(Exception):
    """A skill file that cannot be served; ``str()`` says which and why, and what to do."""


@dataclass(frozen=True, slots=True)
class ServedFile:
    """One file of a skill: its path below the skill folder (``/``-separated), size and digest."""

    rel: str
    size: int
    digest: str


@dataclass(frozen=True, slots=True)
class ServedSkill:
    """One eligible skill of an agent, as the skills extension serves it."""

    name: str
    segment: str
    """``name`` as a URI segment (percent-encoded where a name holds characters URIs do not)."""
    frontmatter: dict[str, Any]
    """The SKILL.md frontmatter as its YAML parses (core schema), the values JSON holds."""
    description: str
    base_dir: str
    """The real path of the skill's folder."""
    skill_md: str
    """SKILL.md's path below the folder."""
    files: tuple[ServedFile, ...]
    """SKILL.md first, then the other files in path order."""
    left_out: tuple[str, ...]
    """Files not listed, each with the reason (over a bound)."""

    @property
    def uri(self) -> str:
        """``skill://<name>/SKILL.md``: the skill's own URI."""
        return self.file_uri(self.skill_md)

    @property
    def root(self) -> str:
        """``skill://<name>``: the skill's folder as a resource."""
        return SKILL_SCHEME + self.segment

    def file_uri(self, rel: str) -> str:
        """The URI of the file ``rel`` below the skill folder."""
        return f"{self.root}/{quote(rel, safe='/-._~')}"

    def file(self, rel: str) -> ServedFile | None:
        """The listed file at ``rel``, if any."""
        return next((f for f in self.files if f.rel == rel), None)

    def read(self, rel: str) -> bytes:
        """The bytes of the listed file ``rel``, checked again (see the module docstring)."""
        listed = self.file(rel)
        if listed is None:
            raise SkillFileError(
                f"{rel!r} is not a file of skill {self.name!r}; list the skill's files with skills/get"
            )
        path = os.path.join(self.base_dir, *rel.split("/"))
        real = os.path.realpath(path)
        if not is_path_inside(self.base_dir, real):
            raise SkillFileError(
                f"{rel!r} of skill {self.name!r} resolves outside the skill folder; it is not served"
            )
        data = _read_bounded(real, MAX_FILE_BYTES)
        if data is None:
            raise SkillFileError(
                f"{rel!r} of skill {self.name!r} is missing, not a regular file, or larger than "
                f"{MAX_FILE_BYTES} bytes; skills over MCP serve regular files up to that size"
            )
        if len(data) != listed.size or _digest(data) != listed.digest:
            raise SkillFileError(
                f"{rel!r} of skill {self.name!r} changed since it was listed;"
                " list the skills again (skills/list)"
            )
        return data


DigestCache = dict[tuple[str, int, int, int], str]
"""``(real path, inode, size, mtime_ns)`` → digest: a file unchanged since it was hashed is not read again."""


def served_skills(
    snapshot: AgentSnapshot,
    cache: DigestCache | None = None,
    made: dict[tuple[str, str, str, str], ServedSkill] | None = None,
) -> tuple[ServedSkill, ...]:
    """The agent's eligible skills in the snapshot's order, each with its files listed.

    ``made`` keeps the skills listed for other agents of the same pass: agents share skills.
    """
    cache = {} if cache is None else cache
    made = {} if made is None else made
    out = []
    for status in snapshot.skills:
        if status.eligible and not status.blocked_by_agent_filter:
            key = (status.name, status.base_dir, status.file_path, status.description)
            if key not in made:
                made[key] = _serve(status, cache)
            out.append(made[key])
    return tuple(out)


def _serve(status: SkillStatus, cache: DigestCache) -> ServedSkill:
    base = os.path.realpath(status.base_dir)
    skill_md = os.path.relpath(os.path.realpath(status.file_path), base).replace(os.sep, "/")
    if skill_md.startswith("../"):
        skill_md = "SKILL.md"  # a symlinked SKILL.md: served by its name in the folder
    files: list[ServedFile] = []
    left_out: list[str] = []
    total = 0
    for rel, real, st in sorted(_walk(base), key=lambda item: (item[0] != skill_md, item[0])):
        if st.st_size > MAX_FILE_BYTES:
            left_out.append(f"{rel}: {st.st_size} bytes, over {MAX_FILE_BYTES}")
        elif len(files) >= MAX_FILES_PER_SKILL:
            left_out.append(f"{rel}: over {MAX_FILES_PER_SKILL} files")
        elif total + st.st_size > MAX_SKILL_BYTES:
            left_out.append(f"{rel}: the skill's files would exceed {MAX_SKILL_BYTES} bytes")
        else:
            digest = _cached_digest(real, st, cache)
            if digest is not None:
                files.append(ServedFile(rel, st.st_size, digest))
                total += st.st_size
    text = _text(os.path.join(base, skill_md))
    return ServedSkill(
        name=status.name,
        segment=quote(status.name, safe="-._~"),
        frontmatter=_frontmatter(text),
        description=status.description,
        base_dir=base,
        skill_md=skill_md,
        files=tuple(files),
        left_out=tuple(left_out),
    )


def _walk(base: str, rel: str = "", depth: int = 0) -> Iterator[tuple[str, str, os.stat_result]]:
    """``(rel, real path, stat)`` of every regular file below ``base`` that may be served."""
    if depth > _MAX_DEPTH:
        return
    try:
        entries = sorted(os.scandir(os.path.join(base, rel) if rel else base), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        child = f"{rel}/{entry.name}" if rel else entry.name
        real = os.path.realpath(entry.path)
        if not is_path_inside(base, real):
            continue  # a symlink out of the skill folder: never served
        try:
            st = os.stat(real)
        except OSError:
            continue
        if stat_mod.S_ISDIR(st.st_mode):
            if real != base:
                yield from _walk(base, child, depth + 1)
        elif stat_mod.S_ISREG(st.st_mode):
            yield child, real, st


def _cached_digest(real: str, st: os.stat_result, cache: DigestCache) -> str | None:
    key = (real, st.st_ino, st.st_size, st.st_mtime_ns)
    found = cache.get(key)
    if found is None:
        data = _read_bounded(real, MAX_FILE_BYTES)
        if data is None:
            return None
        found = cache[key] = _digest(data)
    return found


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _read_bounded(path: str, limit: int) -> bytes | None:
    """The file's bytes, or None when it is not a regular file, unreadable, or over ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _text(path: str) -> str:
    data = _read_bounded(path, MAX_FILE_BYTES)
    return "" if data is None else data.decode("utf-8", "replace")


def _frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter as YAML reads it; OpenClaw's string reading where YAML refuses it."""
    extracted = extract_block(normalize_content(text))
    if extracted is not None and extracted[0]:
        try:
            node = compose_block(extracted[0])
            value = node_to_js(node) if node is not None else None
        except (YamlIssue, RecursionError, ValueError):
            value = None
        if isinstance(value, dict):
            return _json_safe(value)  # type: ignore[no-any-return]
    try:
        return dict(parse_skill_frontmatter(text))
    except FrontmatterError:
        return {}


def _json_safe(value: Any) -> Any:
    """``value`` with numbers JSON cannot hold (``.nan``, ``.inf``) as null, as ``JSON.stringify`` does."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value
