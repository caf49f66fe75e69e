"""Benchmark ``clawplane validate`` against check-jsonschema and a bare ruamel parse.

Generates 1,000 realistic resources in 100 files (each file one ``kind: List`` of 10
items, because check-jsonschema reads exactly one document per file): one Gateway,
mostly McpServers and Agents with env, headers, args and toolFilter, plus some
Channels and Skills. Every command runs as a subprocess, so each pays for its own
interpreter start-up, and the wall time of each is the median of several runs.

    .venv/bin/python bench/validate_bench.py [--runs 5] [--keep DIR]

Exit status: 0 when clawplane is within the targets (≤ 1.0× check-jsonschema, ≤ 1.5× the
bare ruamel parse), 1 when it is slower, 2 when a tool failed (clawplane must accept the
generated files). Runs are interleaved; CPU is each subprocess's user + system time.
clawplane's bytecode is compiled before timing: ruamel and check-jsonschema were compiled
when they were installed, and with PYTHONDONTWRITEBYTECODE set an editable clawplane would
otherwise recompile its sources in every run, which no installed copy does.
"""

from __future__ import annotations

import argparse
import compileall
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "clawplane.schema.json"
API = "clawplane.dev/v1alpha1"
TARGET_RATIO = 1.0
RUAMEL_TARGET = 1.5

RUAMEL_SCRIPT = """\
import sys
from ruamel.yaml import YAML
yaml = YAML(typ="safe")
n = 0
for name in sys.argv[1:]:
    with open(name, encoding="utf-8") as fh:
        n += sum(1 for _ in yaml.load_all(fh))
print(n, "documents")
"""


# --- generation ------------------------------------------------------------------------------


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _mcp_stdio(rng: random.Random, name: str, agents: list[str]) -> list[str]:
    lang = rng.choice(["node", "python3", "npx", "uvx", "deno"])
    args = [f"servers/{name}/main.js", "--port", str(rng.randint(1024, 65000)), "--log-level", "info"]
    lines = [
        "    spec:",
        "      transport: stdio",
        f"      command: {lang}",
        "      args: [" + ", ".join(_q(a) for a in args[: rng.randint(1, len(args))]) + "]",
        f"      cwd: ./servers/{name}",
        "      env:",
        f"        {name.upper().replace('-', '_')}_REGION: eu-west-{rng.randint(1, 3)}",
        "        LOG_FORMAT: json",
        f"        CACHE_DIR: /var/cache/{name}",
        f"        MAX_RESULTS: {rng.randint(10, 500)}",
        "        FEATURE_FLAGS: " + _q(",".join(rng.sample(["a", "b", "c", "d", "e"], 3))),
        "        API_TOKEN:",
        "          valueFrom:",
        f"            env: {name.upper().replace('-', '_')}_TOKEN",
    ]
    if rng.random() < 0.3:
        lines += ["        DB_PASSWORD:", "          valueFrom:", f"            file: /run/secrets/{name}-db"]
    lines += _tool_filter(rng)
    lines += [f"      requestTimeoutMs: {rng.choice([15000, 30000, 60000, 120000])}"]
    if rng.random() < 0.4 and agents:
        picked = rng.sample(agents, min(len(agents), rng.randint(1, 3)))
        lines += [
            "      codex:",
            "        agents: [" + ", ".join(picked) + "]",
            f"        defaultToolsApprovalMode: {rng.choice(['auto', 'prompt', 'approve'])}",
        ]
    return lines


def _mcp_http(rng: random.Random, name: str) -> list[str]:
    lines = [
        "    spec:",
        f"      transport: {rng.choice(['streamable-http', 'sse'])}",
        f"      url: https://{name}.mcp.example.com/v{rng.randint(1, 3)}/mcp",
        "      headers:",
        "        Authorization:",
        "          valueFrom:",
        f"            env: {name.upper().replace('-', '_')}_BEARER",
        f"        X-Tenant: tenant-{rng.randint(1, 40)}",
        "        Accept-Language: en-GB",
        "        X-Request-Source: clawplane",
        f"      connectionTimeoutMs: {rng.choice([2000, 5000, 10000])}",
        f"      requestTimeoutMs: {rng.choice([15000, 30000, 60000])}",
        f"      supportsParallelToolCalls: {rng.choice(['true', 'false'])}",
    ]
    lines += _tool_filter(rng)
    if rng.random() < 0.2:
        lines += ["      enabled: false"]
    return lines


