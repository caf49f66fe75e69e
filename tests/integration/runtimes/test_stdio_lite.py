"""The standard-library stdio fixture answers exactly as the SDK's, message for message.

Most tests run the normal fixture over stdio on ``stdio_lite`` (no SDK import, a fraction of
the CPU). That is only sound while the two servers are indistinguishable on the wire, so each
conversation below is replayed against both, raw JSON lines in and out, and every line the
servers write must be identical (the ``pid`` tool's answer aside, which names each process).
The conversations cover what clients send: the 2026-07-28 era as the SDK's ``auto`` client
speaks it, the handshake era, a handshake-only (``--legacy``) server, argument errors,
unknown names, cancellation, and requests still running when stdin ends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures.servers.helpers import START_TIMEOUT, script

ROOT = Path(__file__).resolve().parents[3]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "differential", "version": "1"}}

Step = tuple[dict[str, Any], str]
"""A message to send, and what to read before the next step: ``answer`` (lines up to the
message's answer), ``line`` (one line, e.g. a subscription's acknowledgement) or ``none``."""


FIXTURE_CALLS: list[tuple[str, dict[str, Any]]] = [
        ("echo", {"message": "hi ✓"}),
        ("add", {"a": 2, "b": 3}),
        ("add", {"a": "2", "b": 3.0}),
        ("add", {"a": "z"}),
        ("add", {"a": 1.5, "b": True}),
        ("echo", {"message": 5}),
        ("echo", {}),
        ("fail", {}),
        ("fail", {"message": "custom"}),
        ("slow", {"seconds": 0}),
        ("env", {"name": "CLAWPLANE_LITE_PROBE"}),
        ("env", {"name": "CLAWPLANE_LITE_UNSET"}),
        ("cwd", {}),
        ("log", {"message": "to stderr"}),
        ("header", {"name": "x-any"}),
        ("nope", {}),
        ("pid", {"extra": "ignored"}),
]
"""The tools every fixture has, called well and badly."""

GATED_CALLS = [
    ("lookup", {"key": "k"}), ("delete_note", {"title": "t"}), ("write_note", {"title": "w"}),
    ("write_note", {"title": "w", "api_token": 5}), ("ran", {}),
]
NOTES_CALLS = [
    ("list_notes", {}), ("debug_dump", {}), ("add_note", {"title": "b", "text": "two ✓"}),
    ("add_note", {"title": "a", "text": "one"}), ("add_note", {"title": "a"}), ("list_notes", {}),
    ("read_note", {"title": "a"}), ("read_note", {"title": "zz"}), ("greet", {"name": "Ada"}),
    ("debug_dump", {}), ("echo", {"message": "not a notes tool"}),
]


def _conversation(modern: bool, calls: list[tuple[str, dict[str, Any]]] = FIXTURE_CALLS, *,
                  slow: bool = True) -> Iterator[Step]:
    """Every request kind in one era, each answered before the next is sent.

    With ``slow`` (a server with the fixtures' ``slow`` tool), a cancelled call and a call
    still running when stdin ends close the conversation. A server without that tool answers
    such a call at once, racing the cancel or the end of input: it is not sent to those.
    """
    ids = iter(range(100, 1000))

    def req(method: str, params: dict[str, Any] | None = None, *, wait: str = "answer") -> Step:
        body = dict(params or {})
        if modern:
            body["_meta"] = ENVELOPE
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(ids), "method": method}
        if body or modern:
            message["params"] = body
        return message, wait

    if modern:
        yield req("server/discover")
        yield req("subscriptions/listen", {"notifications": {"toolsListChanged": True, "promptsListChanged": True}},
                  wait="line")
    else:
        yield req("initialize", INIT)
        yield {"jsonrpc": "2.0", "method": "notifications/initialized"}, "none"
    yield req("tools/list")
    for name, arguments in calls:
        yield req("tools/call", {"name": name, "arguments": arguments})
    yield req("resources/list")
    yield req("resources/templates/list")
    yield req("resources/read", {"uri": "fixture://greeting"})
    yield req("resources/read", {"uri": "fixture://missing"})
    yield req("prompts/list")
    yield req("prompts/get", {"name": "summarize", "arguments": {"topic": "tests"}})
    yield req("prompts/get", {"name": "summarize", "arguments": {}})
    yield req("prompts/get", {"name": "nope"})
    yield req("ping")
    yield req("bogus/method")
    if not slow:
        return
    cancelled, _ = req("tools/call", {"name": "slow", "arguments": {"seconds": 600}}, wait="none")
    yield cancelled, "none"
    yield {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": cancelled["id"]}}, "none"
    yield req("tools/call", {"name": "echo", "arguments": {"message": "after the cancel"}})
    yield req("tools/call", {"name": "slow", "arguments": {"seconds": 600}}, wait="none")


def _modern_refusals() -> Iterator[Step]:
    """Envelope errors, and the handshake refused on a 2026-07-28 connection."""
    yield {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": ENVELOPE}}, "answer"
    wrong = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    yield {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": wrong}}, "answer"
    yield {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": INIT}, "answer"
    yield {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}}, "answer"


def _handshake_refusals() -> Iterator[Step]:
    """A request before ``initialize``, then the 2026-07-28 envelope on a handshake connection."""
    yield {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "answer"
    yield {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {**INIT, "protocolVersion": "1999-01-01"}}, "answer"
    yield {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}}, "answer"
    yield {"jsonrpc": "2.0", "id": 4, "method": "server/discover", "params": {"_meta": ENVELOPE}}, "answer"


def _legacy_server() -> Iterator[Step]:
    """What the SDK's ``auto`` client sends a handshake-only server: discover, then the handshake."""
    yield {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}}, "answer"
    yield {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}}, "answer"
    yield from _conversation(modern=False)


