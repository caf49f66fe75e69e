"""Skill trees on disk and one-call evaluation for the skills unit tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from clawplane.diagnostics import Diagnostic
from clawplane.skills import (
    AgentSnapshot,
    AgentView,
    FsCache,
    Host,
    SkillRoot,
    SkillsEngine,
    SkillsInputs,
    SkillsSettings,
    Source,
)

FAR_FUTURE_NS = 2**62  # a clock this late makes every file "old", so caching is deterministic


def skill_md(name: str | None, description: str | None, extra: str = "", body: str = "# Body\n") -> str:
    """A SKILL.md with plain frontmatter lines."""
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra.rstrip("\n"))
    return "\n".join([*lines, "---"]) + "\n" + body


@dataclass
class Tree:
    """A temporary skill tree."""

    root: Path

    def skill(self, folder: str | Path, name: str | None = None, description: str | None = "d",
              extra: str = "", body: str = "# Body\n") -> Path:
        """Write ``<folder>/SKILL.md``; the name defaults to the folder's basename."""
        base = self.root / folder
        base.mkdir(parents=True, exist_ok=True)
        path = base / "SKILL.md"
        path.write_text(skill_md(name if name is not None else base.name, description, extra, body),
                        encoding="utf-8")
        return path

    def write(self, path: str | Path, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def link(self, target: str | Path, at: str | Path) -> Path:
        where = self.root / at
        where.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(self.root / target, where)
        return where

    def path(self, *parts: str) -> str:
        return str(self.root.joinpath(*parts))


@dataclass
class Run:
    """Evaluate hand-built inputs with sensible defaults."""

    tree: Tree
    env: dict[str, str] = field(default_factory=dict)
    path: str = "/usr/bin:/bin"
    platform: str = "linux"
    engine: SkillsEngine = field(default_factory=lambda: SkillsEngine(FsCache(clock=lambda: FAR_FUTURE_NS)))

    def host(self) -> Host:
        return Host(env=MappingProxyType(dict(self.env)), path=self.path, platform=self.platform,
                    home=self.tree.path("home"), cwd=str(self.tree.root))

    def __call__(self, roots: Sequence[tuple[str, Source]], *, settings: SkillsSettings | None = None,
                 agent: AgentView | None = None, config: dict[str, Any] | None = None,
                 ) -> tuple[AgentSnapshot, list[Diagnostic]]:
        inputs = SkillsInputs(
            roots=tuple(SkillRoot(self.tree.path(d) if not os.path.isabs(d) else d, s)
                        for d, s in roots),
            settings=settings or SkillsSettings(),
            agent=agent or AgentView("main"),
            host=self.host(),
            config=config or {},
        )
        result = self.engine.evaluate(inputs)
        return result.snapshot, list(result.diagnostics)


def names(snapshot: AgentSnapshot, predicate: Callable[[Any], bool] = lambda s: True) -> list[str]:
    """Names of the snapshot's skills that satisfy ``predicate``."""
    return [s.name for s in snapshot.skills if predicate(s)]


def codes_of(diags: Sequence[Diagnostic]) -> list[str]:
    return [d.code for d in diags]
