"""Kubeconfig loading: the fields an operator needs, and errors that say what to do."""

from __future__ import annotations

import base64
import datetime
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clawplane.k8s.api.kubeconfig import KubeConfigError, load_connection

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
    assert conn.ca_file is None and conn.ca_data == "PEM"


def _pem_pair() -> tuple[str, str]:
    """A self-signed client certificate and its private key, as PEM text."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "clawplane-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem.decode()


def test_embedded_client_certificates_never_stay_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``*-data`` PEM stays in memory; ssl reads the client pair from files removed at once."""
    cert, key = _pem_pair()
    b64 = base64.b64encode
    text = KUBECONFIG.format(ca=b64(cert.encode()).decode()).replace(
        "user: {token: abc}",
        f"user: {{client-certificate-data: {b64(cert.encode()).decode()}, "
        f"client-key-data: {b64(key.encode()).decode()}}}",
    )
    (tmp_path / "kc").write_text(text)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    conn = load_connection(str(tmp_path / "kc"))
    assert (conn.cert_data, conn.key_data, conn.ca_data) == (cert, key, cert)
    context = conn.ssl_context()
    assert isinstance(context, ssl.SSLContext) and context.cert_store_stats()["x509"] == 1
    assert list(temp.iterdir()) == []  # the key was on disk only while ssl read it
    assert "PRIVATE KEY" not in repr(conn) and key not in repr(conn)


def test_a_certificate_that_is_not_one_is_a_clear_error_at_start(tmp_path: Path) -> None:
    """Valid base64 that is no PEM certificate: ``k8s run`` exits 2 naming the cause, no traceback."""
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(KUBECONFIG.format(ca=base64.b64encode(b"not a certificate").decode()))
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "k8s", "run", "--kubeconfig", str(kubeconfig),
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    both = proc.stdout + proc.stderr
    assert proc.returncode == 2, both
    assert "cannot use the kubeconfig's TLS certificates" in both and "Traceback" not in both


def test_undecodable_embedded_data_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "kc").write_text(KUBECONFIG.format(ca="not base64 at all!"))
    with pytest.raises(KubeConfigError, match="certificate-authority-data is not base64-encoded PEM"):
        load_connection(str(tmp_path / "kc"))


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
