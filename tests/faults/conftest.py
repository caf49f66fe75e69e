"""The fault-injection world: a folder of real servers, a real supervisor, and the closing checks.

Each test gets a private ``World``: its own temp folder, free ports (0 everywhere), secrets
that are canaries, and foreign processes (not ours, in their own process groups) that a
correct supervisor must never touch. A test injects its fault, then calls ``world.finish``,
which proves, whatever the fault was:

1. no foreign process was killed, and no process of ours is left that nobody owns;
2. no canary, in any encoding, is in any file under the folder or the state dir, in the
   state database, in the supervisor's log, in any command's output, or in any process's
   command line;
3. the servers that should run are running;
4. ``clawplane status`` tells the truth about them (phase, pid).

Every server process carries ``--tag <world tag>`` on its command line, which is how the
world finds its processes without trusting process trees (faults break them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psutil
import pytest
from tests.integration.runloop.conftest import wait_for as poll
from tests.support.peek import by_key, status_text

from clawplane.secrets import secret_forms

ROOT = Path(__file__).resolve().parents[2]
FAULT_SERVER = ROOT / "tests" / "fixtures" / "servers" / "fault_server.py"
T = TypeVar("T")

# Measured here: a fixture server is ready in ~1 s, a supervisor answers in ~1.5 s, on an idle
# 2-core box. Waits allow 20x that, because the suite runs on a loaded machine under xdist.
START_S = 60.0
CLI_S = 180.0
TEST_S = 900.0
"""Per-test limit: the longest fault test takes ~90 s on an idle box and ~4x that under xdist load."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fault tests run real supervisors through many faults: they get ``TEST_S``, not the default."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.timeout(TEST_S))


def wait_for(what: str, probe: Callable[[], T | None], *, timeout: float = START_S) -> T:
    """Poll ``probe`` until it returns something truthy (other processes give no event to await)."""
    return poll(what, probe, timeout=timeout, interval=0.05)


def server_doc(name: str, tag: str, *, env: dict[str, Any] | None = None, **flags: int) -> str:
    """An McpServer document running the fault fixture."""
    args = [str(FAULT_SERVER), "--tag", tag]
    for flag, value in flags.items():
        args += [f"--{flag.replace('_', '-')}", str(value)]
    doc: dict[str, Any] = {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name},
        "spec": {
            "command": sys.executable,
            "args": args,
            "connectionTimeoutMs": int(START_S * 1000),
        },
    }
    if env:
        doc["spec"]["env"] = env
    return json.dumps(doc)  # JSON is YAML


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return list(proc.cmdline() or [])
    except psutil.Error:
        return []  # it ended meanwhile


def _parent(proc: psutil.Process) -> int | None:
    try:
        return int(proc.ppid())
    except psutil.Error:
        return None


def alive(proc: psutil.Process) -> bool:
    """True while ``proc`` (that very process) runs and is not a zombie."""
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


