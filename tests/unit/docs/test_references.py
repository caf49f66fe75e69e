"""The generated docs references (docs/reference/*.md) are what `clawplane schema` writes now.

Like the JSON Schemas and CRDs (tests/unit/core/test_generated.py): a changed command, option,
help text or model field fails here until `clawplane schema` is run and the pages committed.
"""

from __future__ import annotations

from pathlib import Path

from clawplane.cli.reference import CLI_PAGE, RESOURCES_PAGE, command_table, reference_pages
from clawplane.models import KINDS
from clawplane.schema import stale_among

ROOT = Path(__file__).resolve().parents[3]


def test_committed_reference_pages_are_fresh() -> None:
    stale = stale_among(ROOT, reference_pages())
    assert stale == [], f"run `clawplane schema` and commit: {[str(p) for p in stale]}"


def test_a_changed_page_is_named_stale(tmp_path: Path) -> None:
    pages = reference_pages()
    for rel, text in pages.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / CLI_PAGE).write_text(pages[CLI_PAGE] + "\n", encoding="utf-8")
    assert stale_among(tmp_path, pages) == [CLI_PAGE]


def test_the_cli_page_has_every_command_and_option() -> None:
    text = (ROOT / CLI_PAGE).read_text(encoding="utf-8")
    table = command_table()
    assert ("k8s", "run") in table and ("mcp", "serve") in table
    for path, options in table.items():
        assert f"## `{' '.join(['clawplane', *path])}`" in text, path
        for option in options - {"-h", "--help"}:
            assert f"`{option}`" in text, (path, option)


def test_the_resources_page_has_every_kind() -> None:
    text = (ROOT / RESOURCES_PAGE).read_text(encoding="utf-8")
    for kind in KINDS:
        assert f"\n## {kind}\n" in text, kind
    assert "| `toolFilter` |" in text and "| `mcpServers` |" in text