def _tool_filter(rng: random.Random) -> list[str]:
    tools = ["search", "fetch", "list_*", "read_*", "write_*", "debug_*", "admin_*", "query", "export"]
    lines = ["      toolFilter:"]
    if rng.random() < 0.6:
        lines.append("        include: [" + ", ".join(_q(t) for t in rng.sample(tools, 4)) + "]")
    lines.append("        exclude: [" + ", ".join(_q(t) for t in rng.sample(tools[5:], 2)) + "]")
    return lines


def _agent(rng: random.Random, servers: list[str], skills: list[str]) -> list[str]:
    lines = [
        "    spec:",
        f"      description: {_q('Handles ' + rng.choice(['triage', 'code review', 'docs', 'support']))}",
        "      mcpServers: [" + ", ".join(rng.sample(servers, min(len(servers), rng.randint(1, 5)))) + "]",
    ]
    if skills and rng.random() < 0.7:
        lines.append("      skills: [" + ", ".join(rng.sample(skills, min(len(skills), 3))) + "]")
    if rng.random() < 0.5:
        lines.append(f"      model: anthropic/claude-{rng.choice(['sonnet-4', 'opus-4', 'haiku-4'])}")
    else:
        lines += [
            "      model:",
            "        primary: anthropic/claude-sonnet-4",
            "        fallbacks: [openai/gpt-5, google/gemini-2.5-pro]",
        ]
    if rng.random() < 0.5:
        lines += [
            "      tools:",
            f"        profile: {rng.choice(['minimal', 'coding', 'messaging', 'full'])}",
            "        deny: [exec, browser]",
        ]
    lines += ["      skillsLimits:", f"        maxSkillsPromptChars: {rng.randint(2000, 12000)}"]
    return lines


# Per channel type, the credential key OpenClaw names and whether it has groups (slack has channels).
_CHANNELS = {
    "telegram": ("botToken", True),
    "whatsapp": (None, True),
    "signal": (None, True),
    "matrix": ("accessToken", True),
    "slack": ("botToken", False),
}


def _channel(rng: random.Random, agent: str, index: int) -> list[str]:
    kind = rng.choice(sorted(_CHANNELS))
    credential, groups = _CHANNELS[kind]
    lines = [
        "    spec:",
        f"      type: {kind}",
        f"      agent: {agent}",
        "      dmPolicy: allowlist",
        f'      allowFrom: ["{100000 + index}", "{200000 + index}"]',
        "      groupPolicy: allowlist",
    ]
    if groups:
        lines += [f'      groupAllowFrom: ["{300000 + index}"]', "      groups:", '        "*":',
                  "          requireMention: true"]
    else:
        lines += ["      channels:", f'        "C{300000 + index}":', "          requireMention: true"]
    if kind == "signal":
        lines.append(f'      account: "+1555{index:07d}"')
    lines.append(f"      mentionPatterns: [{_q('@' + agent + chr(92) + chr(92) + 'b')}]")
    if credential is not None:
        lines += ["      credentials:", f"        {credential}:", "          valueFrom:",
                  f"            env: CHANNEL_{index}_TOKEN"]
    return lines


def _skill(rng: random.Random, name: str) -> list[str]:
    return [
        "    spec:",
        f"      description: {_q('Skill ' + name + ' for ' + rng.choice(['git', 'release notes', 'style']))}",
        "      body: |",
        f"        # {name}",
        "",
        "        - Do the thing carefully.",
        "        - Keep a short summary at the end.",
        "      openclaw:",
        "        requires:",
        f"          bins: [{rng.choice(['git', 'gh', 'jq'])}]",
    ]


def _gateway(agent: str, skills: list[str]) -> list[str]:
    return [
        "    spec:",
        "      skills:",
        "        load:",
        "          extraDirs: [./skills]",
        "      agents:",
        f"        defaultAgent: {agent}",
        "        defaults:",
        "          skills: [" + ", ".join(skills[:3]) + "]",
        "          workspace: ./workspaces",
        "      tools:",
        "        profile: coding",
    ]


