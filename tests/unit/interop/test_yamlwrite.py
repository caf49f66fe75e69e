"""Imported resources are written as YAML that clawplane's loader reads back unchanged."""

from __future__ import annotations

import yaml

from clawplane.interop.yamlwrite import dump_documents
from clawplane.loading.yamlparse import parse_documents

TRICKY = ["yes", "on", "y", "null", "~", "0123", "1_000", "1e3", "0x10", ".inf", "2020-01-01", "", "a: b", "- x",
          "#c", "multi\nline", "tab\there", "${HOME}", "@writer\\b", "🦞", "'q'", '"dq"', " lead", "trail "]  # fmt: skip


def test_tricky_scalars_read_back() -> None:
    docs = [{"spec": {"values": TRICKY, "numbers": [1, 1.5, -2, True, False], "empty": {}, "none": []}}]
    text = dump_documents(docs, header="# h\n")
    assert text.startswith("# h\n")
    assert [d.data for d in parse_documents(text)] == docs


def test_several_documents() -> None:
    docs = [{"kind": "A", "n": i} for i in range(3)]
    text = dump_documents(docs)
    assert text.count("---\n") == 2
    assert [d.data for d in parse_documents(text)] == docs


YAML_1_1_TRAPS = ["on", "off", "On", "OFF", "yes", "No", "y", "n", "Y", "N", "true", "False", "null", "~",
                  "010", "0x1f", "0b101", "1:20", "1_000", "+12", "1.5", ".inf", ".NaN", "2001-12-14", "<<", "="]  # fmt: skip


def test_keys_and_values_a_yaml_1_1_reader_would_misread_are_quoted() -> None:
    """PyYAML (YAML 1.1) reads every key and value back as the same string."""
    doc = {"spec": {"config": {key: key for key in YAML_1_1_TRAPS}, "list": YAML_1_1_TRAPS}}
    text = dump_documents([doc])
    assert yaml.safe_load(text) == doc
    assert [d.data for d in parse_documents(text)] == [doc]
    for trap in ("on", "off", "yes", "y", "n"):
        assert f'"{trap}": "{trap}"' in text


def test_plain_strings_stay_unquoted() -> None:
    text = dump_documents([{"spec": {"command": "python3", "name": "notes", "port": "eighty"}}])
    assert '"' not in text
