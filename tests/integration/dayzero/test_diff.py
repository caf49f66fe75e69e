"""``clawplane diff`` over a small git repository with several commits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clawplane.cli.app import app

runner = CliRunner()

SERVERS = """\
# servers
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: notes
spec:
  command: notes-server
  args: ["--root", "/srv/notes"]
  hosting: consumer
  env:
    API_TOKEN: sk-literal-secret-value
"""
EXTRA_SERVER = """\
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: search
spec:
  url: https://search.example.com/mcp
  transport: streamable-http
"""
AGENT = """\
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata:
  name: {name}
spec:
  description: Writes code.
  skills: [{skills}]
"""
CHANNEL = """\
apiVersion: clawplane.dev/v1alpha1
kind: Channel
metadata:
  name: tg
spec:
  type: telegram
  agent: coder
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        target = repo / "cfg" / name
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    revs = {
        "base": commit(
            root,
            {
                "servers.yaml": SERVERS,
                "agents.yaml": AGENT.format(name="coder", skills="a, b"),
                "channels.yaml": CHANNEL,
            },
            "base",
        )
    }
    revs["added"] = commit(root, {"servers.yaml": SERVERS + EXTRA_SERVER}, "add search")
    revs["args"] = commit(
        root, {"servers.yaml": (SERVERS + EXTRA_SERVER).replace("/srv/notes", "/srv/other")}, "args"
    )
    revs["skill"] = commit(root, {"agents.yaml": AGENT.format(name="coder", skills="a, c")}, "skill")
    revs["deleted"] = commit(root, {"channels.yaml": None}, "delete channel")
    revs["renamed"] = commit(root, {"agents.yaml": AGENT.format(name="builder", skills="a, c")}, "rename")
    revs["broken"] = commit(
        root, {"agents.yaml": "apiVersion: clawplane.dev/v1alpha1\nkind: Agent\n"}, "broken"
    )
    monkeypatch.chdir(root)
    return revs


def run(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["diff", *args])
    return res.exit_code, res.output


def plan_of(frm: str, to: str) -> dict[str, object]:
    code, text = run("--from", frm, "--to", to, "cfg", "--format", "json")
    assert code == 0, text
    doc: dict[str, object] = json.loads(text)
    return doc


def actions(doc: dict[str, object]) -> dict[str, str]:
    changes = doc["changes"]
    assert isinstance(changes, list)
    return {c["key"]: c["action"] for c in changes if c["action"] != "noop"}


def test_no_changes_exit_zero(repo: dict[str, str]) -> None:
    code, text = run("--from", repo["base"], "--to", repo["base"], "cfg", "--detailed-exitcode")
    assert code == 0 and "No changes" in text


def test_added_server(repo: dict[str, str]) -> None:
    doc = plan_of(repo["base"], repo["added"])
    assert actions(doc) == {"McpServer/search": "create"}


def test_changed_args_is_an_update_with_field_diff(repo: dict[str, str]) -> None:
    doc = plan_of(repo["added"], repo["args"])
    assert actions(doc) == {"McpServer/notes": "replace"}  # a stdio server restarts
    change = next(c for c in doc["changes"] if c["key"] == "McpServer/notes")  # type: ignore[attr-defined]
    assert change["diff"] == [
        {"path": "spec.args[1]", "op": "changed", "before": "/srv/notes", "after": "/srv/other"}
    ]


def test_changed_skill_and_agent_view(repo: dict[str, str]) -> None:
    doc = plan_of(repo["args"], repo["skill"])
    assert actions(doc) == {"Agent/coder": "update"}
    assert doc["agents"] == [
        {
            "agent": "coder",
            "status": "changed",
            "serversAdded": [],
            "serversRemoved": [],
            "skillsBefore": ["a", "b"],
            "skillsAfter": ["a", "c"],
            "promptCharsBefore": 0,  # no skill roots: an empty catalog
            "promptCharsAfter": 0,
            "promptCharsDelta": 0,
        }
    ]


def test_deleted_channel_and_renamed_agent(repo: dict[str, str]) -> None:
    doc = plan_of(repo["skill"], repo["deleted"])
    assert actions(doc) == {"Channel/tg": "delete"}
    doc = plan_of(repo["deleted"], repo["renamed"])
    assert actions(doc) == {"Agent/builder": "create", "Agent/coder": "delete"}
    assert doc["renames"] == [{"from": "Agent/coder", "to": "Agent/builder"}]


