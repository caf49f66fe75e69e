"""Bearer tokens of the hosted endpoint: one per consumer, kept in the state database.

A *consumer* is whoever gets a rendered config that reaches hosted servers: the OpenClaw
gateway (``openclaw``), each Codex projection (``codex:<agent>``), each client projection
(``client:<client>:<agent>``), each agent's aggregated endpoint (``agent:<agent>``, which
reaches only ``/mcp/agents/<agent>``: ``agents/<agent>`` in its ``servers``), and the local
operator: ``cli`` (``/metrics``, and the control plane at ``/mcp/_clawplane`` with the
``read`` and ``approve`` scopes) and ``reader`` (the control plane, ``read`` only). Each
token reaches exactly the hosted servers rendered into its consumer's config (``servers``,
recorded when the outputs are written). The database is 0600; tokens are never printed
except by ``clawplane token show``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from clawplane.secrets import TOKEN_PREFIX, scrub_tokens
from clawplane.state.db import StateDB, utcnow

__all__ = [
    "CLI",
    "OPENCLAW",
    "READER",
    "TOKEN_PREFIX",
    "TokenRecord",
    "agent_access",
    "agent_consumer",
    "client_consumer",
    "codex_consumer",
    "ensure_tokens",
    "load_tokens",
    "new_token",
    "rotate_tokens",
    "set_access",
]

OPENCLAW = "openclaw"
CLI = "cli"
READER = "reader"
"""Reads the control plane (``/mcp/_clawplane``) and answers no approval."""


def codex_consumer(agent: str) -> str:
    """The consumer id of ``agent``'s Codex projection."""
    return f"codex:{agent.lower()}"


def agent_consumer(agent: str) -> str:
    """The consumer id of ``agent``'s aggregated endpoint (``/mcp/agents/<agent>``)."""
    return f"agent:{agent.lower()}"


def agent_access(agent: str) -> str:
    """``agents/<agent>``: what a token reaching ``agent``'s aggregated endpoint has in its ``servers``."""
    return f"agents/{agent.lower()}"


def client_consumer(client: str, agent: str) -> str:
    """The consumer id of ``agent``'s projection for MCP client ``client``."""
    return f"client:{client}:{agent.lower()}"


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """One consumer's token and what it reaches."""

    consumer: str
    token: str
    servers: frozenset[str]
    created_at: str
    rotated_at: str | None = None


def new_token() -> str:
    """A fresh random token (256 bits), always of the shape ``scrub_tokens`` recognises."""
    while True:
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        if scrub_tokens(token) != token:  # all but ~1e-10 of draws; redraw the rest
            return token


def load_tokens(db: StateDB) -> dict[str, TokenRecord]:
    """Every consumer's token, by consumer id."""
    out: dict[str, TokenRecord] = {}
    for row in db.query("SELECT * FROM tokens ORDER BY consumer"):
        servers = frozenset(json.loads(row["servers_json"])) if row["servers_json"] else frozenset()
        out[row["consumer"]] = TokenRecord(
            row["consumer"], row["token"], servers, row["created_at"], row["rotated_at"]
        )
    return out


def ensure_tokens(db: StateDB, consumers: Iterable[str]) -> list[str]:
    """Issue a token for every consumer that has none; returns the consumers that got one."""
    wanted = sorted(set(consumers))
    issued: list[str] = []
    with db.transaction() as conn:
        have = {r[0] for r in conn.execute("SELECT consumer FROM tokens").fetchall()}
        for consumer in wanted:
            if consumer not in have:
                conn.execute(
                    "INSERT INTO tokens(consumer, token, servers_json, created_at) VALUES (?, ?, '[]', ?)",
                    (consumer, new_token(), utcnow()),
                )
                issued.append(consumer)
    return issued


def rotate_tokens(db: StateDB, consumers: Iterable[str] | None = None) -> list[str]:
    """Replace the tokens of ``consumers`` (all when None); returns those rotated."""
    with db.transaction() as conn:
        have = [r[0] for r in conn.execute("SELECT consumer FROM tokens ORDER BY consumer").fetchall()]
        chosen = have if consumers is None else [c for c in have if c in set(consumers)]
        now = utcnow()
        for consumer in chosen:
            conn.execute(
                "UPDATE tokens SET token = ?, rotated_at = ? WHERE consumer = ?", (new_token(), now, consumer)
            )
    return chosen


def set_access(db: StateDB, access: Mapping[str, Iterable[str]]) -> None:
    """Record which hosted servers each consumer's rendered config reaches (others: none)."""
    with db.transaction() as conn:
        conn.execute("UPDATE tokens SET servers_json = '[]'")
        for consumer, servers in access.items():
            conn.execute(
                "UPDATE tokens SET servers_json = ? WHERE consumer = ?",
                (json.dumps(sorted(set(servers))), consumer),
            )
