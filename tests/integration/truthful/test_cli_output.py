"""No crash and no raw output where a user can cause them: each error names its cause and a fix."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import ROOT
from tests.integration.truthful.conftest import Folder
from tests.support.quickstart import copy_quickstart

INVALID = ROOT / "examples" / "invalid"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_mcp_edits_work_while_a_supervisor_runs(tmp_path: Path) -> None:
    # A short path, so the control socket lives in the folder's .clawplane/ as it does for users.
    short = Path(tempfile.mkdtemp(prefix="cp-", dir="/tmp"))
    folder = Folder(short / "q")
    copy_quickstart(folder.path)
    os.mkfifo(folder.path / "notes.fifo")  # another kind of file a copy must not open
    with fake_quickstart_provider(folder.path) as fake:
        folder.cli.env[KEY_ENV] = fake.key or ""
        try:
            assert folder.cli("apply", str(folder.path), "--yes").returncode == 0
            assert (folder.state / "control.sock").is_socket()
            path = str(folder.path)
            for args in (
                ("mcp", "set", path, "extra", '{"command": "node", "args": ["x.js"]}'),
                ("mcp", "tools", path, "notes", "--include", "read_*"),
                ("mcp", "unset", path, "extra"),
            ):
                proc = folder.cli(*args)
                assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
            assert "read_*" in (folder.path / "mcp-servers.yaml").read_text()
        finally:
            folder.cli("down", str(folder.path))
            shutil.rmtree(short)


def _on_a_terminal(*args: str) -> str:
    """Run the CLI with stdout on a pseudo-terminal (colour on) and return what it showed."""
    leader, follower = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawplane", *args], stdout=follower, stderr=follower, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(leader, 65536)
        except OSError:  # the other side closed: everything was read
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_validate_on_a_terminal_keeps_the_bracketed_codes() -> None:
    shown = _on_a_terminal("validate", str(INVALID))
    assert "\x1b[" in shown  # really coloured
    plain = ANSI.sub("", shown)
    assert "error[schema.unknown-field]: unknown field 'comand'" in plain
    assert "error[yaml.duplicate-key]" in plain


def test_doctor_reports_yaml_problems_as_validate_does_not_as_ruamel_text(folder: Folder) -> None:
    proc = folder.cli("doctor", str(INVALID))
    assert proc.returncode == 1
    assert "yaml.dev" not in proc.stdout and "To suppress this check" not in proc.stdout
    assert "duplicate-keys.yaml:7:3: error[yaml.duplicate-key]: duplicate key 'workspace'" in proc.stdout
    assert "tabs.yaml:4:1: error[yaml.syntax]" in proc.stdout
    assert "hint: YAML indentation must use spaces, not tabs" in proc.stdout


def test_doctor_reports_what_openclaws_schema_refuses(folder: Folder) -> None:
    # A typo and a reference where raw OpenClaw config has no use for one passed doctor before.
    gateway = folder.path / "gateway.yaml"
    gateway.parent.mkdir(parents=True, exist_ok=True)
    gateway.write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: Gateway\nmetadata: {name: default}\nspec:\n"
        "  config:\n    gatwya: {port: 1}\n    gateway: {auth: {token: {valueFrom: {env: GATEWAY_TOKEN}}}}\n",
        encoding="utf-8",
    )
    proc = folder.cli("doctor", str(folder.path))
    assert proc.returncode == 1, proc.stdout
    assert "gateway.yaml:6:5: error[openclaw.unknown-key]: unknown key 'gatwya'" in proc.stdout
    assert "hint: did you mean 'gateway'?" in proc.stdout
    assert "error[openclaw.type]" in proc.stdout and "valueFrom means nothing" in proc.stdout


def test_diff_with_a_missing_revision_names_it_and_says_what_to_do(folder: Folder) -> None:
    proc = folder.cli("diff", "--from", "no-such-branch", "--to", "HEAD", str(ROOT / "examples" / "quickstart"))
    shown = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "'no-such-branch' is neither a folder nor a commit in the git repository" in shown
    assert "git fetch" in shown and "git rev-parse failed" not in shown
    outside = folder.cli("diff", "--from", "HEAD~1", "--to", "HEAD", str(folder.path))
    assert outside.returncode == 1 and "is not inside a git repository" in outside.stdout + outside.stderr


def test_log_format_json_prints_only_json_lines(folder: Folder) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawplane", "run", str(folder.path), "--no-watch", "--log-format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=folder.cli.env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[bytes] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(b"watching" in ln or b"apply changes" in ln for ln in lines):
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, rest = proc.communicate(timeout=60)
    lines += rest.splitlines()
    assert out == b"", out
    docs = [json.loads(line) for line in lines if line.strip()]
    assert any(d["msg"].startswith("supervisor ready (pid ") for d in docs), docs
    assert all({"ts", "level", "logger", "msg"} <= d.keys() for d in docs)


def test_schema_outside_a_checkout_says_where_the_generated_files_live(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "schema", "--check"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is not a clawplane checkout" in proc.stderr and "schemas/, manifests/crds/" in proc.stderr
    assert "stale" not in proc.stdout + proc.stderr
