"""``IndentedJson`` writes exactly what ``json.dumps(indent=2, sort_keys=True)`` writes, and reuses it."""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest

from clawplane.reconcile.rendered import jsontext
from clawplane.reconcile.rendered.jsontext import IndentedJson


class Colour(enum.StrEnum):
    RED = "réd"


class Level(enum.IntEnum):
    HIGH = 3


LEAVES: list[Any] = [
    "", "plain", 'quote " and \\ back', "line\nbreak\ttab", "ünïcode", "🦞", "\u2028", "\x00",
    0, -7, 10**30, 1.5, -0.0, 1e300, float("nan"), float("inf"), float("-inf"),
    True, False, None, Colour.RED, Level.HIGH, (1, "t"),
]


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.4:
        return rng.choice(LEAVES)
    if roll < 0.7:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["a", "B", "é", "mcp", "z", "\x01", "servers"]
    return {rng.choice(keys): value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def reference(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)


def test_every_kind_of_value_is_written_as_the_standard_encoder_writes_it() -> None:
    rng = random.Random(20260906)
    for _ in range(3000):
        doc = value(rng)
        assert jsontext._indented(doc, 0) == reference(doc)


def test_fleet_members_are_reused_and_still_exact() -> None:
    rng = random.Random(7)
    writer = IndentedJson([("mcp", "servers"), ("agents", "entries")])
    servers = {f"s{i}": value(rng) for i in range(20)}
    for round_ in range(30):
        writer.begin_pass()
        servers[f"s{round_ % 20}"] = value(rng)  # one member changes each round
        doc = {"mcp": {"servers": servers, "ttl": round_}, "agents": {"entries": {"a": value(rng)}},
               "other": value(rng)}
        assert writer.dumps(doc) == reference(doc)


def test_an_unchanged_member_is_not_encoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    writer = IndentedJson([("mcp", "servers")])
    entries = {f"s{i}": {"command": "node", "args": [str(i)]} for i in range(10)}
    writer.begin_pass()
    first = writer.dumps({"mcp": {"servers": entries}})
    encoded: list[Any] = []
    real = jsontext._plain
    monkeypatch.setattr(jsontext, "_plain", lambda v: encoded.append(v) or real(v))
    writer.begin_pass()
    entries = {**entries, "s3": {"command": "deno"}}
    second = writer.dumps({"mcp": {"servers": entries}})
    assert encoded == [{"command": "deno"}]
    assert second == reference({"mcp": {"servers": entries}}) != first


def test_a_whole_document_fleet_and_nested_fleets_are_exact_and_reused() -> None:
    rng = random.Random(11)
    whole = IndentedJson([()])
    nested = IndentedJson([("a",), ("a", "b"), ()])
    rows = [{"name": f"t{i}", "schema": value(rng)} for i in range(5)]
    for round_ in range(20):
        whole.begin_pass()
        nested.begin_pass()
        if round_ % 3 == 0:
            rows = [*rows[1:], {"name": f"n{round_}", "schema": value(rng)}]
        doc: Any = rows if round_ % 2 else {"rows": rows, "n": round_}
        assert whole.dumps(doc) == reference(doc)
        tree = {"a": {"b": {"x": rows[0], "y": value(rng)}, "c": rows}, "d": value(rng), "": rows[1]}
        assert nested.dumps(tree) == reference(tree)
