"""The folders OpenClaw derives from its environment, as the importer computes them."""

from __future__ import annotations

from pathlib import Path

from clawplane.interop.openclaw.env import OpenClawEnv


def _env(tmp_path: Path, config: str, **environ: str) -> OpenClawEnv:
    return OpenClawEnv(tmp_path / config, {"HOME": str(tmp_path / "home"), **environ}, tmp_path / "cwd")


def test_default_layout(tmp_path: Path) -> None:
    env = _env(tmp_path, "home/.openclaw/openclaw.json")
    home = tmp_path / "home"
    assert env.managed_dir == str(home / ".openclaw/skills")
    assert env.state_dir == str(home / ".openclaw")
    assert env.personal_dir == str(home / ".agents/skills")
    assert env.default_workspace == str(home / ".openclaw/workspace")


def test_config_path_moves_the_managed_dir_only(tmp_path: Path) -> None:
    env = _env(tmp_path, "etc/openclaw.json")
    assert env.managed_dir == str(tmp_path / "etc/skills")
    assert env.state_dir == str(tmp_path / "home/.openclaw")
    assert env.personal_dir is not None


def test_state_dir_moves_everything_and_turns_personal_off(tmp_path: Path) -> None:
    env = _env(tmp_path, "etc/openclaw.json", OPENCLAW_STATE_DIR="~/state")
    assert env.managed_dir == str(tmp_path / "home/state/skills")
    assert env.state_dir == str(tmp_path / "home/state")
    assert env.personal_dir is None
    assert env.default_workspace == str(tmp_path / "home/state/workspace")
    # ... unless it names the default state dir.
    same = _env(tmp_path, "etc/openclaw.json", OPENCLAW_STATE_DIR=str(tmp_path / "home/.openclaw"))
    assert same.personal_dir == str(tmp_path / "home/.agents/skills")


def test_openclaw_home_moves_home_paths_but_not_the_personal_tier(tmp_path: Path) -> None:
    env = _env(tmp_path, "etc/openclaw.json", OPENCLAW_HOME="~/oc")
    assert env.home == str(tmp_path / "home/oc")
    assert env.user_path("~/x") == str(tmp_path / "home/oc/x")
    assert env.user_path("rel") == str(tmp_path / "cwd/rel")
    assert env.state_dir == str(tmp_path / "home/oc/.openclaw")
    assert env.personal_dir == str(tmp_path / "home/.agents/skills")


def test_legacy_state_dir_is_used_when_only_it_exists(tmp_path: Path) -> None:
    (tmp_path / "home/.clawdbot").mkdir(parents=True)
    assert _env(tmp_path, "x/openclaw.json").state_dir == str(tmp_path / "home/.clawdbot")
    (tmp_path / "home/.openclaw").mkdir()
    assert _env(tmp_path, "x/openclaw.json").state_dir == str(tmp_path / "home/.openclaw")


def test_bundled_dir_from_the_variable_or_the_installed_package(tmp_path: Path) -> None:
    assert _env(tmp_path, "c.json", OPENCLAW_BUNDLED_SKILLS_DIR="b").bundled_dir()[0] == str(tmp_path / "cwd/b")
    package = tmp_path / "lib/node_modules/openclaw"
    (package / "skills").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "openclaw"}')
    (package / "openclaw.mjs").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "openclaw").symlink_to(package / "openclaw.mjs")
    (package / "openclaw.mjs").chmod(0o755)
    found, how = _env(tmp_path, "c.json", PATH=str(bin_dir)).bundled_dir()
    assert found == str(package / "skills") and str(package) in how
    assert _env(tmp_path, "c.json", PATH=str(tmp_path)).bundled_dir() == (None, "")
