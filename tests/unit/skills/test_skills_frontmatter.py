"""SKILL.md frontmatter parsing follows OpenClaw's rules, including its recovery and quirks."""

from __future__ import annotations

import pytest

from clawplane.skills import FrontmatterError, parse_skill_frontmatter
from clawplane.skills.frontmatter import extract_block, normalize_content, parse_line_frontmatter


def fm(block: str) -> dict[str, str]:
    return parse_skill_frontmatter(f"---\n{block}\n---\n# Body\n")


def test_bom_and_crlf_and_lone_cr_are_normalized() -> None:
    assert normalize_content("\ufeffa\r\nb\rc") == "a\nb\nc"
    assert parse_skill_frontmatter("\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\n") == {
        "name": "x", "description": "d"}
    assert parse_skill_frontmatter("---\rname: cr\r---\r") == {"name": "cr"}


def test_the_opening_delimiter_must_start_the_file() -> None:
    assert parse_skill_frontmatter(" ---\nname: x\n---\n") == {}
    assert parse_skill_frontmatter("text\n---\nname: x\n---\n") == {}
    assert parse_skill_frontmatter("---  \nname: ws\n---  ") == {"name": "ws"}


def test_an_unterminated_block_is_an_error() -> None:
    with pytest.raises(FrontmatterError, match="UNTERMINATED_FRONTMATTER"):
        parse_skill_frontmatter("---\nname: x\n")


def test_extract_block_splits_block_and_body() -> None:
    assert extract_block("---\na: 1\n---\nbody") == ("a: 1", "body")
    assert extract_block("---\n---\n") == ("", "")


def test_core_schema_scalars_become_javascript_strings() -> None:
    assert fm("name: 1.0\ndescription: 1e3") == {"name": "1", "description": "1000"}
    assert fm("name: 0o17\ndescription: 0x1F") == {"name": "15", "description": "31"}
    assert fm("name: yes\ndescription: TRUE") == {"name": "yes", "description": "true"}
    assert fm("name: .inf\ndescription: -.Inf") == {"name": "Infinity", "description": "-Infinity"}
    # YAML's null is dropped, and then the line reader's raw "~" fills the gap (as in OpenClaw).
    assert fm("name: ~\ndescription: d") == {"name": "~", "description": "d"}
    assert fm("name:\ndescription: d") == {"description": "d"}


def test_quoted_and_block_scalars_are_strings_trimmed() -> None:
    assert fm("name: '007'\ndescription: \"  spaced  \"") == {"name": "007", "description": "spaced"}
    assert fm("description: >\n  folded\n  text\nname: n")["description"] == "folded text"
    assert fm("description: |\n  a\n  b\nname: n")["description"] == "a\nb"


def test_structured_values_become_json_text() -> None:
    assert fm("description: d\nmetadata:\n  openclaw:\n    always: yes")["metadata"] == (
        '{"openclaw":{"always":"yes"}}')
    assert fm("description: [a, 1, true]")["description"] == '["a",1,true]'


def test_a_one_line_json_object_keeps_its_raw_text() -> None:
    # The line reader's value wins for structured values written inline with a colon.
    assert fm('description: d\nmetadata: {"openclaw": {"always": true}}')["metadata"] == (
        '{"openclaw": {"always": true}}')
    assert fm("description: d\nmetadata: {}")["metadata"] == "{}"


def test_description_with_colon_is_requoted_and_recovered() -> None:
    assert fm("name: x\ndescription: Use this: when it rains")["description"] == (
        "Use this: when it rains")
    assert fm("name: x\ndescription: [unclosed")["description"] == "[unclosed"
    assert fm("description: `code` first")["description"] == "`code` first"
    assert fm("description: *nowhere")["description"] == "*nowhere"


def test_summary_colon_text_is_recovered_but_not_after_a_tab() -> None:
    assert fm("description: d\nsummary: a: b")["summary"] == "a: b"
    with pytest.raises(FrontmatterError):
        fm("description: d\nsummary:\ta: b")


def test_errors_outside_free_text_fields_reject_the_file() -> None:
    for block in ("name: @scope\ndescription: d", "description: d\nhomepage: a: b",
                  "description: [unclosed\nname: y", "name: x\nname: y\ndescription: d",
                  "description:null\nname: x", "- a\n- b", " "):
        with pytest.raises(FrontmatterError):
            fm(block)


def test_flow_and_quoted_continuations_must_be_indented_like_openclaw() -> None:
    assert fm('metadata: {\n  "a": 1\n}\ndescription: d')["metadata"] == '{"a":1}'
    with pytest.raises(FrontmatterError, match="BAD_INDENT"):
        fm('metadata: {"a":\n{"b": 1}}\ndescription: d')
    with pytest.raises(FrontmatterError, match="MISSING_CHAR"):
        fm('description: "x\ny"')
    assert fm('description: "x\n y"')["description"] == "x y"


def test_yaml_1_2_details_libyaml_would_get_wrong() -> None:
    # Line and paragraph separators are ordinary characters; anchors may be redefined.
    assert fm("description: a\u2028b")["description"] == "a\u2028b"
    assert fm("a: &x 1\nb: &x 2\nc: *x\ndescription: d")["c"] == "2"


def test_flow_collections_read_as_yaml_1_2_reads_them() -> None:
    # A ":" inside a plain scalar, or a lone "?", is fine in a YAML 1.2 flow collection.
    meta = fm("metadata:\n  urls: [http://x/y, a:b]\n  m: {a:b}\n  q: [?, x]")["metadata"]
    assert meta == '{"urls":["http://x/y","a:b"],"m":{"a:b":null},"q":[{"":null},"x"]}'
    # A lone "-" that is not a key starts a block sequence, which flow collections refuse.
    assert fm("metadata:\n  k: {-: x}")["metadata"] == '{"k":{"-":"x"}}'
    for value in ("[-, x]", "{x: -, y}", "[[-]]"):
        with pytest.raises(FrontmatterError, match="BLOCK_IN_FLOW"):
            fm(f"metadata:\n  k: {value}")


def test_the_line_reader_fills_keys_yaml_lacks() -> None:
    assert parse_line_frontmatter("a: 'q'\nb:\n  line1\n  line2\nc:") == {"a": "q", "b": "line1\n  line2"}


def test_no_frontmatter_gives_no_keys() -> None:
    assert parse_skill_frontmatter("# Just markdown\n") == {}
    assert parse_skill_frontmatter("---\n---\nbody") == {}


def test_pathologically_deep_values_are_rejected_not_raised() -> None:
    deep = "metadata: " + "[" * 5000 + "]" * 5000
    with pytest.raises(FrontmatterError, match="RESOURCE_EXHAUSTION"):
        fm(f"description: d\n{deep}")
