"""``clawplane mcp list|show|set|unset``: OpenClaw-style canonicalization and comment-keeping edits."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from clawplane.cli.app import app
from clawplane.editing.mcpedit import (
    canonicalize,
    redact,
    remove_server_text,
    set_server_text,
)

runner = CliRunner()

TWO = """\
# top comment
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: notes   # the notes server
spec:
  command: node   # keep me
  args: ["a"]
  env:
    API_TOKEN: abc
    HOME_DIR: {valueFrom: {env: HOME}}
---   # second doc
# about docs
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: docs
spec:
  # spec comment
  url: https://x.example.com/mcp  # url comment
"""


def _folder(tmp_path: Path, text: str = TWO) -> Path:
    folder = tmp_path / "res"
    folder.mkdir()
    (folder / "servers.yaml").write_text(text, encoding="utf-8")
    return folder


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["mcp", *args])
    return result.exit_code, result.output


def test_canonicalize_notes_example() -> None:
    raw = {
        "url": "https://x.example.com/mcp",
        "type": "http",
        "supports_parallel_tool_calls": True,
        "workingDirectory": "/w",
        "codex": {"default_tools_approval_mode": "auto"},
    }
    got = canonicalize(raw)
    assert list(got) == ["url", "codex", "transport", "cwd", "supportsParallelToolCalls"]
    assert got["transport"] == "streamable-http"
    assert got["codex"] == {"defaultToolsApprovalMode": "auto"}


def test_canonicalize_type_rules() -> None:
    assert canonicalize({"command": "x", "type": "STDIO"}) == {"command": "x"}
    assert canonicalize({"url": "u", "type": "sse"}) == {"url": "u", "transport": "sse"}
    # an explicit transport wins over the alias; the known alias is still removed
    assert canonicalize({"url": "u", "type": "http", "transport": "sse"}) == {"url": "u", "transport": "sse"}
    # unknown type values are kept
    assert canonicalize({"url": "u", "type": "websocket"}) == {"url": "u", "type": "websocket"}
    # canonical wins; the legacy key is always dropped
    assert canonicalize({"cwd": "/a", "workingDirectory": "/b", "ssl_verify": False}) == {
        "cwd": "/a",
        "sslVerify": False,
    }


def test_redact_keeps_value_from() -> None:
    shown = redact({"env": {"API_TOKEN": "abc", "X": "1", "GITHUB_TOKEN": {"valueFrom": {"env": "GH"}}}})
    assert shown["env"] == {"API_TOKEN": "<redacted>", "X": "1", "GITHUB_TOKEN": {"valueFrom": {"env": "GH"}}}


def test_set_text_replaces_in_place_keeping_comments() -> None:
    new = set_server_text(TWO, "docs", {"url": "https://x.example.com/mcp", "transport": "streamable-http"})
    first, second = new.split("---   # second doc\n")
    assert first == TWO.split("---   # second doc\n")[0]  # the other document is byte-for-byte
    assert "# about docs" in second and "# spec comment" in second and "# url comment" in second
    assert second.count("# second doc") == 0
    assert second.rstrip().endswith("transport: streamable-http")


def test_set_text_appends_and_remove() -> None:
    new = set_server_text(TWO, "extra", {"command": "echo"})
    assert (
        new.startswith(TWO)
        and "---\napiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: extra\n" in new
    )
    back = remove_server_text(new, "extra")
    assert back is not None and back.rstrip() == TWO.rstrip()
    without_notes = remove_server_text(TWO, "notes")
    assert without_notes is not None
    assert without_notes.startswith("# top comment\n---   # second doc\n# about docs\n")
    assert "notes" not in without_notes
    assert remove_server_text(TWO, "nope") is None


def test_cli_list_show(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    code, output = _cli("list", str(folder))
    assert code == 0 and output.split() == ["notes", "docs"]
    code, output = _cli("list", str(folder), "--json")
    data = json.loads(output)
    assert data["notes"]["env"] == {"API_TOKEN": "<redacted>", "HOME_DIR": {"valueFrom": {"env": "HOME"}}}
    assert data["docs"] == {"url": "https://x.example.com/mcp"}
    code, output = _cli("show", str(folder), "docs", "--json")
    assert code == 0 and json.loads(output) == {"url": "https://x.example.com/mcp"}
    code, output = _cli("show", str(folder), "nope")
    assert code == 1
    assert (
        f'No MCP server named "nope" in {folder}. Run clawplane mcp list to see configured servers.' in output
    )


def test_cli_set_replace_new_and_unset(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    code, output = _cli(
        "set",
        str(folder),
        "docs",
        '{"url":"https://x.example.com/mcp","type":"http","supports_parallel_tool_calls":true}',
    )
    assert code == 0, output
    assert f'Saved MCP server "docs" to {folder / "servers.yaml"}.' in output
    text = (folder / "servers.yaml").read_text()
    assert "# url comment" in text and "# top comment" in text and "# the notes server" in text
    assert json.loads(_cli("show", str(folder), "docs", "--json")[1]) == {
        "url": "https://x.example.com/mcp",
        "transport": "streamable-http",
        "supportsParallelToolCalls": True,
    }
    code, output = _cli("set", str(folder), "fresh", '{"command":"echo","args":["hi"]}')
    assert code == 0, output
    assert (folder / "mcp-servers.yaml").exists()
    code, output = _cli("set", str(folder), "other", '{"command":"echo"}', "--file", "more.yaml")
    assert code == 0 and (folder / "more.yaml").exists()
    code, output = _cli("unset", str(folder), "other")
    assert code == 0 and f'Removed MCP server "other" from {folder / "more.yaml"}.' in output
    assert not (folder / "more.yaml").exists()
    code, output = _cli("unset", str(folder), "notes")
    assert code == 0
    text = (folder / "servers.yaml").read_text()
    assert "# top comment" in text and "notes" not in text and "# url comment" in text
    code, output = _cli("unset", str(folder), "notes")
    assert code == 1 and 'No MCP server named "notes"' in output


def test_cli_set_refuses_invalid_result(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = (folder / "servers.yaml").read_text()
    code, output = _cli("set", str(folder), "docs", '{"transport":"stdio"}')
    assert code == 1 and "stdio" in output and "nothing written" in output
    code, output = _cli("set", str(folder), "bad", '{"url":"ftp://x"}')
    assert code == 1
    code, output = _cli("set", str(folder), "bad", '{"url":"https://x.example.com","connectTimeout":5}')
    assert code == 1
    assert (folder / "servers.yaml").read_text() == before
    assert sorted(p.name for p in folder.iterdir()) == ["servers.yaml"]
    code, output = _cli("set", str(folder), "bad", "[1]")
    assert code == 1 and "MCP server config must be a JSON object." in output
    code, output = _cli("set", str(folder), "bad", "{nope")
    assert code == 1


def test_cli_set_keeps_an_unknown_type_like_openclaw_and_warns(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    code, output = _cli("set", str(folder), "odd", '{"url":"https://x.example.com/mcp","type":"weird"}')
    assert code == 0, output
    assert (
        'warning[mcp.unknown-type]: unknown server type "weird" is ignored; the transport is sse (from url)'
        in output
    )
    assert f"{folder / 'mcp-servers.yaml'}:" in output  # the real file, not the validated temp copy
    assert json.loads(_cli("show", str(folder), "odd", "--json")[1]) == {
        "url": "https://x.example.com/mcp",
        "type": "weird",
    }
    code, output = _cli("set", str(folder), "quiet", '{"command":"echo"}')
    assert code == 0 and "warning" not in output  # other servers' warnings are not this edit's
    before = (folder / "mcp-servers.yaml").read_text()
    code, output = _cli("set", str(folder), "empty", '{"type":"weird"}')
    assert code == 1 and "needs a command (stdio) or a url" in output and "nothing written" in output
    assert (folder / "mcp-servers.yaml").read_text() == before


def test_cli_tools_edits_the_filter_like_openclaw(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    code, output = _cli("tools", str(folder), "docs", "--include", "read_*, list,read_*", "--exclude", " x,,")
    assert code == 0 and 'Updated MCP tool selection for "docs"' in output
    code, output = _cli("show", str(folder), "docs", "--json")
    assert json.loads(output)["toolFilter"] == {"include": ["list", "read_*"], "exclude": ["x"]}
    code, _ = _cli("tools", str(folder), "docs", "--include", "")
    assert json.loads(_cli("show", str(folder), "docs", "--json")[1])["toolFilter"] == {"exclude": ["x"]}
    code, _ = _cli("tools", str(folder), "docs", "--clear")
    assert "toolFilter" not in json.loads(_cli("show", str(folder), "docs", "--json")[1])
    assert _cli("tools", str(folder), "docs")[0] == 1
    assert _cli("tools", str(folder), "nope", "--clear")[0] == 1
    assert (folder / "servers.yaml").read_text(encoding="utf-8") == TWO  # comments and layout survive
