"""Issue item 5: valueFrom.file cannot stall or exhaust the supervisor; paths outside are flagged.

A FIFO used to block the event loop (the control socket stopped answering, ``down`` hung)
and ``/dev/zero`` grew the supervisor by 1.4 GB per pass; any path, cwd or skills folder
outside the resource folder went unremarked.
"""

from __future__ import annotations

import os
import time

import psutil
from tests.faults.conftest import World, wait_for


def test_a_fifo_or_dev_zero_reference_fails_that_server_only(world: World) -> None:
    fifo = world.secrets / "fifo"
    world.secrets.mkdir()
    os.mkfifo(fifo)
    world.gateway(allowedPaths=[str(world.secrets), "/dev"])
    world.server("fifo-user", env={"TOKEN": {"valueFrom": {"file": str(fifo)}}})
    world.server("zero-user", env={"TOKEN": {"valueFrom": {"file": "/dev/zero"}}})
    world.server("fine")
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    world.wait_ready(["fine"])
    errors = wait_for(
        "both references to be refused",
        lambda: (found := world.observed())
        and all(found.get(f"McpServer/{n}", {}).get("lastError") for n in ("fifo-user", "zero-user"))
        and found,
    )
    assert "not a regular file (a FIFO)" in errors["McpServer/fifo-user"]["lastError"]
    assert "not a regular file (a character device)" in errors["McpServer/zero-user"]["lastError"]
    supervisor = world.supervisor()
    assert supervisor is not None
    started = time.monotonic()
    world.ok("status", str(world.folder))  # answers while passes keep re-reading the references
    assert time.monotonic() - started < 30
    assert supervisor.memory_info().rss < 400 * 1024 * 1024
    world.finish(["fine"])
    world.ok("down", str(world.folder))
    assert not psutil.pid_exists(supervisor.pid) or supervisor.status() == psutil.STATUS_ZOMBIE


def test_paths_outside_the_folder_warn_fail_under_strict_and_can_be_allowed(world: World) -> None:
    outside = world.root / "elsewhere"
    outside.mkdir()
    world.server("reader", env={"TOKEN": {"valueFrom": {"file": "/etc/shadow"}}})
    world.write(
        "cwd.yaml",
        '{"apiVersion":"clawplane.dev/v1alpha1","kind":"McpServer","metadata":{"name":"walker"},'
        f'"spec":{{"command":"true","cwd":"../{outside.name}"}}}}',
    )
    world.write(
        "gateway.yaml",
        '{"apiVersion":"clawplane.dev/v1alpha1","kind":"Gateway","metadata":{"name":"default"},'
        f'"spec":{{"skills":{{"load":{{"extraDirs":["{outside}"]}}}}}}}}',
    )
    plain = world.cli("validate", str(world.folder))
    assert plain.returncode == 0
    text = plain.stdout + plain.stderr
    assert text.count("path.outside-folder") == 3, text
    assert "allowedPaths" in text
    strict = world.cli("validate", "--strict", str(world.folder))
    assert strict.returncode == 1
    world.write(
        "gateway.yaml",
        '{"apiVersion":"clawplane.dev/v1alpha1","kind":"Gateway","metadata":{"name":"default"},'
        f'"spec":{{"allowedPaths":["{outside}","/etc/shadow"],'
        f'"skills":{{"load":{{"extraDirs":["{outside}"]}}}}}}}}',
    )
    allowed = world.cli("validate", "--strict", str(world.folder))
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    world.check_foreign()
    world.check_orphans(allowed=set())
    world.check_canaries()
