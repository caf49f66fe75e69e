"""McpServer → mcp.servers.<name>: hosted, consumer, remote and disabled servers."""

from __future__ import annotations

from pathlib import Path

from tests.unit.render.build import codes, render_resources, server

from clawplane.diagnostics import Severity

BASE = Path("/srv/res")


def _render(*servers, urls=None, **kwargs):  # type: ignore[no-untyped-def]
    return render_resources(servers=servers, hosted_urls=urls, base=BASE, **kwargs)


def test_hosted_stdio_points_at_supervisor_and_keeps_no_process_details() -> None:
    notes = server(
        "notes",
        command="python3",
        args=["server.py"],
        env={"TOKEN": {"valueFrom": {"env": "NOTES_TOKEN"}}, "GREETING": "hi"},
        cwd="srv",
        image="ghcr.io/x/notes:1",
        resources={"limits": {"memory": "128Mi"}},
        toolFilter={"exclude": ["debug_*"]},
        codex={"agents": ["coder"], "defaultToolsApprovalMode": "prompt"},
        requestTimeoutMs=5000,
        supportsParallelToolCalls=True,
    )
    config, diagnostics = _render(notes)
    assert config["mcp"]["servers"]["notes"] == {
        "transport": "streamable-http",
        "url": "http://127.0.0.1:7777/mcp/notes",
        "requestTimeoutMs": 5000,
        "supportsParallelToolCalls": True,
        "toolFilter": {"exclude": ["debug_*"]},
        "codex": {"agents": ["coder"], "defaultToolsApprovalMode": "prompt"},
    }
    assert diagnostics == []


def test_hosted_without_endpoint_is_left_out_with_error() -> None:
    config, diagnostics = _render(server("notes", command="python3"), urls={})
    assert "mcp" not in config
    assert codes(diagnostics) == ["render.no-hosted-url"]
    assert diagnostics[0].severity is Severity.ERROR and diagnostics[0].resource == "McpServer/notes"


def test_consumer_stdio_keeps_command_with_absolute_cwd_and_env_references() -> None:
    srv = server(
        "files",
        hosting="consumer",
        command="npx",
        args=["-y", "files-mcp", "${HOME}"],
        cwd="./data",
        env={"API_TOKEN": {"valueFrom": {"env": "FILES_TOKEN"}}, "DEBUG": 1, "FLAG": True},
    )
    config, diagnostics = _render(srv)
    assert config["mcp"]["servers"]["files"] == {
        "command": "npx",
        "args": ["-y", "files-mcp", "$${HOME}"],  # a literal ${HOME} must not be substituted
        "cwd": "/srv/res/data",
        "env": {"API_TOKEN": "${FILES_TOKEN}", "DEBUG": 1, "FLAG": True},
    }
    assert diagnostics == []


def test_home_relative_and_absolute_cwd_are_kept() -> None:
    a = server("a", hosting="consumer", command="x", cwd="~/work")
    b = server("b", hosting="consumer", command="x", cwd="/opt/../opt/b")
    servers = _render(a, b).config["mcp"]["servers"]
    assert servers["a"]["cwd"] == "~/work"
    assert servers["b"]["cwd"] == "/opt/b"


def test_remote_server_with_headers_tls_and_explicit_transport() -> None:
    srv = server(
        "docs",
        url="https://docs.example/mcp",
        headers={"Authorization": {"valueFrom": {"env": "DOCS_TOKEN"}}, "X-Team": "blue"},
        sslVerify=False,
        clientCert="certs/c.pem",
        connectionTimeoutMs=5000,
    )
    config, _ = _render(srv)
    assert config["mcp"]["servers"]["docs"] == {
        "url": "https://docs.example/mcp",
        "transport": "sse",  # inferred from url, written explicitly
        "headers": {"Authorization": "${DOCS_TOKEN}", "X-Team": "blue"},
        "sslVerify": False,
        "clientCert": "/srv/res/certs/c.pem",
        "connectionTimeoutMs": 5000,
    }


def test_legacy_type_alias_renders_canonical_transport() -> None:
    srv = server("web", type="http", url="http://127.0.0.1:9/mcp")
    entry = _render(srv).config["mcp"]["servers"]["web"]
    assert entry["transport"] == "streamable-http" and "type" not in entry


def test_disabled_servers_render_enabled_false_without_resolving() -> None:
    remote = server(
        "docs",
        enabled=False,
        url="http://127.0.0.1:9/mcp",
        transport="streamable-http",
        headers={"Authorization": {"valueFrom": {"file": "token.txt"}}, "X": "1"},
    )
    consumer = server("c", enabled=False, hosting="consumer", command="node", env={"A": "b"})
    hosted_off = server("h", enabled=False, command="node", env={"SECRET_TOKEN": "literal"})
    config, diagnostics = _render(remote, consumer, hosted_off, urls={})
    servers = config["mcp"]["servers"]
    assert servers["docs"] == {
        "enabled": False,
        "url": "http://127.0.0.1:9/mcp",
        "transport": "streamable-http",
        "headers": {"X": "1"},
    }
    assert servers["c"] == {"enabled": False, "command": "node", "env": {"A": "b"}}
    assert servers["h"] == {"enabled": False, "command": "node"}  # hosted env stays with the supervisor
    assert [d.severity for d in diagnostics] == [Severity.INFO]


def test_defaults_are_left_to_openclaw_unless_declared() -> None:
    plain = server("p", hosting="consumer", command="x")
    explicit = server(
        "e", hosting="consumer", command="x", connectionTimeoutMs=30000, supportsParallelToolCalls=False
    )
    servers = _render(plain, explicit).config["mcp"]["servers"]
    assert servers["p"] == {"command": "x"}
    assert servers["e"] == {"command": "x", "connectionTimeoutMs": 30000, "supportsParallelToolCalls": False}


def test_declaration_order_is_kept() -> None:
    names = ["zeta", "alpha", "mid"]
    servers = [server(n, hosting="consumer", command="x") for n in names]
    assert list(_render(*servers).config["mcp"]["servers"]) == names


def test_oauth_renders_only_openclaws_keys() -> None:
    """clawplane's own ``clientId``/``clientSecret`` (its login) never reach openclaw.json."""
    srv = server(
        "notes",
        url="https://notes.example/mcp",
        auth="oauth",
        oauth={
            "scope": "notes:read",
            "clientId": "clawplane-notes",
            "clientSecret": {"valueFrom": {"env": "NOTES_SECRET"}},
        },
    )
    entry = _render(srv).config["mcp"]["servers"]["notes"]
    assert entry["auth"] == "oauth"
    assert entry["oauth"] == {"scope": "notes:read"}
