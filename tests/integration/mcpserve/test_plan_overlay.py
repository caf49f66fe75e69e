"""``plan`` with YAML documents laid over the folder predicts exactly what the following apply does.

A subscriber of ``clawplane://plan`` is told when the folder's files change what an apply
would do: over stdio in the handshake era (``resources/subscribe``) and over HTTP in the
2026-07-28 era (``subscriptions/listen``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import deepdiff
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPDeprecationWarning
from tests.integration.mcpserve.conftest import applied, control
from tests.integration.mcpserve.test_tools import call, schemas_of

pytestmark = pytest.mark.anyio

EXTRA = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: notes-extra
spec:
  command: python3
  args: [servers/notes_server.py]
  cwd: .
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _actions(plan: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(c["key"], c["action"], c["diff"]) for c in plan["changes"] if c["action"] != "noop"]


# An apply of the quickstart (~10 s idle), a plan and a second apply; several times that on a busy box.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_plan_with_documents_predicts_the_apply(tmp_path: Path, transport: str) -> None:
    folder = tmp_path / "quickstart"
    updated = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and str(message.params.uri) == "clawplane://plan":
            updated.set()

    with applied(folder) as cli:
        servers = (folder / "mcp-servers.yaml").read_text()
        changed = servers.replace("hello from clawplane", "hello again")
        assert changed != servers
        documents = [{"file": "mcp-servers.yaml", "text": changed}, {"file": "extra.yaml", "text": EXTRA}]
        mode = "legacy" if transport == "stdio" else "auto"
        async with control(transport, folder, cli, mode=mode, message_handler=on_message) as client:
            schemas = await schemas_of(client)
            predicted = await call(client, schemas, "plan", documents=documents)
            assert [(k, a) for k, a, _ in _actions(predicted["plan"])] == [
                ("McpServer/notes-extra", "create"), ("McpServer/notes", "replace"),
            ], _actions(predicted["plan"])  # fmt: skip
            # The overlay is a dry run: the folder itself still plans nothing.
            assert (await call(client, schemas, "plan"))["hasChanges"] is False

            async def write_and_wait() -> None:
                (folder / "mcp-servers.yaml").write_text(changed)
                (folder / "extra.yaml").write_text(EXTRA)
                with anyio.fail_after(60):
                    await updated.wait()

            if mode == "legacy":
                with pytest.warns(MCPDeprecationWarning):  # the handshake era's way, which we serve
                    await client.subscribe_resource("clawplane://plan")
                await write_and_wait()
            else:
                async with client.listen(resource_subscriptions=["clawplane://plan"]) as subscription:
                    (folder / "mcp-servers.yaml").write_text(changed)
                    (folder / "extra.yaml").write_text(EXTRA)
                    with anyio.fail_after(60):
                        event = await subscription.__anext__()
                    assert getattr(event, "uri", None) == "clawplane://plan", event
            now = await call(client, schemas, "plan")
            assert now["planHash"] == predicted["planHash"], json.dumps(deepdiff.DeepDiff(predicted["plan"], now["plan"]).to_dict(), default=str)[:3000]

            done = cli("apply", str(folder), "--yes")
            assert done.returncode == 0, done.stdout + done.stderr
            (entry, *_) = (await call(client, schemas, "audit_list", limit=1))["entries"]
            assert entry["planHash"] == predicted["planHash"] and entry["outcome"] == "success"
            status = await call(client, schemas, "status", name="notes-extra")
            assert status["resources"][0]["phase"] == "Ready"
            assert (await call(client, schemas, "plan"))["hasChanges"] is False
        saved = json.loads((folder / ".clawplane" / "out" / "openclaw.json").read_text())
        assert "notes-extra" in saved["mcp"]["servers"]
