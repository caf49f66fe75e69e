"""Diagnostics render as text, JSON and GitHub annotations with every field."""

from __future__ import annotations

import json

from clawplane.diagnostics import (
    Diagnostic,
    Diagnostics,
    Location,
    Severity,
    format_github,
    format_json,
    format_text,
)

D = Diagnostic(
    Severity.ERROR, "schema.unknown-field", "unknown field 'comand'", Location("a/b.yaml", 6, 3),
    "spec.comand", "did you mean 'command'?", "McpServer/x",
)  # fmt: skip


def test_text_has_position_code_message_path_and_hint() -> None:
    assert format_text(D) == (
        "a/b.yaml:6:3: error[schema.unknown-field]: unknown field 'comand' (at spec.comand)\n"
        "  hint: did you mean 'command'?"
    )


def test_json_lists_every_field_and_counts() -> None:
    diags = Diagnostics([D, Diagnostic(Severity.WARNING, "w", "careful", None)])
    doc = json.loads(format_json(diags, files=1, resources=2))
    assert doc["valid"] is False and doc["errors"] == 1 and doc["warnings"] == 1
    first = next(d for d in doc["diagnostics"] if d["code"] == "schema.unknown-field")
    assert first == {
        "severity": "error", "code": "schema.unknown-field", "message": "unknown field 'comand'",
        "file": "a/b.yaml", "line": 6, "column": 3, "path": "spec.comand", "resource": "McpServer/x",
        "hint": "did you mean 'command'?",
    }  # fmt: skip


def test_github_annotation_escapes_properties_and_newlines() -> None:
    d = Diagnostic(Severity.WARNING, "c", "50% done\nnext", Location("we,ird:name.yaml", 2, 1), hint="h")
    line = format_github(d)
    assert line.startswith("::warning file=we%2Cird%3Aname.yaml,line=2,col=1,title=clawplane c::")
    assert "50%25 done%0Anext%0Ahint: h" in line
    assert "\n" not in line


def test_info_maps_to_notice_and_unknown_position_omits_line() -> None:
    d = Diagnostic(Severity.INFO, "c", "m", Location("f.yaml"))
    assert format_github(d) == "::notice file=f.yaml,title=clawplane c::m"
    assert format_text(d) == "f.yaml: info[c]: m"


def test_sorted_orders_by_file_then_position() -> None:
    a = Diagnostic(Severity.ERROR, "x", "m", Location("b.yaml", 1, 1))
    b = Diagnostic(Severity.ERROR, "x", "m", Location("a.yaml", 9, 1))
    c = Diagnostic(Severity.ERROR, "x", "m", Location("a.yaml", 2, 5))
    assert Diagnostics([a, b, c]).sorted() == [c, b, a]
