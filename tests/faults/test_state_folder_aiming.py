"""Issue 35, finding 1 (and the operator's copies of finding 8): another user cannot aim root's writes.

A real second user, made by the test with ``useradd`` (and removed afterwards), prepares a
folder the way finding 1 says: a world-writable ``.clawplane`` holding symlinks named
``supervisor.log`` and ``out``. Root's commands must refuse that state folder with the cause
and the fix, follow none of the links, and work again once it is gone. The other ways to aim
writes are covered too: a state folder that is a symlink, one that is group-writable, one that
belongs to another user, a symlink planted inside a correct state folder between two writes,
and rendered outputs outside the state folder (``--out-dir``, ``plan --out``, ``import --out``).
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.faults.conftest import World, wait_for
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import Cli, processes_under
from tests.support.quickstart import copy_quickstart

from clawplane.k8s.adapter.materialize import Materializer

VICTIM_TEXT = "root's own file: nobody else may change it\n"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@dataclass(frozen=True)
class Stranger:
    """An unprivileged user of this machine, made for the test."""

    name: str
    uid: int
    gid: int

    def run(self, script: str) -> None:
        """Run ``script`` with ``sh`` as this user (``runuser``: no password, no login shell needed)."""
        done = subprocess.run(
            ["runuser", "-u", self.name, "--", "sh", "-c", script],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (script, done.stdout, done.stderr)


def _useradd(name: str) -> bool:
    # Other suites may edit /etc/passwd at the same moment: useradd then says it cannot lock it.
    done = subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    return done.returncode == 0


@pytest.fixture
def stranger() -> Iterator[Stranger]:
    """A second, unprivileged user (useradd); removed again after the test."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the test creates a second user with useradd and acts as both")
    if shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("useradd/runuser are not installed: no second user can be made here")
    name = f"cpaim{uuid.uuid4().hex[:8]}"
    wait_for(f"useradd {name}", lambda: _useradd(name), timeout=60)
    entry = pwd.getpwnam(name)
    try:
        yield Stranger(name, entry.pw_uid, entry.pw_gid)
    finally:
        wait_for(f"userdel {name}", lambda: subprocess.run(
            ["userdel", name], capture_output=True, timeout=60, check=False).returncode in (0, 6), timeout=60)


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A root-owned 0755 folder in /tmp that the second user can reach (pytest's tmp_path is 0700)."""
    base = Path(tempfile.mkdtemp(prefix="clawplane-aim-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        for proc in processes_under(base):
            proc.kill()
        shutil.rmtree(base, ignore_errors=True)


def _victims(base: Path) -> tuple[Path, Path]:
    victim = base / "victim.txt"
    victim.write_text(VICTIM_TEXT, encoding="utf-8")
    victim.chmod(0o644)
    victimdir = base / "victimdir"
    victimdir.mkdir(mode=0o755)
    return victim, victimdir


def _untouched(victim: Path, victimdir: Path) -> None:
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT, "a line was written through the symlink"
    assert _mode(victim) == 0o644, f"the victim was chmod-ed to {oct(_mode(victim))}"
    assert sorted(p.name for p in victimdir.iterdir()) == [], "files were written into the victim folder"
    assert _mode(victimdir) == 0o755


def test_another_user_cannot_aim_roots_writes_through_the_state_folder(stranger: Stranger, shared: Path) -> None:
    """Finding 1 as written: `mkdir -m777 /tmp/rtx` with the quickstart; the other user plants
    ``.clawplane`` (0777) with ``supervisor.log`` -> a root file and ``out`` -> a root folder;
    root runs ``clawplane apply /tmp/rtx --yes``."""
    folder = copy_quickstart(shared / "rtx")
    folder.chmod(0o777)
    victim, victimdir = _victims(shared)
    state = folder / ".clawplane"
    stranger.run(f"mkdir -m777 {state} && ln -s {victim} {state}/supervisor.log && ln -s {victimdir} {state}/out")
    with fake_quickstart_provider(folder) as fake:
        cli = Cli(folder)
        cli.env[KEY_ENV] = fake.key or ""
        try:
            refused = cli("apply", str(folder), "--yes")
            said = refused.stdout + refused.stderr
            _untouched(victim, victimdir)
            assert refused.returncode == 1, said
            cause = f"{state} is owned by uid {stranger.uid} ({stranger.name}) and writable by every user"
            assert cause in said, said
            assert "another user could aim clawplane's writes" in said and "remove it" in said, said
            assert "--state-dir DIR" in said, said
            # Nothing was adopted: the hostile folder is as its owner left it, and nothing runs.
            info = os.lstat(state)
            assert (info.st_uid, _mode(state)) == (stranger.uid, 0o777)
            assert sorted(p.name for p in state.iterdir()) == ["out", "supervisor.log"]
            assert processes_under(folder) == []
            for command in (["plan", str(folder)], ["status", str(folder)], ["run", str(folder), "--detach"]):
                other = cli(*command)
                assert other.returncode == 1 and cause in other.stdout + other.stderr, (command, other.stdout)
            _untouched(victim, victimdir)

            stranger.run(f"rm -rf {state}")
            # Gone: the folder itself (0777, no sticky bit) still lets anyone swap in a new one.
            again = cli("apply", str(folder), "--yes")
            said = again.stdout + again.stderr
            assert again.returncode == 1, said
            assert f"{folder} is writable by every user and has no sticky bit" in said, said
            assert f"chmod o-w {folder}" in said and not state.exists(), said
            folder.chmod(0o755)  # the fix the message gives
            applied = cli("apply", str(folder), "--yes")
            assert applied.returncode == 0, applied.stdout + applied.stderr
            assert "Apply complete" in applied.stdout
            info = os.lstat(state)
            assert stat.S_ISDIR(info.st_mode) and (info.st_uid, _mode(state)) == (0, 0o700)
            for rel in ("supervisor.log", "out/openclaw.json", "out/agents/coder/tools.json"):
                assert stat.S_ISREG(os.lstat(state / rel).st_mode), rel
            _untouched(victim, victimdir)
        finally:
            cli("down", str(folder))


def test_a_state_folder_that_is_a_symlink_is_refused(world: World) -> None:
    world.server("one")
    elsewhere = world.root / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    world.state.symlink_to(elsewhere)
    proc = world.cli("apply", str(world.folder), "--yes")
    said = proc.stdout + proc.stderr
    assert list(elsewhere.iterdir()) == [], "state files were written through the symlink"
    assert proc.returncode == 1, said
    assert f"{world.state} is a symbolic link (to {elsewhere})" in said, said
    assert "--state-dir DIR with a real directory" in said, said
    assert world.tagged() == []
    world.state.unlink()
    world.apply()
    world.finish(["one"])


def test_a_group_writable_state_folder_is_refused(world: World, stranger: Stranger) -> None:
    """Group-writable for a group another user is in (the second user's own group)."""
    world.server("one")
    world.state.mkdir()
    os.chown(world.state, 0, stranger.gid)
    world.state.chmod(0o770)
    proc = world.cli("apply", str(world.folder), "--yes")
    said = proc.stdout + proc.stderr
    assert list(world.state.iterdir()) == [], "state files were written into the shared folder"
    assert proc.returncode == 1, said
    assert f"{world.state} is writable by group {grp.getgrgid(stranger.gid).gr_name}" in said, said
    assert f"chmod go-w {world.state}" in said, said
    assert _mode(world.state) == 0o770  # refused, not silently changed
    world.state.chmod(0o700)
    world.apply()
    world.finish(["one"])


def test_a_state_folder_owned_by_another_user_is_refused(world: World, stranger: Stranger) -> None:
    """Owned by the other user, even though nobody else may write it (mode 0700)."""
    world.server("one")
    world.state.mkdir(mode=0o700)
    os.chown(world.state, stranger.uid, stranger.gid)
    proc = world.cli("apply", str(world.folder), "--yes")
    said = proc.stdout + proc.stderr
    assert list(world.state.iterdir()) == []
    assert proc.returncode == 1, said
    assert f"{world.state} is owned by uid {stranger.uid} ({stranger.name})" in said, said
    assert "remove it, or use --state-dir DIR" in said, said
    assert os.lstat(world.state).st_uid == stranger.uid
    shutil.rmtree(world.state)
    world.apply()
    world.finish(["one"])


def test_a_symlink_planted_in_a_private_state_folder_between_two_writes_is_refused(world: World) -> None:
    """The state folder is right; a link appears inside it afterwards (only root could put it
    there, but O_NOFOLLOW must refuse it all the same): the next write is refused, not followed."""
    world.server("one")
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    world.wait_ready(["one"])
    victims = {name: world.root / f"victim-{name}" for name in ("loop", "out", "log")}
    for victim in victims.values():
        victim.write_text(VICTIM_TEXT, encoding="utf-8")
        victim.chmod(0o644)
    wait_for("loop.json", lambda: (world.state / "loop.json").is_file())
    for planted, victim in ((world.state / "loop.json", victims["loop"]),
                            (world.state / "out" / "openclaw.json", victims["out"])):  # fmt: skip
        planted.unlink()
        planted.symlink_to(victim)
    world.server("two")  # a pass that writes both

    def refused() -> dict[str, str] | None:
        degraded = dict(world.status().get("degraded") or {})
        both = "symbolic link" in degraded.get("loop.json", "") and "symbolic link" in degraded.get("outputs", "")
        return degraded if both else None

    degraded = wait_for("both writes to be refused", refused)
    assert "openclaw.json" in degraded["outputs"], degraded
    world.wait_ready(["one", "two"])  # the servers keep running meanwhile
    world.ok("down", str(world.folder))
    log = world.state / "supervisor.log"
    assert log.is_file() and not log.is_symlink()
    log.unlink()
    log.symlink_to(victims["log"])
    proc = world.cli("apply", str(world.folder), "--yes")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert f"{log} is a symbolic link (to {victims['log']})" in said, said
    for victim in victims.values():
        assert victim.read_text(encoding="utf-8") == VICTIM_TEXT and _mode(victim) == 0o644, victim
    for planted in (log, world.state / "loop.json", world.state / "out" / "openclaw.json"):
        planted.unlink()
    world.apply()
    assert json.loads((world.state / "out" / "openclaw.json").read_text())["mcp"]["servers"].keys() >= {"one", "two"}
    world.finish(["one", "two"])


def test_rendered_outputs_outside_the_state_folder_are_checked_the_same_way(
    world: World, stranger: Stranger
) -> None:
    world.server("one")
    victimdir = world.root / "victimdir"
    victimdir.mkdir(mode=0o755)
    link = world.root / "out-link"
    link.symlink_to(victimdir)
    proc = world.cli("apply", str(world.folder), "--yes", "--out-dir", str(link))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and f"{link} is a symbolic link (to {victimdir})" in said, said
    assert "--out-dir DIR" in said and world.tagged() == [], said

    theirs = world.root / "their-out"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, stranger.uid, stranger.gid)
    proc = world.cli("apply", str(world.folder), "--yes", "--out-dir", str(theirs))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and f"{theirs} is owned by uid {stranger.uid}" in said, said

    victim = world.root / "victim.json"
    victim.write_text(VICTIM_TEXT, encoding="utf-8")
    victim.chmod(0o644)
    plan_link = world.root / "plan.json"
    plan_link.symlink_to(victim)
    proc = world.cli("plan", str(world.folder), "--out", str(plan_link))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and f"{plan_link} is a symbolic link" in said, said

    shared_out = world.root / "imported"
    shared_out.mkdir()
    shared_out.chmod(0o777)
    mcp_json = world.root / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"x": {"command": sys.executable}}}), encoding="utf-8")
    proc = world.cli("import", str(mcp_json), "--out", str(shared_out))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and f"{shared_out} is writable by every user" in said, said
    assert "--out DIR" in said and list(shared_out.iterdir()) == [], said

    assert list(victimdir.iterdir()) == [] and list(theirs.iterdir()) == []
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT and _mode(victim) == 0o644
    outside = world.root / "rendered"
    world.ok("apply", str(world.folder), "--yes", "--out-dir", str(outside))
    assert _mode(outside) == 0o700 and _mode(outside / "openclaw.json") == 0o600
    world.finish(["one"])


def test_the_operators_copied_resource_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """Finding 8's last sentence: the operator's copies of custom resources were 0644."""
    folder = tmp_path / "namespaces" / "team" / "resources"
    crs = [
        {"apiVersion": "clawplane.dev/v1alpha1", "kind": "McpServer", "metadata": {"name": "files", "generation": 1},
         "spec": {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "literal-in-spec"}}},
        {"apiVersion": "clawplane.dev/v1alpha1", "kind": "Agent", "metadata": {"name": "main", "generation": 1},
         "spec": {}},
    ]  # fmt: skip
    old = os.umask(0)
    try:
        Materializer(folder).sync(crs)
    finally:
        os.umask(old)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    assert [p.relative_to(folder).as_posix() for p in files] == ["agents/main.yaml", "mcpservers/files.yaml"]
    for path in [folder, *folder.rglob("*")]:
        want = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == want, (path, oct(_mode(path)))
