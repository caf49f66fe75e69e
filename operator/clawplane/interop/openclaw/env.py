"""The folders OpenClaw 2026.9.6 derives from its environment, for the config file being imported.

An imported openclaw.json becomes resources whose skill tiers are explicit, so the importer
has to name the folders OpenClaw would have used implicitly. The rules, from OpenClaw's
``src/infra/home-dir.ts``, ``src/utils.ts`` (``resolveConfigDir``), ``src/config/state-dir.ts``,
``src/config/paths.ts`` (``isDefaultStateDir``), ``src/agents/agent-scope-config.ts``,
``src/agents/workspace-default-path.ts`` and ``src/skills/loading/{workspace-skill-sources,
bundled-dir,local-loader}.ts``:

- effective home: ``OPENCLAW_HOME`` (a leading ``~`` is the OS home), else ``HOME``; ``~`` in
  configured paths (extraDirs, workspace, agentDir) expands to it, relative paths resolve
  against the working directory;
- config dir = ``OPENCLAW_STATE_DIR``, else the config file's folder (the imported file is
  taken as ``OPENCLAW_CONFIG_PATH``), else ``<home>/.openclaw``; managed skills live in
  ``<config dir>/skills``;
- state dir (agent dirs, default workspaces) = ``OPENCLAW_STATE_DIR``, else ``<home>/.openclaw``
  (or a legacy ``~/.clawdbot`` when only that exists); the config file's folder plays no part;
- the personal tier ``<OS home>/.agents/skills`` (``OPENCLAW_HOME`` plays no part) exists only
  while the state dir is the default one (``OPENCLAW_STATE_DIR`` unset or ``~/.openclaw``);
- bundled skills: ``OPENCLAW_BUNDLED_SKILLS_DIR``, else the installed package's ``skills/``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def _value(environ: Mapping[str, str], name: str) -> str | None:
    raw = (environ.get(name) or "").strip()
    return raw if raw and raw not in ("undefined", "null") else None


@dataclass(frozen=True)
class OpenClawEnv:
    """The environment an OpenClaw gateway reading ``config_path`` would run in."""

    config_path: Path
    environ: Mapping[str, str]
    cwd: Path

    @classmethod
    def current(cls, config_path: Path) -> OpenClawEnv:
        """This process's environment and working directory."""
        return cls(Path(os.path.abspath(config_path)), dict(os.environ), Path.cwd())

    @property
    def os_home(self) -> str:
        """``HOME`` (or ``USERPROFILE``), absolute."""
        home = _value(self.environ, "HOME") or _value(self.environ, "USERPROFILE") or str(self.cwd)
        return os.path.abspath(home)

    @property
    def home(self) -> str:
        """OpenClaw's effective home: ``OPENCLAW_HOME`` when set, else the OS home."""
        explicit = _value(self.environ, "OPENCLAW_HOME")
        if explicit is None:
            return self.os_home
        if explicit == "~" or explicit.startswith(("~/", "~\\")):
            explicit = self.os_home + explicit[1:]
        return os.path.normpath(os.path.join(self.cwd, explicit))

    def user_path(self, path: str) -> str:
        """OpenClaw's ``resolveUserPath``: trimmed, ``~`` → effective home, made absolute."""
        text = path.strip()
        if text == "~" or text.startswith(("~/", "~\\")):
            text = self.home + text[1:]
        return os.path.normpath(os.path.join(self.cwd, text))

    @property
    def state_dir_override(self) -> str | None:
        """``OPENCLAW_STATE_DIR`` resolved, when set."""
        raw = _value(self.environ, "OPENCLAW_STATE_DIR")
        return self.user_path(raw) if raw else None

    @property
    def config_dir(self) -> str:
        """Where the managed skills dir lives: state dir override, else the config file's folder."""
        return self.state_dir_override or str(self.config_path.parent)

    @property
    def state_dir(self) -> str:
        """Where agent dirs and default workspaces live (never the config file's folder)."""
        override = self.state_dir_override
        if override:
            return override
        new = os.path.join(self.home, ".openclaw")
        legacy = os.path.join(self.home, ".clawdbot")
        return legacy if not os.path.exists(new) and os.path.exists(legacy) else new

    @property
    def default_state_dir(self) -> bool:
        """OpenClaw's ``isDefaultStateDir``: the personal tier is on only then."""
        override = self.state_dir_override
        return override is None or override == os.path.join(self.home, ".openclaw")

    @property
    def managed_dir(self) -> str:
        """The managed skills tier."""
        return os.path.join(self.config_dir, "skills")

    @property
    def personal_dir(self) -> str | None:
        """The personal skills tier, or None when OpenClaw would not use one."""
        return os.path.join(self.os_home, ".agents", "skills") if self.default_state_dir else None

    @property
    def default_workspace(self) -> str:
        """The workspace of the sole (or implicit ``main``) agent when nothing configures one."""
        explicit = _value(self.environ, "OPENCLAW_WORKSPACE_DIR")
        if explicit:
            return os.path.normpath(os.path.join(self.cwd, explicit))
        if self.state_dir_override:
            return os.path.join(self.state_dir, "workspace")
        return os.path.join(self.home, ".openclaw", "workspace")

    def bundled_dir(self) -> tuple[str | None, str]:
        """``(folder, how it was found)``; the folder is None when neither source gives one."""
        override = _value(self.environ, "OPENCLAW_BUNDLED_SKILLS_DIR")
        if override:
            return os.path.normpath(os.path.join(self.cwd, override)), "OPENCLAW_BUNDLED_SKILLS_DIR"
        package = installed_openclaw_package(self.environ.get("PATH", ""))
        if package is not None and (package / "skills").is_dir():
            return str(package / "skills"), f"the OpenClaw package at {package}"
        return None, ""


def installed_openclaw_package(path: str) -> Path | None:
    """The ``openclaw`` npm package behind the ``openclaw`` command on ``path``, if there is one."""
    found = shutil.which("openclaw", path=path) if path else None
    if found is None:
        return None
    current = Path(os.path.realpath(found)).parent
    for folder in (current, *current.parents):
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
            except (OSError, ValueError, AttributeError):
                return None
            return folder if name == "openclaw" else None
    return None
