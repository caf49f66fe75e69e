"""Every oracle from tests/oracles/install.sh runs and answers as the shared notes say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from tests.oracles import locate
from tests.oracles.runners import CodexOracle, OpenClawOracle, OracleRunner, StdioServer

# --- the skills prompt as shared/notes/openclaw-semantics.md section f describes it ------
PROMPT_HEAD = (
    "\n\nThe following skills provide specialized instructions for specific tasks.\n"
    "Read a skill's file at its listed location when the task matches its description.\n"
    "When a skill file references a relative path, resolve it against the skill directory "
    "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"
    "\n<available_skills>"
)
PROMPT_BASE = 370
PER_SKILL = 97


def _esc(text: str) -> str:
    for raw, ent in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&apos;"),
    ):
        text = text.replace(raw, ent)
    return text


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def formula_length(skills: list[dict[str, str]]) -> int:
    return PROMPT_BASE + sum(
        PER_SKILL
        + utf16_len(_esc(s["name"]))
        + utf16_len(_esc(s["description"]))
        + utf16_len(_esc(s["filePath"]))
        for s in skills
    )


def expected_prompt(skills: list[dict[str, str]]) -> str:
    lines = [PROMPT_HEAD]
    for s in skills:
        lines += [
            "  <skill>",
            f"    <name>{_esc(s['name'])}</name>",
            f"    <description>{_esc(s['description'])}</description>",
            f"    <location>{_esc(s['filePath'])}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _write_skill(root: Path, name: str, description: str, metadata: str | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    meta = f"metadata: {metadata}\n" if metadata else ""
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{meta}---\n# {name}\n", encoding="utf-8"
    )
    return d / "SKILL.md"


# --- OpenClaw ----------------------------------------------------------------------------
def test_openclaw_version(openclaw: OpenClawOracle) -> None:
    openclaw.write_config("{}")
    proc = openclaw.run("--version", check=True)
    assert proc.stdout.strip().startswith(f"OpenClaw {locate.pins()['OPENCLAW_VERSION']}")
    assert proc.stdout.strip().startswith("OpenClaw 2026.9.6")


def test_openclaw_config_validate(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = openclaw.write_config(
        f'// JSON5 is fine\n{{ agents: {{ defaults: {{ workspace: "{ws}" }} }}, }}\n'
    )
    ok = openclaw.json("config", "validate", "--json")
    assert ok["valid"] is True, ok
    assert ok["path"] == str(path)

    openclaw.write_config({"bogusTop": 1})
    bad_proc = openclaw.run("config", "validate", "--json")
    bad = json.loads(bad_proc.stdout)
    assert bad_proc.returncode == 1
    assert bad["valid"] is False
    assert any('Unrecognized key: "bogusTop"' in i["message"] for i in bad["issues"]), bad


def _two_skill_fixture(openclaw: OpenClawOracle, tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"  # outside the isolated HOME: locations stay absolute
    alpha = _write_skill(ws / "skills", "alpha", "Does alpha things & <more>.")
    _write_skill(
        ws / "skills",
        "beta",
        "Needs a binary that is not installed.",
        metadata='{"openclaw": {"requires": {"bins": ["clawplane-no-such-bin"]}}}',
    )
    openclaw.write_config(
        {
            "agents": {"defaults": {"workspace": str(ws)}},
            "plugins": {"enabled": False},
            "skills": {"allowBundled": ["__none__"]},
        }
    )
    return ws, alpha


def test_openclaw_skills_prompt_oracle(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    ws, alpha = _two_skill_fixture(openclaw, tmp_path)
    snap = openclaw.skills_snapshot(agent="main")

    assert snap["openclawVersion"] == "2026.9.6"
    assert snap["agentId"] == "main"
    assert snap["workspaceDir"] == str(ws)
    assert set(snap["functions"]) >= {"buildSkillSnapshot", "getRuntimeConfig"}
    assert [s["name"] for s in snap["skills"]] == ["alpha"]  # beta: missing bin
    in_prompt = [
        {"name": s["name"], "description": s["description"], "filePath": s["filePath"]}
        for s in snap["resolvedSkills"]
    ]
    assert in_prompt == [
        {"name": "alpha", "description": "Does alpha things & <more>.", "filePath": str(alpha)}
    ]
    prompt: str = snap["prompt"]
    assert snap["promptLength"] == utf16_len(prompt)
    assert utf16_len(prompt) == formula_length(in_prompt)
    assert prompt == expected_prompt(in_prompt)

    # The CLI agrees on what is model-visible.
    check = openclaw.json("skills", "check", "--json", "--agent", "main")
    assert check["modelVisible"] == ["alpha"]
    assert [m["name"] for m in check["missingRequirements"]] == ["beta"]
    assert check["missingRequirements"][0]["missing"]["bins"] == ["clawplane-no-such-bin"]


def test_openclaw_format_skills_oracle(openclaw: OpenClawOracle) -> None:
    skills = [
        {
            "name": "alpha",
            "description": "Does alpha things.",
            "filePath": "/ws/skills/alpha/SKILL.md",
        },
        {"name": "b&<>\"'", "description": "Escapes.", "filePath": "/ws/skills/b/SKILL.md"},
        {"name": "gamma", "description": "Emoji 😀 counts twice.", "filePath": "/ws/g/SKILL.md"},
    ]
    one = openclaw.format_skills(skills[:1])
    assert one["promptCoreLength"] == 515 == formula_length(skills[:1])
    out = openclaw.format_skills(skills)
    ordered = sorted(skills, key=lambda s: s["name"])  # all ASCII-lowercase-first here
    assert out["promptCore"] == expected_prompt(skills)
    assert out["prompt"] == expected_prompt(ordered)
    assert out["promptLength"] == formula_length(skills)


# --- Codex -------------------------------------------------------------------------------
def test_codex_version_and_empty_config(codex: CodexOracle) -> None:
    version = codex.run("--version", check=True)
    assert version.stdout.strip() == f"codex-cli {locate.pins()['CODEX_VERSION']}"

    strict = codex.strict_check()
    assert strict.returncode == 0, strict.stderr
    assert json.loads(strict.stdout)["appServerVersion"] == "0.171.0"
    assert codex.json("mcp", "list", "--json") == []

    codex.write_config('[mcp_servers.a]\ncommand = "echo"\nbogus_key = 1\n')
    bad = codex.strict_check()
    assert bad.returncode == 1
    detail = json.loads(bad.stdout)["error"]["data"]["detail"]
    assert "unknown configuration field `mcp_servers.a.bogus_key`" in detail


# --- MCP peers ---------------------------------------------------------------------------
def test_server_everything_answers_python_client(server_everything: StdioServer) -> None:
    params = StdioServerParameters(
        command=server_everything.command, args=server_everything.args, env=server_everything.env
    )

    async def main() -> tuple[list[str], str]:
        async with Client(params, read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            echo = await client.call_tool("echo", {"message": "hi"})
            text = getattr(echo.content[0], "text", "")
            return [t.name for t in tools.tools], text

    names, text = anyio.run(main)
    assert "echo" in names and "get-sum" in names
    assert text == "Echo: hi"


def test_inspector_cli_lists_server_everything_tools(
    inspector_cli: OracleRunner, server_everything: StdioServer
) -> None:
    result: Any = inspector_cli.json(*server_everything.argv, "--method", "tools/list")
    names = [t["name"] for t in result["tools"]]
    assert "echo" in names and "get-sum" in names


# --- kubectl -----------------------------------------------------------------------------
def test_kubectl_client_works_offline(kubectl: OracleRunner) -> None:
    version = kubectl.json("version", "--client", "-o", "json")
    assert version["clientVersion"]["gitVersion"].startswith("v1.")
    manifest = kubectl.run(
        "create",
        "configmap",
        "x",
        "--from-literal=a=b",
        "--dry-run=client",
        "-o",
        "json",
        check=True,
    )
    assert json.loads(manifest.stdout)["data"] == {"a": "b"}
