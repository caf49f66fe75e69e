"""``clawplane apply`` shows which actions a rule holds and applies them only with ``--approve``."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.approvals.conftest import EXTRA_SERVER, add_rules, approvals
from tests.integration.engine.conftest import Cli, processes_under
from tests.support.quickstart import copy_quickstart


def test_apply_holds_what_a_rule_holds_until_approve(tmp_path: Path) -> None:
    folder = tmp_path / "quickstart"
    copy_quickstart(folder)
    (folder / "notes-two.yaml").write_text(EXTRA_SERVER.format(name="notes-two"))
    add_rules(folder)
    cli = Cli(folder)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        try:
            first = cli("apply", str(folder), "--yes")
            assert first.returncode == 0, first.stdout + first.stderr
            assert "an approval rule holds" not in first.stdout  # creates are not held

            (folder / "notes-two.yaml").unlink()
            held = cli("apply", str(folder), "--yes")
            assert held.returncode == 0, held.stdout + held.stderr
            assert "1 action(s) an approval rule holds — held for approval, not applied:" in held.stdout
            assert "delete McpServer/notes-two (rule server-deletes)" in held.stdout
            (pending,) = approvals(cli, folder)
            assert f"Held for approval {pending['id']} (requested" in held.stdout
            status = {r["key"]: r for r in cli.json("status", str(folder), "--json")["resources"]}
            assert status["McpServer/notes-two"]["phase"] == "Ready"

            approved = cli("apply", str(folder), "--yes", "--approve")
            assert approved.returncode == 0, approved.stdout + approved.stderr
            assert "applied too, approved by you (--approve)" in approved.stdout
            status = {r["key"]: r for r in cli.json("status", str(folder), "--json")["resources"]}
            assert "McpServer/notes-two" not in status
            shown = cli.json("approvals", "show", str(folder), pending["id"], "--json")
            assert shown["status"] == "applied" and shown["resolvedBy"].startswith("cli:")
            assert approvals(cli, folder) == []
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()