def generate(root: Path, *, files: int = 100, per_file: int = 10, seed: int = 20260906) -> int:
    """Write ``files`` List files of ``per_file`` resources each under ``root``; returns the count."""
    rng = random.Random(seed)
    total = files * per_file
    # Kind mix: 1 Gateway, ~45% McpServer, ~40% Agent, ~8% Channel, rest Skill.
    kinds = ["Gateway"]
    kinds += ["McpServer"] * int(total * 0.45)
    kinds += ["Agent"] * int(total * 0.40)
    kinds += ["Channel"] * int(total * 0.08)
    kinds += ["Skill"] * (total - len(kinds))
    rng.shuffle(kinds)
    prefix = {"Gateway": "main", "McpServer": "srv", "Agent": "agent", "Channel": "chan", "Skill": "skill"}
    counters: dict[str, int] = {}
    names: list[tuple[str, str]] = []
    for kind in kinds:
        counters[kind] = counters.get(kind, 0) + 1
        names.append((kind, f"{prefix[kind]}-{counters[kind]:04d}"))
    servers = [n for k, n in names if k == "McpServer"]
    agents = [n for k, n in names if k == "Agent"]
    skills = [n for k, n in names if k == "Skill"]
    root.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        out = [
            "# yaml-language-server: $schema=../schemas/clawplane.schema.json",
            f"# generated by bench/validate_bench.py (file {f})",
            f"apiVersion: {API}",
            "kind: List",
            "items:",
        ]
        for kind, name in names[f * per_file : (f + 1) * per_file]:
            out += [
                f"  - apiVersion: {API}",
                f"    kind: {kind}",
                "    metadata:",
                f"      name: {name}",
                "      labels:",
                f"        team: team-{rng.randint(1, 12)}",
                "        app.kubernetes.io/part-of: clawplane-bench",
            ]
            if kind == "McpServer":
                if rng.random() < 0.6:
                    out += _mcp_stdio(rng, name, agents)
                else:
                    out += _mcp_http(rng, name)
            elif kind == "Agent":
                out += _agent(rng, servers, skills)
            elif kind == "Channel":
                out += _channel(rng, rng.choice(agents), counters["Channel"] + f)
            elif kind == "Skill":
                out += _skill(rng, name)
            else:
                out += _gateway(agents[0], skills)
        (root / f"resources-{f:03d}.yaml").write_text("\n".join(out) + "\n", encoding="utf-8")
    return total


# --- measuring -------------------------------------------------------------------------------


def _tool(name: str) -> str:
    """A console script next to this interpreter, or on PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found; install the test dependency group")
    return found


def _once(cmd: list[str], *, expect: int = 0) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``cmd``; exits 2 on an unexpected status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != expect:
        sys.stderr.write(f"command failed ({proc.returncode}): {' '.join(cmd[:3])} ...\n")
        sys.stderr.write((proc.stdout + proc.stderr)[-3000:] + "\n")
        raise SystemExit(2)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _time_all(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float, float]]:
    """(median wall, min wall, median CPU) per command; runs are interleaved, so a burst of
    other work on the machine falls on every command alike."""
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, cmd in commands.items():
            samples[label].append(_once(cmd))
    return {
        label: (statistics.median(w for w, _ in got), min(w for w, _ in got),
                statistics.median(c for _, c in got))
        for label, got in samples.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (median is reported)")
    parser.add_argument("--keep", type=Path, help="write the resources here and keep them")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="clawplane-bench-") as tmp:
        root = args.keep or Path(tmp) / "resources"
        count = generate(root)
        files = sorted(str(p) for p in root.glob("*.yaml"))
        size = sum(Path(p).stat().st_size for p in files)
        print(f"{count} resources in {len(files)} files ({size / 1024:.0f} KiB), median of {args.runs} runs")
        commands = {
            "clawplane validate": [_tool("clawplane"), "validate", str(root), "--quiet"],
            "check-jsonschema": [_tool("check-jsonschema"), "--schemafile", str(SCHEMA), *files],
            "ruamel safe load": [sys.executable, "-c", RUAMEL_SCRIPT, *files],
            "python start-up": [sys.executable, "-c", "pass"],
        }
        compileall.compile_dir(str(ROOT / "operator" / "clawplane"), quiet=1)
        results = _time_all(commands, args.runs)

    width = max(len(k) for k in results)
    print(f"\n{'command':<{width}}  {'median s':>9}  {'min s':>7}  {'CPU s':>7}")
    print(f"{'-' * width}  {'-' * 9}  {'-' * 7}  {'-' * 7}")
    for label, (med, low, cpu) in results.items():
        print(f"{label:<{width}}  {med:>9.3f}  {low:>7.3f}  {cpu:>7.3f}")
    claw, cj, ruamel = results["clawplane validate"], results["check-jsonschema"], results["ruamel safe load"]
    vs_cj = claw[0] / cj[0]
    vs_ruamel, vs_ruamel_cpu = claw[0] / ruamel[0], claw[2] / ruamel[2]
    print(f"\nclawplane / check-jsonschema = {vs_cj:.2f}x  (target <= {TARGET_RATIO:.1f}x)")
    print(f"clawplane / ruamel           = {vs_ruamel:.2f}x wall, {vs_ruamel_cpu:.2f}x CPU"
          f"  (target <= {RUAMEL_TARGET:.1f}x)")
    return 0 if vs_cj <= TARGET_RATIO and vs_ruamel <= RUAMEL_TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
