"""Plan benchmark: 1,000 McpServers (disabled), 200 Agents and 2,000 skills.

Prints, from one run on the same generated folder:
- a bare ruamel parse of the resource files (the baseline),
- a cold ``plan`` (validate, compile, scan and gate skills, render, plan) in a fresh engine,
  and the same in a fresh watching engine (which also places its inotify watches),
- a re-plan in the watching engine after one file changed (as the supervisor's engine:
  an unchanged folder costs no ``stat``), as a share of the non-watching cold plan,
and the ratios cold/ruamel (target <= 3x) and re-plan/cold (target <= 10%).
Also times the cold plan through the CLI (a new process, imports included).

Each figure is given as wall time and as this process's CPU time: on a shared machine
the CPU ratio is the steadier one (other work inflates wall time, not CPU time).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aging import wait_out_racy_window
from ruamel.yaml import YAML

from clawplane.reconcile.engine import Engine
from clawplane.state import StateDB
from clawplane.validation.cache import RACY_WINDOW_NS
from clawplane.workspace import Workspace

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


class Timer:
    """Wall and CPU seconds of one block."""

    def __enter__(self) -> Timer:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def ruamel_parse(root: Path) -> Timer:
    """A bare safe-load of every resource document."""
    yaml = YAML(typ="safe")
    with Timer() as timer:
        for path in sorted(root.glob("*.yaml")):
            list(yaml.load_all(path.read_text()))
    return timer


def median(timers: list[Timer]) -> tuple[float, float]:
    """Median wall and CPU seconds."""
    return statistics.median(t.wall for t in timers), statistics.median(t.cpu for t in timers)


def main() -> None:
    """Generate, measure, print."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "folder"
        root.mkdir()
        generate(root)
        # A running engine re-plans a folder whose other files are older than the validation
        # cache's racy window: let the corpus age, or the re-plan would re-read every file.
        wait_out_racy_window(root, RACY_WINDOW_NS / 1e9)
        ws = Workspace.for_folder(root)
        db = StateDB.open(ws.state_dir)
        bases = [ruamel_parse(root) for _ in range(3)]
        base = min(t.wall for t in bases), min(t.cpu for t in bases)
        # In turns: a one-shot engine (the CLI's), then one that watches what it reads (the
        # supervisor's), which also places its watches. The last one re-plans below.
        colds, watching = [], []
        for _ in range(3):
            for runs, watch in ((colds, False), (watching, True)):
                engine = Engine(ws, watch=watch)
                with Timer() as timer:
                    planned = engine.plan(db)
                runs.append(timer)
        cold, cold_watching = median(colds), median(watching)
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
            with Timer() as timer:
                engine.plan(db)
            replans.append(timer)
        replan = median(replans)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "clawplane", "plan", str(root)], check=True, capture_output=True
        )
        cli = time.perf_counter() - start
    print(f"corpus: {SERVERS} McpServers (disabled), {AGENTS} Agents, {SKILLS} skills, {FILES} files")
    print(f"{'':25} {'wall s':>8} {'ratio':>8}   {'CPU s':>8} {'ratio':>8}")
    print(f"{'bare ruamel parse':25} {base[0]:8.3f} {'':8}   {base[1]:8.3f}")
    print(f"{'cold plan (in process)':25} {cold[0]:8.3f} {cold[0] / base[0]:7.2f}x   {cold[1]:8.3f} "
          f"{cold[1] / base[1]:7.2f}x   of ruamel (target <= 3x)")
    print(f"{'cold plan, watching':25} {cold_watching[0]:8.3f} {cold_watching[0] / base[0]:7.2f}x   "
          f"{cold_watching[1]:8.3f} {cold_watching[1] / base[1]:7.2f}x   of ruamel (places the watches)")
    print(f"{'re-plan, 1 file changed':25} {replan[0]:8.3f} {replan[0] / cold[0]:8.1%}   {replan[1]:8.3f} "
          f"{replan[1] / cold[1]:8.1%}   of cold (target <= 10%)")
    print(f"{'cold plan (CLI process)':25} {cli:8.3f}")


if __name__ == "__main__":
    main()
