"""Loader limits and safety checks at the edges: depth, size, tags, odd characters, List items."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clawplane.diagnostics import Diagnostics
from clawplane.loading import SourceDocument, read_file, yamlparse
from clawplane.loading.positions import Positions
from clawplane.loading.yamlparse import MAX_DEPTH, YamlProblem, parse_documents
from clawplane.validation.structure import validate_document

API = "apiVersion: clawplane.dev/v1alpha1\n"


def problem(text: str) -> YamlProblem:
    with pytest.raises(YamlProblem) as info:
        parse_documents(text)
    return info.value


def flow(depth: int) -> str:
    return "[" * depth + "]" * depth


def block(depth: int) -> str:
    return "".join("  " * i + "-\n" for i in range(depth))


# --- depth -----------------------------------------------------------------------------------


@pytest.mark.parametrize("render", [flow, block])
def test_exactly_max_depth_parses(render: Callable[[int], str]) -> None:
    [doc] = parse_documents(render(MAX_DEPTH))
    value = doc.data
    for _ in range(MAX_DEPTH - 1):
        [value] = value
    assert value in ([], [None])


def test_one_level_more_is_a_diagnostic_at_that_level() -> None:
    p = problem(flow(MAX_DEPTH + 1))
    assert (p.code, p.line, p.column) == ("yaml.too-deep", 1, MAX_DEPTH + 1)
    assert p.message == f"YAML is nested more than {MAX_DEPTH} levels deep"
    p = problem(block(MAX_DEPTH + 1))
    assert (p.code, p.line, p.column) == ("yaml.too-deep", MAX_DEPTH + 1, 2 * MAX_DEPTH + 1)


@pytest.mark.parametrize("depth", [10_000, 1_000_000])
def test_absurd_depth_stops_early(depth: int) -> None:
    # ruamel's C composer crashes the process past ~25k levels; libyaml's scanner is
    # quadratic in flow depth. Neither gets to see more than MAX_DEPTH + 1 levels.
    assert problem(flow(depth)).code == "yaml.too-deep"
    assert problem("{a: " * depth + "}" * depth).code == "yaml.too-deep"
    assert problem("- " * depth + "x\n").code == "yaml.too-deep"


def test_depth_reached_only_through_aliases() -> None:
    text = "a: &a " + flow(MAX_DEPTH - 1) + "\nb: [*a]\n"
    p = problem(text)
    assert (p.code, p.line, p.column) == ("yaml.too-deep", 2, 4)  # the sequence holding the alias
    [doc] = parse_documents("a: &a " + flow(MAX_DEPTH - 2) + "\nb: [*a]\n")
    assert doc.data["a"] == doc.data["b"][0]


def test_alias_at_top_level_of_a_deep_anchor_is_fine() -> None:
    [doc] = parse_documents("a: &a " + flow(MAX_DEPTH - 1) + "\nb: *a\n")
    assert doc.data["a"] == doc.data["b"]


def test_earlier_documents_report_their_problems_first() -> None:
    dup = "a: 1\na: 2\n"
    deep = flow(MAX_DEPTH + 1) + "\n"
    assert problem(dup + "---\n" + deep).code == "yaml.duplicate-key"
    assert problem(deep + "---\n" + dup).code == "yaml.too-deep"
    assert problem(deep + "---\nkey: [unclosed\n").code == "yaml.too-deep"
    assert problem("key: [unclosed\n---\n" + deep).code == "yaml.syntax"
    p = problem("ok: 1\n---\n" + deep)
    assert (p.code, p.line) == ("yaml.too-deep", 3)


def test_deepest_allowed_resource_validates() -> None:
    # status is free-form; everything downstream copes with MAX_DEPTH levels.
    text = API + "kind: Agent\nmetadata:\n  name: deep\nstatus:\n  x: " + flow(MAX_DEPTH - 2) + "\n"
    [doc] = parse_documents(text)
    loaded, diags = validate_document(SourceDocument("f.yaml", 0, doc.data, doc.positions, doc.line))
    assert loaded is not None and diags == []


# --- size ------------------------------------------------------------------------------------


def test_node_limit_counts_before_composing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlparse, "MAX_NODES_PER_DOCUMENT", 50)
    [doc] = parse_documents("x: [" + ",".join(["1"] * 47) + "]\n")  # 1 + 1 + 1 + 47 = 50 nodes
    assert len(doc.data["x"]) == 47
    p = problem("# big\nx: [" + ",".join(["1"] * 48) + "]\n")
    assert (p.code, p.line, p.column) == ("yaml.too-large", 2, 1)
    assert p.message == "document has more than 50 nodes"


def test_node_limit_is_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlparse, "MAX_NODES_PER_DOCUMENT", 50)
    small = "[" + ",".join(["1"] * 40) + "]\n"
    assert len(parse_documents(small + "---\n" + small)) == 2


def test_alias_expansion_is_counted_with_aliases_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlparse, "MAX_NODES_PER_DOCUMENT", 50)
    text = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [*a, *a, *a, *a, *a]\n"  # 23 nodes, 73 expanded
    p = problem(text)
    assert p.code == "yaml.too-large" and "alias bomb" in p.message


def test_recursive_alias() -> None:
    p = problem("a: &x\n  b: *x\n")
    assert (p.code, p.line, p.column) == ("yaml.recursive-alias", 1, 4)


# --- tags, keys, characters ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("x: !custom {a: 1}\n", "!custom"),
        ("x: !custom [1]\n", "!custom"),
        ("x: !!set {a, b}\n", "tag:yaml.org,2002:set"),
        ("x: !!omap [{a: 1}]\n", "tag:yaml.org,2002:omap"),
        ("x: !!python/tuple [1, 2]\n", "tag:yaml.org,2002:python/tuple"),
        ("x: !!python/name:os.system ''\n", "tag:yaml.org,2002:python/name:os.system"),
        ("x: !env HOME\n", "!env"),
    ],
)
def test_custom_tags_are_refused_on_any_node(text: str, tag: str) -> None:
    p = problem(text)
    assert (p.code, p.line, p.column) == ("yaml.tag", 1, 4)
    assert p.message == f"unsupported YAML tag {tag!r}"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("x: !!map {a: 1}\n", {"a": 1}),
        ("x: !!seq [1]\n", [1]),
        ("x: !!str 12\n", "12"),
        ("x: ! [1]\n", [1]),
        ("x: !!int '7'\n", 7),
    ],
)
def test_standard_tags_are_accepted(text: str, value: object) -> None:
    [doc] = parse_documents(text)
    assert doc.data["x"] == value


def test_merge_key_is_refused_but_a_quoted_one_is_a_plain_key() -> None:
    p = problem("a:\n  <<: {b: 1}\n")
    assert (p.code, p.line, p.column) == ("yaml.merge-key", 2, 3)
    [doc] = parse_documents("a:\n  '<<': {b: 1}\n")  # a quoted "<<" is an ordinary key
    assert doc.data == {"a": {"<<": {"b": 1}}}


@pytest.mark.parametrize(
    ("text", "line", "column", "char"),
    [
        ("a: b\x01\n", 1, 5, "#x0001"),
        ("a: “é”\x7f\n", 1, 7, "#x007f"),  # columns count characters, not UTF-8 bytes
        ("a: 1\nbb: \ufffe\n", 2, 5, "#xfffe"),
    ],
)
def test_characters_yaml_forbids_have_a_position(text: str, line: int, column: int, char: str) -> None:
    p = problem(text)
    assert (p.code, p.line, p.column) == ("yaml.syntax", line, column)
    assert char in p.message and "\n" not in p.message


# --- files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "line", "column", "byte", "offset"),
    [
        (b"a: caf\xe9\n", 1, 7, 0xE9, 6),
        (b"\xef\xbb\xbfa: caf\xe9\n", 1, 7, 0xE9, 9),  # the BOM is not a column, but is an offset
        (b"\xef\xbb\xbf\xff\n", 1, 1, 0xFF, 3),
        (b"a: 1\nb: \xe2\x80\x9c\xff\n", 2, 5, 0xFF, 11),  # after a 3-byte character
        (b"a: \xe2\x80\n", 1, 4, 0xE2, 3),  # truncated sequence
    ],
)
def test_encoding_errors_point_at_the_bad_byte(
    tmp_path: Path, raw: bytes, line: int, column: int, byte: int, offset: int
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(raw)
    diags = Diagnostics()
    assert read_file(path, diags) == []
    [d] = diags
    assert d.location is not None
    assert (d.code, d.location.line, d.location.column) == ("input.encoding", line, column)
    assert f"byte 0x{byte:02x} at offset {offset}" in d.message


def test_list_item_positions_are_split_in_one_pass() -> None:
    text = API + "kind: List\nitems:\n  - kind: A\n    spec: {x: [1, 2]}\n  - plain\n  - {kind: B}\n"
    [doc] = parse_documents(text)
    parts = doc.positions.split_items(("items",))
    assert sorted(parts) == [0, 1, 2]
    for i in range(3):
        assert parts[i] == doc.positions.rebased(("items", i))
    assert parts[0].of_value(("spec", "x", 1)) == (5, 19)
    assert parts[0].of_key(("spec",)) == (5, 5)
    assert parts[1].values == {(): (6, 5)} and parts[1].keys == {}


def test_split_items_ignores_other_paths() -> None:
    pos = Positions(
        values={(): (1, 1), ("items",): (2, 1), ("items", 0): (3, 3), ("other", 0): (9, 9)},
        keys={("items",): (2, 1), ("items", 0, "k"): (3, 3)},
    )
    parts = pos.split_items(("items",))
    assert parts == {0: Positions(values={(): (3, 3)}, keys={("k",): (3, 3)})}
