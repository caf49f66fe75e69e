"""How cost grows with the size of a folder: validate, plan, apply and skills at 10 to 10,000
resources, and the supervisor at 10 to 1,000 hosted servers.

For each size N the folder holds 3N/4 McpServers (disabled) and N/4 Agents in N/20 files,
and a skill tree of 100 skills that every agent draws five from (every agent's snapshot
lists every skill it can see, so a tree growing with N would make the outputs grow as N²);
the skills measurement has a tree of its own with N skills. Measured per size:

* ``validate``: ``validate_paths`` in process, no cache (wall and CPU);
* ``plan``: a cold ``Engine.plan`` in process;
* ``skills``: a cold ``SkillsEngine.evaluate`` of one agent over the N skills;
* ``apply``: ``clawplane apply DIR --yes`` as a user runs it (a process that starts the
  folder's supervisor, which applies and renders every output), then ``clawplane down``.

For the supervisor, a folder of M hosted stdio servers (``tests/fixtures/servers/
minimal_server.py``, standard library only, so 1,000 fit on one machine): the wall time of
``apply`` until every server is Ready, of ``status`` and ``plan`` while they run, and of
``down``; and the supervisor's threads, open descriptors and RSS (per server) when all run.

Prints the tables and draws them log-log with a line of slope 1 (linear cost) through the
first point of each series, so a curve bending upwards away from it grows faster than
linear. Writes the chart to ``--chart`` (a PNG).

    .venv/bin/python bench/scaling.py [--sizes 10,100,1000,10000] [--servers 10,100,1000]
                                      [--chart scaling.png] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "servers" / "minimal_server.py"
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


FOLDER_SKILLS = 100


def skill_tree(base: Path, count: int) -> None:
    """``count`` skills under ``base``, a third of them needing a binary."""
    for i in range(count):
        skill = base / f"group{i % 50}" / f"skill-{i:05d}"
        skill.mkdir(parents=True)
        req = f'\nmetadata: {{"openclaw": {{"requires": {{"bins": ["tool{i % 7}"]}}}}}}' if i % 3 == 0 else ""
        text = f"---\nname: skill-{i:05d}\ndescription: Does task {i}.{req}\n---\nB\n"
        (skill / "SKILL.md").write_text(text)


def generate(root: Path, size: int) -> None:
    """The corpus of ``size`` resources (see the module docstring)."""
    servers, agents = max(1, size * 3 // 4), max(1, size // 4)
    files = max(1, size // 20)
    skill_tree(root / "skills", FOLDER_SKILLS)
    docs: list[list[str]] = [[] for _ in range(files)]
    docs[0].append(HEAD + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  skills:\n    load:\n"
                   "      extraDirs: [./skills]\n    limits:\n"
                   f"      maxCandidatesPerRoot: {size + 10}\n      maxSkillsLoadedPerSource: {size + 10}\n")
    for i in range(servers):
        docs[i % files].append(
            HEAD + f"kind: McpServer\nmetadata:\n  name: server-{i:05d}\nspec:\n  enabled: false\n"
            f"  command: node\n  args: [server-{i}.js]\n  env:\n    LOG_LEVEL: info\n")
    for i in range(agents):
        picks = ", ".join(f"skill-{(i * 5 + k) % FOLDER_SKILLS:05d}" for k in range(5))
        docs[i % files].append(HEAD + f"kind: Agent\nmetadata:\n  name: agent-{i:05d}\nspec:\n"
                               f"  skills: [{picks}]\n  mcpServers: [server-{i % servers:05d}]\n")
    for n, chunk in enumerate(docs):
        (root / f"resources-{n:04d}.yaml").write_text("---\n".join(chunk))


def hosted(root: Path, count: int) -> None:
    """A folder of ``count`` hosted minimal stdio servers."""
    docs = [
        HEAD + f"kind: McpServer\nmetadata:\n  name: tiny-{i:04d}\nspec:\n  command: {sys.executable}\n"
        f"  args: [-S, {FIXTURE}, tiny-{i:04d}]\n"
        for i in range(count)
    ]
    for n in range(0, count, 50):
        (root / f"servers-{n // 50:03d}.yaml").write_text("---\n".join(docs[n:n + 50]))


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn()`` in this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def best(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    samples = [timed(fn) for _ in range(runs)]
    return min(s[0] for s in samples), min(s[1] for s in samples)


def cli(*args: str, timeout: float = 1800) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds and result of one ``clawplane`` command, run as a user runs it."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "NO_COLOR": "1"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "clawplane", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, proc


def measure_size(root: Path, size: int) -> dict[str, float]:
    """validate, plan, skills and apply at one size."""
    from clawplane.reconcile.engine import Engine
    from clawplane.skills import Host, SkillRoot, SkillsEngine, Source
    from clawplane.state import StateDB
    from clawplane.validation import validate_paths
    from clawplane.workspace import Workspace

    generate(root, size)
    runs = 3 if size <= 1000 else 1
    ws = Workspace.for_folder(root)
    db = StateDB.open(ws.state_dir)
    validate = best(lambda: validate_paths([root]), runs)
    plan = best(lambda: Engine(ws).plan(db), runs)
    engine = Engine(ws)
    planned = engine.plan(db)
    renderer = engine.renderer
    assert len(planned.plan.changes) > size * 0.9, len(planned.plan.changes)
    setup_inputs = renderer._setup.inputs_for("agent-00000", Host.current())[0] if renderer._setup else None
    assert setup_inputs is not None
    tree = root.parent / f"skills-{size}"
    skill_tree(tree, size)
    inputs = replace(setup_inputs, roots=(SkillRoot(str(tree), Source.EXTRA),),
                     agent=replace(setup_inputs.agent, skill_filter=None))
    skills = best(lambda: SkillsEngine().evaluate(inputs), runs)
    try:
        apply_s, proc = cli("apply", str(root), "--yes")
    finally:
        cli("down", str(root))  # whatever apply did, leave no supervisor behind
    if proc.returncode != 0:
        raise SystemExit(f"apply of {size} failed: {(proc.stdout + proc.stderr)[-2000:]}")
    return {"validate": validate[0], "validate_cpu": validate[1], "plan": plan[0], "plan_cpu": plan[1],
            "skills": skills[0], "skills_cpu": skills[1], "apply": apply_s}


def supervisor_pid(root: Path) -> int:
    from clawplane.workspace import Workspace, read_info

    info = read_info(Workspace.for_folder(root))
    assert info is not None, "no supervisor pidfile"
    return info.pid


def measure_servers(root: Path, count: int) -> dict[str, float]:
    """The supervisor with ``count`` hosted servers."""
    hosted(root, count)
    apply_s, proc = cli("apply", str(root), "--yes")
    if proc.returncode != 0:
        cli("down", str(root))
        raise SystemExit(f"apply of {count} servers failed: {(proc.stdout + proc.stderr)[-2000:]}")
    try:
        status_s, status = cli("status", str(root), "--json")
        ready = sum(1 for r in json.loads(status.stdout).get("resources", [])
                    if r.get("phase") == "Ready")
        plan_s, _ = cli("plan", str(root))
        sup = psutil.Process(supervisor_pid(root))
        threads, fds, rss = sup.num_threads(), sup.num_fds(), sup.memory_info().rss
    finally:
        down_s, _ = cli("down", str(root))
    return {"apply": apply_s, "status": status_s, "plan": plan_s, "down": down_s, "ready": ready,
            "threads": threads, "fds": fds, "rss_mb": rss / 2**20}


def baseline_rss() -> float:
    """RSS of a supervisor running no server, as the per-server figures' zero."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "empty"
        folder.mkdir()
        hosted(folder, 1)
        return measure_servers(folder, 1)["rss_mb"]


