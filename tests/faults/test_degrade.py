"""Issue item 4: the supervisor never dies of a disk that refuses writes, and says so.

A full disk (a 1 MiB tmpfs as the state directory, in a private mount namespace) and a
read-only state directory: servers keep running, the failure shows in ``status``, ``/readyz``
and ``/metrics``, writes are retried, and the supervisor converges once the disk is back.
"""

from __future__ import annotations

import urllib.error
import urllib.request

from tests.faults.conftest import Namespace, World, wait_for


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _degraded(world: World) -> dict[str, str]:
    return dict(world.status().get("degraded") or {})


def test_a_full_disk_degrades_the_supervisor_and_it_recovers(world: World, namespace: Namespace) -> None:
    world.server("one", env={"GREETING": "first"})
    world.state.mkdir()
    namespace.must("mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(world.state))
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    pid = world.wait_ready(["one"])["McpServer/one"]["pid"]
    metrics = world.info()["metrics"]
    token = world.ok("token", "show", str(world.folder), "cli").strip()
    assert _get(metrics + "/readyz")[0] == 200

    namespace.run("dd", "if=/dev/zero", f"of={world.state}/filler", "bs=64k")  # until ENOSPC
    world.server("one", env={"GREETING": "second"})  # a pass that must write the state
    degraded = wait_for("the supervisor to report the full disk", lambda: _degraded(world))
    assert any("full" in why for why in degraded.values()), degraded
    assert _get(metrics + "/readyz")[0] == 503
    assert "clawplane_degraded{" in _get(metrics + "/metrics", token)[1]
    assert "degraded: cannot write" in world.ok("status", str(world.folder))
    sup = world.supervisor()
    assert sup is not None, "the supervisor died of a full disk"
    assert world.servers(), "the servers died with the disk"

    namespace.must("rm", f"{world.state}/filler")
    wait_for("the supervisor to recover", lambda: not _degraded(world))
    wait_for("the plan to converge", world.plan_is_empty)
    assert _get(metrics + "/readyz")[0] == 200
    assert world.supervisor() == sup
    new = world.wait_ready(["one"])["McpServer/one"]["pid"]
    assert world.environ_of(new)["GREETING"] == "second" and new != pid
    world.finish(["one"])


def test_a_read_only_state_dir_is_a_clear_error_and_a_degraded_supervisor(
    world: World, namespace: Namespace
) -> None:
    world.server("one", env={"GREETING": "first"})
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    world.wait_ready(["one"])
    state = str(world.state)
    namespace.must("mount", "--bind", state, state)
    namespace.must("mount", "-o", "remount,bind,ro", state)

    world.server("one", env={"GREETING": "second"})
    degraded = wait_for("the supervisor to report the read-only disk", lambda: _degraded(world))
    assert any("read-only" in why.lower() for why in degraded.values()), degraded
    proc = world.cli("apply", str(world.folder), "--yes")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "read-only" in (proc.stdout + proc.stderr).lower(), proc.stdout + proc.stderr
    world.cli("plan", str(world.folder))  # reading needs no writes: it may work, it must not crash
    assert world.supervisor() is not None and world.servers()

    namespace.must("umount", state)
    wait_for("the supervisor to recover", lambda: not _degraded(world))
    wait_for("the plan to converge", world.plan_is_empty)
    new = world.wait_ready(["one"])["McpServer/one"]["pid"]
    assert world.environ_of(new)["GREETING"] == "second"
    world.finish(["one"])
