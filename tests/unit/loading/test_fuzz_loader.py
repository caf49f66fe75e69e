"""Fuzzing the loader and validation: no input makes them raise, every problem is a diagnostic.

Four sources of input, each written to a file and run through ``validate_paths`` (the
whole pipeline the CLI uses): arbitrary text, arbitrary bytes, YAML-shaped documents
rendered from random nested values with random envelope fields, and random edits of
real resource files. Bounded to a few seconds in total.
"""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawplane.diagnostics import Severity
from clawplane.loading.yamlparse import YamlProblem, parse_documents
from clawplane.models import KINDS
from clawplane.validation import ValidationResult, validate_paths

ROOT = Path(__file__).resolve().parents[3]
CODE_RE = re.compile(r"^[a-z]+(\.[a-z][a-z0-9-]*)+$")
fuzz = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def case_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "case.yaml"


def run(path: Path, raw: bytes) -> ValidationResult:
    path.write_bytes(raw)
    result = validate_paths([path])  # must not raise, whatever the bytes
    assert result.files == [str(path)]
    for d in result.diagnostics:
        assert isinstance(d.severity, Severity)
        assert CODE_RE.match(d.code), d
        assert isinstance(d.message, str) and d.message.strip(), d
        assert d.location is not None and d.location.file == str(path), d
        assert d.location.line >= 0 and d.location.column >= 0, d
        if d.location.line:
            assert d.location.column >= 1, d
    assert result.ok == (not result.diagnostics.errors)
    return result


# --- arbitrary text and bytes ----------------------------------------------------------------

YAML_CHARS = [*"[]{}:-?,&*!|>'\"#%@`~ \n\t\r\\", "---\n", "...\n", "<<: ", "!!", "\ufeff", "é", "\x00"]
yamlish_text = st.lists(st.sampled_from(YAML_CHARS) | st.text(max_size=4), max_size=80).map("".join)


@fuzz
@given(text=st.text(max_size=400) | yamlish_text)
def test_any_text(case_file: Path, text: str) -> None:
    run(case_file, text.encode("utf-8", errors="surrogatepass"))


@fuzz
@given(raw=st.binary(max_size=600))
def test_any_bytes(case_file: Path, raw: bytes) -> None:
    run(case_file, raw)


# --- YAML-shaped documents -------------------------------------------------------------------

FIELDS = [
    "apiVersion", "kind", "metadata", "name", "namespace", "labels", "spec", "status", "items",
    "command", "args", "env", "headers", "url", "transport", "type", "cwd", "toolFilter", "include",
    "exclude", "codex", "agents", "valueFrom", "secretKeyRef", "file", "key", "enabled", "disabled",
    "mcpServers", "skills", "model", "primary", "fallbacks", "tools", "profile", "dmPolicy",
    "allowFrom", "groups", "credentials", "description", "body", "requestTimeoutMs", "timeout",
    "connect_timeout", "<<", "",
]  # fmt: skip
TRICKY = [
    "yes", "no", "on", "off", "~", "null", "Null", "0o17", "0x1F", "017", "1_000", "1e3", ".inf",
    "-.inf", ".nan", "2026-01-01", "12:30:00", "<<", "*x", "&a", "!tag", "'", '"', "#", ": ", "- ",
    "\t", "é", "😀", "", " ", "stdio", "http", "streamable-http", "NODE_OPTIONS", "__proto__",
    "clawplane.dev/v1alpha1", "a" * 300,
]  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.sampled_from(TRICKY)
    | st.text(max_size=12)
)
keys = st.sampled_from(FIELDS) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)
MISSING = object()


@st.composite
def envelopes(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    fields: dict[str, Any] = {
        # mostly plausible values, sometimes anything at all (a list for a kind, say)
        "apiVersion": draw(
            st.sampled_from(["clawplane.dev/v1alpha1"] * 4 + ["clawplane.dev/v1", "v1"]) | values
        ),
        "kind": draw(st.sampled_from([*KINDS, *KINDS, "List", "Agnet", ""]) | values),
        "metadata": draw(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["a", "my-server", "x.y", "Bad Name", ""]) | values}
            )
            | values
        ),
        "spec": draw(values),
    }
    for key, value in fields.items():
        if draw(st.integers(0, 9)) > 0:  # each field is missing one time in ten
            doc[key] = value
    if doc.get("kind") == "List" and depth == 0:
        doc["items"] = draw(st.lists(envelopes(depth=1) | values, max_size=4))
    return doc


