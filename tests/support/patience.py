"""How long tests wait before calling something a failure.

These are hang guards, not speed assertions: on an idle machine a correct build meets each
condition in a small fraction of the time. The margin is for a 2-core machine running two
full suites side by side (the load `make test` must pass under), where a process start or an
OpenClaw call can take ten times as long as on an idle machine. Speed is measured in bench/.
"""

from __future__ import annotations

CONDITION_S = 90.0
"""Waiting for a condition another process brings about (Ready, Programmed, a pass settled)."""

ORACLE_CALL_S = 300.0
"""One run of a third-party CLI (OpenClaw, Codex, kubectl)."""
