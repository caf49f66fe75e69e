"""The frontmatter fast path gives exactly what the YAML path gives, or declines.

Thousands of seeded documents (one ``key: value`` per line, and block-mapping
manifests with tricky values, uneven indentation, blank and comment lines, flow
sequences…) are parsed twice: as the reader does, and with the fast path switched
off so that YAML decides. The strings, the manifests and the errors must agree.
The OpenClaw oracle test runs the same documents against OpenClaw itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.frontmatter_docs import nested_docs, simple_docs

from clawplane.skills import FrontmatterError, parse_manifest, parse_skill_frontmatter
from clawplane.skills.frontmatter import reader as frontmatter
from clawplane.skills.frontmatter.simpleblock import parse_simple_block


def _read(doc: str) -> tuple[str, Any]:
    values: dict[str, Any] = {}
    try:
        fm = parse_skill_frontmatter(doc, values)
    except FrontmatterError as exc:
        return "error", str(exc)
    return "ok", (fm, parse_manifest(fm, values))


def _read_with_yaml(doc: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    with monkeypatch.context() as patch:
        patch.setattr(frontmatter, "parse_simple_block", lambda block, values=None: None)
        return _read(doc)


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_the_fast_path_agrees_with_yaml(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = simple_docs(seed, 1500) + nested_docs(seed, 3000)
    nested_fast = 0
    problems = []
    for doc in docs:
        block = frontmatter.extract_block(frontmatter.normalize_content(doc))
        assert block is not None
        nested_fast += "\n " in block[0] and parse_simple_block(block[0]) is not None
        mine, yaml = _read(doc), _read_with_yaml(doc, monkeypatch)
        if mine != yaml:
            problems.append(f"{doc!r}\n  fast: {mine!r}\n  yaml: {yaml!r}")
    assert not problems, f"{len(problems)} of {len(docs)} differ:\n" + "\n".join(problems[:10])
    assert nested_fast > len(docs) // 6  # block mappings do take the fast path: not vacuous


def test_a_block_mapping_manifest_takes_the_fast_path() -> None:
    block = ('name: s\ndescription: d\nmetadata:\n  openclaw:\n    emoji: "🦞"\n    requires:\n'
             "      bins: [git, curl]\n      env: []\n    always: true")
    assert parse_simple_block(block) == {
        "name": "s", "description": "d",
        "metadata": '{"openclaw":{"emoji":"🦞","requires":{"bins":["git","curl"],"env":[]},'
                    '"always":true}}'}


@pytest.mark.parametrize("block", [
    "metadata:\n  a: 1\n\n  b: 2",          # blank line inside the block
    "metadata:\n  a: 1\n # c\n  b: 2",      # comment inside
    "metadata:\n    a: 1\n  b: 2",          # uneven indentation
    "metadata:\n  a: 1\n    more",          # a continuation line
    "metadata:\n  - a",                     # a block sequence
    "metadata:\n  a: 1\n  a: 2",            # duplicate keys
    "metadata:\n  a: [b, [c]]",             # a nested flow collection that is not JSON
    "metadata:\n\ta: 1",                    # a tab
])
def test_shapes_yaml_must_decide_are_declined(block: str) -> None:
    assert parse_simple_block(block) is None
