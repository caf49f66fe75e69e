"""Discovery: tiers, grouping depth, redirects, limits, duplicates and containment."""

from __future__ import annotations

import os

from tests.unit.skills.skilltree import Run, Tree, codes_of, names

from clawplane.skills import Limits, SkillsSettings, Source

WS = Source.WORKSPACE


def test_later_tier_wins_on_the_same_name_and_the_collision_is_reported(tree: Tree, run: Run) -> None:
    order = [("extra", Source.EXTRA), ("bundled", Source.BUNDLED), ("workshop", Source.WORKSHOP),
             ("managed", Source.MANAGED), ("personal", Source.PERSONAL),
             ("project", Source.PROJECT), ("ws", WS)]
    for folder, _source in order:
        tree.skill(f"{folder}/same", "same", f"from {folder}")
    # Roots are given with the tiers reversed: precedence follows the tier. Within a tier
    # (project, then workspace) the list order decides, as in OpenClaw's source plan.
    snap, diags = run([*reversed(order[:5]), *order[5:]])
    assert snap.status("same") is not None
    assert snap.status("same").description == "from ws"  # type: ignore[union-attr]
    assert codes_of(diags).count("skills.collision") == 6


def test_identical_copies_do_not_count_as_a_collision(tree: Tree, run: Run) -> None:
    tree.skill("a/same", "same", "same text")
    tree.skill("b/same", "same", "same text")
    _snap, diags = run([("a", Source.EXTRA), ("b", WS)])
    assert "skills.collision" not in codes_of(diags)


def test_duplicates_in_one_root_later_sorted_folder_wins(tree: Tree, run: Run) -> None:
    tree.skill("ws/dup1", "dup", "first")
    tree.skill("ws/dup2", "dup", "second")
    snap, diags = run([("ws", WS)])
    assert [s.description for s in snap.skills] == ["second"]
    assert "skills.collision" in codes_of(diags)


def test_name_comes_from_frontmatter_else_the_folder(tree: Tree, run: Run) -> None:
    tree.write("ws/folder-name/SKILL.md", "---\ndescription: d\n---\n")
    tree.skill("ws/other", " named ", "d")
    snap, _ = run([("ws", WS)])
    assert names(snap) == ["folder-name", "named"]


def test_grouping_goes_six_levels_deep_not_seven(tree: Tree, run: Run) -> None:
    tree.skill("ws/a/b/c/d/e/deep6")
    tree.skill("ws/a/b/c/d/e/f/deep7")
    snap, _ = run([("ws", WS)])
    assert names(snap) == ["deep6"]


def test_extra_dirs_not_named_skills_group_two_levels(tree: Tree, run: Run) -> None:
    tree.skill("extra/g1/ext2")
    tree.skill("extra/g1/g2/deep3")
    tree.skill("more/skills/a/b/c/deep-ok")
    tree.skill("plug/skills/x/y/z/redirected")
    snap, _ = run([("extra", Source.EXTRA), ("more/skills", Source.EXTRA), ("plug", Source.EXTRA)])
    assert names(snap) == ["deep-ok", "ext2", "redirected"]


def test_dot_folders_and_node_modules_are_skipped_and_a_skill_stops_descent(tree: Tree, run: Run) -> None:
    tree.skill("ws/.hidden/h")
    tree.skill("ws/node_modules/nm")
    tree.skill("ws/top")
    tree.skill("ws/top/below")
    snap, _ = run([("ws", WS)])
    assert names(snap) == ["top"]


def test_root_skill_md_makes_the_root_one_skill(tree: Tree, run: Run) -> None:
    tree.skill("single", "single")
    tree.skill("single/child")
    snap, _ = run([("single", Source.EXTRA)])
    assert names(snap) == ["single"]


def test_skills_folder_redirect_and_its_exception(tree: Tree, run: Run) -> None:
    # Only skills/ holds skills: it becomes the base, so the 6-level depth applies inside it.
    tree.skill("r1/skills/a/b/c/deep")
    tree.write("r1/notes/readme.txt", "not a skill")
    # Skills outside skills/ and no root SKILL.md: the root stays the base and both load.
    # Under skills/ the deep limit holds; elsewhere in an extra root only two levels.
    tree.skill("r2/skills/x/y/inside")
    tree.skill("r2/sibling/kept")
    tree.skill("r2/grp/g/too-deep")
    snap, _ = run([("r1", Source.EXTRA), ("r2", Source.EXTRA)])
    assert names(snap) == ["deep", "inside", "kept"]


def test_valid_root_skill_beside_skills_folder_is_the_only_skill(tree: Tree, run: Run) -> None:
    tree.skill("both", "both")
    tree.skill("both/skills/child")
    snap, _ = run([("both", Source.EXTRA)])
    assert names(snap) == ["both"]


def test_invalid_root_skill_beside_skills_folder_lets_children_load(tree: Tree, run: Run) -> None:
    tree.write("both/SKILL.md", "---\nname: both\n---\n")
    tree.skill("both/skills/child")
    snap, diags = run([("both", Source.EXTRA)])
    assert names(snap) == ["child"]
    assert "skills.missing-description" in codes_of(diags)


def test_limits_candidates_per_root_and_skills_per_source(tree: Tree, run: Run) -> None:
    for index in range(6):
        tree.skill(f"ws/s{index}")
    limits = SkillsSettings(limits=Limits(max_candidates_per_root=4, max_skills_loaded_per_source=2))
    snap, diags = run([("ws", WS)], settings=limits)
    assert names(snap) == ["s0", "s1"]
    assert codes_of(diags).count("skills.discovery-limit") >= 2


