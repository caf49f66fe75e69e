"""What ``clawplane bridge`` was handed in its environment stays out of the server it starts.

The server is third-party code running as the bridge's own user: the bridge's token
(``CLAWPLANE_BRIDGE_TOKEN``) is not in the environment it inherits, and the bridge's initial
environment in ``/proc/<bridge>/environ`` (which still names the token) is closed to it, because
the bridge makes itself non-dumpable. Real bridge processes, the real stdio proxy fixture; the
``/proc`` test runs the bridge as ``nobody`` (``setpriv``) so the kernel's same-user rule is the
one in force, as in a pod.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.servers.helpers import CLAWPLANE, TOKEN, authed, bridge_process, script
from tests.integration.runloop.conftest import wait_for

from clawplane._utils.nondumpable import inspectable

pytestmark = pytest.mark.anyio

NOBODY = 65534
# Reads the bridge's environment and a same-user process's, then becomes the real server.
SERVER = """exec 2> "{out}/err"
sleep 30 & neighbour=$!
cat /proc/$neighbour/environ > "{out}/neighbour" && echo readable > "{out}/neighbour.verdict"
cat /proc/$PPID/environ > "{out}/bridge" && echo readable > "{out}/bridge.verdict"
echo done > "{out}/done"
kill $neighbour
exec "{python}" "{server}"
"""


async def test_the_bridge_token_does_not_reach_the_servers_environment() -> None:
    async with bridge_process(
        sys.executable, script("proxy"), env={**os.environ, "CLAWPLANE_BRIDGE_TOKEN": TOKEN}
    ) as (
        bridge,
        url,
    ):
        async with authed(url) as client:
            seen = await client.call_tool("env", {"name": "CLAWPLANE_BRIDGE_TOKEN"})
        bridge.terminate()
    assert seen.content[0].text == "<unset>"  # type: ignore[union-attr]


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory ``nobody`` may write (pytest's own are root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="clawplane-bridge-proc-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_server_of_the_same_user_cannot_read_the_bridges_environment(shared: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the bridge as another user")
    starter = shared / "server.sh"
    starter.write_text(SERVER.format(out=shared, python=sys.executable, server=script("proxy")))
    starter.chmod(0o755)
    # As nobody, allowed to read (not write) root's files: this checkout and its venv are root's.
    as_nobody = [
        "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
        "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", "--",
    ]  # fmt: skip
    bridge = subprocess.Popen(
        [*as_nobody, *CLAWPLANE, "bridge", "--port", "0", "--", "/bin/sh", str(starter)],
        env={**os.environ, "CLAWPLANE_BRIDGE_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for("the server to look", lambda: (shared / "done").exists() or bridge.poll() is not None)
    finally:
        bridge.terminate()
        _, stderr = bridge.communicate(timeout=60)
    assert (shared / "done").exists(), stderr
    # The same user's ordinary process is readable: the test can see what it looks for.
    assert (shared / "neighbour.verdict").exists(), (shared / "err").read_text()
    assert not (shared / "bridge.verdict").exists()
    assert "Permission denied" in (shared / "err").read_text()
    assert TOKEN.encode() not in (shared / "bridge").read_bytes()
    assert "Traceback" not in stderr


def test_forbidding_inspection_is_reported_truthfully() -> None:
    """In a child process (the setting cannot be undone): after the call, the process says it is
    not dumpable."""
    code = (
        "from clawplane._utils.nondumpable import forbid_inspection, inspectable\n"
        "before = inspectable(); why = forbid_inspection(); print(before, why, inspectable())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    if not sys.platform.startswith("linux"):
        assert done.stdout.split()[0] == "None"
        return
    assert done.stdout.split() == ["True", "None", "False"], done.stderr
    assert inspectable() is True  # this test process was left as it was
