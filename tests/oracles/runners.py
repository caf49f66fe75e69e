"""Small runner objects for the oracle tools (used by tests/compat/conftest.py fixtures)."""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.patience import ORACLE_CALL_S


@dataclass
class OracleRunner:
    """Runs one oracle tool: ``argv`` prefix + args, isolated ``env``, working dir ``cwd``."""

    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    timeout: float = ORACLE_CALL_S

    def run(
        self,
        *args: str,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = False,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the tool; ``env`` entries override the fixture's environment."""
        proc = subprocess.run(
            [*self.argv, *args],
            input=input,
            capture_output=True,
            text=True,
            env={**self.env, **self.call_env(env or {})},
            cwd=self.cwd,
            timeout=timeout or self.timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{self.name} {' '.join(args)} exited {proc.returncode}\n"
                f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
            )
        return proc

    def call_env(self, env: Mapping[str, str]) -> Mapping[str, str]:
        """The overrides one call runs with (a subclass may add its own)."""
        return env

    def json(self, *args: str, **kwargs: Any) -> Any:
        """Run and parse stdout as JSON (any exit code; the caller checks the payload)."""
        proc = self.run(*args, **kwargs)
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            raise AssertionError(
                f"{self.name} {' '.join(args)}: stdout is not JSON (rc {proc.returncode})\n"
                f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
            ) from exc


@dataclass
class OpenClawOracle(OracleRunner):
    """``openclaw`` CLI (Node 24) with an isolated HOME; ``config_path`` is the active config.

    ``run``/``json`` use ``config_path`` via OPENCLAW_CONFIG_PATH; ``write_config`` replaces
    it. ``skills_snapshot`` runs tests/oracles/openclaw_skills.mjs (OpenClaw's own
    buildSkillSnapshot) and ``format_skills`` its formatSkillsForPromptCore /
    prepareSkillsForPrompt.
    """

    home: Path = field(default_factory=Path)
    config_path: Path = field(default_factory=Path)
    skills_argv: list[str] = field(default_factory=list)
    batch_argv: list[str] = field(default_factory=list)
    fresh_state: bool = True
    """Give each CLI call an empty ``OPENCLAW_STATE_DIR`` (see ``call_env``)."""
    _calls: Iterator[int] = field(default_factory=lambda: itertools.count(1), repr=False)

    def call_env(self, env: Mapping[str, str]) -> Mapping[str, str]:
        """With ``fresh_state``, each call gets a state dir of its own.

        Everything these tests compare lives in the config file. OpenClaw's SQLite state
        only caches its plugin index and config-health records, but once that database
        exists every later start reads it through about eight helper Node processes:
        measured 6.8 CPU-s per call instead of 2.3 s (loaded machine) and 9.7 instead of
        8.4 (an idle, slower one). A fresh state dir is a
        first-run OpenClaw, a real configuration a user meets. Set ``fresh_state=False``
        for a test about state that persists between calls.
        """
        if not self.fresh_state or "OPENCLAW_STATE_DIR" not in self.env or "OPENCLAW_STATE_DIR" in env:
            return env
        # next() on a count is atomic, so calls from a thread pool get distinct dirs.
        state = Path(self.env["OPENCLAW_STATE_DIR"]).with_name(f"state-call-{next(self._calls)}")
        return {**env, "OPENCLAW_STATE_DIR": str(state)}

    def batch(
        self, calls: Sequence[Sequence[str]], *, envs: Sequence[Mapping[str, str]] | None = None
    ) -> list[subprocess.CompletedProcess[str]]:
        """Run CLI calls in order in one OpenClaw process (tests/oracles/openclaw_batch.mjs).

        Each result is what ``run`` would return for that call; use it where the sequence of
        outcomes is under test rather than how the CLI process starts. Each call gets its own
        state dir (``call_env``), like ``run``, and ``envs[i]`` (e.g. its own
        ``OPENCLAW_CONFIG_PATH``) on top of the oracle's environment.
        """
        if envs is not None and len(envs) != len(calls):
            raise ValueError(f"{len(calls)} calls but {len(envs)} envs")
        spec = self.cwd / f"batch-{next(self._calls)}.json"
        entries = [
            {"args": list(c), "env": dict(self.call_env(envs[i] if envs is not None else {}))}
            for i, c in enumerate(calls)
        ]
        spec.write_text(json.dumps({"calls": entries}), encoding="utf-8")
        proc = subprocess.run(
            [*self.batch_argv, str(spec)],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.cwd,
            # A hang guard: the first call pays OpenClaw's start, each later one a fraction of it.
            timeout=self.timeout * (1 + len(calls) / 10),
            check=False,
        )
        if proc.returncode != 0:
            raise AssertionError(f"openclaw_batch.mjs exited {proc.returncode}\n--- stderr\n{proc.stderr}")
        return [
            subprocess.CompletedProcess([*self.argv, *r["args"]], r["returncode"], r["stdout"], r["stderr"])
            for r in json.loads(proc.stdout)
        ]

    def write_config(self, config: Mapping[str, Any] | str, path: Path | None = None) -> Path:
        """Write a JSON(5) config (dict or text) and make it the active one."""
        target = path or self.config_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            config if isinstance(config, str) else json.dumps(config, indent=2), encoding="utf-8"
        )
        self.use_config(target)
        return target

    def use_config(self, path: Path) -> None:
        self.config_path = path
        self.env["OPENCLAW_CONFIG_PATH"] = str(path)

    def skills_snapshot(self, *, agent: str | None = None, workspace: Path | None = None) -> dict[str, Any]:
        """OpenClaw's skills snapshot (incl. exact ``prompt``) for the active config."""
        args = ["--config", str(self.config_path)]
        if agent is not None:
            args += ["--agent", agent]
        if workspace is not None:
            args += ["--workspace", str(workspace)]
        return _run_json(self, self.skills_argv, args)

    def format_skills(self, skills: Sequence[Mapping[str, Any]], **limits: Any) -> dict[str, Any]:
        """Render ``skills`` ({name, description, filePath, ...}) with OpenClaw's formatter.

        ``limits``: maxSkillsInPrompt, maxSkillsPromptChars, preserveOrder, remoteNote.
        """
        spec = self.cwd / "format-skills.json"
        spec.write_text(json.dumps({"skills": list(skills), **limits}), encoding="utf-8")
        return _run_json(self, self.skills_argv, ["--format", str(spec)])


def _run_json(runner: OracleRunner, argv: list[str], args: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [*argv, *args],
        capture_output=True,
        text=True,
        env=runner.env,
        cwd=runner.cwd,
        timeout=runner.timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv + args)} exited {proc.returncode}\n--- stderr\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@dataclass
class CodexOracle(OracleRunner):
    """``codex`` CLI with isolated HOME and CODEX_HOME (``codex_home``, has config.toml)."""

    codex_home: Path = field(default_factory=Path)

    def write_config(self, toml: str) -> Path:
        path = self.codex_home / "config.toml"
        path.write_text(toml, encoding="utf-8")
        return path

    def strict_check(self) -> subprocess.CompletedProcess[str]:
        """Level-1 oracle: strict parse of config.toml (rc 0/1, JSON on stdout, offline)."""
        return self.run("app-server", "--strict-config", "--print-startup-config")


@dataclass
class StdioServer:
    """An MCP server to spawn over stdio: ``command`` + ``args`` with ``env``."""

    command: str
    args: list[str]
    env: dict[str, str]

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]
