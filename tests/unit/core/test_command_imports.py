"""Commands that only read state do not load the MCP SDK, the proxy or deepdiff.

Counted in a fresh interpreter, never timed. ``clawplane status``, ``down``, ``token`` and ``apply`` run
in scripts, hooks and tests many times a minute; loading the SDK, starlette and uvicorn (through
``clawplane.runtimes``' package imports) and numpy (through deepdiff) tripled what each costs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clawplane.runtimes as runtimes

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("mcp", "mcp_types", "starlette", "uvicorn", "deepdiff", "numpy")


def _heavy_after(statement: str) -> list[str]:
    code = f"""
        import json, sys
        {statement}
        heavy = {HEAVY!r}
        print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set(heavy))))
        """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, check=True, cwd=ROOT,
    )  # fmt: skip
    loaded: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "statement",
    [
        "import clawplane.cli.status, clawplane.reconcile.statusview",
        "import clawplane.cli.run",  # `down` lives there; `run` imports the supervisor when it runs
        "import clawplane.cli.token",
        # `apply` asks which plan actions a Gateway's rules hold; the tool-call gate is the proxy's
        "import clawplane.cli.apply, clawplane.cli.approvals; from clawplane.approvals import held_actions",
        # `down` ends what a dead supervisor left without loading the supervisor
        "from clawplane.supervisor.processes import cleanup_stale_runtimes",
        "import clawplane.reconcile.agents.catalog, clawplane.runtimes.catalog",
        "from clawplane.runtimes import RuntimeSettings, ToolEntry, Phase",
    ],
)
def test_reading_commands_load_no_sdk(statement: str) -> None:
    assert _heavy_after(statement) == []


def test_the_tool_call_gate_still_resolves_from_the_package() -> None:
    assert "mcp" in _heavy_after("from clawplane.approvals import ToolCallApprovals")


def test_diffing_still_finds_deepdiff() -> None:
    assert "deepdiff" in _heavy_after(
        "from clawplane.planning.diff import field_changes; field_changes({'a': 1}, {'a': 2})"
    )


def test_every_public_runtime_name_resolves_to_its_home() -> None:
    for name in runtimes.__all__:
        value = getattr(runtimes, name)
        assert getattr(value, "__name__", name) == name
    assert set(runtimes.__all__) == set(runtimes._HOMES)
    with pytest.raises(AttributeError):
        _ = runtimes.NoSuchThing  # type: ignore[attr-defined]
