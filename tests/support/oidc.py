"""A real OpenID provider and an OAuth-protected MCP server on loopback, for login tests.

``oidc_provider(log_dir, ttl=…)`` runs ``tests/fixtures/oidc/provider.mjs`` (panva's
oidc-provider, pinned by ``tests/oracles/install.sh``) and yields its ``Issuer``: the URL and
the resource server's client, which ``introspect``s and ``revoke``s tokens there.
``protected_server(issuer, log_dir)`` runs ``tests/fixtures/servers/oauth_protected_server.py``
(tokens checked by introspection) and yields its ``/mcp`` URL. Both print ``READY <port>``
once they listen; both run in their own process group, ended on exit.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.oracles import locate
from tests.support.processes import read_ready, stop_group

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "fixtures" / "servers" / "oauth_protected_server.py"
RS_CLIENT = ("mcp-resource-server", "rs-secret-for-tests-only")
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Issuer:
    """The provider's issuer URL and the resource server's credentials there."""

    url: str

    def introspect(self, token: str) -> dict[str, object]:
        """The provider's RFC 7662 answer for ``token``."""
        meta = httpx.get(f"{self.url}/.well-known/openid-configuration", timeout=10).json()
        answer: dict[str, object] = httpx.post(
            meta["introspection_endpoint"], data={"token": token}, auth=RS_CLIENT, timeout=10
        ).json()
        return answer


def _start(argv: list[str], env: Mapping[str, str], log: Path) -> tuple[subprocess.Popen[bytes], int]:
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, env=dict(env),
            start_new_session=True,
        )  # fmt: skip
    line = read_ready(proc, START_TIMEOUT)
    if not line.startswith(b"READY "):
        stop_group(proc)
        raise AssertionError(f"{argv[1]} did not start: {line!r}\n{log.read_text(errors='replace')[-2000:]}")
    return proc, int(line.split()[1])


@contextlib.contextmanager
def oidc_provider(log_dir: Path, *, ttl: int) -> Iterator[Issuer]:
    """The provider, issuing access tokens that live ``ttl`` seconds."""
    cmd = locate.oidc_provider_cmd()
    assert cmd is not None, locate.unavailable_reason("oidc-provider")
    env = {
        "PATH": locate.SYSTEM_PATH,
        "HOME": str(log_dir),
        "OIDC_PROVIDER_MODULES": str(locate.oidc_provider_node_path()),
        "RS_CLIENT_ID": RS_CLIENT[0],
        "RS_CLIENT_SECRET": RS_CLIENT[1],
        "ACCESS_TOKEN_TTL": str(ttl),
    }
    proc, port = _start(cmd, env, log_dir / "oidc-provider.stderr")
    try:
        yield Issuer(f"http://127.0.0.1:{port}")
    finally:
        stop_group(proc)


@contextlib.contextmanager
def protected_server(issuer: Issuer, log_dir: Path) -> Iterator[str]:
    """The protected MCP server's URL; it refuses the tokens listed in ``log_dir/refused-tokens``."""
    env = {
        **os.environ,
        "RS_CLIENT_ID": RS_CLIENT[0],
        "RS_CLIENT_SECRET": RS_CLIENT[1],
        "REFUSE_FILE": str(log_dir / "refused-tokens"),
    }
    proc, port = _start([sys.executable, str(SERVER), issuer.url], env, log_dir / "protected-server.stderr")
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_group(proc)
