"""Issue item 1: no secret leaks, in any encoding, into a file, the state, a log or an output.

A header secret with a line break (a two-line token file) used to be quoted by the HTTP
library in Python bytes form, which an exact-match redactor missed, and land in status,
conditions, ``mcp probe`` and ``runtimes.last_error`` in a world-readable ``state.db``.
"""

from __future__ import annotations

import stat

from tests.faults.conftest import World, wait_for


def test_secrets_in_every_encoding_stay_out_of_status_state_logs_and_probes(world: World) -> None:
    line1, line2 = world.canary("line1"), world.canary("line2")
    token = world.secret_file("two-line-token", f"Bearer {line1}\r\n{line2}\n")
    leaked = world.canary("leaked")
    world.gateway()
    world.write(
        "remote.yaml",
        '{"apiVersion":"clawplane.dev/v1alpha1","kind":"McpServer","metadata":{"name":"remote"},'
        '"spec":{"transport":"streamable-http","url":"http://127.0.0.1:9/mcp","connectionTimeoutMs":5000,'
        f'"headers":{{"Authorization":{{"valueFrom":{{"file":"{token}"}}}}}}}}}}',
    )
    world.server("leaky", leak="LEAK_ME", crash=1, env={"LEAK_ME": {"valueFrom": {"env": "LEAK_VALUE"}}})
    world.server("fine")
    env = {"LEAK_VALUE": leaked}
    world.cli("apply", str(world.folder), "--yes", env=env, umask=0)
    world.wait_ready(["fine"])

    def failed() -> dict[str, object] | None:
        found = world.observed()
        remote, leaky = found.get("McpServer/remote", {}), found.get("McpServer/leaky", {})
        return found if remote.get("lastError") and leaky.get("restarts") else None

    found = wait_for("both faulty servers to report", failed)
    assert "line break" in str(found["McpServer/remote"]["lastError"])
    world.cli("mcp", "probe", str(world.folder), env=env)
    world.cli("mcp", "probe", str(world.folder), "--json", env=env)
    world.cli("status", str(world.folder))
    world.cli("plan", str(world.folder), env=env)
    # Everything under the state dir is private though every command ran with umask 000.
    for path in [world.state, *world.state.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if not path.is_symlink():
            assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
    world.finish(["fine"])
