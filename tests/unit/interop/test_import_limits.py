"""Issue 35, finding 10: robustness of ``clawplane import``.

A 4 MiB JSON string took 44 s to import: ``json5`` parses one character at a time in Python
(measured here: ~6.5 µs a character, linear but slow). A document nested 200,000 levels deep
ended in "internal error: RecursionError", exit 3. Now every file is checked against a size
and a depth limit first (exit 1, the cause and the fix), and JSON and JSON5 are read by the
standard library's C parser (JSON5 rewritten to JSON in one pass; what the rewrite is not sure
of still goes to ``json5``, which is the reference the differential test below holds it to).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import json5
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawplane.interop import load_openclaw_text
from clawplane.interop.jsonload import MAX_DEPTH, MAX_IMPORT_BYTES, load_json5

DEEP = 200_000


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "import", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "NO_COLOR": "1",
            "HOME": str(cwd / "home"),
            "OPENCLAW_BUNDLED_SKILLS_DIR": str(cwd / "b"),
        },
        cwd=cwd,
    )
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both and "internal error" not in both, both
    return proc


DEEP_FILES = {
    "openclaw.json": '{"agents": ' + "[" * DEEP + "]" * DEEP + "}",
    ".mcp.json": '{"mcpServers": {"a": {"command": "x", "args": ' + "[" * DEEP + "]" * DEEP + "}}}",
    "server.json": '{"name": "io.example/a", "packages": ' + "[" * DEEP + "]" * DEEP + "}",
    "config.toml": "[mcp_servers.a]\ncommand = 'x'\nargs = " + "[" * DEEP + "]" * DEEP + "\n",
}


@pytest.mark.parametrize("name", sorted(DEEP_FILES))
def test_finding10_a_document_nested_200000_levels_deep_is_refused_with_its_cause(
    tmp_path: Path, name: str
) -> None:
    source = tmp_path / name
    source.write_text(DEEP_FILES[name], encoding="utf-8")
    proc = _cli(str(source), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"nest more than {MAX_DEPTH} levels deep" in proc.stderr and "flatten the nesting" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_finding10_a_file_over_the_size_limit_is_refused_with_its_cause(tmp_path: Path) -> None:
    source = tmp_path / "openclaw.json"
    source.write_text(json.dumps({"agents": {"list": [{"id": "a", "name": "x" * (MAX_IMPORT_BYTES + 1)}]}}))
    proc = _cli(str(source), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "is 4.0 MiB; clawplane imports files of up to 4 MiB" in proc.stderr, proc.stderr
    assert "check that this is the config you meant" in proc.stderr


def test_finding10_a_4_mib_string_is_read_without_the_per_character_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``json5.loads`` is replaced by a spy that fails: not a stand-in for a component, the proof
    that neither JSON nor ordinary JSON5 goes through the per-character parser any more."""
    big = "x" * (MAX_IMPORT_BYTES - 1024)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("json5.loads was called")

    monkeypatch.setattr(json5, "loads", refuse)
    plain = json.dumps({"agents": {"list": [{"id": "a", "name": big}]}})
    data, positions = load_openclaw_text(plain, "openclaw.json")
    assert data["agents"]["list"][0]["name"] == big and positions[("agents", "list", 0, "name")] == (1, 34)
    five = "// OpenClaw's own comment\n{agents: {list: [{id: 'a', name: '" + big + "',},],},}"
    data, positions = load_openclaw_text(five, "openclaw.json")
    assert data["agents"]["list"][0]["name"] == big and positions[("agents", "list", 0, "name")] == (2, 28)


