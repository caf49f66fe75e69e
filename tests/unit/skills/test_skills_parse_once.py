"""A SKILL.md's one-line JSON ``metadata`` is parsed once, by the frontmatter reader.

The manifest reader used to parse the same text again (a twentieth of a cold evaluation of a
5,000-skill tree). It now takes the frontmatter reader's value, which must be exactly what
parsing the string gives; text that takes the YAML path is still parsed from its string.
"""

from __future__ import annotations

import pytest

from clawplane.skills import loader, manifest, parse_manifest

META = '{"openclaw": {"emoji": "🦞", "requires": {"bins": ["git"]}, "install": [{"kind": "brew", "formula": "gh"}]}}'


def skill(metadata_lines: str) -> bytes:
    return f"---\nname: s\ndescription: d\n{metadata_lines}\n---\n# Body\n".encode()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = manifest._parse_json_or_json5

    def counting(raw: str) -> object:
        seen.append(raw)
        return real(raw)

    monkeypatch.setattr(manifest, "_parse_json_or_json5", counting)
    return seen


def test_one_line_json_metadata_is_not_parsed_twice(parses: list[str]) -> None:
    parsed = loader._parse_content(skill(f"metadata: {META}"))
    assert parses == []
    assert parsed.frontmatter is not None and parsed.manifest is not None
    assert parsed.manifest == parse_manifest(parsed.frontmatter)  # read from the string alike
    assert parsed.manifest.install[0].formula == "gh"


def test_yaml_block_metadata_is_parsed_from_its_string(parses: list[str]) -> None:
    block = 'metadata:\n  openclaw:\n    emoji: "x"\n    requires:\n      bins: [git]'
    parsed = loader._parse_content(skill(block))
    assert len(parses) == 1
    assert parsed.manifest is not None and parsed.manifest.emoji == "x"


def test_json_that_yaml_reserialises_is_parsed_from_the_stored_string(parses: list[str]) -> None:
    # Without a colon the stored string is YAML's JSON form, not the line: read that string.
    parsed = loader._parse_content(skill("metadata: [1e400]"))
    assert parsed.frontmatter == {"name": "s", "description": "d", "metadata": "[null]"}
    assert parses == ["[null]"]
