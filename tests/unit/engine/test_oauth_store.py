"""OAuth credentials sealed in the state database (``state/oauth.py``, ``runtimes/oauth/storage.py``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import anyio
import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from clawplane.runtimes.oauth.storage import CredentialStorage
from clawplane.state import StateDB
from clawplane.state.oauth import KEY_NAME, CredentialStore, OAuthKeyError, load_key

CANARY_ACCESS = "canary-access-7f3a9c"
CANARY_REFRESH = "canary-refresh-1e8d2b"


def _everything_on_disk(state: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(state.rglob("*")) if p.is_file())


def test_tokens_are_sealed_and_round_trip(tmp_path: Path) -> None:
    """The stored row holds neither token in the clear; reading it back gives both."""
    state = tmp_path / "state"
    db = StateDB.open(state)
    storage = CredentialStorage(CredentialStore.open(db), "notes", "https://mcp.example/mcp")
    tokens = OAuthToken(access_token=CANARY_ACCESS, refresh_token=CANARY_REFRESH, expires_in=300)
    anyio.run(storage.set_tokens, tokens)
    anyio.run(storage.set_client_info, OAuthClientInformationFull(client_id="cid"))
    db.close()
    assert CANARY_ACCESS.encode() not in _everything_on_disk(state)
    assert CANARY_REFRESH.encode() not in _everything_on_disk(state)

    db = StateDB.open(state)
    again = CredentialStorage(CredentialStore.open(db), "notes", "https://mcp.example/mcp")
    got = anyio.run(again.get_tokens)
    assert got is not None and got.access_token == CANARY_ACCESS and got.refresh_token == CANARY_REFRESH
    assert again.expires_at is not None
    # The same row under another server name or URL does not open there.
    assert CredentialStorage(CredentialStore.open(db), "notes", "https://other.example/mcp").logged_in is False
    db.close()


def test_a_row_moved_to_another_server_does_not_open(tmp_path: Path) -> None:
    """The sealed document is bound to its server's name (associated data)."""
    db = StateDB.open(tmp_path)
    store = CredentialStore.open(db)
    store.put("a", "https://a.example/mcp", {"tokens": {"access_token": "x"}}, expires_at=None)
    with db.transaction() as conn:
        conn.execute("UPDATE oauth_credentials SET server = 'b'")
    with pytest.raises(OAuthKeyError, match='"b" does not open'):
        store.get("b")
    db.close()


def test_key_and_database_are_0600_whatever_the_umask(tmp_path: Path) -> None:
    """The key file is made private even under umask 000, and lives outside the database."""
    old = os.umask(0)
    try:
        db = StateDB.open(tmp_path / "state")
        CredentialStore.open(db).put("s", "https://s.example/mcp", {"tokens": {}}, expires_at=None)
        db.close()
    finally:
        os.umask(old)
    for path in (tmp_path / "state").rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    assert len((tmp_path / "state" / KEY_NAME).read_bytes()) == 32


def test_a_corrupt_key_is_a_clear_error(tmp_path: Path) -> None:
    """A key file of the wrong size is refused with what to do, never silently replaced."""
    db = StateDB.open(tmp_path)
    (tmp_path / KEY_NAME).write_bytes(b"not a key")
    with pytest.raises(OAuthKeyError, match=r"is not an OAuth key .*clawplane login"):
        CredentialStore.open(db)
    assert (tmp_path / KEY_NAME).read_bytes() == b"not a key"
    db.close()


def test_a_replaced_key_does_not_open_old_rows(tmp_path: Path) -> None:
    """Rows sealed with one key give a clear error under another."""
    db = StateDB.open(tmp_path)
    CredentialStore.open(db).put("s", "https://s.example/mcp", {"tokens": {}}, expires_at=None)
    (tmp_path / KEY_NAME).unlink()
    load_key(tmp_path)  # a new key
    with pytest.raises(OAuthKeyError, match="was the key replaced"):
        CredentialStore.open(db).get("s")
    db.close()


def test_a_missing_key_is_not_made_when_reading(tmp_path: Path) -> None:
    """``create=False`` (logout, status) never makes a key."""
    StateDB.open(tmp_path).close()
    with pytest.raises(OAuthKeyError, match="no OAuth key"):
        load_key(tmp_path, create=False)
    assert not (tmp_path / KEY_NAME).exists()


def test_a_preregistered_client_wins_over_another_stored_one(tmp_path: Path) -> None:
    """A configured client id replaces a registration stored under another id."""
    db = StateDB.open(tmp_path)
    pre = OAuthClientInformationFull(client_id="configured", client_secret="s3")
    storage = CredentialStorage(CredentialStore.open(db), "s", "https://s.example/mcp", preregistered=pre)
    anyio.run(storage.set_client_info, OAuthClientInformationFull(client_id="dynamic"))
    got = anyio.run(storage.get_client_info)
    assert got is not None and got.client_id == "configured"
    db.close()


def test_a_session_never_undoes_a_logout_or_a_newer_login(tmp_path: Path) -> None:
    """A long session writing refreshed tokens back skips a row deleted or replaced since it read it."""
    db = StateDB.open(tmp_path)
    store = CredentialStore.open(db)
    url = "https://s.example/mcp"
    login = CredentialStorage(store, "s", url)
    login.start_login("http://127.0.0.1:1/callback")
    anyio.run(login.set_tokens, OAuthToken(access_token="first", refresh_token="r1", expires_in=60))

    session = CredentialStorage(store, "s", url)  # the supervisor's, reading the login
    store.delete("s")  # clawplane logout
    anyio.run(session.set_tokens, OAuthToken(access_token="refreshed", refresh_token="r2", expires_in=60))
    assert session.superseded and store.get("s") is None

    again = CredentialStorage(store, "s", url)
    again.start_login("http://127.0.0.1:1/callback")
    anyio.run(again.set_tokens, OAuthToken(access_token="new-login", expires_in=60))
    older = CredentialStorage(store, "s", url)
    newest = CredentialStorage(store, "s", url)
    anyio.run(newest.set_tokens, OAuthToken(access_token="newest", expires_in=60))
    anyio.run(older.set_tokens, OAuthToken(access_token="stale", expires_in=60))
    found = store.get("s")
    assert found is not None and found.document["tokens"]["access_token"] == "newest"
    db.close()
