"""Kubeconfig loading: the fields an operator needs, and errors that say what to do."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from clawplane.k8s.kubeconfig import KubeConfigError, load_connection

KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {{server: "https://10.0.0.1:6443/", certificate-authority-data: "{ca}"}}
users:
- name: u
  user: {{token: abc}}
contexts:
- name: c
  context: {{cluster: k, user: u, namespace: team}}
"""


def test_token_server_ca_and_namespace(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text(KUBECONFIG.format(ca=base64.b64encode(b"PEM").decode()))
    conn = load_connection(str(path))
    assert conn.server == "https://10.0.0.1:6443"
    assert conn.headers() == {"Authorization": "Bearer abc"}
    assert conn.namespace == "team"
    assert conn.ca_file is not None and Path(conn.ca_file).read_bytes() == b"PEM"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: v1\nkind: Config\n", "no current-context"),
        ("current-context: nope\ncontexts: []\n", "context 'nope' is not defined"),
        (": : :\n", "cannot read kubeconfig"),
    ],
)
def test_broken_kubeconfigs_name_the_file_and_the_fix(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "kc"
    path.write_text(text)
    with pytest.raises(KubeConfigError, match=message) as info:
        load_connection(str(path))
    assert str(path) in str(info.value)


def test_operator_command_reports_a_missing_kubeconfig_without_a_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "clawplane",
            "k8s",
            "run",
            "--kubeconfig",
            str(tmp_path / "missing"),
            "--state-dir",
            str(tmp_path / "state"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "no kubeconfig at" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_token_files_are_reread_so_rotation_is_picked_up(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("first\n")
    path = tmp_path / "kc"
    path.write_text(KUBECONFIG.format(ca="").replace("{token: abc}", "{tokenFile: token}"))
    conn = load_connection(str(path))
    assert conn.headers() == {"Authorization": "Bearer first"}
    (tmp_path / "token").write_text("rotated\n")
    assert conn.headers() == {"Authorization": "Bearer rotated"}