def test_detailed_exitcode_and_text(repo: dict[str, str]) -> None:
    code, text = run("--from", repo["base"], "--to", repo["args"], "cfg", "--detailed-exitcode")
    assert code == 2
    assert "+ McpServer/search" in text and "Plan: 1 to add, 1 to change, 0 to destroy." in text
    assert "coder (changed): servers +search" in text


def test_markdown_for_pull_requests(repo: dict[str, str]) -> None:
    code, text = run("--from", repo["base"], "--to", repo["renamed"], "cfg", "--format", "markdown")
    assert code == 0
    assert text.startswith("### clawplane diff")
    assert "| Action | Kind | Name | Reason |" in text
    assert "| `+` create | McpServer | `search` |" in text
    assert "| `-` delete | Channel | `tg` |" in text
    assert '| `spec.args[1]` | changed | `"/srv/notes"` | `"/srv/other"` |' in text
    assert "<details>" in text and "sk-literal-secret-value" not in text
    code, text = run("--from", repo["deleted"], "--to", repo["renamed"], "cfg", "--format", "markdown")
    assert "Likely rename: `Agent/coder` → `Agent/builder`" in text


def test_working_tree_folder_against_revision(repo: dict[str, str]) -> None:
    (Path.cwd() / "cfg" / "agents.yaml").write_text(AGENT.format(name="builder", skills="a, c"))
    status = git(Path.cwd(), "status", "--porcelain")
    code, text = run("--from", repo["renamed"], "--to", "cfg", "cfg", "--detailed-exitcode")
    assert code == 0, text
    assert git(Path.cwd(), "status", "--porcelain") == status
    code, text = run("--from", repo["skill"], "--to", "cfg", "cfg", "--detailed-exitcode")
    assert code == 2 and "- Channel/tg" in text


def test_invalid_side_prints_diagnostics_and_exits_1(repo: dict[str, str]) -> None:
    code, text = run("--from", repo["renamed"], "--to", repo["broken"], "cfg", "--detailed-exitcode")
    assert code == 1
    assert (
        f"{repo['broken']}:cfg/agents.yaml" in text
        and "the --to side" in text
        and "does not validate" in text
    )


def test_unknown_revision_exits_1(repo: dict[str, str]) -> None:
    code, text = run("--from", "no-such-rev", "--to", repo["base"], "cfg")
    assert code == 1 and "error:" in text


def test_cwd_relative_hashes_do_not_depend_on_the_temp_folder(repo: dict[str, str]) -> None:
    root = Path.cwd()
    (root / "cfg" / "agents.yaml").write_text(AGENT.format(name="builder", skills="a, c"))
    (root / "cfg" / "work").mkdir()
    (root / "cfg" / "work" / "README").write_text("x")
    server = SERVERS.replace("  hosting: consumer\n", "  hosting: consumer\n  cwd: ./work\n")
    one = commit(root, {"servers.yaml": server + EXTRA_SERVER}, "cwd")
    two = commit(root, {"notes.txt": "unrelated"}, "unrelated")
    code, text = run("--from", one, "--to", two, "cfg", "--detailed-exitcode")
    assert code == 0, text
    code, text = run("--from", one, "--to", "cfg", "cfg", "--detailed-exitcode")
    assert code == 0, text


# --- per-agent prompt sizes ----------------------------------------------------------------
GATEWAY = """\
apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata:
  name: default
spec:
  skills:
    load:
      extraDirs: [./skills]   # relative to this file
"""
SKILL_MD = "---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nBody.\n"
LONGER = "Helps with git: rebase, bisect & blame 🚀"  # & is escaped, 🚀 is 2 UTF-16 units


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.fixture()
def skills_repo(repo: dict[str, str]) -> dict[str, str]:
    """The repo plus a Gateway whose skill folder holds the skills the agent allows."""
    root = Path.cwd()
    revs = dict(repo)
    revs["skills"] = commit(
        root,
        {
            "gateway.yaml": GATEWAY,
            "agents.yaml": AGENT.format(name="coder", skills="git-helper, notes"),
            "skills/git-helper/SKILL.md": SKILL_MD.format(name="git-helper", description="Helps with git."),
            "skills/notes/SKILL.md": SKILL_MD.format(name="notes", description="Takes notes."),
        },
        "skills",
    )
    revs["described"] = commit(
        root,
        {"skills/git-helper/SKILL.md": SKILL_MD.format(name="git-helper", description=LONGER)},
        "describe",
    )
    unrelated = (SERVERS + EXTRA_SERVER).replace("/srv/notes", "/srv/elsewhere")
    revs["unrelated"] = commit(root, {"servers.yaml": unrelated}, "args")
    return revs


