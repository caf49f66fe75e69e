"""Imported resources are written as YAML that clawplane's loader reads back unchanged."""

from __future__ import annotations

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
