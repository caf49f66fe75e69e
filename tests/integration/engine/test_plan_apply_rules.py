"""Exit codes, saved-plan staleness, the prune guard, the apply lock and the audit log."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.integration.engine.conftest import Cli

from clawplane.state import FolderLock, StateDB, store


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, check=True
    ).stdout


def test_plan_exit_codes_and_saved_plan_staleness(quickstart: tuple[Path, Cli], tmp_path: Path) -> None:
    folder, cli = quickstart
    assert cli("plan", str(folder), "--detailed-exitcode").returncode == 2
    assert cli("plan", str(folder)).returncode == 0
    saved = tmp_path / "plan.json"
    proc = cli("plan", str(folder), "--out", str(saved), "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["format_version"] == 1 and doc["summary"]["add"] == 8
    # The folder moves on after the plan was saved: the plan must be refused.
    agents = folder / "agents.yaml"
    agents.write_text(agents.read_text().replace("Writes and reviews code.", "Reviews code."))
    refused = cli("apply", str(saved))
    assert refused.returncode == 1 and "changed since this plan was made" in refused.stdout
    # Invalid folders fail plan with exit 1 and a diagnostic.
    (folder / "broken.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: Agnt\nmetadata: {name: x}\n"
    )
    bad = cli("plan", str(folder), "--detailed-exitcode")
    assert bad.returncode == 1 and "schema.unknown-kind" in bad.stdout


def test_saved_plan_applies_when_nothing_moved(quickstart: tuple[Path, Cli], tmp_path: Path) -> None:
    folder, cli = quickstart
    # The plan must see the supervisor it will hand the work to; one that watches the folder
    # would converge it meanwhile, and the saved plan would rightly be refused.
    assert cli("run", str(folder), "--detach", "--no-watch").returncode == 0
    saved = tmp_path / "plan.json"
    assert cli("plan", str(folder), "--out", str(saved)).returncode == 0
    applied = cli("apply", str(saved))
    assert applied.returncode == 0, applied.stdout
    assert cli("plan", str(folder), "--detailed-exitcode").returncode == 0


def test_changes_replace_only_what_changed_and_audit_records_it(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    _git(folder, "init", "-q")
    _git(folder, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "init", "--allow-empty")
    _git(folder, "add", "-A")
    _git(folder, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "quickstart")
    head = _git(folder, "rev-parse", "HEAD").strip()
    assert cli("apply", str(folder), "--yes").returncode == 0
    pid_before = cli.json("status", str(folder), "--json")
    notes_pid = next(r["pid"] for r in pid_before["resources"] if r["key"] == "McpServer/notes")

    servers = folder / "mcp-servers.yaml"
    servers.write_text(
        servers.read_text().replace('NOTES_GREETING: "hello from clawplane"', 'NOTES_GREETING: "hi"')
    )
    plan = cli("plan", str(folder), "--format", "json")
    changes = {c["key"]: c for c in json.loads(plan.stdout)["changes"]}
    assert changes["McpServer/notes"]["action"] == "replace"
    assert changes["McpServer/notes"]["diff"] == [
        {"path": "spec.env.NOTES_GREETING", "op": "changed", "before": "hello from clawplane", "after": "hi"}
    ]
    assert {k for k, c in changes.items() if c["action"] != "noop"} == {"McpServer/notes"}
    assert cli("apply", str(folder), "--yes").returncode == 0
    after = cli.json("status", str(folder), "--json")
    notes = next(r for r in after["resources"] if r["key"] == "McpServer/notes")
    assert notes["pid"] != notes_pid and notes["phase"] == "Ready" and notes["generation"] == 2

    db = StateDB.open(folder / ".clawplane", create=False)
    entries = store.audit_entries(db)
    assert [e.outcome for e in entries] == ["success", "success"]
    assert entries[1].git_commit == head and entries[0].plan_hash
    assert next(a["key"] for a in entries[0].actions if a["action"] != "noop") == "McpServer/notes"


def test_prune_guard_and_deletion(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    assert cli("apply", str(folder), "--yes").returncode == 0
    (folder / "channels.yaml").unlink()
    plan = json.loads(cli("plan", str(folder), "--format", "json").stdout)
    deleted = [c["key"] for c in plan["changes"] if c["action"] == "delete"]
    assert deleted == ["Channel/team-telegram"] and not plan["mass_delete"]
    for name in ("agents.yaml", "skills.yaml", "mcp-servers.yaml", "model-providers.yaml"):
        (folder / name).unlink()
    guarded = cli("apply", str(folder), "--yes")
    assert guarded.returncode == 1 and "--allow-mass-delete" in guarded.stdout
    allowed = cli("apply", str(folder), "--yes", "--allow-mass-delete")
    assert allowed.returncode == 0, allowed.stdout
    keys = [r["key"] for r in cli.json("status", str(folder), "--json")["resources"]]
    assert keys == ["Gateway/default"]


def test_a_second_apply_fails_fast(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    with FolderLock(folder / ".clawplane"):
        proc = cli("apply", str(folder), "--yes")
    # The message names the holder (this test process) and how to stop it.
    holder = f"another `clawplane apply` is running for this folder (pid {os.getpid()}: "
    assert proc.returncode == 1 and holder in proc.stdout and f"kill {os.getpid()}" in proc.stdout


def test_apply_without_yes_on_a_pipe_refuses(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    proc = cli("apply", str(folder))
    assert proc.returncode == 1 and "pass --yes" in proc.stdout
