"""The getting-started page's "Your first steps" (docs/getting-started.md) run as written, and every command in them succeeds.

A newcomer copies these blocks into a shell. On a fresh clone they once ended in
``Apply FAILED`` because the quickstart's model provider needed a key and a server the
section did not mention. The blocks run here in a copy of the files they name, in a network
namespace of their own (the quickstart's provider has the fixed port 4000, which another
test or a demo may hold). Only ``make setup`` is left out: the venv running this test is
what it builds, and it stands at ``.venv`` as the page expects.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from tests.support.patience import CONDITION_S

ROOT = Path(__file__).resolve().parents[3]
FAKE = Path("tests/fixtures/providers/fake_provider.py")


def first_steps() -> list[str]:
    """The shell blocks of the getting-started page's "Your first steps" that run against the quickstart."""
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    section = text.split("\n## Your first steps\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    return [b for b in blocks if "examples/quickstart" in b]


def test_the_readme_names_what_the_quickstart_needs() -> None:
    script = "\n".join(first_steps())
    for needed in ("make setup", ". .venv/bin/activate", "NOTES_API_TOKEN", "LOCAL_LLM_API_KEY", str(FAKE)):
        assert needed in script, needed


def test_first_steps_run_as_written_succeed(tmp_path: Path) -> None:
    # The one skip: a machine where this user may not make a network namespace (CI here can).
    try:
        probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True, check=False)
    except FileNotFoundError as exc:
        pytest.skip(f"needs unshare and ip for a private network namespace: {exc}")
    if probe.returncode != 0:
        pytest.skip(f"no network namespaces here: {probe.stderr.decode().strip()}")
    shutil.copytree(ROOT / "examples" / "quickstart", tmp_path / "examples" / "quickstart",
                    ignore=shutil.ignore_patterns(".clawplane"))  # fmt: skip
    (tmp_path / FAKE).parent.mkdir(parents=True)
    shutil.copy2(ROOT / FAKE, tmp_path / FAKE)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    lines = [line for block in first_steps() for line in block.splitlines() if not line.startswith("make setup")]
    (tmp_path / "steps.sh").write_text("set -eu\n" + "\n".join(lines) + "\n", encoding="utf-8")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(tmp_path), "NO_COLOR": "1"}
    try:
        proc = subprocess.run(
            ["unshare", "-n", "sh", "-c", "ip link set lo up && exec bash steps.sh"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CONDITION_S * 4, check=False,
        )  # fmt: skip
    finally:
        left = _started_in(tmp_path)
        for p in left:  # a step that failed leaves its supervisor and the fake provider behind
            p.kill()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Traceback" not in out, out
    assert re.search(r"Apply complete: \d+ succeeded, 0 failed", out), out
    assert re.search(r"ModelProvider\s+local\s+Ready", out), out
    assert re.search(r"McpServer/notes: Ready", out), out
    assert "supervisor stopped" in out, out
    assert not left, "the steps left processes running"


def _started_in(root: Path) -> list[psutil.Process]:
    """Live processes whose working directory is under ``root``.

    Not ``processes_under`` (command lines): the page starts the fake provider by a
    relative path, so only its working directory says it is this test's.
    """
    found = []
    for p in psutil.process_iter(["cwd", "status"]):
        cwd = p.info["cwd"]
        if cwd and p.info["status"] != psutil.STATUS_ZOMBIE and Path(cwd).is_relative_to(root):
            found.append(p)
    return found