def engine_chars(folder: Path, agent: str) -> int:
    """The skills engine's own ``snapshot.prompt.chars`` for the folder as it lies on disk."""
    from clawplane.skills import GatewaySkills, Host, Placed, SkillsEngine
    from clawplane.validation import validate_paths

    result = validate_paths([folder])
    assert result.ok

    def placed(kind: str) -> list[Placed[object]]:
        return [Placed(r.resource, Path(r.source.file).resolve().parent) for r in result.of_kind(kind)]

    gateway = placed("Gateway")
    setup = GatewaySkills.from_resources(gateway[0], placed("Agent"), placed("Skill"), folder / ".clawplane")  # type: ignore[arg-type]
    inputs, _ = setup.inputs_for(agent, Host.current())
    return SkillsEngine().evaluate(inputs).snapshot.prompt.chars


def test_changed_skill_description_changes_the_prompt_size(skills_repo: dict[str, str]) -> None:
    doc = plan_of(skills_repo["skills"], skills_repo["described"])
    assert actions(doc) == {}  # a SKILL.md is no resource: only the agent view says what changed
    (agent,) = doc["agents"]  # type: ignore[misc]
    delta = utf16(LONGER.replace("&", "&amp;")) - utf16("Helps with git.")
    assert agent["agent"] == "coder" and agent["status"] == "changed"
    assert agent["skillsBefore"] == agent["skillsAfter"] == ["git-helper", "notes"]
    assert agent["promptCharsAfter"] - agent["promptCharsBefore"] == agent["promptCharsDelta"] == delta
    assert agent["promptCharsBefore"] > 370  # the catalog lists both skills

    code, text = run(
        "--from", skills_repo["skills"], "--to", skills_repo["described"], "cfg", "--detailed-exitcode"
    )
    before, after = agent["promptCharsBefore"], agent["promptCharsAfter"]
    assert code == 2, text
    assert f"coder (changed): prompt {before} -> {after} chars (+{delta})" in text
    code, text = run(
        "--from", skills_repo["skills"], "--to", skills_repo["described"], "cfg", "-f", "markdown"
    )
    assert code == 0 and f"- coder (changed): prompt {before} -> {after} chars (+{delta})" in text
    code, text = run("--from", skills_repo["described"], "--to", skills_repo["skills"], "cfg")
    assert f"prompt {after} -> {before} chars (-{delta})" in text


def test_unrelated_change_shows_no_prompt_delta(skills_repo: dict[str, str]) -> None:
    doc = plan_of(skills_repo["described"], skills_repo["unrelated"])
    assert actions(doc) == {"McpServer/notes": "replace"}
    assert doc["agents"] == []
    code, text = run(
        "--from", skills_repo["described"], "--to", skills_repo["unrelated"], "cfg", "-f", "markdown"
    )
    assert code == 0 and "#### Agents" not in text and "prompt" not in text


def test_prompt_sizes_are_counted_where_the_files_really_are(skills_repo: dict[str, str]) -> None:
    # HEAD's files in a temp folder and the same files in the working tree: same prompt, no delta
    code, text = run("--from", skills_repo["unrelated"], "--to", "cfg", "cfg", "--detailed-exitcode")
    assert code == 0, text
    doc = plan_of(skills_repo["skills"], "cfg")
    (agent,) = doc["agents"]  # type: ignore[misc]
    assert agent["promptCharsAfter"] == engine_chars(Path.cwd() / "cfg", "coder")
    git(Path.cwd(), "checkout", "-q", skills_repo["skills"], "--", "cfg")
    assert agent["promptCharsBefore"] == engine_chars(Path.cwd() / "cfg", "coder")