def scalar_text(value: Any, rnd: random.Random) -> str:
    if value is None:
        return rnd.choice(["null", "~", ""])
    if isinstance(value, bool):
        return rnd.choice([str(value).lower(), str(value)])
    if isinstance(value, int):
        return rnd.choice([str(value), hex(value)])
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    style = rnd.random()
    tag = rnd.choice(["", "", "", "", "!!str ", "!custom ", "!!binary "])
    if style < 0.4:
        return tag + text  # plain: may change type, or break the YAML; both are fine
    if style < 0.7:
        return tag + "'" + text.replace("'", "''") + "'"
    return tag + json.dumps(text, ensure_ascii=rnd.random() < 0.5)


def inline(value: Any, rnd: random.Random) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar_text(k, rnd)}: {inline(v, rnd)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(inline(v, rnd) for v in value) + "]"
    return scalar_text(value, rnd)


def block(value: Any, indent: int, rnd: random.Random) -> list[str]:
    pad = " " * indent
    nested = rnd.choice([2, 2, 4, 1])
    if isinstance(value, dict) and value and rnd.random() < 0.8:
        lines = []
        for k, v in value.items():
            key = scalar_text(k, rnd)
            if isinstance(v, dict | list) and v and rnd.random() < 0.7:
                lines.append(f"{pad}{key}:")
                lines += block(v, indent + (0 if isinstance(v, list) and rnd.random() < 0.3 else nested), rnd)
            else:
                lines.append(f"{pad}{key}: {inline(v, rnd)}")
        return lines
    if isinstance(value, list) and value and rnd.random() < 0.8:
        lines = []
        for v in value:
            if isinstance(v, dict | list) and v and rnd.random() < 0.7:
                lines.append(f"{pad}-")
                lines += block(v, indent + nested, rnd)
            else:
                lines.append(f"{pad}- {inline(v, rnd)}")
        return lines
    return [pad + inline(value, rnd)]


@fuzz
@given(docs=st.lists(envelopes() | values, min_size=1, max_size=3), rnd=st.randoms(use_true_random=False))
def test_yaml_shaped_documents(case_file: Path, docs: list[Any], rnd: random.Random) -> None:
    text = "\n---\n".join("\n".join(block(doc, 0, rnd)) for doc in docs) + "\n"
    if rnd.random() < 0.2:
        text = text.replace("\n", "\r\n")
    run(case_file, text.encode("utf-8", errors="surrogatepass"))
    try:
        parsed = parse_documents(text)
    except YamlProblem as problem:
        assert problem.code.startswith("yaml.") and problem.message
        return
    for doc in parsed:  # List items get exactly the positions rebasing one by one would give
        items = doc.data.get("items") if isinstance(doc.data, dict) else None
        if isinstance(items, list):
            parts = doc.positions.split_items(("items",))
            for i in range(len(items)):
                assert parts[i] == doc.positions.rebased(("items", i))


# --- random edits of real files --------------------------------------------------------------

SEEDS = [
    p.read_text(encoding="utf-8")
    for folder in ("examples/quickstart", "examples/invalid", "tests/fixtures/bad-input")
    for p in sorted((ROOT / folder).glob("*.yaml"))
]
EDIT_CHARS = [*YAML_CHARS, *string.ascii_letters[:6], "  ", "    "]


@fuzz
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_edited_real_files(case_file: Path, seed: str, data: st.DataObject) -> None:
    text = seed
    for _ in range(data.draw(st.integers(1, 6), label="edits")):
        at = data.draw(st.integers(0, len(text)), label="at")
        op = data.draw(st.sampled_from(["insert", "delete", "dup-line", "tab", "cut"]), label="op")
        if op == "insert":
            text = text[:at] + data.draw(st.sampled_from(EDIT_CHARS)) + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + data.draw(st.integers(1, 8)) :]
        elif op == "dup-line":
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end + 1
            text = text[:end] + text[start:end] + text[end:]
        elif op == "tab":
            text = text.replace("  ", "\t", data.draw(st.integers(1, 3)))
        else:
            text = text[:at]
    run(case_file, text.encode("utf-8"))
