"""Skill: one skill declared inline, loaded at the managed tier like a ``SKILL.md`` folder."""

from __future__ import annotations

import enum
from typing import Annotated, ClassVar, Literal

from pydantic import Field, StringConstraints

from clawplane.models.base import Model, NonEmptyStr, Resource

StrList = list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]]


class InstallKind(enum.StrEnum):
    """How a skill's binaries can be installed."""

    BREW = "brew"
    NODE = "node"
    GO = "go"
    UV = "uv"
    DOWNLOAD = "download"


class InstallSpec(Model):
    """One way to install what a skill needs (OpenClaw ``metadata.openclaw.install[]``)."""

    kind: InstallKind
    """Installer kind."""
    id: str | None = None
    """Stable id of this option."""
    label: str | None = None
    """Human label."""
    bins: StrList | None = None
    """Binaries this installs."""
    os: StrList | None = None
    """Platforms this option applies to."""
    formula: str | None = None
    """brew formula."""
    cask: str | None = None
    """brew cask."""
    package: str | None = None
    """npm or uv package."""
    module: str | None = None
    """go module."""
    url: str | None = None
    """download URL (http/https)."""
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{64}$")] | None = None
    """Checksum of the download."""
    archive: str | None = None
    """Archive type of the download."""
    extract: bool | None = None
    """Whether to extract the download."""
    strip_components: Annotated[int, Field(ge=0)] | None = None
    """Leading path components to strip when extracting."""
    target_dir: str | None = None
    """Where to put the download."""


class SkillRequirements(Model):
    """What must be present for the skill to be eligible."""

    bins: StrList | None = None
    """Every one of these must be on PATH."""
    any_bins: StrList | None = None
    """At least one of these must be on PATH."""
    env: StrList | None = None
    """Environment variables that must be non-empty."""
    config: StrList | None = None
    """Gateway config dot paths that must be truthy."""


class SkillManifest(Model):
    """The ``metadata.openclaw`` block of a skill."""

    always: bool | None = None
    """Eligible regardless of requirements (OS still applies)."""
    emoji: str | None = None
    """Emoji shown in listings."""
    homepage: str | None = None
    """Project homepage."""
    skill_key: str | None = None
    """Key of this skill in the Gateway's ``skills.entries`` (default: the name)."""
    primary_env: str | None = None
    """Environment variable that the entry's ``apiKey`` fills."""
    os: StrList | None = None
    """Platforms (``darwin``, ``linux``, ``win32``) the skill runs on."""
    requires: SkillRequirements | None = None
    """Requirements checked at gating."""
    install: list[InstallSpec] | None = None
    """Ways to install what the skill needs."""


class SkillSpec(Model):
    """An inline skill: SKILL.md frontmatter fields plus its markdown body."""

    description: NonEmptyStr
    """What the skill does and when to use it (shown in the prompt)."""
    body: str = ""
    """The markdown instructions (the part of SKILL.md after the frontmatter)."""
    homepage: str | None = None
    """Project homepage."""
    user_invocable: bool = True
    """``false`` hides the skill from slash commands."""
    disable_model_invocation: bool = False
    """``true`` keeps the skill eligible but out of the model's prompt."""
    command_dispatch: Literal["tool"] | None = None
    """Dispatch slash commands straight to a tool."""
    command_tool: str | None = None
    """Tool that slash commands dispatch to."""
    command_arg_mode: Literal["raw"] | None = None
    """How command arguments are passed."""
    openclaw: SkillManifest | None = None
    """OpenClaw manifest (``metadata.openclaw`` in SKILL.md): requirements, OS, install options."""


class Skill(Resource):
    """A skill declared inline; ``metadata.name`` is the skill name."""

    KIND: ClassVar[str] = "Skill"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("sk",)
    PLURAL: ClassVar[str] = "skills"

    kind: Literal["Skill"]
    spec: SkillSpec
    """Desired configuration."""


_ = NonEmptyStr
