"""Stdio runtimes against fixture servers run as real processes: start, call, env, noise, limits."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, settings, stdio_spec

from clawplane.models import McpServerSpec
from clawplane.runtimes import (
    EventKind,
    Phase,
    RuntimeEvent,
    ServerUnavailableError,
    Supervisor,
    ToolKind,
    UnknownServerError,
)
from clawplane.runtimes.process.stderr import TRUNCATED_PREFIX

pytestmark = pytest.mark.anyio


def ready(status: object) -> bool:
    return getattr(status, "phase", None) is Phase.READY


async def test_normal_server_becomes_ready_with_catalog_and_answers_calls(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("normal", stdio_spec("normal"), config_hash="h1", base_dir=tmp_path)
        status = await supervisor.wait_until("normal", ready, timeout=START_TIMEOUT)

        assert status.pid is not None and status.transport == "stdio"
        assert (status.server_name, status.server_version) == ("normal", "1.0.0")
        assert status.protocol_version == "2026-07-28"
        assert status.tool_count == 9 and status.hosted
        names = [entry.name for entry in supervisor.catalog()]
        assert (
            "normal__echo" in names and "normal__resources_read" in names and "normal__prompts_get" in names
        )
        assert names == sorted(names, key=str.lower)

        result = await supervisor.call_tool("normal", "echo", {"message": "hi"})
        assert (result.text, result.is_error) == ("echo: hi", False)
        entries = {entry.kind: entry for entry in supervisor.catalog()}
        read = await supervisor.invoke(entries[ToolKind.RESOURCES_READ], {"uri": "fixture://greeting"})
        assert "hello from normal" in read.text
        prompt = await supervisor.invoke(
            entries[ToolKind.PROMPTS_GET], {"name": "summarize", "arguments": {"topic": "x"}}
        )
        assert "Summarize x." in prompt.text


async def test_minimal_environment_declared_env_secrets_and_blocked_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWPLANE_TEST_PARENT_ONLY", "not-for-children")
    monkeypatch.setenv("CLAWPLANE_TEST_TOKEN_SOURCE", "s3cret-from-env")
    (tmp_path / "token.txt").write_text("s3cret-from-file\n", encoding="utf-8")
    spec = stdio_spec(
        "normal",
        env={
            "PLAIN": "literal",
            "NUMBER": 7,
            "FROM_ENV": {"valueFrom": {"env": "CLAWPLANE_TEST_TOKEN_SOURCE"}},
            "FROM_FILE": {"valueFrom": {"file": "token.txt"}},
            "NODE_OPTIONS": "--require evil.js",
        },
    )
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("envs", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("envs", ready, timeout=START_TIMEOUT)

        async def env(name: str) -> str:
            return (await supervisor.call_tool("envs", "env", {"name": name})).text

        assert await env("PLAIN") == "literal" and await env("NUMBER") == "7"
        assert await env("FROM_ENV") == "s3cret-from-env"
        assert await env("FROM_FILE") == "s3cret-from-file"
        assert await env("PATH") == os.environ["PATH"]
        assert await env("CLAWPLANE_TEST_PARENT_ONLY") == "<unset>"
        assert await env("NODE_OPTIONS") == "<unset>"
        assert status.warnings == ('env "NODE_OPTIONS" is blocked for stdio startup safety and was ignored',)

        # A server that prints a secret does not get it into clawplane's logs.
        await supervisor.call_tool("envs", "log", {"message": "token is s3cret-from-env!"})
        await supervisor.wait_until(
            "envs", lambda _: any("token" in x for x in supervisor.stderr("envs")), timeout=30
        )
        assert "token is <redacted>!" in supervisor.stderr("envs")


async def test_unresolvable_secret_fails_the_start_without_leaking(tmp_path: Path) -> None:
    spec = stdio_spec("normal", env={"TOKEN": {"valueFrom": {"env": "CLAWPLANE_TEST_DOES_NOT_EXIST"}}})
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("nosecret", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_settled("nosecret", timeout=START_TIMEOUT)
    assert status.phase is Phase.BACKOFF
    assert (
        status.last_error
        == 'MCP server "nosecret": env TOKEN: environment variable CLAWPLANE_TEST_DOES_NOT_EXIST is not set'
    )


async def test_relative_cwd_is_relative_to_the_resource_folder(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("cwd", stdio_spec("normal", cwd="work"), config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("cwd", ready, timeout=START_TIMEOUT)
        result = await supervisor.call_tool("cwd", "cwd")
    assert Path(result.text) == (tmp_path / "work").resolve()


async def test_garbage_on_stdout_is_dropped_and_the_protocol_still_works(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("garbage", stdio_spec("garbage"), config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("garbage", ready, timeout=START_TIMEOUT)
        for n in range(5):
            assert (await supervisor.call_tool("garbage", "add", {"a": n, "b": 1})).text == str(n + 1)
        noisy = supervisor.status("garbage")
    assert status.tool_count == 9 and noisy.restarts == 0
    # Three junk lines per message (a blank one is not noise) plus the startup banner.
    assert noisy.stdout_noise >= 3 * 5


async def test_stderr_flood_is_drained_capped_and_never_blocks(tmp_path: Path) -> None:
    spec = stdio_spec("stderr_flood", "--flood-lines", "20000", "--long-line", "20000")
    async with Supervisor(settings=settings(stderr_history=50)) as supervisor:
        await supervisor.ensure("flood", spec, config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("flood", ready, timeout=START_TIMEOUT)
        # Megabytes more while calls go on: the server would block on a full pipe if nobody read.
        for _ in range(3):
            assert (await supervisor.call_tool("flood", "spew", {"lines": 5000})).text == "wrote 5000 lines"
        status = await supervisor.wait_until("flood", lambda s: s.stderr_lines > 35_000, timeout=30)
        lines = supervisor.stderr("flood")

    assert status.restarts == 0
    assert len(lines) == 50 and status.stderr_lines > 35_000
    assert all(len(line.encode()) <= 8192 + len(TRUNCATED_PREFIX) for line in lines)
    assert lines[-1].startswith("4999 flood xxx")


async def test_overlong_stderr_line_keeps_its_tail_with_a_marker(tmp_path: Path) -> None:
    spec = stdio_spec("stderr_flood", "--flood-lines", "0", "--long-line", "20000")
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("long", spec, config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("long", ready, timeout=START_TIMEOUT)
        first = supervisor.stderr("long")[0]
    assert first == TRUNCATED_PREFIX + "L" * 8192


async def test_tool_filter_hides_tools_and_counts_them(tmp_path: Path) -> None:
    spec = stdio_spec("normal", tool_filter={"include": ["e*", "add", "slow"], "exclude": ["env"]})
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("filtered", spec, config_hash="h", base_dir=tmp_path, safe_name="flt")
        status = await supervisor.wait_until("filtered", ready, timeout=START_TIMEOUT)
        tools = [e.name for e in supervisor.catalog() if e.kind is ToolKind.TOOL]
    assert tools == ["flt__add", "flt__echo", "flt__slow"]
    assert (status.tool_count, status.filtered_tool_count) == (3, 6)


async def test_missing_command_backs_off_with_a_clear_error(tmp_path: Path) -> None:
    events: list[RuntimeEvent] = []
    spec = McpServerSpec(command="clawplane-no-such-command-xyz")
    async with Supervisor(settings=FAST, on_event=events.append) as supervisor:
        await supervisor.ensure("missing", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("missing", lambda s: s.restarts >= 2, timeout=START_TIMEOUT)
    assert status.last_error is not None
    assert status.last_error.startswith(
        "cannot start 'clawplane-no-such-command-xyz': No such file or directory"
    )
    assert [e.kind for e in events[:3]] == [
        EventKind.STARTING,
        EventKind.START_FAILED,
        EventKind.RESTART_SCHEDULED,
    ]


async def test_unknown_and_unavailable_servers_are_refused(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        with pytest.raises(UnknownServerError):
            await supervisor.call_tool("nope", "echo")
        with pytest.raises(UnknownServerError):
            supervisor.status("nope")
        hang = stdio_spec("hanging", connection_timeout_ms=600_000)
        await supervisor.ensure("hang", hang, config_hash="h", base_dir=tmp_path)
        with pytest.raises(ServerUnavailableError, match=r'MCP server "hang" is not connected \(starting\)'):
            await supervisor.call_tool("hang", "echo", {"message": "x"})


async def test_disabled_spec_is_not_started(tmp_path: Path) -> None:
    spec = McpServerSpec(command=sys.executable, args=["-c", "raise SystemExit(1)"], enabled=False)
    async with Supervisor(settings=FAST) as supervisor:
        status = await supervisor.ensure("off", spec, config_hash="h", base_dir=tmp_path)
        assert status.phase is Phase.STOPPED and supervisor.names() == []
