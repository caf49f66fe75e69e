"""Diff benchmark: ``clawplane diff`` between two revisions of a 1,000-resource repository.

Builds a git repository with 800 McpServers and 200 Agents in 50 files, commits it, changes
ten servers and deletes one agent in a second commit, then prints:
- the baseline: two bare ``git show REV:FILE`` reads of every resource file (one process per
  file, as a naive script would do) and two ``git cat-file --batch`` reads (one process per side),
- ``clawplane diff --from REV1 --to REV2 --format json`` through the CLI (a new process),
- the same diff in-process (materialize, validate, compile, prompt sizes, plan), without start-up,
and the ratios against the batch baseline.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVERS, AGENTS, FILES = 800, 200, 50
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=repo, input=data, check=True, capture_output=True,
    )  # fmt: skip
    return proc.stdout


def generate(repo: Path, *, changed: bool) -> None:
    docs: list[list[str]] = [[] for _ in range(FILES)]
    for i in range(SERVERS):
        port = 3000 + i + (10000 if changed and i % 80 == 0 else 0)
        docs[i % FILES].append(
            HEAD + f"kind: McpServer\nmetadata:\n  name: server-{i:04d}\nspec:\n  enabled: false\n"
            f"  command: node\n  args: [server-{i}.js, --port, '{port}']\n  env:\n    LOG_LEVEL: info\n"
        )
    for i in range(AGENTS):
        if changed and i == 7:
            continue
        docs[i % FILES].append(
            HEAD + f"kind: Agent\nmetadata:\n  name: agent-{i:03d}\nspec:\n  skills: [a, b]\n"
            f"  mcpServers: [server-{i:04d}, server-{(i + 1) % SERVERS:04d}]\n"
        )
    folder = repo / "cfg"
    folder.mkdir(exist_ok=True)
    for n, chunk in enumerate(docs):
        (folder / f"resources-{n:03d}.yaml").write_text("---\n".join(chunk))


def timed(fn: object, runs: int = 5) -> float:
    assert callable(fn)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    from clawplane.cli.diff import _compile, _prompts, _side
    from clawplane.planning.staticdiff import static_diff

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        generate(repo, changed=False)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "one")
        generate(repo, changed=True)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "two")
        revs = ["HEAD~1", "HEAD"]
        names = [p.relative_to(repo).as_posix() for p in sorted((repo / "cfg").glob("*.yaml"))]

        def git_show() -> None:
            for rev in revs:
                for name in names:
                    git(repo, "show", f"{rev}:{name}")

        def cat_file() -> None:
            for rev in revs:
                git(repo, "cat-file", "--batch", data="".join(f"{rev}:{n}\n" for n in names).encode())

        def cli() -> None:
            proc = subprocess.run(
                [sys.executable, "-m", "clawplane", "diff", "--from", revs[0], "--to", revs[1], "cfg",
                 "--format", "json", "--detailed-exitcode"],
                cwd=repo, capture_output=True,
            )  # fmt: skip
            assert proc.returncode == 2, proc.stderr

        def in_process() -> None:
            with tempfile.TemporaryDirectory() as work:
                cfg, root = repo / "cfg", Path(work)
                sides = [_side(rev, cfg, root, f"s{i}") for i, rev in enumerate(revs)]
                states = [_compile(side) for side in sides]
                prompts = (_prompts(sides[0], states[0], root), _prompts(sides[1], states[1], root))
                result = static_diff(states[0], states[1], created_at="bench", prompts=prompts)
                assert result.plan.summary().change == 10 and result.plan.summary().destroy == 1

        t_show, t_batch = timed(git_show), timed(cat_file)
        t_cli, t_proc = timed(cli), timed(in_process)
        print(f"resources: {SERVERS + AGENTS} in {FILES} files, two revisions")
        print(f"git show x{2 * len(names)} (one process per file): {t_show * 1000:8.1f} ms")
        print(f"git cat-file --batch x2:                  {t_batch * 1000:8.1f} ms")
        print(f"clawplane diff (CLI, new process):        {t_cli * 1000:8.1f} ms")
        print(f"clawplane diff (in-process):              {t_proc * 1000:8.1f} ms")
        print(f"CLI / git show: {t_cli / t_show:.1f}x; in-process / git show: {t_proc / t_show:.1f}x")


if __name__ == "__main__":
    main()