@dataclass
class World:
    """One test's folder, environment, outputs and the processes it must not lose or kill."""

    root: Path
    tag: str
    env: dict[str, str]
    canaries: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    foreign: list[psutil.Process] = field(default_factory=list)
    prefix: list[str] = field(default_factory=list)
    """Run every command through this (e.g. ``nsenter`` into a mount namespace)."""
    view: Path | None = None
    """Where the files are seen from outside that namespace (``/proc/PID/root``)."""

    @property
    def folder(self) -> Path:
        return self.root / "folder"

    @property
    def state(self) -> Path:
        return self.folder / ".clawplane"

    @property
    def secrets(self) -> Path:
        """Secret files live here, outside the folder (the Gateway allows it)."""
        return self.root / "secrets"

    # -- building ---------------------------------------------------------------------------
    def canary(self, label: str) -> str:
        """A fresh secret value that must never show up anywhere."""
        value = f"canary-{label}-{uuid.uuid4().hex[:12]}"
        self.canaries.append(value)
        return value

    def write(self, rel: str, text: str) -> Path:
        path = self.folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def secret_file(self, name: str, value: str) -> Path:
        path = self.secrets / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value, encoding="utf-8")
        return path

    def gateway(self, **spec: Any) -> None:
        spec.setdefault("allowedPaths", [str(self.secrets)])
        doc = {"apiVersion": "clawplane.dev/v1alpha1", "kind": "Gateway", "metadata": {"name": "default"}}
        self.write("gateway.yaml", json.dumps({**doc, "spec": spec}))

    def server(self, name: str, *, env: dict[str, Any] | None = None, **flags: int) -> None:
        self.write(f"{name}.yaml", server_doc(name, self.tag, env=env, **flags))

    # -- running ----------------------------------------------------------------------------
    def cli(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = CLI_S, umask: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``clawplane ARGS`` as a user would; its output is kept for the canary check."""
        shell = ["sh", "-c", f'umask {umask:03o}; exec "$@"', "sh"] if umask is not None else []
        proc = subprocess.run(
            [*self.prefix, *shell, sys.executable, "-m", "clawplane", *args],
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        text = proc.stdout + proc.stderr
        self.outputs.append(text)
        assert "Traceback" not in text, text
        assert proc.returncode != 3, text  # never an internal error for something a user can cause
        return proc

    def ok(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = self.cli(*args, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def apply(self, env: dict[str, str] | None = None) -> str:
        return self.ok("apply", str(self.folder), "--yes", env=env)

    def plan_is_empty(self, env: dict[str, str] | None = None) -> bool:
        proc = self.cli("plan", str(self.folder), "--detailed-exitcode", env=env)
        assert proc.returncode in (0, 2), proc.stdout + proc.stderr
        return proc.returncode == 0

    def status(self) -> dict[str, Any]:
        return dict(json.loads(self.ok("status", str(self.folder), "--json")))

    def resources(self) -> dict[str, dict[str, Any]]:
        return by_key(self.status())

    def observed(self) -> dict[str, dict[str, Any]]:
        """``resources()`` read in this process, for polls (see ``tests.support.peek``).

        Through a mount namespace, or where the command would fail, it is the command.
        """
        text = status_text(self.folder) if not self.prefix else None
        if text is None:
            return self.resources()
        if not self.outputs or self.outputs[-1] != text:
            self.outputs.append(text)  # what status would print is checked for canaries too
        return by_key(json.loads(text))

    def seen(self, path: Path) -> Path:
        """``path`` as the commands see it (through the mount namespace, when there is one)."""
        return Path(f"{self.view}{path}") if self.view is not None else path

    def info(self) -> dict[str, Any]:
        return dict(json.loads(self.seen(self.state / "supervisor.pid").read_text()))

    def supervisor(self) -> psutil.Process | None:
        try:
            info = self.info()
            proc = psutil.Process(int(info["pid"]))
        except (OSError, ValueError, KeyError, psutil.Error):
            return None
        return proc if alive(proc) else None

    def tagged(self) -> list[psutil.Process]:
        """Live processes of this world (their command line carries its tag)."""
        found = []
        for proc in psutil.process_iter(["cmdline", "status"]):
            try:
                cmd = proc.info["cmdline"] or []
                if proc.info["status"] != psutil.STATUS_ZOMBIE and self.tag in cmd:
                    found.append(proc)
            except psutil.Error:
                continue
        return found

    def servers(self) -> dict[int, psutil.Process]:
        """Live server processes (not grandchildren) of this world, by pid."""
        # The command line read with the scan: a server may end (a zombie) before a second read.
        return {p.pid: p for p in self.tagged() if "grandchild" not in (p.info["cmdline"] or [])}

    def start_foreign(self, *, ignore_term: bool = False) -> psutil.Process:
        """A process that is not ours, leading its own process group; it must survive the test."""
        code = "import signal, time\n"
        if ignore_term:
            code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        code += "time.sleep(3600)"
        raw = subprocess.Popen(
            [sys.executable, "-c", code, "foreign-" + self.tag], start_new_session=True
        )
        proc = psutil.Process(raw.pid)
        self.foreign.append(proc)
        return proc

    def environ_of(self, pid: int) -> dict[str, str]:
        """The environment of ``pid``; empty once it has exited (status can name a pid that just did)."""
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except (ProcessLookupError, FileNotFoundError):
            return {}
        pairs = [item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item]
        return {k.decode(): v.decode() for k, v in pairs}

    def wait_ready(self, names: list[str], *, timeout: float = START_S) -> dict[str, dict[str, Any]]:
        """Wait until ``status`` shows each server Ready with a live pid of this world."""

        def ready() -> dict[str, dict[str, Any]] | None:
            found = self.observed()
            servers = self.servers()
            for name in names:
                r = found.get(f"McpServer/{name}")
                if r is None or r.get("phase") != "Ready" or r.get("pid") not in servers:
                    return None
            return found

        return wait_for(f"servers {names} ready", ready, timeout=timeout)

    # -- the closing checks -------------------------------------------------------------------
    def finish(self, running: list[str]) -> None:
        """The four checks every fault test ends with (see the module docstring)."""
        self.check_foreign()
        resources = self.wait_ready(running) if running else self.resources()
        pids = {resources[f"McpServer/{n}"]["pid"] for n in running}
        # A crash-looping server (``--crash``) is restarted with back-off for as long as it is
        # declared: one of its short-lived attempts may be alive at any moment, and none is Ready.
        servers = {pid: p for pid, p in self.servers().items() if "--crash" not in _cmdline(p)}
        assert set(servers) == pids, f"server processes {sorted(servers)} but status shows {sorted(pids)}"
        sup = self.supervisor()
        assert running == [] or sup is not None, "servers should run but no supervisor does"
        status = self.status()  # the command itself, as a user runs it
        assert status["supervisor"]["running"] == (sup is not None), status["supervisor"]
        shown = by_key(status)
        for n in running:
            r = shown.get(f"McpServer/{n}", {})
            assert (r.get("phase"), r.get("pid")) == ("Ready", resources[f"McpServer/{n}"]["pid"]), r
        for pid in pids:
            assert pid in servers
        self.check_orphans(allowed=set(pids), supervisor=sup.pid if sup is not None else None)
        self.check_canaries()

    def check_foreign(self) -> None:
        for proc in self.foreign:
            assert alive(proc), f"foreign process {proc.pid} was killed"

    def check_orphans(self, *, allowed: set[int], supervisor: int | None = None) -> None:
        """Every process of this world is an expected server or one of its descendants.

        A crash-looping server's attempt (``--crash``) is no orphan while it is the live
        ``supervisor``'s own child: it is restarted with back-off for as long as it is declared.
        """
        keep = set(allowed)
        for pid in allowed:
            try:
                keep |= {c.pid for c in psutil.Process(pid).children(recursive=True)}
            except psutil.Error:
                continue
        strays = [
            p for p in self.tagged()
            if p.pid not in keep and not (supervisor is not None and "--crash" in _cmdline(p)
                                          and _parent(p) == supervisor)
        ]  # fmt: skip
        details = [(p.pid, p.ppid(), _cgroup_of(p.pid), p.cmdline()[-2:]) for p in strays]
        assert not strays, f"orphaned processes (pid, ppid, cgroup, args): {details}; allowed {allowed}"

    def check_canaries(self) -> None:
        forms = {form for value in self.canaries for form in secret_forms(value)}
        if not forms:
            return
        hits: list[str] = []
        roots = [self.root] + ([Path(f"{self.view}{self.root}")] if self.view is not None else [])
        for path in sorted(p for root in roots for p in root.rglob("*")):
            if self.secrets in path.parents or not path.is_file() or path.is_symlink():
                continue
            try:
                data = path.read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            hits += [f"{path}: {f!r}" for f in forms if f in data]
        for i, text in enumerate(self.outputs):
            hits += [f"output #{i}: {f!r}" for f in forms if f in text]
        for proc in psutil.process_iter(["cmdline"]):
            cmd = " ".join(proc.info["cmdline"] or [])
            hits += [f"cmdline of {proc.pid}: {f!r}" for f in forms if f in cmd]
        assert not hits, "secret canaries leaked:\n" + "\n".join(hits)

    def teardown(self) -> None:
        """Stop everything this world started, whatever state the test left it in."""
        if self.folder.exists():
            with _suppress():
                self.cli("down", str(self.folder), timeout=120)
        for proc in self.tagged():
            with _suppress():
                proc.kill()
        for proc in self.foreign:
            with _suppress():
                proc.kill()
                proc.wait(5)


def _cgroup_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cgroup").read_text().strip().splitlines()[-1]
    except OSError:
        return "?"


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return exc[0] is not None and issubclass(exc[0], Exception | AssertionError)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """A private fault world; everything it started is stopped afterwards."""
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CLAWPLANE_")},
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "NO_COLOR": "1",
    }
    w = World(tmp_path, f"w{uuid.uuid4().hex[:10]}", env)
    w.folder.mkdir()
    try:
        yield w
    finally:
        w.teardown()


@dataclass
class Namespace:
    """A private mount namespace held open by a sleeping process; commands enter it with nsenter."""

    holder: subprocess.Popen[bytes]

    def run(self, *cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["nsenter", "-t", str(self.holder.pid), "-m", "--", *cmd],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def must(self, *cmd: str) -> None:
        done = self.run(*cmd)
        assert done.returncode == 0, (cmd, done.stdout, done.stderr)


@pytest.fixture
def namespace(world: World) -> Iterator[Namespace]:
    """``world`` with every command run inside a mount namespace of its own (for tmpfs and ro mounts)."""
    try:
        holder = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sleep", "3600"])
    except OSError as exc:
        pytest.skip(f"no mount namespaces here: {exc}")
    own = os.readlink("/proc/self/ns/mnt")
    try:
        wait_for("the namespace", lambda: os.readlink(f"/proc/{holder.pid}/ns/mnt") != own, timeout=10)
    except (AssertionError, OSError):
        holder.kill()
        pytest.skip("unshare -m does not work here")
    world.prefix = ["nsenter", "-t", str(holder.pid), "-m", "--"]
    world.view = Path(f"/proc/{holder.pid}/root")
    try:
        yield Namespace(holder)
    finally:
        world.teardown()
        holder.kill()
        holder.wait(10)


def kill9(proc: psutil.Process) -> None:
    """SIGKILL ``proc`` and wait until it is gone (or a zombie nobody reaps yet)."""
    os.kill(proc.pid, signal.SIGKILL)
    wait_for(f"pid {proc.pid} to die", lambda: not alive(proc))