def test_skill_file_size_limit(tree: Tree, run: Run) -> None:
    tree.skill("ws/big", body="x" * 500)
    tree.skill("ws/small")
    snap, diags = run([("ws", WS)], settings=SkillsSettings(limits=Limits(max_skill_file_bytes=300)))
    assert names(snap) == ["small"]
    big = [d for d in diags if d.code == "skills.file-too-large"]
    assert big and big[0].message == "File exceeds 300 bytes"
    assert big[0].location is not None and big[0].location.file.endswith("big/SKILL.md")


def test_broken_frontmatter_and_missing_description_are_diagnostics_not_exceptions(
        tree: Tree, run: Run) -> None:
    tree.write("ws/bad/SKILL.md", "---\nname: @bad\ndescription: d\n---\n")
    tree.write("ws/nodesc/SKILL.md", "---\nname: nodesc\n---\n")
    tree.write("ws/binary/SKILL.md", "---\nname: bin\ndescription: \xff\xfe\n---\n")
    snap, diags = run([("ws", WS)])
    assert names(snap) == ["bin"]
    assert {"skills.invalid-frontmatter", "skills.missing-description"} <= set(codes_of(diags))
    missing = next(d for d in diags if d.code == "skills.missing-description")
    assert missing.message == "description is required"


def test_symlink_escape_is_skipped_unless_allowed(tree: Tree, run: Run) -> None:
    tree.skill("outside/esc", "esc")
    tree.skill("allowed/ok", "linked")
    tree.link("outside/esc", "ws/escape")
    tree.link("allowed/ok", "ws/linked")
    settings = SkillsSettings(allow_symlink_targets=(tree.path("allowed"),))
    snap, diags = run([("ws", WS)], settings=settings)
    assert names(snap) == ["linked"]
    escape = next(d for d in diags if d.code == "skills.symlink-escape")
    assert "reason=symlink-escape" in escape.message
    assert escape.location is not None and escape.location.file == tree.path("ws", "escape")


def test_allow_symlink_targets_only_for_workspace_project_and_extra(tree: Tree, run: Run) -> None:
    tree.skill("allowed/ok", "linked")
    for root in ("bundled", "workshop", "ws", "project", "extra"):
        tree.link("allowed/ok", f"{root}/linked-{root}")
        tree.skill(f"{root}/plain-{root}")
    settings = SkillsSettings(allow_symlink_targets=(tree.path("allowed"),))
    snap, diags = run([("extra", Source.EXTRA), ("bundled", Source.BUNDLED),
                       ("workshop", Source.WORKSHOP), ("project", Source.PROJECT), ("ws", WS)],
                      settings=settings)
    loaded = {s.name: s.source for s in snap.skills}
    assert loaded["linked"] == "openclaw-workspace"  # the workspace copy wins the name
    assert "skills.bundled-symlink-escape" in codes_of(diags)
    assert "skills.symlink-escape" in codes_of(diags)  # the workshop link


def test_managed_and_personal_skills_may_point_anywhere_and_use_real_paths(tree: Tree, run: Run) -> None:
    tree.skill("outside/m", "m")
    tree.skill("outside/p", "p")
    tree.link("outside/m", "managed/m")
    tree.link("outside/p", "personal/p")
    snap, diags = run([("managed", Source.MANAGED), ("personal", Source.PERSONAL)])
    assert names(snap) == ["m", "p"]
    assert snap.status("m").file_path == os.path.realpath(tree.path("outside/m/SKILL.md"))  # type: ignore[union-attr]
    assert not diags


def test_skill_md_must_stay_inside_its_folder(tree: Tree, run: Run) -> None:
    target = tree.write("elsewhere/file.md", "---\nname: mdlink\ndescription: d\n---\n")
    (tree.root / "ws/mdlink").mkdir(parents=True)
    os.symlink(target, tree.root / "ws/mdlink/SKILL.md")
    tree.write("ws/inner/real.md", "---\nname: inner\ndescription: d\n---\n")
    os.symlink("real.md", tree.root / "ws/inner/SKILL.md")
    snap, diags = run([("ws", WS)])
    assert names(snap) == ["inner"]
    assert "skills.symlink-escape" in codes_of(diags)


def test_hardlinked_skill_md_is_rejected_except_for_bundled(tree: Tree, run: Run) -> None:
    hard = tree.skill("ws/hard")
    os.link(hard, tree.root / "copy.md")
    bundled = tree.skill("bundled/bhard")
    os.link(bundled, tree.root / "bcopy.md")
    snap, diags = run([("bundled", Source.BUNDLED), ("ws", WS)])
    assert names(snap) == ["bhard"]
    assert next(d for d in diags if d.code == "skills.hardlinked").message == (
        "path must not be hardlinked")


def test_a_skill_md_directory_or_dangling_link_is_skipped(tree: Tree, run: Run) -> None:
    (tree.root / "ws/dirmd/SKILL.md").mkdir(parents=True)
    (tree.root / "ws/dangling").mkdir(parents=True)
    os.symlink("nowhere.md", tree.root / "ws/dangling/SKILL.md")
    snap, diags = run([("ws", WS)])
    assert names(snap) == []
    assert {"skills.not-a-file", "skills.unresolved-path"} <= set(codes_of(diags))


def test_missing_roots_are_silent(tree: Tree, run: Run) -> None:
    snap, diags = run([("does-not-exist", WS)])
    assert snap.skills == () and diags == []


def test_workshop_root_is_a_pure_container(tree: Tree, run: Run) -> None:
    tree.skill("workshop", "root-itself")
    tree.skill("workshop/w1")
    snap, _ = run([("workshop", Source.WORKSHOP)])
    assert names(snap) == ["w1"]
