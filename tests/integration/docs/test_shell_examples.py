"""Every `clawplane …` command in the docs exists, and the cheap offline ones do what the docs say.

Commands are taken from the sh/bash/console blocks and the inline code spans of the README,
docs/, DEVELOPMENT.md and CONTRIBUTING.md (tests/support/docblocks.py). Each is parsed against
the CLI (the typer app, `k8s run` and `mcp serve` included): its command path
must exist and every option it names must be one of that command's. The docs' synopsis notation
is understood: `[--json]` is an optional option, `list|show` one of several commands, `--` ends
the options. Commands that only read (validate, plan, get, explain, skills, schema --check,
--help) are then run in a copy of examples/ and must exit as their comment says (a comment that starts `# exit 1`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.docblocks import Invocation, invocations

from clawplane.cli.reference import command_table

ROOT = Path(__file__).resolve().parents[3]
TABLE = command_table()
GROUPS = {path[:i] for path in TABLE for i in range(1, len(path))}
RUNNABLE = ("validate", "plan", "get", "explain", "skills", "schema")
PLACEHOLDER = re.compile(r"[A-Z]{2,}|[\[\]|<>$…]|\.\.\.")


def _problems(words: tuple[str, ...]) -> list[str]:
    """What is wrong with one command line: an unknown command or an option it does not have."""
    path: tuple[str, ...] = ()
    rest = list(words)
    while rest:
        word = rest[0]
        if (*path, word) in TABLE or (*path, word) in GROUPS:
            path = (*path, word)
            rest.pop(0)
        elif "|" in word and not word.startswith("-"):
            alternatives = word.split("|")
            if not all((*path, a) in TABLE for a in alternatives):
                return [f"not every one of {word!r} is a command of clawplane {' '.join(path)}"]
            return [p for a in alternatives for p in _problems((*path, a, *rest[1:]))]
        else:
            break
    if path in GROUPS and path not in TABLE:
        return [] if not rest or rest[0] in ("…", "...") else [f"clawplane {' '.join(path)} needs a command"]
    options = TABLE[path]
    problems = []
    if not path and rest and not rest[0].startswith("-"):
        problems.append(f"unknown command {rest[0]!r}")
    for word in rest:
        if word == "--":
            break
        option = word.strip("[]").split("=", 1)[0]
        if option.startswith("-") and len(option) > 1 and option not in options:
            problems.append(f"clawplane {' '.join(path)} has no option {option}")
    return problems


ALL = invocations()


def test_the_docs_document_commands() -> None:
    assert len(ALL) > 100
    assert any(i.words[:2] == ("k8s", "run") for i in ALL) and any(i.words[:2] == ("mcp", "serve") for i in ALL)


@pytest.mark.parametrize("invocation", ALL, ids=lambda i: f"{i.where}:{' '.join(i.words)[:60]}")
def test_the_command_exists_with_its_options(invocation: Invocation) -> None:
    assert _problems(invocation.words) == [], invocation.source


def test_the_parser_refuses_what_does_not_exist() -> None:
    assert _problems(("validate", "--no-such-option", "DIR"))
    assert _problems(("no-such-command",))
    assert _problems(("mcp", "list|frobnicate", "DIR"))
    assert _problems(("k8s", "run", "[--no-such-flag]"))
    assert _problems(("mcp", "serve", "--state-dir", "S", "--strict", "F"))
    assert not _problems(("approvals", "list|show", "DIR", "[--json]"))


def _runnable(invocation: Invocation) -> bool:
    if "(inline)" in invocation.where or not invocation.words:
        return False
    words = invocation.words
    if words[0] not in RUNNABLE and words not in (("--help",), ("--version",)):
        return False
    if words[0] == "schema" and "--check" not in words:
        return False
    return not any(PLACEHOLDER.search(w) for w in words[1:]) and "--openclaw-command" not in words


RUNS = [i for i in ALL if _runnable(i)]


def _expected_codes(invocation: Invocation) -> set[int]:
    stated = re.match(r"exit (\d)\b", invocation.comment)  # "# exit 1: …" states the code
    if stated:
        return {int(stated.group(1))}
    if "--detailed-exitcode" in invocation.words:
        return {0, 2}  # what the comment beside it lists: 0 no changes, 2 changes
    return {0}


def test_there_are_commands_to_run() -> None:
    commands = {i.words[0] for i in RUNS}
    assert {"validate", "plan", "get", "explain", "skills", "schema", "--help"} <= commands, commands


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/ (plan writes a state directory into the folder it plans)."""
    root = tmp_path_factory.mktemp("docs-commands")
    shutil.copytree(ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns(".clawplane"))
    return root


@pytest.mark.parametrize("invocation", RUNS, ids=lambda i: f"{i.where}:{' '.join(i.words)[:60]}")
def test_the_command_runs_as_documented(invocation: Invocation, examples: Path) -> None:
    # schema --check compares the checkout's generated files, so it runs where they are.
    cwd = ROOT if invocation.words[0] == "schema" else examples
    env = {"PATH": "/usr/bin:/bin", "HOME": str(examples), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "clawplane", *invocation.words],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode in _expected_codes(invocation), f"{invocation.source}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
