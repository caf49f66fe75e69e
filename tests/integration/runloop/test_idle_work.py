"""What an idle ``clawplane run`` does not do: counted in the running supervisor, never timed.

The folder is watched once (one inotify descriptor, and no polling watcher thread), however
many parts of the supervisor want its changes: the loop and the control plane's MCP endpoint
share it.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.runloop.conftest import Loop, wait_for

DISABLED = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: idle-{n}
spec:
  enabled: false
  command: node
  args: [x.js]
"""


def _threads(pid: int) -> list[str]:
    tasks = Path(f"/proc/{pid}/task")
    return sorted((t / "comm").read_text().strip() for t in tasks.iterdir())


def _inotify_fds(pid: int) -> list[str]:
    fds = Path(f"/proc/{pid}/fd")
    found = []
    for fd in fds.iterdir():
        try:
            if os.readlink(fd) == "anon_inode:inotify":
                found.append(fd.name)
        except OSError:  # closed meanwhile
            continue
    return found


def test_the_supervisor_watches_the_folder_once(tmp_path: Path) -> None:
    folder = tmp_path / "idle"
    folder.mkdir()
    (folder / "servers.yaml").write_text("---\n".join(DISABLED.format(n=n) for n in range(3)))
    cli = Cli(folder)
    loop = Loop(folder, cli)
    try:
        started = cli("run", str(folder), "--detach", "--no-metrics", "--resync-interval", "2")
        assert started.returncode == 0, started.stdout + started.stderr
        loop.wait_settled()
        pid = int(loop.info()["pid"])
        # The watch starts with the loop's task; wait for it rather than assume it.
        watches = wait_for("the folder watch", lambda: _inotify_fds(pid))
        assert len(watches) == 1, watches
        assert not [t for t in _threads(pid) if t.startswith("notify-rs")], _threads(pid)
        # That one watch still tells the loop: a change converges.
        before = loop.reconciles()
        (folder / "servers.yaml").write_text("---\n".join(DISABLED.format(n=n) for n in range(4)))
        loop.wait_settled(after=before)
        wait_for("the new server", lambda: "McpServer/idle-3" in loop.observed())
        assert len(_inotify_fds(pid)) == 1
        assert not [t for t in _threads(pid) if t.startswith("notify-rs")], _threads(pid)
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()
