"""The conformance suite's client for its ``auth/*`` scenarios: clawplane's own OAuth client.

``conformance client --command "python -m tests.support.conformance_auth" --scenario auth/…``
starts this with the server URL as its last argument and the scenario in
``MCP_CONFORMANCE_SCENARIO`` (and ``MCP_CONFORMANCE_CONTEXT``: JSON, e.g. the pre-registered
client's id and secret). It drives the product's path, nothing of its own: the credential
store sealed in a real (temporary) state database, ``runtimes.oauth.ServerOAuth`` on the
streamable HTTP transport, ``open_connection``, ``tools/list`` and a call of ``test-tool``.
The suite's authorization server redirects its authorization request straight to the
redirect URI, so the login step is ``FollowRedirect`` (no browser), as the suite's own
example clients do. The migration scenario calls its tool after the authorization server
moved, which the same session must survive. Exit 0 when every step succeeded, else 1 (the
negative scenarios expect the client to stop; the suite judges what the server saw).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from clawplane.runtimes.client.connection import open_connection
from clawplane.runtimes.client.listing import ListLimits
from clawplane.runtimes.client.remote import HttpOptions, streamable_http_transport
from clawplane.runtimes.oauth.interaction import FollowRedirect
from clawplane.runtimes.oauth.provider import ServerOAuth, preregistered_client
from clawplane.runtimes.oauth.settings import OAuthSettings
from clawplane.runtimes.oauth.storage import CredentialStorage
from clawplane.state import StateDB
from clawplane.state.oauth import CredentialStore

REDIRECT_URI = "http://localhost:3000/callback"
CIMD_URL = "https://conformance-test.local/client-metadata.json"
"""The client metadata document URL the suite's CIMD scenario expects (as its example client uses)."""
TIMEOUT = 20.0
LIMITS = ListLimits(timeout=TIMEOUT, pages=16, items=1000, bytes=1 << 20)


async def _run(url: str, scenario: str, context: dict[str, Any], state_dir: Path) -> None:
    settings = OAuthSettings(
        client_metadata_url=CIMD_URL,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
    )
    db = StateDB.open(state_dir)
    try:
        storage = CredentialStorage(
            CredentialStore.open(db),
            "conformance",
            url,
            preregistered=preregistered_client(settings, REDIRECT_URI),
        )
        auth = ServerOAuth(url, storage, FollowRedirect(REDIRECT_URI), settings)
        options = HttpOptions(headers={}, connect_timeout=TIMEOUT, auth=auth)
        async with open_connection(
            streamable_http_transport(url, options),
            server="conformance",
            connect_timeout=TIMEOUT,
            request_timeout=TIMEOUT,
        ) as conn:
            tools = await conn.list_tools(LIMITS)
            if any(tool.name == "test-tool" for tool in tools) or scenario.startswith("auth/"):
                await conn.call_tool("test-tool", {})
    finally:
        db.close()


def main(url: str, scenario: str, context: dict[str, Any]) -> int:
    """Run ``scenario`` against ``url`` with clawplane's OAuth client; 0 when it got through."""
    with tempfile.TemporaryDirectory(prefix="clawplane-auth-") as tmp:
        try:
            anyio.run(_run, url, scenario, context, Path(tmp) / "state")
        except Exception as exc:
            print(f"{scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    sys.exit(
        main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), json.loads(raw) if raw else {})
    )
