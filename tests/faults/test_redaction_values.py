"""Issue 35, finding 7: a secret's value can break the control socket (redaction of structure).

``MY_KEY=final clawplane apply … --yes`` used to end in "lost the supervisor during apply": the
supervisor redacted every string of its replies, keys included, so the JSON key ``"final"``
became ``"<redacted>"`` and the client never saw the final answer (and a secret equal to a
bearer token's first characters cut tokens in two, leaving their rest in the clear).

Each secret below goes through a real ``clawplane apply`` of a real server that references it
(``MY_KEY`` from the environment) and writes it to its stderr in every encoding; apply must
succeed, ``status`` must work, and the value must not be in the supervisor's log, in any string
of ``loop.json``, of ``status --json`` or of ``state.db``, nor in any command's output where the
server's stderr is quoted. "In any encoding the project checks for" is ``secret_forms``: a value
shorter than ``MIN_SECRET_CHARS`` (``ok``, ``{``, ``"``, one character) occurs in any text by
accident and is never replaced, so for those what is shown is that nothing breaks.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.faults.conftest import World

from clawplane.secrets import TOKEN_PREFIX, secret_forms

COMMON_WORDS = ["final", "ok", "true", "null", "{", '"', "x", "Ready", "event"]
"""The issue's words, an enum word of ``status`` (a phase) and a key of the control protocol."""
VOCABULARY = {"Ready", "event"}
"""Words the documents use as structure: they stay there, so only their free-text places are checked."""


def _strings(value: Any) -> Iterator[str]:
    """Every string in a parsed JSON document, keys included (a leak in a key is a leak too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _values_in_state(db: Path) -> Iterator[tuple[str, str]]:
    """(where, text) of every text cell of the state database; JSON cells as their strings."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    if not isinstance(cell, str):
                        continue
                    try:
                        doc = json.loads(cell)
                    except ValueError:
                        yield table, cell
                        continue
                    for text in _strings(doc):
                        yield table, text
    finally:
        conn.close()


def _leaks(world: World, secret: str, outputs: list[str], *, vocabulary: bool = False) -> list[str]:
    forms = secret_forms(secret)
    hits: list[str] = []
    state = world.state
    if not vocabulary:
        log = (state / "supervisor.log").read_text(encoding="utf-8", errors="replace")
        hits += [f"supervisor.log: {f!r}" for f in forms if f in log]
        if (state / "loop.json").exists():  # written by a watching supervisor (`clawplane run`)
            loop = json.loads((state / "loop.json").read_text(encoding="utf-8"))
            hits += [f"loop.json: {f!r} in {s!r}" for s in _strings(loop) for f in forms if f in s]
        status = world.status()
        hits += [f"status --json: {f!r} in {s!r}" for s in _strings(status) for f in forms if f in s]
        hits += [f"state.db {t}: {f!r} in {s[:80]!r}" for t, s in _values_in_state(state / "state.db")
                 for f in forms if f in s]  # fmt: skip
    else:
        entry = world.resources()["McpServer/echo"]
        hits += [f"status stderr: {f!r} in {line!r}" for line in entry.get("stderr") or ()
                 for f in forms if f in line.split("bad token", 1)[-1]]  # fmt: skip
    # The server writes "error: bad token <value>" in five encodings: wherever a command quotes
    # that line, the value must be gone from it.
    for i, text in enumerate(outputs):
        for line in text.splitlines():
            if "bad token" in line:
                hits += [
                    f"output #{i}: {f!r} in {line!r}" for f in forms if f in line.split("bad token", 1)[1]
                ]
    return hits


def _apply_with(world: World, secret: str) -> list[str]:
    env = {"MY_KEY": secret}
    out = [world.apply(env=env)]
    world.wait_ready(["echo"])
    out.append(world.ok("status", str(world.folder)))
    out.append(world.ok("status", str(world.folder), "echo"))
    out.append(world.ok("plan", str(world.folder), env=env))
    return out


def _world(world: World) -> None:
    world.gateway()
    world.server("echo", env={"MY_KEY": {"valueFrom": {"env": "MY_KEY"}}}, leak="MY_KEY")  # type: ignore[arg-type]


@pytest.mark.parametrize("secret", COMMON_WORDS)
def test_finding7_a_secret_that_is_a_common_word_breaks_nothing_and_stays_out(
    world: World, secret: str
) -> None:
    _world(world)
    outputs = _apply_with(world, secret)
    assert "Apply complete" in outputs[0], outputs[0]
    assert "McpServer/echo: done" in outputs[0], outputs[0]  # progress events kept their fields
    echo = world.resources()["McpServer/echo"]
    assert echo["phase"] == "Ready", echo  # an enum word stays itself, even when it is a secret
    # Structure is no place for a value: a word that is also a protocol word is left there, so
    # the check is the value's places (free text, stderr, errors), not the vocabulary.
    leaks = _leaks(world, secret, outputs, vocabulary=secret in VOCABULARY)
    assert not leaks, "\n".join(leaks)
    # The supervisor still answers on its control socket after everything it said.
    assert world.status()["supervisor"]["answering"] is True
    world.finish(["echo"])


def test_finding7_a_secret_that_is_a_token_prefix_cuts_no_token(world: World) -> None:
    """A value equal to the first characters of a bearer token (the prefix every token shares, and
    more of a real one): a token a server writes to its stderr is still taken out whole, so no
    part of it is left in the clear after the secret's ``<redacted>``."""
    _world(world)
    _apply_with(world, "first-value-that-is-long")
    token = world.ok("token", "show", str(world.folder), "cli").strip()
    assert token.startswith(TOKEN_PREFIX), token
    # A literal under a name that does not look secret: only the token scrubber stands for it.
    world.server("peer", env={"PEER_VALUE": token}, leak="PEER_VALUE")  # type: ignore[arg-type]
    for secret in (TOKEN_PREFIX, token[: len(TOKEN_PREFIX) + 6]):
        outputs = _apply_with(world, secret)
        assert "Apply complete" in outputs[0], outputs[0]
        world.wait_ready(["echo", "peer"])
        outputs.append(world.ok("status", str(world.folder), "peer"))
        rest = token[len(secret) :]
        log = (world.state / "supervisor.log").read_text(encoding="utf-8", errors="replace")
        status = json.dumps(world.status())
        # Commands quote the server's stderr lines (the plan shows the literal as the folder has it).
        quoted = ["\n".join(line for line in text.splitlines() if "bad token" in line) for text in outputs]
        where = {"supervisor.log": log, "status --json": status,
                 **{f"output #{i}": text for i, text in enumerate(quoted)}}  # fmt: skip
        assert not [name for name, text in where.items() if rest in text], [
            name for name, text in where.items() if rest in text
        ]
        assert "bad token <redacted>" in outputs[-1], outputs[-1]
        assert world.ok("token", "show", str(world.folder), "cli").strip() == token
        assert world.status()["supervisor"]["answering"] is True
    world.finish(["echo", "peer"])
