"""Launch parameters: the child's environment, cwd, secrets, launch summary and redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawplane.models import McpServerSpec
from clawplane.runtimes import StartError
from clawplane.runtimes.launch import prepare_launch
from clawplane.runtimes.redaction import Redactor, describe_launch, redact_argv, redact_url

ENVIRON = {
    "HOME": "/home/u",
    "PATH": "/usr/bin",
    "USER": "u",
    "SHELL": "/bin/sh",
    "TERM": "xterm",
    "LOGNAME": "u",
    "SECRET_SOURCE": "s3cr3t-value",
    "UNRELATED": "not passed",
    "BASH_FUNC_x%%": "() { :; }",
}


def test_stdio_env_is_minimal_plus_declared_minus_blocked(tmp_path: Path) -> None:
    spec = McpServerSpec(
        command="srv",
        env={
            "A": "1",
            "FLAG": True,
            "TOKEN": {"valueFrom": {"env": "SECRET_SOURCE"}},
            "LD_PRELOAD": "/evil.so",
            " node_options ": "--x",
            "GITHUB_TOKEN": "literal-token",
        },
    )
    launch = prepare_launch("srv", spec, base_dir=tmp_path, environ=ENVIRON)
    assert dict(launch.env) == {
        "HOME": "/home/u",
        "PATH": "/usr/bin",
        "USER": "u",
        "SHELL": "/bin/sh",
        "TERM": "xterm",
        "LOGNAME": "u",
        "A": "1",
        "FLAG": "true",
        "TOKEN": "s3cr3t-value",
        "GITHUB_TOKEN": "literal-token",
    }
    assert launch.warnings == (
        'env "LD_PRELOAD" is blocked for stdio startup safety and was ignored',
        'env " node_options " is blocked for stdio startup safety and was ignored',
    )
    assert launch.redact("got s3cr3t-value and literal-token") == "got <redacted> and <redacted>"


def test_inheriting_the_whole_environment_for_the_bridge(tmp_path: Path) -> None:
    launch = prepare_launch(
        "b", McpServerSpec(command="srv"), base_dir=tmp_path, environ=ENVIRON, inherit_environment=True
    )
    assert launch.env["UNRELATED"] == "not passed"


def test_file_secrets_and_cwd_are_relative_to_the_resource_folder(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n", encoding="utf-8")
    spec = McpServerSpec(command="srv", cwd="sub/dir", env={"T": {"valueFrom": {"file": "token"}}})
    launch = prepare_launch("srv", spec, base_dir=tmp_path, environ=ENVIRON)
    assert launch.env["T"] == "from-file" and launch.cwd == tmp_path / "sub" / "dir"
    assert launch.argv == ("srv",)


def test_unresolvable_secrets_fail_the_start(tmp_path: Path) -> None:
    spec = McpServerSpec(
        url="https://example.test/mcp", headers={"Authorization": {"valueFrom": {"env": "NOPE"}}}
    )
    with pytest.raises(StartError, match=r'MCP server "r": headers Authorization: environment variable NOPE is not set'):
        prepare_launch("r", spec, base_dir=tmp_path, environ=ENVIRON)


def test_remote_headers_are_resolved_and_redacted(tmp_path: Path) -> None:
    spec = McpServerSpec(
        transport="streamable-http",
        url="https://user:pw@example.test/mcp?token=abc&x=1",
        headers={"Authorization": "Bearer literal-secret", "X-Team": "blue"},
    )
    launch = prepare_launch("r", spec, base_dir=tmp_path, environ=ENVIRON)
    assert dict(launch.headers) == {"Authorization": "Bearer literal-secret", "X-Team": "blue"}
    assert launch.description == "https://<redacted>@example.test/mcp?token=***&x=1"
    assert launch.redact("failed: Bearer literal-secret (blue)") == "failed: <redacted> (blue)"


def test_launch_summary_redacts_secret_flags_like_openclaw() -> None:
    spec = McpServerSpec(
        command="npx", args=["server", "--api-key", "k123", "--token=t456", "--verbose"], cwd="/w"
    )
    assert describe_launch(spec) == "npx server --api-key *** --token=*** --verbose (cwd=/w)"
    assert redact_argv(["--client-secret", "x", "--name", "n"]) == ["--client-secret", "***", "--name", "n"]
    assert redact_url("http://h/p?session=1&page=2") == "http://h/p?session=***&page=2"


def test_redactor_ignores_values_too_short_to_be_secrets() -> None:
    redact = Redactor(["ab", "longer-secret", "longer-secret-2"])
    assert redact("ab longer-secret-2 longer-secret") == "ab <redacted> <redacted>"
    assert redact("see https://u:p@h.test/x") == "see https://<redacted>@h.test/x"
