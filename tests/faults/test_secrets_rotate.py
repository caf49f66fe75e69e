"""Issue item 2: secrets rotate through valueFrom.env and valueFrom.file, for apply and for run.

The plan and the apply resolve with one resolver (the applying shell's values travel to the
supervisor), so a rotated value restarts exactly the servers that use it, the server's own
environment (``/proc/PID/environ``) holds the new value, and the next plan is empty.
"""

from __future__ import annotations

from tests.faults.conftest import World, wait_for


def _folder(world: World) -> tuple[str, str]:
    first, token = world.canary("env"), world.canary("file")
    world.secret_file("token.txt", token + "\n")
    world.gateway()
    world.server("env-user", env={"TOKEN": {"valueFrom": {"env": "ROT_TOKEN"}}})
    world.server("file-user", env={"TOKEN": {"valueFrom": {"file": str(world.secrets / "token.txt")}}})
    world.server("plain", env={"GREETING": "hello"})
    return first, token


def test_rotation_through_apply_restarts_exactly_the_servers_whose_value_changed(world: World) -> None:
    first, token = _folder(world)
    env = {"ROT_TOKEN": first}
    world.apply(env)
    before = world.wait_ready(["env-user", "file-user", "plain"])
    pid = {n: before[f"McpServer/{n}"]["pid"] for n in ("env-user", "file-user", "plain")}
    assert world.environ_of(pid["env-user"])["TOKEN"] == first
    assert world.environ_of(pid["file-user"])["TOKEN"] == token
    assert world.plan_is_empty(env)

    second = world.canary("env-rotated")
    env = {"ROT_TOKEN": second}
    assert not world.plan_is_empty(env)
    world.apply(env)
    after = world.wait_ready(["env-user", "file-user", "plain"])
    assert after["McpServer/env-user"]["pid"] != pid["env-user"]
    assert after["McpServer/file-user"]["pid"] == pid["file-user"]
    assert after["McpServer/plain"]["pid"] == pid["plain"]
    assert world.environ_of(after["McpServer/env-user"]["pid"])["TOKEN"] == second
    assert world.plan_is_empty(env)

    rotated = world.canary("file-rotated")
    world.secret_file("token.txt", rotated + "\n")
    world.apply(env)
    last = world.wait_ready(["env-user", "file-user", "plain"])
    assert last["McpServer/file-user"]["pid"] != pid["file-user"]
    assert last["McpServer/env-user"]["pid"] == after["McpServer/env-user"]["pid"]
    assert last["McpServer/plain"]["pid"] == pid["plain"]
    assert world.environ_of(last["McpServer/file-user"]["pid"])["TOKEN"] == rotated
    assert world.plan_is_empty(env)
    world.finish(["env-user", "file-user", "plain"])


def test_a_first_apply_without_the_variable_does_not_trap_the_folder(world: World) -> None:
    value, _ = _folder(world)
    world.cli("apply", str(world.folder), "--yes")
    world.wait_ready(["file-user", "plain"])
    failing = world.resources()["McpServer/env-user"]
    assert failing["phase"] != "Ready"
    assert "ROT_TOKEN is not set" in (failing.get("lastError") or ""), failing
    world.apply({"ROT_TOKEN": value})
    ready = world.wait_ready(["env-user", "file-user", "plain"])
    assert world.environ_of(ready["McpServer/env-user"]["pid"])["TOKEN"] == value
    assert world.plan_is_empty({"ROT_TOKEN": value})
    world.finish(["env-user", "file-user", "plain"])


def test_run_rotates_through_the_gateways_env_file_and_referenced_files(world: World) -> None:
    first, token = world.canary("envfile"), world.canary("file")
    env_file = world.secret_file("secrets.env", f"ROT_TOKEN={first}\n")
    world.secret_file("token.txt", token)
    world.gateway(secrets={"envFile": str(env_file)})
    world.server("env-user", env={"TOKEN": {"valueFrom": {"env": "ROT_TOKEN"}}})
    world.server("file-user", env={"TOKEN": {"valueFrom": {"file": str(world.secrets / "token.txt")}}})
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    ready = world.wait_ready(["env-user", "file-user"])
    env_pid, file_pid = (ready[f"McpServer/{n}"]["pid"] for n in ("env-user", "file-user"))
    assert world.environ_of(env_pid)["TOKEN"] == first

    second = world.canary("envfile-rotated")
    world.secret_file("secrets.env", f"ROT_TOKEN={second}\n")

    def rotated() -> dict[str, object] | None:
        r = world.observed()["McpServer/env-user"]
        return r if r.get("phase") == "Ready" and r.get("pid") not in (None, env_pid) else None

    new_pid = wait_for("the env-file rotation", rotated)["pid"]
    assert isinstance(new_pid, int)
    assert world.environ_of(new_pid)["TOKEN"] == second
    assert world.resources()["McpServer/file-user"]["pid"] == file_pid
    assert world.plan_is_empty()
    world.finish(["env-user", "file-user"])
