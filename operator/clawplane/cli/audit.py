"""``clawplane audit FOLDER``: the audit trail of tool calls through the folder's endpoints.

Reads the state database directly, so it answers whether or not the supervisor runs. Every
row is a ``tools/call`` the proxy carried (hosted endpoint, bridge, agent endpoints): who,
which server and tool, when, how long, how it ended; never arguments or results. Tool names
and errors come from outside (a client, a server): the table shows them as plain text, with
control characters as escapes, never as markup.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import EXIT_USAGE, err, out
from clawplane.state import CallFilter, StateDB, StateError, find_calls, iter_calls, unrecorded
from clawplane.telemetry import Outcome

_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
OUTCOMES = tuple(o.value for o in Outcome)
DEFAULT_LIMIT = 50
_TIME_HELP = "e.g. 30m, 1h, 2d (that long ago) or an ISO time (2026-12-01T08:00:00Z)"


def parse_time(value: str, option: str, now: float) -> float:
    """``value`` (a span back from ``now`` or an ISO-8601 time) as epoch seconds; a usage error otherwise."""
    span = _SPAN.match(value)
    if span:
        return now - float(span.group(1)) * _UNIT_S[span.group(2)]
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        fail(f"{option} {value!r}: expected a span ({_TIME_HELP})", EXIT_USAGE)
        raise AssertionError("unreachable") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # the trail's times are UTC; so is a time given without a zone
    return when.timestamp()


def _plain(text: str | None) -> str:
    """``text`` with control and other unprintable characters as escapes (they would act on the terminal)."""
    if not text:
        return ""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _table(calls: list[dict[str, Any]]) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("time (UTC)", "server", "tool", "consumer", "agent", "outcome", "ms", "error"):
        table.add_column(column, justify="right" if column == "ms" else "left")
    for c in calls:
        error = f"{c['errorCode']}: {c['error']}" if c["errorCode"] is not None else c["error"]
        held = f" (held {c['heldMs'] / 1000:.1f}s)" if c["heldMs"] >= 1 else ""
        cells = (
            c["at"].replace("T", " ").removesuffix("Z"),
            c["server"],
            c["tool"],
            c["consumer"],
            c["agent"] or "",
            c["outcome"] + held,
            f"{c['durationMs']:.1f}",
            error,
        )
        # Text, not str: a tool named "[bold]x" or "[link=…]" is shown as it is, never as markup.
        table.add_row(*(Text(_plain(cell)) for cell in cells))
    return table


def audit(
    folder: FolderArg,
    server: Annotated[str | None, typer.Option("--server", help="Only calls to this McpServer.")] = None,
    tool: Annotated[str | None, typer.Option("--tool", help="Only calls of this tool.")] = None,
    consumer: Annotated[
        str | None,
        typer.Option("--consumer", help="Only calls by this token's consumer (openclaw, codex:AGENT, ...)."),
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only calls through this agent's endpoint.")
    ] = None,
    outcome: Annotated[
        str | None, typer.Option("--outcome", help=f"Only calls that ended so: {', '.join(OUTCOMES)}.")
    ] = None,
    since: Annotated[str | None, typer.Option("--since", help=f"Calls from then on: {_TIME_HELP}.")] = None,
    until: Annotated[str | None, typer.Option("--until", help=f"Calls up to then: {_TIME_HELP}.")] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", min=1, help="At most this many calls (default 50; --jsonl: all)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    as_jsonl: Annotated[
        bool, typer.Option("--jsonl", help="Print JSON lines, one call per line (for export).")
    ] = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Show the tool calls made through the folder's endpoints, newest first (never arguments or results)."""
    if as_json and as_jsonl:
        fail("--json and --jsonl: choose one", EXIT_USAGE)
    if outcome is not None and outcome not in OUTCOMES:
        fail(f"--outcome {outcome!r}: expected one of {', '.join(OUTCOMES)}", EXIT_USAGE)
    now = datetime.now(UTC).timestamp()
    wanted = CallFilter(
        server=server,
        tool=tool,
        consumer=consumer,
        agent=agent,
        outcome=outcome,
        since=parse_time(since, "--since", now) if since is not None else None,
        until=parse_time(until, "--until", now) if until is not None else None,
        limit=None if as_jsonl and limit is None else limit or DEFAULT_LIMIT,
    )
    db = _open(folder, state_dir, out_dir)
    try:
        missed = unrecorded(db)
        if missed:
            err.print(f"warning: {missed} calls not recorded: the writer fell behind", markup=False)
        if as_jsonl:  # streamed a page at a time: an export may hold every row of the trail
            _write_lines(iter_calls(db, wanted))
            return
        calls = find_calls(db, wanted)
    except StateError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from None
    finally:
        db.close()
    if as_json:
        typer.echo(json.dumps(calls, indent=2))
    elif not calls:
        filtered = wanted != CallFilter(limit=wanted.limit)
        out.print("no tool calls recorded" + (" that match" if filtered else ""), markup=False)
    else:
        out.print(_table(calls))


def _write_lines(calls: Iterator[dict[str, Any]]) -> None:
    try:
        for call in calls:
            sys.stdout.write(json.dumps(call, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (head, a pager) has had enough: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _open(folder: Path, state_dir: Path | None, out_dir: Path | None) -> StateDB:
    ws = workspace(folder, state_dir, out_dir)
    if not (ws.state_dir / "state.db").exists():
        fail(
            f"no state database at {ws.state_dir / 'state.db'}, so no tool calls recorded yet: run "
            f"`clawplane run {folder}` (its supervisor records every tool call it carries), or pass "
            "--state-dir if the state lives elsewhere"
        )
    try:
        return StateDB.open(ws.state_dir, create=False)
    except StateError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from None
