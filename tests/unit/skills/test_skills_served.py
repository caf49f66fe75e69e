"""An agent's eligible skills as served files (``skills.served``): order, digests, bounds, confinement."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from tests.unit.skills.test_skills_adapter import agent, host, setup_for

from clawplane.skills import SkillsEngine
from clawplane.skills.served import MAX_FILE_BYTES, SkillFileError, served_skills


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "extra"
    files = {
        "beta/SKILL.md": "---\nname: beta\ndescription: B\nmetadata:\n  openclaw: {emoji: x}\n---\nBody\n",
        "beta/references/NOTES.md": "notes\n",
        "beta/.env": "SECRET=1\n",
        "beta/.git/config": "[core]\n",
        "alpha/SKILL.md": "---\nname: alpha\ndescription: 'A: colon'\n---\n",
        "gamma/SKILL.md": "---\nname: gamma\ndescription: G\nweights: [.nan, -.inf, 1.5]\n---\n",
        "needs/SKILL.md": '---\nname: needs\ndescription: N\n'
        'metadata: {"openclaw": {"requires": {"bins": ["no-such-bin-x"]}}}\n---\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (tmp_path / "outside.md").write_text("outside\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.md", root / "beta" / "linked.md")
    with open(root / "beta" / "big.bin", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    return root


def _served(tmp_path: Path, skills: list[str]):  # type: ignore[no-untyped-def]
    _tree(tmp_path)
    setup = setup_for(tmp_path, {"skills": {"load": {"extraDirs": ["extra"]}}}, [agent("a", {"skills": skills})])
    inputs, _ = setup.inputs_for("a", host(tmp_path))
    snapshot = SkillsEngine().evaluate(inputs).snapshot
    return snapshot, served_skills(snapshot)


def test_exactly_the_eligible_allowed_skills_in_snapshot_order(tmp_path: Path) -> None:
    snapshot, served = _served(tmp_path, ["gamma", "beta", "alpha", "needs"])
    expected = [s.name for s in snapshot.skills if s.eligible and not s.blocked_by_agent_filter]
    assert [s.name for s in served] == expected == ["alpha", "beta", "gamma"]
    assert [s.uri for s in served] == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://gamma/SKILL.md"]
    assert served[0].frontmatter == {"name": "alpha", "description": "A: colon"}
    assert served[1].frontmatter == {"name": "beta", "description": "B", "metadata": {"openclaw": {"emoji": "x"}}}
    assert served[2].frontmatter == {"name": "gamma", "description": "G", "weights": [None, None, 1.5]}


def test_files_have_sha256_digests_and_sizes_and_stay_inside_the_folder(tmp_path: Path) -> None:
    _, served = _served(tmp_path, ["beta"])
    (beta,) = served
    assert [f.rel for f in beta.files] == ["SKILL.md", "references/NOTES.md"]  # no .env, .git, symlink out, big
    for f in beta.files:
        data = (tmp_path / "extra" / "beta" / f.rel).read_bytes()
        assert f.digest == "sha256:" + hashlib.sha256(data).hexdigest() and f.size == len(data)
        assert beta.read(f.rel) == data
    assert beta.left_out == (f"big.bin: {MAX_FILE_BYTES + 1} bytes, over {MAX_FILE_BYTES}",)
    assert beta.file_uri("references/NOTES.md") == "skill://beta/references/NOTES.md"


@pytest.mark.parametrize("rel", ["../alpha/SKILL.md", "linked.md", ".env", "big.bin", "/etc/passwd", "references"])
def test_anything_not_listed_is_refused(tmp_path: Path, rel: str) -> None:
    _, (beta,) = _served(tmp_path, ["beta"])
    with pytest.raises(SkillFileError, match="is not a file of skill 'beta'"):
        beta.read(rel)


def test_a_listed_file_changed_or_swapped_for_a_symlink_out_is_refused(tmp_path: Path) -> None:
    _, (beta,) = _served(tmp_path, ["beta"])
    notes = tmp_path / "extra" / "beta" / "references" / "NOTES.md"
    notes.write_text("changed\n", encoding="utf-8")
    with pytest.raises(SkillFileError, match="changed since it was listed"):
        beta.read("references/NOTES.md")
    notes.unlink()
    os.symlink(tmp_path / "outside.md", notes)
    with pytest.raises(SkillFileError, match="resolves outside the skill folder"):
        beta.read("references/NOTES.md")
