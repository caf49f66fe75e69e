"""The one-pass YAML reader against the three-pass loader it replaced (``yaml_reference``).

For every input both must agree exactly: the documents (values, first lines, positions of
every key and value, in order), or the problem (code, message, line, column, hint). The
inputs: every YAML file in the repository, the bad-input corpus, hand-written cases for
each rule of which problem wins, and generated text (YAML-ish characters, anchors and
aliases) run with the normal limits and with tiny ones, so that limits, aliases, syntax
errors and value problems meet in every order.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.unit.loading import yaml_reference

from clawplane.loading import yamlparse
from clawplane.loading.yamlparse import ParsedDocument, YamlProblem

ROOT = Path(__file__).resolve().parents[3]
GENERATED = ROOT / "tests" / "fixtures" / "bad-input" / "generated.py"

Outcome = tuple[Any, ...]


def outcome(parse: Callable[[str], list[ParsedDocument]], text: str) -> Outcome:
    try:
        docs = parse(text)
    except YamlProblem as p:
        return ("problem", p.code, p.message, p.line, p.column, p.hint)
    return (
        "documents",
        # repr tells 1, 1.0 and True apart, keeps key order, and makes NaN equal to itself.
        [
            (repr(d.data), d.line, d.index, list(d.positions.values.items()), list(d.positions.keys.items()))
            for d in docs
        ],
    )


def same(text: str) -> Outcome:
    new, old = outcome(yamlparse.parse_documents, text), outcome(yaml_reference.parse_documents, text)
    assert new == old, text
    return new


def repo_yaml() -> list[Path]:
    skip = {".venv", ".git", "node_modules", ".clawplane"}
    return sorted(
        p for p in ROOT.rglob("*") if p.suffix in (".yaml", ".yml") and not skip & set(p.relative_to(ROOT).parts)
    )


def test_every_yaml_file_of_the_repository() -> None:
    files = repo_yaml()
    assert len(files) > 40
    for path in files:
        same(path.read_text(encoding="utf-8", errors="replace"))


def test_the_generated_bad_input_corpus(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generated", GENERATED)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path in module.write_generated(tmp_path).values():
        raw = Path(path).read_bytes()
        if len(raw) <= 4 * 1024 * 1024:
            same(raw.decode("utf-8", errors="replace"))


def flow(depth: int) -> str:
    return "[" * depth + "]" * depth


CASES = [
    # values, tags, keys
    "", "# only a comment\n", "---\n", "--- a\n...\n--- b\n", "a: ! 12\n", "a: !!str\n", "! [1]\n",
    "a: !!null x\n", "a: !!bool yes\n", "a: !!float x\n", "a: !!int x\n", "a: 0o17\n", "a: 0x1F\n",
    "a: -0o7\n", "a: 1_000\n", "a: .inf\n", "a: -.inf\n", "a: .nan\n", "a: 1e3\n", "a: 1:20\n",
    "a: !!timestamp 2020-01-01\n", "a: !!binary aGk=\n", "a: !<tag:yaml.org,2002:str> 5\n",
    "%YAML 1.1\n---\na: yes\n", "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    "x: !custom {a: 1}\n", "x: !custom [1]\n", "x: !!set {a, b}\n", "!custom a: 1\n",
    "a:\n  <<: {b: 1}\n", "a:\n  '<<': {b: 1}\n", "!!merge [a]: 1\n", "? [a]\n: 1\n", "[a]: 1\n",
    "{a: 1}: 2\n", "a: 1\na: 2\n", "a: {b: 1, b: 2}\n", "[a, {b: 1, b: 2}]\n", "? a\n? a\n",
    # anchors and aliases
    "a: *x\n", "*x : 1\n", "a: &x 1\nb: &x 2\nc: *x\n", "&k a: 1\n*k : 2\n", "&k !custom a: 1\nb: *k\n",
    "a: &v {k: 1}\n*v : 2\n", "a: &x [*x]\n", "- &a [&b [*a]]\n", "a: &x\n  b: *x\n",
    "a: &a {b: [1, {c: d}]}\nx: *a\ny: [*a, *a]\n", "a: &s text\nb: *s\nc: [*s]\n",
    "a: &a [1, 2]\n---\nb: *a\n", "a: &a !custom x\nb: 1\n", "a: &a !custom [1]\nb: *a\n",
    "a: &a {x: 1, x: 2}\nb: *a\n", "&r [*r]\n", "a: &a 1\nb: &a 2\n", "a: &a [1]\nb: &b [*a, *a]\n",
    # which problem wins
    "a: 1\na: 2\n---\n" + flow(101) + "\n", flow(101) + "\n---\na: 1\na: 2\n",
    flow(101) + "\n---\nkey: [unclosed\n", "key: [unclosed\n---\n" + flow(101) + "\n",
    "a: 1\na: 2\nb: [unclosed\n", "a: *x\nb: [unclosed\n", "a: *x\nb: " + flow(101) + "\n",
    "a: 1\na: 2\nb: " + flow(101) + "\n", "a: !custom 1\nb: &x [*x]\n", "a: &x [*x]\nb: [unclosed\n",
    "a: *x\n---\n" + flow(101) + "\n", "a: 1\na: 2\n--- [unclosed\n", "a: 1\n b: 2\n",
    "a: &a " + flow(99) + "\nb: [*a]\n", "a: &a " + flow(98) + "\nb: [*a]\n", "a: &a " + flow(99) + "\nb: *a\n",
    "[a]: 1\nb: &x [*x]\n", "? &x [*x]\n: 1\n", "a: \x01\n", "a: 1\n\x01\n", "a: *x\n\x01\n",
    "a: 1\na: 2\n\x01\n", "- \"unterminated\n", "a: 'x\n", "\tb: 1\n", "a:\n\t- 1\n",
]  # fmt: skip


@pytest.mark.parametrize("text", CASES)
def test_hand_written_cases(text: str) -> None:
    same(text)


@pytest.mark.parametrize(
    ("nodes", "depth"), [(50, 100), (30, 4), (12, 3), (6, 2)]
)
def test_hand_written_cases_under_tight_limits(monkeypatch: pytest.MonkeyPatch, nodes: int, depth: int) -> None:
    monkeypatch.setattr(yamlparse, "MAX_NODES_PER_DOCUMENT", nodes)
    monkeypatch.setattr(yamlparse, "MAX_DEPTH", depth)
    bomb = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: &b [*a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n"
    for text in [*CASES, bomb, "a: &a [1, [2, [3]]]\nb: [[*a]]\n", "- " * 8 + "x\n", "x: [" + ",".join("1" * 60) + "]\n"]:
        same(text)


fuzz = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PIECES = [
    *"[]{}:-?,&*!|>'\"#%@ \n\t\\", "---\n", "...\n", "<<: ", "!!", "!!str ", "!x ", "&a ", "&b ", "*a",
    "*b", " *a ", "&a [", "[*a, *a]", "{k: *a}", "? ", ": ", "- ", "\n  ", "\n    - ", "a: ", "b: ", "a",
    "1", "0x1F", "yes", "~", "é", "\x01", "%YAML 1.1\n",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=60).map("".join)


@fuzz
@given(text=texts)
def test_generated_text(text: str) -> None:
    same(text)


@fuzz
@given(text=texts, nodes=st.integers(2, 20), depth=st.integers(1, 4))
def test_generated_text_under_tight_limits(text: str, nodes: int, depth: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlparse, "MAX_NODES_PER_DOCUMENT", nodes)
        patch.setattr(yamlparse, "MAX_DEPTH", depth)
        same(text)


names = st.sampled_from(["a", "b", "c"])
leaf = st.sampled_from(["1", "x", "'q'", "~", "!!str 2", "!t v", "<<", ".nan"])


@st.composite
def anchored(draw: st.DrawFn, depth: int = 0) -> str:
    """Block and flow YAML full of anchors and aliases (some undefined, some recursive)."""
    kind = draw(st.integers(0, 4 if depth < 3 else 1))
    anchor = f"&{draw(names)} " if draw(st.booleans()) else ""
    if kind == 0:
        return anchor + draw(leaf)
    if kind == 1:
        return f"*{draw(names)}"
    items = draw(st.lists(anchored(depth + 1), max_size=4))
    if kind == 2:
        return anchor + "[" + ", ".join(items) + "]"
    keys = draw(st.lists(st.sampled_from(["k", "j", "k", "*a", "[z]", "<<", "&c m"]), min_size=len(items), max_size=len(items)))
    return anchor + "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, items, strict=True)) + "}"


@fuzz
@given(docs=st.lists(anchored(), min_size=1, max_size=3), nodes=st.sampled_from([200_000, 40, 15]))
def test_generated_anchors_and_aliases(docs: list[str], nodes: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlparse, "MAX_NODES_PER_DOCUMENT", nodes)
        same("\n---\n".join(docs) + "\n")
