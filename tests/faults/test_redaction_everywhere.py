"""Issue 35, finding 8: secrets on disk and in the CLI (everything passes the same redactor).

A two-line ModelProvider ``apiKey`` reached ``loop.json`` inside an "Illegal header value"
error (``status`` showed ``<redacted>``: only the status path was redacted), and an approval
reason that quoted a secret the supervisor knows was printed raw by ``approvals show`` and
``approvals list --json`` and stored raw in ``state.db`` (the dashboard redacted it).
``world.finish`` then looks for the canaries, in every encoding, in every file under the folder
and the state dir (``loop.json``, ``state.db``, the log), in every command's output and in every
process's command line.
"""

from __future__ import annotations

import json
import socket

from tests.faults.conftest import World, wait_for


def test_finding8_a_two_line_provider_key_stays_out_of_loop_json(world: World) -> None:
    line1, line2 = world.canary("key-line1"), world.canary("key-line2")
    key = world.secret_file("provider.key", f"{line1}\n{line2}\n")
    world.gateway()
    # A port that takes connections (the kernel's backlog does, nobody accepts): the HTTP client
    # gets as far as writing the headers, where it refuses the line break, quoting the value.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    world.write(
        "provider.yaml",
        json.dumps({
            "apiVersion": "clawplane.dev/v1alpha1", "kind": "ModelProvider", "metadata": {"name": "local"},
            "spec": {"baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": {"valueFrom": {"file": str(key)}},
                     "connectionTimeoutMs": 5000, "models": [{"id": "m1"}]},
        }),
    )  # fmt: skip
    world.server("fine")
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    world.wait_ready(["fine"])
    loop_json = world.state / "loop.json"

    def provider_failed() -> dict[str, object] | None:
        try:
            doc = json.loads(loop_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        errors = doc.get("errors") or {}
        return doc if "ModelProvider/local" in errors else None

    doc = wait_for("the provider's failure in loop.json", provider_failed)
    error = str(doc["errors"]["ModelProvider/local"])  # type: ignore[index]
    assert "<redacted>" in error, error
    world.outputs.append(loop_json.read_text(encoding="utf-8"))
    world.ok("status", str(world.folder))
    world.finish(["fine"])
    listener.close()


def test_finding8_an_approval_reason_with_a_secret_is_redacted_in_the_cli_state_and_loop(
    world: World,
) -> None:
    secret = world.canary("reason")
    rules = {"rules": [{"name": "server-deletes", "kinds": ["McpServer"], "actions": ["delete"]}]}
    world.gateway(approvals=rules)
    world.server("fine", env={"MY_KEY": {"valueFrom": {"env": "MY_KEY"}}})
    world.server("doomed")
    env = {"MY_KEY": secret}
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5", env=env)
    world.wait_ready(["fine", "doomed"])
    (world.folder / "doomed.yaml").unlink()

    def pending() -> list[dict[str, object]] | None:
        found = json.loads(world.ok("approvals", "list", str(world.folder), "--json"))
        return found or None

    (request,) = wait_for("the held delete", pending)
    approval = str(request["id"])
    reason = f"the key {secret} must not be deleted with this server"
    world.ok("approvals", "reject", str(world.folder), approval, "--reason", reason)
    shown = json.loads(world.ok("approvals", "show", str(world.folder), approval, "--json"))
    assert shown["status"] == "rejected" and "<redacted>" in shown["reason"], shown
    assert "<redacted>" in world.ok("approvals", "show", str(world.folder), approval)
    world.ok("approvals", "list", str(world.folder), "--all", "--json")
    world.ok("status", str(world.folder))
    wait_for("a pass after the answer", lambda: (world.state / "loop.json").exists() or None)
    world.finish(["fine", "doomed"])
