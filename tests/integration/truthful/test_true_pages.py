"""Issue 35, finding 9: untrue pages and messages.

- The dashboard Overview of a supervisor that ``clawplane apply`` started said "The folder is
  invalid: the last good state keeps running" for a valid folder, with "0 reconciles": such a
  supervisor does not watch the folder, so its loop never checked it (``folderValid`` None).
  The Overview now says what the supervisor is doing (an apply, or the loop with its last pass).
- After ``mv`` of a running folder, ``status`` said the supervisor was "gone without shutting
  down cleanly" while it still served: it looked for the control socket at the old path.
- The server page's ``<title>`` held the whole events table (a block closed in the wrong place).
- ``MCPDeprecationWarning: ping is removed as of 2026-07-28`` was printed into the supervisor's
  log at every health check of a server that speaks 2026-07-28.

The pages are fetched over plain HTTP (what they say is in the HTML; no script is involved).
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
from tests.integration.runloop.conftest import wait_for
from tests.integration.truthful.conftest import Folder

WAIT_S = 90.0


@contextmanager
def _dashboard(folder: Folder) -> Iterator[httpx.Client]:
    """A client logged in to the folder's dashboard with the ``cli`` token."""
    base = str(folder.status()["supervisor"]["endpoint"])
    token = folder.cli("token", "show", str(folder.path), "cli").stdout.strip()
    with httpx.Client(base_url=base, headers={"Origin": base}, timeout=30) as client:
        answer = client.post("/ui/login", data={"token": token})
        assert answer.status_code == 303, answer.text
        yield client


def _text(page: str) -> str:
    """The page's words, tags stripped (what a reader sees)."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_finding9_the_overview_of_an_apply_supervisor_says_what_it_does_not_invalid(folder: Folder) -> None:
    applied = folder.cli("apply", str(folder.path), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    with _dashboard(folder) as client:
        page = client.get("/ui")
        assert page.status_code == 200
        said = _text(page.text)
    assert "invalid" not in said, said
    assert "0 reconciles" not in said
    assert "Carrying out clawplane apply only: this supervisor does not watch the folder." in said, said
    assert re.search(r"The last apply ended success at \d{4}-", said), said
    assert "the last one found it valid" in said


def test_finding9_the_overview_of_a_watching_supervisor_names_its_last_pass(folder: Folder) -> None:
    started = folder.cli("run", str(folder.path), "--detach", "--resync-interval", "2")
    assert started.returncode == 0, started.stdout + started.stderr

    def settled() -> str | None:
        with _dashboard(folder) as client:
            said = _text(client.get("/ui").text)
        return said if re.search(r"the last one (applied|unchanged) at \d{4}-", said) else None

    said = wait_for("the first pass on the overview", settled, timeout=WAIT_S)
    assert re.search(r"Running the loop: \d+ pass(es)?, the last one (applied|unchanged) at \d{4}-", said), (
        said
    )
    assert "The folder is valid." in said and "invalid" not in said


def test_finding9_status_after_the_folder_moved_reports_the_running_supervisor(folder: Folder) -> None:
    applied = folder.cli("apply", str(folder.path), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    pid = folder.supervisor_pid()
    assert pid is not None
    moved = folder.path.with_name("moved-quickstart")
    shutil.move(folder.path, moved)
    try:
        doc = folder.cli.json("status", str(moved), "--json")
        assert doc["supervisor"]["running"] is True and doc["supervisor"]["pid"] == pid, doc["supervisor"]
        assert doc["supervisor"]["answering"] is True
        text = folder.cli("status", str(moved)).stdout
        assert f"supervisor: running (pid {pid}" in text, text
        assert "gone without shutting down cleanly" not in text
        # It answers at its socket's new place: `down` of the moved folder stops it.
        down = folder.cli("down", str(moved))
        assert down.returncode == 0 and f"supervisor stopped (pid {pid})" in down.stdout, (
            down.stdout + down.stderr
        )
        wait_for("the supervisor to exit", lambda: not psutil.pid_exists(pid) or None, timeout=WAIT_S)
    finally:
        shutil.move(moved, folder.path)


def test_finding9_the_server_page_title_is_the_servers_name(folder: Folder) -> None:
    applied = folder.cli("apply", str(folder.path), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    with _dashboard(folder) as client:
        page = client.get("/ui/servers/notes")
    assert page.status_code == 200
    title = re.search(r"<title>(.*?)</title>", page.text, re.S)
    assert title is not None and title.group(1) == "McpServer notes · clawplane", title
    assert page.text.count('id="events"') == 1


def _bytes_read(pid: int) -> int:
    """How much the process has read (its stdin is the protocol: every request adds to it)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError(f"no rchar for {pid}")


def test_finding9_health_checks_write_no_deprecation_warning_to_the_log(folder: Folder) -> None:
    started = folder.cli("run", str(folder.path), "--detach", "--ping-interval", "0.1")
    assert started.returncode == 0, started.stdout + started.stderr
    notes = wait_for(
        "notes Ready",
        lambda: (r := folder.resource("McpServer/notes")).get("phase") == "Ready" and r.get("pid") and r,
        timeout=WAIT_S,
    )
    assert notes["protocolVersion"] == "2026-07-28", notes
    pid = int(notes["pid"])
    # Nothing else talks to the server: what it reads from now on are the health checks.
    seen = [_bytes_read(pid)]

    def checked_three_times() -> bool | None:
        now = _bytes_read(pid)
        if now > seen[-1]:
            seen.append(now)
        return len(seen) > 3 or None

    wait_for("three health checks", checked_three_times, timeout=WAIT_S)
    log = folder.log()
    assert "DeprecationWarning" not in log and "ping is removed" not in log, log[-3000:]
    assert folder.resource("McpServer/notes")["pid"] == pid  # it passed them: not restarted