def panel(ax: Any, xs: list[int], data: dict[int, dict[str, float]], keys: tuple[str, ...],
          xlabel: str, title: str) -> None:
    """One log-log panel: each series and its slope-1 line from its first point."""
    for index, key in enumerate(keys):
        ys = [data[x][key] for x in xs]
        ax.plot(xs, ys, "o-", color=f"C{index}", label=key)
        ax.plot(xs, [ys[0] * x / xs[0] for x in xs], ":", color=f"C{index}", alpha=0.5)
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel="seconds", title=title)
    ax.legend()


def chart(path: Path, sizes: list[int], rows: dict[int, dict[str, float]],
          servers: list[int], sup: dict[int, dict[str, float]]) -> None:
    """Log-log curves with a slope-1 reference through each series' first point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    panel(left, sizes, rows, ("validate", "plan", "skills", "apply"), "resources (and skills)",
          "Folder size: dotted = linear from the first point")
    panel(right, servers, sup, ("apply", "status", "plan", "down"), "hosted stdio servers",
          "Supervisor: dotted = linear from the first point")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def table(header: list[tuple[str, int]], rows: list[list[str]]) -> None:
    """Right-aligned columns."""
    print("  ".join(f"{name:>{width}}" for name, width in header))
    for row in rows:
        print("  ".join(f"{cell:>{width}}" for cell, (_, width) in zip(row, header, strict=True)))


def print_tables(sizes: list[int], rows: dict[int, dict[str, float]], servers: list[int],
                 sup: dict[int, dict[str, float]], zero: float) -> None:
    """The folder table, the growth factors, and the supervisor table."""
    keys = ("validate", "plan", "skills")
    header = [("resources", 9), ("validate s", 10), ("(CPU)", 7), ("plan s", 8), ("(CPU)", 7),
              ("skills s", 8), ("(CPU)", 7), ("apply s", 8)]
    table(header, [[str(n), *(f"{rows[n][k + suffix]:.3f}" for k in keys for suffix in ("", "_cpu")),
                    f"{rows[n]['apply']:.2f}"] for n in sizes])
    if len(sizes) > 1:
        last, before = rows[sizes[-1]], rows[sizes[-2]]
        factors = ", ".join(f"{k} {last[k] / before[k]:.1f}x" for k in (*keys, "apply"))
        print(f"growth over the last 10x of resources (10x = linear): {factors}")
    if servers:
        print()
        header = [("servers", 7), ("ready", 5), ("apply s", 8), ("status s", 8), ("plan s", 7),
                  ("down s", 7), ("threads", 7), ("fds", 5), ("RSS MB", 7), ("MB/server", 9)]
        table(header, [[str(n), str(int(sup[n]["ready"])),
                        *(f"{sup[n][k]:.2f}" for k in ("apply", "status", "plan", "down")),
                        str(int(sup[n]["threads"])), str(int(sup[n]["fds"])), f"{sup[n]['rss_mb']:.1f}",
                        f"{(sup[n]['rss_mb'] - zero) / n:.3f}"] for n in servers])
        print(f"(supervisor RSS with one server: {zero:.1f} MB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--servers", default="10,100,1000")
    parser.add_argument("--chart", type=Path, default=Path("scaling.png"))
    parser.add_argument("--keep", type=Path, help="generate the folders under DIR and keep them")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    servers = [int(s) for s in args.servers.split(",") if s]
    base = args.keep or Path(tempfile.mkdtemp(prefix="clawplane-scaling-"))
    rows: dict[int, dict[str, float]] = {}
    sup: dict[int, dict[str, float]] = {}
    try:
        for size in sizes:
            folder = base / f"folder-{size}"
            folder.mkdir(parents=True)
            rows[size] = measure_size(folder, size)
            print(f"measured {size} resources", file=sys.stderr)
        zero = baseline_rss() if servers else 0.0
        for count in servers:
            folder = base / f"servers-{count}"
            folder.mkdir(parents=True)
            sup[count] = measure_servers(folder, count)
            print(f"measured {count} servers", file=sys.stderr)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print_tables(sizes, rows, servers, sup, zero)
    if len(sizes) > 1 and len(servers) > 1:
        chart(args.chart, sizes, rows, servers, sup)
        print(f"\nchart: {args.chart.resolve()}")
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "operator")]
    raise SystemExit(main())
