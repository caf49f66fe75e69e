"""Plan benchmark: 1,000 McpServers (disabled), 200 Agents and 2,000 skills.

Prints, from one run on the same generated folder:
- a bare ruamel parse of the resource files (the baseline),
- a cold ``plan`` (validate, compile, scan and gate skills, render, plan) in a fresh engine,
- a re-plan in the same engine after one file changed,
and the ratios cold/ruamel (target <= 3x) and re-plan/cold (target <= 10%).
Also times the cold plan through the CLI (a new process, imports included).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ruamel.yaml import YAML

from clawplane.reconcile.engine import Engine
from clawplane.reconcile.workspace import Workspace
from clawplane.state import StateDB

SERVERS, AGENTS, SKILLS, FILES = 1000, 200, 2000, 100
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def generate(root: Path) -> None:
    """Write the resource files and the skill tree."""
    skills_dir = root / "skills"
    for i in range(SKILLS):
        d = skills_dir / f"group{i % 20}" / f"skill-{i:04d}"
        d.mkdir(parents=True)
        req = f'\nmetadata: {{"openclaw": {{"requires": {{"bins": ["tool{i % 7}"]}}}}}}' if i % 3 == 0 else ""
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Does task {i} well.{req}\n---\n\nBody {i}.\n"
        )
    docs: list[list[str]] = [[] for _ in range(FILES)]
    docs[0].append(
        HEAD + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  skills:\n    load:\n"
        "      extraDirs: [./skills]\n  agents:\n    defaults:\n      workspace: ./ws\n"
    )
    for i in range(SERVERS):
        docs[i % FILES].append(
            HEAD + f"kind: McpServer\nmetadata:\n  name: server-{i:04d}\nspec:\n  enabled: false\n"
            f"  command: node\n  args: [server-{i}.js, --port, '{3000 + i}']\n  env:\n    LOG_LEVEL: info\n"
            f"  toolFilter:\n    exclude: ['admin_*']\n"
        )
    for i in range(AGENTS):
        picks = ", ".join(f"skill-{(i * 7 + k) % SKILLS:04d}" for k in range(10))
        docs[i % FILES].append(
            HEAD + f"kind: Agent\nmetadata:\n  name: agent-{i:03d}\nspec:\n  skills: [{picks}]\n"
            f"  mcpServers: [server-{i:04d}, server-{(i + 1) % SERVERS:04d}]\n"
        )
    for n, chunk in enumerate(docs):
        (root / f"resources-{n:03d}.yaml").write_text("---\n".join(chunk))


def ruamel_parse(root: Path) -> float:
    """Seconds for a bare safe-load of every resource document."""
    yaml = YAML(typ="safe")
    start = time.perf_counter()
    for path in sorted(root.glob("*.yaml")):
        list(yaml.load_all(path.read_text()))
    return time.perf_counter() - start


def main() -> None:
    """Generate, measure, print."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "folder"
        root.mkdir()
        generate(root)
        ws = Workspace.for_folder(root)
        db = StateDB.open(ws.state_dir)
        base = min(ruamel_parse(root) for _ in range(3))
        colds = []
        for _ in range(3):
            engine = Engine(ws)
            start = time.perf_counter()
            planned = engine.plan(db)
            colds.append(time.perf_counter() - start)
        cold = statistics.median(colds)
        assert len(planned.plan.changes) == 1 + SERVERS + AGENTS, len(planned.plan.changes)
        replans = []
        target = root / "resources-042.yaml"
        for k in range(5):
            target.write_text(
                target.read_text().replace(
                    "LOG_LEVEL: info" if k % 2 == 0 else "LOG_LEVEL: debug",
                    "LOG_LEVEL: debug" if k % 2 == 0 else "LOG_LEVEL: info",
                    1,
                )
            )
            start = time.perf_counter()
            engine.plan(db)
            replans.append(time.perf_counter() - start)
        replan = statistics.median(replans)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "clawplane", "plan", str(root)], check=True, capture_output=True
        )
        cli = time.perf_counter() - start
    print(f"corpus: {SERVERS} McpServers (disabled), {AGENTS} Agents, {SKILLS} skills, {FILES} files")
    print(f"bare ruamel parse        {base:8.3f} s")
    print(f"cold plan (in process)   {cold:8.3f} s   {cold / base:5.2f}x ruamel   (target <= 3x)")
    print(f"re-plan, 1 file changed  {replan:8.3f} s   {replan / cold:6.1%} of cold   (target <= 10%)")
    print(f"cold plan (CLI process)  {cli:8.3f} s")


if __name__ == "__main__":
    main()