def test_finding10_a_4_mib_string_imports_through_the_cli(tmp_path: Path) -> None:
    source = tmp_path / "openclaw.json"
    text = "x" * (MAX_IMPORT_BYTES - 4096)
    source.write_text(json.dumps({"agents": {"list": [{"id": "a", "name": text}]}}))
    proc = _cli(str(source), "--out", str(tmp_path / "out"), "--quiet", cwd=tmp_path)
    # Read and imported; the resource file it makes is as large as the string, which `validate`
    # refuses past its own 4 MiB (exit 1 and that cause, printed with the rest).
    assert "imported 1 resource from openclaw" in proc.stdout, proc.stdout + proc.stderr
    assert text in (tmp_path / "out" / "gateway.yaml").read_text(encoding="utf-8")


# -- the rewrite reads what json5 reads ------------------------------------------------------
_KEYS = st.text(st.sampled_from("ab_$Z9 '\"\\\n\t\u00e9\u2028x"), max_size=6)
_LEAVES = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
)  # fmt: skip
_VALUES = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
                       max_leaves=20)  # fmt: skip


def _json5_text(value: Any, style: st.DataObject) -> str:
    """``value`` written the many ways JSON5 allows (quotes, bare keys, comments, commas, numbers)."""
    space = style.draw(st.sampled_from(["", " ", "\n", " // note\n", "/* c */", "\t", "\u00a0"]))
    if isinstance(value, dict):
        items = [f"{_key(k, style)}{space}:{_json5_text(v, style)}" for k, v in value.items()]
        trailing = "," if items and style.draw(st.booleans()) else ""
        return "{" + space + ",".join(items) + trailing + space + "}"
    if isinstance(value, list):
        items = [_json5_text(v, style) for v in value]
        trailing = "," if items and style.draw(st.booleans()) else ""
        return "[" + ",".join(items) + trailing + space + "]"
    if isinstance(value, str):
        return _string(value, style)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if value >= 0 and style.draw(st.booleans()):
            return style.draw(st.sampled_from(["+", ""])) + hex(value)
        return json.dumps(value)
    if math.isnan(value) or math.isinf(value):
        return {"nan": "NaN", "inf": "+Infinity", "-inf": "-Infinity"}[str(value)]
    text = repr(value)
    if text.startswith("0.") and style.draw(st.booleans()):
        text = text[1:]  # .5
    return text


def _key(key: str, style: st.DataObject) -> str:
    if key.isidentifier() and key.isascii() and style.draw(st.booleans()):
        return key
    return _string(key, style)


def _string(text: str, style: st.DataObject) -> str:
    if style.draw(st.booleans()):
        return json.dumps(text, ensure_ascii=style.draw(st.booleans()))
    body = text.replace("\\", "\\\\").replace("'", "\\'").replace("\r", "\\r")
    newline = "\\n\\\n" if style.draw(st.booleans()) else "\\n"  # with a line continuation, or not
    return "'" + body.replace("\n", newline) + "'"


def _joined(text: str) -> str:
    """Surrogate pairs as one character: ``load_openclaw_text`` joins json5's halves the same way."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return _joined(a) == _joined(b)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return [_joined(k) for k in a] == [_joined(k) for k in b] and all(
            _same(x, y) for x, y in zip(a.values(), b.values(), strict=True)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.data())
def test_finding10_the_fast_reading_gives_what_json5_gives(value: Any, style: st.DataObject) -> None:
    text = _json5_text(value, style)
    assert _same(load_json5(text, "x.json5"), json5.loads(text)), text


@pytest.mark.parametrize(
    "text",
    ["[,]", "{,}", "[1,,]", "{a:1 b:2}", "01", '["\\01"]', "{1: 2}", "'\\x4'", "'\\u12'", "", "{a: 'x\n'}",
     "{/* open", "{a: undefined}", "[1] [2]", "{'a' 1}"],
)  # fmt: skip
def test_finding10_what_json5_refuses_is_refused_with_its_words(text: str) -> None:
    with pytest.raises(ValueError) as expected:
        json5.loads(text)
    with pytest.raises(ValueError) as got:
        load_json5(text, "x.json5")
    assert str(got.value) == str(expected.value)
