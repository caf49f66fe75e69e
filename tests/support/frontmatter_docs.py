"""Seeded SKILL.md documents in the shapes the frontmatter fast path reads without YAML.

Shared by the in-process differential (fast path against the YAML path) and the
OpenClaw oracle test, so both see the same tricky values and indentation.
"""

from __future__ import annotations

import random

__all__ = ["nested_docs", "simple_docs"]

KEYS = ["name", "description", "metadata", "homepage", "user-invocable",
        "disable-model-invocation", "emoji", "x", "True", "on", "summary", "k-2"]
VALUES = ["plain text", "Use this, maybe (v2).", "1", "1.0", "-5", "+3", ".5", "1e3", "0x1F",
          "0o7", "0b1", "yes", "no", "True", "null", "~", ".nan", "-.inf", "a#b", "a: b",
          "a #b", "ends:", "http://x.y/z?a=1#f", "x]", "[x]", "{}", "[]", '{"a":1}',
          '{"a": 1, "b": [1, 2.50, "x"]}', "[1, 2, 3]", "[1E5, -0, true, null]", '["a,b"]',
          '{"openclaw":{"requires":{"bins":["a","b"]},"always":true}}', '{"a": 1, "a": 2}',
          '{"a": NaN}', "{'a': 1}", "{a: 1}", '"dq"', '"dq \\"esc\\" \\u00e9 \\/"',
          '"\\x41"', "'sq'", "'it''s'", "'bad'quote'", '"tail" x', "''", '""', "é ü 😀",
          "\u00a0nbsp", "a\u00a0b", "tab\tin", "ctl\x7fx", "nul\x00x", "esc\x1bx",
          "x  y  z", "trailing   ", "-dash", "?q", ":c", "%p", "@a", "`t", "!t", "&a", "*a"]
# Values that only make sense inside a manifest, and flow sequences of plain words.
NESTED_VALUES = [*VALUES, "[sh, env]", "[ git ,curl ]", "[]", "[ ]", "[no-such-tool, python3]",
                 "[~, .inf, -1, 0o7, +2, a/b, x.y]", "[a, b,]", "[a b]", "[-, x]", "[--x]",
                 "[a:b]", "[a, [b]]", '"🦞"', "brew", "true", "false", "TRUE", "Null"]
# What the fast path reads itself: most generated values come from here, so that it is exercised.
PLAIN_NESTED_VALUES = ["plain text", "1", "1.0", "+3", ".5", "1e3", "0x1F", "0o7", "yes", "True",
                       "null", "~", ".nan", "brew", "true", "FALSE", "a#b", '"dq"', '"🦞"', "'sq'",
                       "'it''s'", '""', "é ü 😀", "x  y  z", "[sh, env]", "[ git ,curl ]", "[]",
                       "[~, .inf, -1, 0o7, +2, a/b, x.y]", '{"a": 1, "b": [1, 2.50, "x"]}', "{}",
                       '["a,b"]', "[1, 2, 3]"]
NESTED_KEYS = ["openclaw", "clawdbot", "emoji", "requires", "bins", "anyBins", "env", "config",
               "install", "kind", "formula", "always", "os", "skillKey", "primaryEnv", "a1", "x-y"]


def simple_docs(seed: int, count: int) -> list[str]:
    """Documents of one ``key: value`` per line."""
    rng = random.Random(seed)
    docs = []
    for _ in range(count):
        lines = [f"{rng.choice(KEYS)}:{rng.choice([' ', ' ', '  '])}{rng.choice(VALUES)}"
                 for _ in range(rng.randint(1, 5))]
        docs.append("---\n" + "\n".join(lines) + "\n---\nbody")
    return docs


def _keys(rng: random.Random, choices: list[str], count: int) -> list[str]:
    """Mostly distinct keys; now and then a duplicate or a key YAML reads as a keyword."""
    keys = rng.sample(choices, count)
    if rng.random() < 0.04:
        keys.append(rng.choice(keys))
    if rng.random() < 0.03:
        keys.append(rng.choice(["null", "true", "True", "NULL"]))
    return keys


def _nested_lines(rng: random.Random, depth: int, indent: int, step: int) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for key in _keys(rng, NESTED_KEYS, rng.randint(1, 3)):
        if depth < 2 and rng.random() < 0.35:
            lines.append(f"{pad}{key}:{rng.choice(['', '', ' ', '  '])}")
            child_step = rng.choice([step, step, step, 1, 4])
            if rng.random() > 0.05:  # else a key with nothing under it: null
                lines += _nested_lines(rng, depth + 1, indent + child_step, child_step)
        else:
            values = NESTED_VALUES if rng.random() < 0.1 else PLAIN_NESTED_VALUES
            lines.append(f"{pad}{key}:{rng.choice([' ', ' ', '  '])}{rng.choice(values)}")
        roll = rng.random()
        if roll < 0.01:
            lines.append("")  # blank line inside a block
        elif roll < 0.02:
            lines.append(f"{pad}# comment")
        elif roll < 0.03:
            lines.append(" " * max(indent - 1, 0) + "odd: indent")
        elif roll < 0.04:
            lines.append(" " * (indent + 2) + "continued text")
        elif roll < 0.05:
            lines.append(f"{pad}- item")
    return lines


def nested_docs(seed: int, count: int) -> list[str]:
    """Documents with block-mapping values (a YAML ``metadata`` manifest, mostly)."""
    rng = random.Random(seed)
    docs = []
    top = [key for key in KEYS if key not in ("True", "on")]
    for _ in range(count):
        lines = []
        for key in _keys(rng, top, rng.randint(1, 3)):
            if rng.random() < 0.5 or key == "metadata":
                lines.append(f"{key}:{rng.choice(['', '', ' '])}")
                step = rng.choice([2, 2, 4, 1, 3])
                lines += _nested_lines(rng, 0, step, step)
            else:
                values = VALUES if rng.random() < 0.2 else PLAIN_NESTED_VALUES
                lines.append(f"{key}: {rng.choice(values)}")
        docs.append("---\n" + "\n".join(lines) + "\n---\nbody")
    return docs
