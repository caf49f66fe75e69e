"""The committed copy of OpenClaw's config schema is exactly what the pinned OpenClaw prints."""

from __future__ import annotations

from pathlib import Path

from tests.compat.conftest import require_oracle
from tests.oracles import locate

from clawplane.schema.openclaw import OPENCLAW_BUILD, OPENCLAW_VERSION
from clawplane.schema.openclaw.generate import print_schema, stale


def test_the_committed_schema_is_what_the_pinned_openclaw_prints() -> None:
    require_oracle("openclaw")
    command = locate.openclaw_cmd()
    assert command is not None
    printed = print_schema(command)
    assert (printed.version, printed.build) == (OPENCLAW_VERSION, OPENCLAW_BUILD)
    assert [Path(p).name for p in stale(printed)] == [], "run: clawplane schema --openclaw-command …"


def test_the_pins_agree() -> None:
    assert locate.pins()["OPENCLAW_VERSION"] == OPENCLAW_VERSION


def test_clawplane_schema_checks_the_copy_against_openclaw() -> None:
    import shlex
    import subprocess
    import sys

    require_oracle("openclaw")
    command = locate.openclaw_cmd()
    assert command is not None
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "schema", "--check", "--root", str(root),
         "--openclaw-command", shlex.join(command)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"OpenClaw's config schema is what OpenClaw {OPENCLAW_VERSION} ({OPENCLAW_BUILD}) prints" in proc.stdout
