"""The operator's metrics listener: the token file, the generated token and the Host check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawplane.k8s.metricsauth import FileToken, MetricsAuthError, generated_token_file, metrics_guard


def scope(host: str) -> dict[str, object]:
    return {"headers": [(b"host", host.encode())]}


def test_the_token_file_is_re_read_when_the_secret_rotates(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("first-token-0123456789\n")
    auth = FileToken(path)
    assert auth.authenticate("first-token-0123456789") is not None
    assert auth.authenticate("first-token-012345678") is None
    # The kubelet swaps a Secret volume's file; a new file (new inode) holds the new token.
    fresh = tmp_path / "token.new"
    fresh.write_text("second-token-0123456789")
    fresh.replace(path)
    assert auth.authenticate("second-token-0123456789") is not None
    assert auth.authenticate("first-token-0123456789") is None
    # A half-written swap keeps the last good token instead of locking the scraper out or letting all in.
    path.write_text("")
    assert auth.authenticate("second-token-0123456789") is not None
    assert auth.authenticate("") is None


@pytest.mark.parametrize(
    ("content", "cause"), [("", "at least 16"), ("two tokens-0123456789", "no spaces"), ("x" * 5000, "4 KiB")]
)
def test_a_bad_token_file_fails_with_its_cause(tmp_path: Path, content: str, cause: str) -> None:
    path = tmp_path / "token"
    path.write_text(content)
    with pytest.raises(MetricsAuthError, match=cause):
        FileToken(path)
    with pytest.raises(MetricsAuthError, match="cannot read"):
        FileToken(tmp_path / "missing")


def test_the_generated_token_is_0600_whatever_the_umask_and_kept(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = generated_token_file(tmp_path)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o600
    token = path.read_text().strip()
    assert len(token) >= 32
    assert generated_token_file(tmp_path).read_text().strip() == token


def test_host_checks_on_loopback_and_on_every_address(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("a-token-0123456789")
    loopback = metrics_guard("127.0.0.1", path)
    assert loopback.host_ok(scope("127.0.0.1:9090")) and loopback.host_ok(scope("localhost:9090"))
    assert not loopback.host_ok(scope("evil.example:9090"))
    pod = metrics_guard("0.0.0.0", path, frozenset({"10.1.2.3", "localhost", "[fd00::7]"}))
    assert pod.host_ok(scope("10.1.2.3:9090")) and pod.host_ok(scope("[fd00::7]:9090"))
    assert not pod.host_ok(scope("evil.example")) and not pod.host_ok(scope("10.1.2.4:9090"))
    anywhere = metrics_guard("0.0.0.0", path)
    assert anywhere.host_ok(scope("clawplane-metrics.ops.svc:9090"))
    principal = pod.principal({"headers": [(b"authorization", b"Bearer a-token-0123456789")]})
    assert principal is not None and "read" in principal.scopes
    assert pod.principal({"headers": [(b"authorization", b"Bearer nope")]}) is None
