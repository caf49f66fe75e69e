"""Skills over MCP (SEP-2640) on the agent endpoint: the agent's eligible skills as ``skill://`` resources.

The extension ``io.modelcontextprotocol/skills`` (with ``directoryRead``) adds three methods:

- ``skills/list`` — one entry per skill, in the agent's snapshot order: ``uri``
  (``skill://<name>/SKILL.md``), ``frontmatter`` (the SKILL.md's YAML frontmatter as JSON) and
  ``resources`` (every served file's ``uri``, ``digest`` ``sha256:<hex>`` and ``size`` in bytes);
- ``skills/get`` — the entry of the skill whose URI is given (-32602 for any other);
- ``resources/directory/read`` — the direct children of ``skill://<name>[/<folder>]``,
  folders with ``mimeType: inode/directory`` (-32602 for a file or an unknown URI).

``resources/list`` also lists each skill's SKILL.md (named and described by its frontmatter)
and ``resources/read`` serves every listed file (``skills.served`` confines and re-checks it).
Results carry ``ttlMs: 0`` and ``cacheScope: private``: the listing is the agent's own and
changes with each apply, announced by ``notifications/resources/list_changed``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
from collections.abc import Sequence
from typing import Any, Final, Protocol
from urllib.parse import unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from clawplane.skills.served import SKILL_SCHEME, ServedSkill, SkillFileError

__all__ = [
    "SKILLS_EXTENSION",
    "DirectoryReadParams",
    "SkillGetParams",
    "SkillSource",
    "directory_read",
    "read_skill_file",
    "skill_entry",
    "skill_resources",
    "skills_key",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
EXTENSION_SETTINGS: Final[dict[str, Any]] = {"directoryRead": True}
DIRECTORY_MIME: Final = "inode/directory"
CACHE: Final[dict[str, Any]] = {"ttlMs": 0, "cacheScope": "private"}


class SkillSource(Protocol):
    """Where the endpoint learns whether skills are served and which ones an agent has."""

    @property
    def serves_skills(self) -> bool:
        """``Gateway.spec.endpoint.skills``."""
        ...

    def skills(self, agent: str) -> Sequence[ServedSkill]:
        """The agent's eligible skills in its snapshot's order (none when off)."""
        ...


class SkillGetParams(types.RequestParams):
    """``skills/get`` params: the skill's URI."""

    uri: str


class DirectoryReadParams(types.RequestParams):
    """``resources/directory/read`` params: a folder's URI and an optional cursor."""

    uri: str
    cursor: str | None = None


def skills_key(source: SkillSource, agent: str) -> str:
    """A digest of what the extension serves ``agent``: it changes when the listing changes."""
    rows = [(s.uri, json.dumps(s.frontmatter, sort_keys=True, default=str),
             [(f.rel, f.digest, f.size) for f in s.files]) for s in source.skills(agent)]  # fmt: skip
    return hashlib.sha256(json.dumps([source.serves_skills, rows]).encode()).hexdigest()


def skill_entry(skill: ServedSkill) -> dict[str, Any]:
    """The skill's ``skills/list`` entry."""
    return {
        "uri": skill.uri,
        "frontmatter": skill.frontmatter,
        "resources": [
            {"uri": skill.file_uri(f.rel), "digest": f.digest, "size": f.size} for f in skill.files
        ],
    }


def list_result(skills: Sequence[ServedSkill], cursor: str | None) -> dict[str, Any]:
    """The ``skills/list`` result: every entry on one page (an entry is never split)."""
    if cursor:
        raise MCPError(types.INVALID_PARAMS, "skills/list has a single page: this cursor was never issued")
    return {"skills": [skill_entry(s) for s in skills], **CACHE}


def get_result(skills: Sequence[ServedSkill], uri: str) -> dict[str, Any]:
    """The ``skills/get`` result for ``uri``, or -32602 when no served skill has it."""
    found = next((s for s in skills if s.uri == uri), None)
    if found is None:
        raise MCPError(types.INVALID_PARAMS, f"not a skill this agent is served: {uri}", {"uri": uri})
    return {"skill": skill_entry(found), **CACHE}


def skill_resources(skills: Sequence[ServedSkill]) -> list[types.Resource]:
    """Each skill's SKILL.md as a resource, named and described by its frontmatter."""
    out = []
    for skill in skills:
        name = skill.frontmatter.get("name")
        description = skill.frontmatter.get("description")
        listed = skill.file(skill.skill_md)
        out.append(
            types.Resource(
                uri=skill.uri,
                name=name if isinstance(name, str) and name else skill.name,
                description=description if isinstance(description, str) else skill.description,
                mime_type="text/markdown",
                size=listed.size if listed is not None else None,
            )
        )
    return out


def _locate(skills: Sequence[ServedSkill], uri: str) -> tuple[ServedSkill, str] | None:
    """The served skill a ``skill://`` URI is under and the (decoded) path below its folder."""
    if not uri.startswith(SKILL_SCHEME):
        return None
    for skill in skills:
        if uri == skill.root or uri.startswith(skill.root + "/"):
            return skill, unquote(uri[len(skill.root) :].strip("/"))
    return None


def read_skill_file(skills: Sequence[ServedSkill], uri: str) -> types.ReadResourceResult | None:
    """The contents of a served skill file; None when ``uri`` is under no served skill."""
    located = _locate(skills, uri)
    if located is None:
        return None
    skill, rel = located
    try:
        data = skill.read(rel)
    except SkillFileError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc), {"uri": uri}) from None
    mime = "text/markdown" if rel == skill.skill_md else mimetypes.guess_type(rel)[0]
    contents: types.TextResourceContents | types.BlobResourceContents
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        blob = base64.b64encode(data).decode("ascii")
        contents = types.BlobResourceContents(
            uri=uri, mime_type=mime or "application/octet-stream", blob=blob
        )
    else:
        contents = types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=text)
    return types.ReadResourceResult(contents=[contents])


def directory_read(skills: Sequence[ServedSkill], uri: str, cursor: str | None) -> dict[str, Any]:
    """The ``resources/directory/read`` result: the direct children of a served skill folder."""
    located = _locate(skills, uri.rstrip("/"))
    if located is None:
        raise MCPError(types.INVALID_PARAMS, f"not a skill folder this agent is served: {uri}", {"uri": uri})
    if cursor:
        raise MCPError(
            types.INVALID_PARAMS, "a skill folder is read in a single page: this cursor was never issued"
        )
    skill, rel = located
    prefix = f"{rel}/" if rel else ""
    children: dict[str, dict[str, Any]] = {}
    for f in skill.files:
        if not f.rel.startswith(prefix):
            continue
        head, _, rest = f.rel[len(prefix) :].partition("/")
        if rest:
            children.setdefault(
                head, {"uri": skill.file_uri(prefix + head), "name": head, "mimeType": DIRECTORY_MIME}
            )
        else:
            mime = "text/markdown" if f.rel == skill.skill_md else mimetypes.guess_type(f.rel)[0]
            child = {"uri": skill.file_uri(f.rel), "name": head, "size": f.size}
            children[head] = {**child, "mimeType": mime} if mime else child
    if not children:
        raise MCPError(types.INVALID_PARAMS, f"not a folder of skill {skill.name!r}: {uri}", {"uri": uri})
    return {"resources": [children[k] for k in sorted(children)]}
