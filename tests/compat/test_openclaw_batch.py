"""tests/oracles/openclaw_batch.mjs answers as the real ``openclaw`` CLI does, call by call.

The compat tests that compare long edit sequences run them through one OpenClaw process
(``OpenClawOracle.batch``); this checks that harness against separate CLI processes on a
sequence that covers each way a call can end: success, a handler's own failure
(``process.exit`` inside a command), a failure reported as JSON, commander rejecting an
option, and reads after writes. Both sides start from the same files in their own
directories (OpenClaw compares a config with its own backups, so a shared directory would
change what it prints); paths are compared with the directory replaced.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.oracles.runners import OpenClawOracle

CALLS: list[tuple[str, ...]] = [
    ("mcp", "set", "notes", json.dumps({"command": "node", "args": ["s.js"], "env": {"MODE": "dev"}})),
    ("mcp", "set", "bad", "[1, 2]"),
    ("mcp", "tools", "notes", "--include", "read_*, list"),
    ("mcp", "show", "missing", "--json"),
    ("mcp", "tools", "notes", "--no-such-option"),
    ("mcp", "list", "--json"),
]

# Lines OpenClaw prints about how long its own SQLite work took: they depend on load.
_TIMING_NOTICES = ("[sqlite/transaction] slow",)


def _seen(result: subprocess.CompletedProcess[str], root: Path) -> tuple[int, str, str]:
    def clean(text: str) -> str:
        kept = [line for line in text.splitlines() if not line.startswith(_TIMING_NOTICES)]
        return "\n".join(kept).replace(str(root), "<root>")

    return result.returncode, clean(result.stdout), clean(result.stderr)


def test_a_batch_answers_like_separate_cli_processes(
    openclaw_factory: Callable[[Path], OpenClawOracle], tmp_path: Path
) -> None:
    cli, batch = openclaw_factory(tmp_path / "cli"), openclaw_factory(tmp_path / "batch")
    cli.write_config({})
    batch.write_config({})
    separate = [cli.run(*call) for call in CALLS]
    together = batch.batch(CALLS)
    assert [r.returncode for r in separate] == [0, 1, 0, 1, 1, 0]
    for call, one, many in zip(CALLS, separate, together, strict=True):
        assert _seen(many, batch.cwd.parent) == _seen(one, cli.cwd.parent), call
    assert json.loads(batch.config_path.read_text()) == json.loads(cli.config_path.read_text())


# Legacy spellings `doctor --fix` rewrites (remote servers only: nothing to spawn), and a
# validation of the result: doctor and validate end by unwinding with OpenClaw's ExitError.
LEGACY = {"mcp": {"servers": {
    "docs": {"type": "sse", "url": "http://127.0.0.1:9/sse", "ssl_verify": False, "timeout": 30},
    "search": {"type": "HTTP", "url": "http://127.0.0.1:9/mcp", "connect_timeout": 5},
    "parallel": {"url": "http://127.0.0.1:9/p", "supports_parallel_tool_calls": True, "disabled": True},
}}}  # fmt: skip
REPAIR: list[tuple[str, ...]] = [("doctor", "--fix", "--non-interactive"), ("config", "validate", "--json")]


def test_doctor_and_validate_in_a_batch_end_as_in_the_cli(
    openclaw_factory: Callable[[Path], OpenClawOracle], tmp_path: Path
) -> None:
    cli, batch = openclaw_factory(tmp_path / "cli"), openclaw_factory(tmp_path / "batch")
    cli.write_config(LEGACY)
    batch.write_config(LEGACY)
    separate = [cli.run(*call) for call in REPAIR]
    together = batch.batch(REPAIR)
    assert [r.returncode for r in separate] == [0, 0], [r.stderr for r in separate]
    for call, one, many in zip(REPAIR, separate, together, strict=True):
        assert _seen(many, batch.cwd.parent) == _seen(one, cli.cwd.parent), call
    fixed = json.loads(cli.config_path.read_text())
    assert fixed != LEGACY  # doctor did rewrite something: the comparison below means something
    assert json.loads(batch.config_path.read_text()) == fixed
