"""The event queue: cursors, the 1,000-event bound with gaps, waiting, and another process's writes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from clawplane.events import QUEUE_LIMIT, EventQueue
from clawplane.state import StateDB
from clawplane.state.tokens import new_token


def test_cursors_count_up_and_pages_replay_without_consuming(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path))
    first = queue.publish("pass_started", "", reason="start")
    second = queue.publish("phase_changed", "McpServer/notes", phase="Ready")
    assert (first.cursor, second.cursor) == (1, 2)
    page = queue.page(0)
    assert [e.cursor for e in page.events] == [1, 2] and page.next_cursor == 2 and page.gap is None
    assert queue.page(0).to_dict() == page.to_dict()  # nothing was consumed
    assert queue.page(1).events[0].data == {"phase": "Ready"}
    assert queue.page(2).events == () and queue.page(2).next_cursor == 2


def test_only_the_newest_thousand_are_kept_and_a_late_reader_is_told_of_the_gap(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path))
    for i in range(QUEUE_LIMIT + 5):
        queue.publish("pass_finished", "", n=i)
    page = queue.page(0, limit=3)
    assert page.gap is not None and page.gap.to_dict() == {
        "requested_after_cursor": 0,
        "oldest_available_cursor": 6,
    }
    assert [e.cursor for e in page.events] == [6, 7, 8]
    assert queue.page(5).gap is None  # cursor 5 was seen: nothing is missing after it
    rows = queue.db.query("SELECT count(*) AS n FROM events")[0]["n"]
    assert rows == QUEUE_LIMIT


def test_bearer_tokens_never_reach_the_queue(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path))
    token = new_token()
    event = queue.publish("diagnostics", "", lines=[f"header Authorization: Bearer {token}"])
    assert event is not None and token not in str(event.to_dict())
    assert token not in str(queue.db.dump())


def test_wait_returns_at_once_on_a_publish_in_this_process(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path), poll_interval=30)

    async def main() -> float:
        async with anyio.create_task_group() as tg:
            started = anyio.current_time()

            async def later() -> None:
                await anyio.sleep(0)
                queue.publish("tools_changed", "notes", tools=3)

            tg.start_soon(later)
            page = await queue.wait(0, timeout=20)
            assert [e.type for e in page.events] == ["tools_changed"]
            return anyio.current_time() - started

    assert anyio.run(main) < 10  # woken, not polled (the poll interval is 30 s)


def test_wait_times_out_with_an_empty_page(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path))
    queue.publish("pass_started", "")
    page = anyio.run(lambda: queue.wait(1, timeout=0.05))
    assert page.events == () and page.next_cursor == 1


@pytest.mark.timeout(60)
def test_a_reader_sees_events_another_process_writes(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path), poll_interval=0.05)
    code = (
        "import sys; from pathlib import Path; from clawplane.events import EventQueue; "
        "from clawplane.state import StateDB; "
        "EventQueue(StateDB.open(Path(sys.argv[1]))).publish('approval_resolved', 'apr-1', status='approved')"
    )

    async def main() -> list[str]:
        async with anyio.create_task_group() as tg:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            tg.start_soon(lambda: anyio.run_process([sys.executable, "-c", code, str(tmp_path)], env=env))
            page = await queue.wait(0, timeout=50)
            return [e.subject for e in page.events]

    assert anyio.run(main) == ["apr-1"]


def test_recent_events_of_a_subject_come_newest_first(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path))
    for phase in ("Starting", "Ready", "Crashed"):
        queue.publish("phase_changed", "McpServer/notes", phase=phase)
        queue.publish("phase_changed", "McpServer/other", phase=phase)
    queue.publish("tools_changed", "notes")
    recent = queue.recent(["McpServer/notes", "notes"], limit=3)
    assert [(e.type, e.data.get("phase")) for e in recent] == [
        ("tools_changed", None), ("phase_changed", "Crashed"), ("phase_changed", "Ready"),
    ]
    assert queue.recent([]) == () and queue.recent(["McpServer/none"]) == ()


def test_a_waiting_reader_polls_with_one_query_while_nothing_changes(tmp_path: Path) -> None:
    queue = EventQueue(StateDB.open(tmp_path), poll_interval=0.01)
    queue.publish("pass_started", "")
    asked: list[str] = []
    real = queue.db.query

    def counting(sql: str, params: tuple[object, ...] = ()) -> list[Any]:
        asked.append(sql.split(" FROM ")[1].split()[0])
        return real(sql, params)

    queue.db.query = counting  # type: ignore[method-assign]
    page = anyio.run(lambda: queue.wait(1, timeout=0.3))
    assert page.events == ()
    polls = asked.count("sqlite_sequence")
    # One page on entry and one at the end (each an events query and a gap query); every poll
    # in between looked at the head only.
    assert polls >= 2 and asked.count("events") == 4, asked
