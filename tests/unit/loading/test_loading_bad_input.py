"""The bad-input corpus in process: the exact code and position of every diagnostic.

Committed cases live in tests/fixtures/bad-input/; the big, binary and hostile ones are
written at test time by tests/fixtures/bad-input/generated.py. The same corpus runs
through the real CLI in tests/integration/test_bad_input.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from clawplane.diagnostics import Diagnostic
from clawplane.loading import read_sources
from clawplane.validation import validate_paths

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "bad-input"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bad_input_generated", CORPUS / "generated.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generated = _load_generator()

# (code, line, column) of every diagnostic in output order; (0, 0) means "no position".
EXPECTED: dict[str, list[tuple[str, int, int]]] = {
    # committed
    "malformed.yaml": [("yaml.syntax", 5, 2)],
    "flow-unclosed.yaml": [("yaml.syntax", 8, 1)],
    "tabs.yaml": [("yaml.syntax", 6, 1)],
    "unclosed-quote.yaml": [("yaml.syntax", 7, 1)],
    "control-character.yaml": [("yaml.syntax", 4, 13)],
    "duplicate-keys.yaml": [("yaml.duplicate-key", 10, 5)],
    "second-document-bad.yaml": [("yaml.duplicate-key", 10, 3)],
    "wrong-types.yaml": [
        ("schema.type", 7, 9),
        ("schema.type", 8, 12),
        ("schema.type", 9, 21),
        ("schema.type", 10, 8),
    ],
    "unknown-kind.yaml": [("schema.unknown-kind", 2, 7)],
    "kind-not-a-string.yaml": [("schema.unknown-kind", 2, 7)],
    "unknown-api-version.yaml": [("schema.api-version", 1, 13)],
    "missing-name.yaml": [("schema.missing-name", 4, 3)],
    "list-document.yaml": [("schema.not-a-mapping", 1, 1)],
    "scalar-document.yaml": [("schema.not-a-mapping", 1, 1)],
    "empty.yaml": [("input.empty-file", 0, 0)],
    "comment-only.yaml": [("input.empty-file", 0, 0)],
    "recursive-alias.yaml": [("yaml.recursive-alias", 3, 11)],
    "undefined-alias.yaml": [("yaml.syntax", 4, 9)],
    "custom-tags.yaml": [("yaml.tag", 6, 12)],
    "custom-tag-mapping.yaml": [("yaml.tag", 3, 11)],
    "merge-keys.yaml": [("yaml.merge-key", 6, 3)],
    "complex-key.yaml": [("yaml.complex-key", 4, 5)],
    "list-bad-items.yaml": [
        ("schema.not-a-mapping", 8, 5),
        ("schema.unknown-kind", 10, 11),
        ("schema.invalid", 18, 7),
    ],
    "list-without-items.yaml": [("schema.list-items", 2, 7)],
    "crlf-bom.yaml": [],
    # generated
    "binary.yaml": [("input.binary", 5, 1)],
    "latin1.yaml": [("input.encoding", 6, 19)],
    "latin1-after-bom.yaml": [("input.encoding", 6, 19)],
    "latin1-after-multibyte.yaml": [("input.encoding", 6, 24)],
    "utf16.yaml": [("input.binary", 1, 1)],
    "ten-megabytes.yaml": [("input.too-large", 0, 0)],
    "alias-bomb.yaml": [("yaml.too-large", 11, 6)],
    "deep-lists.yaml": [("yaml.too-deep", 6, 104)],
    "deep-mappings.yaml": [("yaml.too-deep", 1, 401)],
    "deep-block.yaml": [("yaml.too-deep", 101, 201)],
    "deep-through-aliases.yaml": [("yaml.too-deep", 5, 18)],
    "flat-huge-list.yaml": [("yaml.too-large", 1, 1)],
    "long-lines.yaml": [("schema.unknown-field", 8, 3)],
    "long-line-valid.yaml": [],
}
# Codes the loader reports itself (everything else comes from validation).
LOADING_PREFIXES = ("input.", "yaml.", "schema.list-items")


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made: dict[str, Path] = generated.write_generated(tmp_path_factory.mktemp("bad-input"))
    committed = {p.name: p for p in CORPUS.glob("*.yaml")}
    assert not set(made) & set(committed), "a generated case shadows a committed one"
    return {**committed, **made}


def _triples(diags: list[Diagnostic]) -> list[tuple[str, int, int]]:
    return [
        (d.code, d.location.line if d.location else 0, d.location.column if d.location else 0) for d in diags
    ]


def test_every_case_has_an_expectation(paths: dict[str, Path]) -> None:
    assert set(paths) == set(EXPECTED)
    assert {name for name, found in EXPECTED.items() if not found} == generated.VALID


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_diagnostic_codes_and_positions(name: str, paths: dict[str, Path]) -> None:
    result = validate_paths([paths[name]])
    diags = result.diagnostics.sorted()
    assert _triples(diags) == EXPECTED[name]
    for d in diags:
        assert d.location is not None and d.location.file == str(paths[name])
        assert d.message and d.code
    assert result.ok == (name in generated.VALID)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loader_reports_its_own_problems_and_nothing_else(name: str, paths: dict[str, Path]) -> None:
    read = read_sources([paths[name]])
    expected = [e for e in EXPECTED[name] if e[0].startswith(LOADING_PREFIXES)]
    assert _triples(read.diagnostics.sorted()) == expected
    if expected:  # a file the loader refuses yields no documents at all
        assert read.documents == []


def _only(name: str, paths: dict[str, Path]) -> Diagnostic:
    diags = validate_paths([paths[name]]).diagnostics.sorted()
    assert len(diags) == 1
    return diags[0]


def test_duplicate_key_names_both_lines(paths: dict[str, Path]) -> None:
    d = _only("duplicate-keys.yaml", paths)
    assert d.message == "duplicate key 'A' (first defined at line 8)"
    assert d.location is not None
    assert paths["duplicate-keys.yaml"].read_text().splitlines()[d.location.line - 1] == "    A: three"


def test_tab_error_points_at_the_tab(paths: dict[str, Path]) -> None:
    d = _only("tabs.yaml", paths)
    assert d.location is not None
    line = paths["tabs.yaml"].read_text().splitlines()[d.location.line - 1]
    assert line[d.location.column - 1] == "\t"
    assert d.hint == "YAML indentation must use spaces, not tabs"


def test_unclosed_quote_says_where_the_string_started(paths: dict[str, Path]) -> None:
    d = _only("unclosed-quote.yaml", paths)
    assert "(started at line 4)" in d.message
    assert "quoted" in d.hint


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("latin1.yaml", "byte 0xe9 at offset 94"),
        ("latin1-after-bom.yaml", "byte 0xe9 at offset 97"),  # the offset counts the BOM's 3 bytes
        ("latin1-after-multibyte.yaml", "byte 0xe9 at offset 100"),
    ],
)
def test_encoding_error_names_the_bad_byte(name: str, fragment: str, paths: dict[str, Path]) -> None:
    d = _only(name, paths)
    assert fragment in d.message
    assert d.hint == "save the file as UTF-8"


def test_control_character_is_reported_with_its_position(paths: dict[str, Path]) -> None:
    d = _only("control-character.yaml", paths)
    assert d.message == "invalid YAML: unacceptable character #x0007: control characters are not allowed"
    assert "\n" not in d.message


def test_custom_tag_names_the_tag(paths: dict[str, Path]) -> None:
    assert "python/object/apply:os.system" in _only("custom-tags.yaml", paths).message
    assert _only("custom-tag-mapping.yaml", paths).message == "unsupported YAML tag '!k8s/meta'"


def test_list_items_are_validated_one_by_one(paths: dict[str, Path]) -> None:
    result = validate_paths([paths["list-bad-items.yaml"]])
    assert [r.key for r in result.resources] == ["Agent/good"]
    [_, unknown, invalid] = result.diagnostics.sorted()
    assert unknown.message == "unknown kind 'Agnet'"
    assert invalid.resource == "McpServer/nocommand"


def test_valid_crlf_bom_file_keeps_exact_positions(paths: dict[str, Path]) -> None:
    result = validate_paths([paths["crlf-bom.yaml"]])
    assert result.ok and [r.key for r in result.resources] == ["McpServer/windows"]
    [res] = result.resources
    # Line 1 is a comment after the BOM; CR is not a column.
    assert res.at(("metadata", "name")).line == 5
    assert res.at(("metadata", "name")).column == 9
    assert res.at(("spec", "env", "LOG_LEVEL"), key=True).column == 5
    assert res.raw["spec"]["env"] == {"LOG_LEVEL": "debug"}


def test_whole_corpus_folder_in_one_run(paths: dict[str, Path]) -> None:
    folder = {p.parent for p in paths.values() if p.name not in generated.VALID}
    result = validate_paths(sorted(folder))
    reported = {Path(d.location.file).name for d in result.diagnostics if d.location}
    assert reported == {name for name, found in EXPECTED.items() if found}