NOTES_SDK = [str(ROOT / "examples" / "quickstart" / "servers" / "notes_server.py")]
NOTES_LITE = [script("notes_lite")]
CONVERSATIONS: dict[str, tuple[list[str], list[str], Callable[[], Iterator[Step]]]] = {
    # name: (the SDK server's argv, the lite server's argv, the conversation)
    "modern": ([script("normal"), "--sdk"], [script("normal")], lambda: _conversation(modern=True)),
    "handshake": ([script("normal"), "--sdk"], [script("normal")], lambda: _conversation(modern=False)),
    "modern-refusals": ([script("normal"), "--sdk"], [script("normal")], _modern_refusals),
    "handshake-refusals": ([script("normal"), "--sdk"], [script("normal")], _handshake_refusals),
    "legacy-server": ([script("normal"), "--legacy", "--sdk"], [script("normal"), "--legacy"], _legacy_server),
    "gated-modern": ([script("gated"), "--sdk"], [script("gated")], lambda: _conversation(True, GATED_CALLS)),
    "gated-handshake": ([script("gated"), "--sdk"], [script("gated")], lambda: _conversation(False, GATED_CALLS)),
    "fault-modern": ([script("fault"), "--sdk"], [script("fault")],
                     lambda: _conversation(True, [("grandchild_pid", {}), *FIXTURE_CALLS[:2]])),
    "crashing-modern": ([script("crashing"), "--sdk"], [script("crashing")],
                        lambda: _conversation(True, FIXTURE_CALLS[:3])),
    "notes-modern": (NOTES_SDK, NOTES_LITE, lambda: _conversation(True, NOTES_CALLS, slow=False)),
    "notes-handshake": (NOTES_SDK, NOTES_LITE, lambda: _conversation(False, NOTES_CALLS, slow=False)),
}


def _replay(argv: list[str], steps: Iterator[Step]) -> list[Any]:
    """Run the server ``argv``, play ``steps``, close stdin; every line it wrote, parsed, in order.

    The lines written after stdin closed are sorted.
    """
    env = {"PATH": "/usr/bin:/bin", "CLAWPLANE_LITE_PROBE": "probe ✓", "NOTES_GREETING": "hi ✓"}
    process = subprocess.Popen(
        [sys.executable, *argv],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
        encoding="utf-8",
    )
    assert process.stdin is not None and process.stdout is not None
    received: list[Any] = []
    try:
        for message, wait in steps:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            while wait != "none":
                line = process.stdout.readline()
                assert line, f"the server ended before answering {message}"
                received.append(json.loads(line))
                if wait == "line" or received[-1].get("id") == message["id"]:
                    break
        process.stdin.close()
        # Requests still running when stdin ends fail together; the SDK answers them in no fixed order.
        received += sorted((json.loads(line) for line in process.stdout), key=json.dumps)
        assert process.wait(timeout=START_TIMEOUT) == 0
    finally:
        process.kill()
        process.wait()
    return [_without_pid(message, process.pid) for message in received]


def _without_pid(message: Any, pid: int) -> Any:
    """The ``pid`` tool's answer with the process id replaced by a placeholder."""
    text = json.dumps(message, ensure_ascii=False)
    return json.loads(text.replace(f'"text": "{pid}"', '"text": "<pid>"').replace(f'"result": {pid}', '"result": "<pid>"'))


@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
def test_lite_and_sdk_servers_answer_alike(conversation: str) -> None:
    """Byte-for-byte the same messages (key order included) from both servers for one conversation."""
    sdk_argv, lite_argv, steps = CONVERSATIONS[conversation]
    sdk = _replay(sdk_argv, steps())
    lite = _replay(lite_argv, steps())
    assert [json.dumps(m, ensure_ascii=False) for m in lite] == [json.dumps(m, ensure_ascii=False) for m in sdk]
    # The conversation exercised what it names: answers arrived, and the cancelled call stayed silent.
    assert len(sdk) >= 4
