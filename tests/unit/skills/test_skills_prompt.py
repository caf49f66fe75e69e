"""The prompt text: exact layout, escaping, counts in UTF-16 units, budget modes, ``~/`` paths."""

from __future__ import annotations

from tests.unit.skills.skilltree import Run, Tree

from clawplane.jscompat import locale_sort_key, utf16_len
from clawplane.skills import PromptSkill, Source, escape_xml, format_full, prepare_prompt
from clawplane.skills.prompt import compact_home_paths, format_compact, truncate_description

ALPHA = PromptSkill("alpha", "Does alpha things.", "/ws/skills/alpha/SKILL.md")
EXPECTED_ALPHA = (
    "\n\nThe following skills provide specialized instructions for specific tasks.\n"
    "Read a skill's file at its listed location when the task matches its description.\n"
    "When a skill file references a relative path, resolve it against the skill directory "
    "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"
    "\n<available_skills>\n  <skill>\n    <name>alpha</name>\n"
    "    <description>Does alpha things.</description>\n"
    "    <location>/ws/skills/alpha/SKILL.md</location>\n  </skill>\n</available_skills>"
)


def skills(count: int, description: str = "A description of this skill.") -> list[PromptSkill]:
    return [PromptSkill(f"s{i:03d}", description, f"/ws/skills/s{i:03d}/SKILL.md") for i in range(count)]


def test_one_skill_is_exactly_openclaws_text_and_515_units() -> None:
    assert format_full([ALPHA]) == EXPECTED_ALPHA
    assert len(EXPECTED_ALPHA) == 515


def test_full_mode_is_370_plus_97_per_skill_plus_escaped_fields() -> None:
    many = [ALPHA, PromptSkill("b&<>\"'", "Emoji 😀.", "/x/b/SKILL.md")]
    text = format_full(many)
    fields = sum(utf16_len(escape_xml(s.name)) + utf16_len(escape_xml(s.description))
                 + utf16_len(escape_xml(s.file_path)) for s in many)
    assert utf16_len(text) == 370 + 97 * 2 + fields


def test_escaping_order_ampersand_first() -> None:
    assert escape_xml("b&<>\"'") == "b&amp;&lt;&gt;&quot;&apos;"
    assert escape_xml("&lt;") == "&amp;lt;"


def test_empty_list_gives_empty_text() -> None:
    result = prepare_prompt([])
    assert result.text == "" and result.format == "empty"


def test_skills_are_sorted_by_locale_compare() -> None:
    result = prepare_prompt([PromptSkill(n, "d", f"/{n}") for n in ("beta", "B2", "alpha", "_x")],
                            sort_key=locale_sort_key)
    assert result.skills == ("_x", "alpha", "B2", "beta")


def test_more_than_150_skills_are_cut_with_a_note() -> None:
    result = prepare_prompt(skills(200), sort_key=locale_sort_key)
    assert result.truncated and len(result.skills) == 150
    assert result.text.startswith("⚠️ Skills truncated: included 150 of 200")


def test_over_budget_switches_to_compact_with_shortened_descriptions() -> None:
    result = prepare_prompt(skills(20, "word " * 60), max_chars=6000, sort_key=locale_sort_key)
    assert result.format == "compact" and not result.truncated
    assert result.description_max_chars is not None and 4 <= result.description_max_chars < 220
    assert result.text.startswith("⚠️ Skills catalog using compact format (descriptions shortened).")
    assert "matches its name or description." in result.text
    assert utf16_len(result.text) <= 6000


def test_tight_budget_truncates_and_omits_descriptions() -> None:
    result = prepare_prompt(skills(60), max_chars=2500, sort_key=locale_sort_key)
    assert result.truncated and result.format == "compact"
    assert "descriptions omitted" in result.text or "descriptions shortened" in result.text
    assert utf16_len(result.text) <= 2500


def test_nothing_fits_gives_empty_text() -> None:
    result = prepare_prompt(skills(3), max_chars=100)
    assert result.text == "" and result.skills == ()


def test_compact_without_descriptions_uses_the_name_only_sentence() -> None:
    text = format_compact([ALPHA], 0)
    assert "matches its name.\n" in text and "<description>" not in text


def test_description_cut_collapses_whitespace_and_never_splits_an_emoji() -> None:
    assert truncate_description("a \t b\n c", 220) == "a b c"
    assert truncate_description("abcdefghij", 7) == "abcd..."
    # 5 units: "ab" + the first half of 😀 would be cut; the whole emoji goes instead.
    assert truncate_description("ab😀cdefgh", 6) == "ab..."
    assert truncate_description("abcdef", 3) == "abc"


def test_home_paths_become_tilde_paths() -> None:
    compacted = compact_home_paths([PromptSkill("a", "d", "/home/u/ws/a/SKILL.md"),
                                    PromptSkill("b", "d", "/home/user2/b/SKILL.md")], "/home/u")
    assert [s.file_path for s in compacted] == ["~/ws/a/SKILL.md", "/home/user2/b/SKILL.md"]


def test_engine_prompt_uses_home_paths_and_agent_budget(tree: Tree, run: Run) -> None:
    tree.skill("home/ws/skills/one", "one", "First.")
    snap, _ = run([("home/ws/skills", Source.WORKSPACE)])
    assert "<location>~/ws/skills/one/SKILL.md</location>" in snap.prompt.text
    assert snap.prompt.chars == utf16_len(snap.prompt.text)
