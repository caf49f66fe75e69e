"""Skill folders → the ConfigMap a gateway pod mounts: what is published, what is left out and why."""

from __future__ import annotations

import base64
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from clawplane.k8s.objects.children import Owner
from clawplane.k8s.objects.skillfiles import MAX_FILE_BYTES, collect, skills_config_map, volume_json


def snapshot(*skills: tuple[str, Path, bool]) -> Any:
    return SimpleNamespace(skills=[SimpleNamespace(name=n, base_dir=str(d), in_prompt=p) for n, d, p in skills])


def test_prompt_skills_under_the_root_are_published_with_their_files(tmp_path: Path) -> None:
    root = tmp_path / "skills" / "ns"
    style = root / "inline-skills" / "style"
    (style / "scripts").mkdir(parents=True)
    (style / "SKILL.md").write_text("---\nname: style\n---\nRun scripts/fmt.sh\n")
    (style / "scripts" / "fmt.sh").write_text("#!/bin/sh\n")
    (style / "logo.png").write_bytes(b"\x89PNG\x00\xff")
    (style / "big.txt").write_text("x" * (MAX_FILE_BYTES + 1))
    (style / ".hidden").write_text("no")
    (style / "link").symlink_to("/etc/passwd")
    hidden = root / "inline-skills" / "unused"
    hidden.mkdir()
    (hidden / "SKILL.md").write_text("x")
    outside = tmp_path / "elsewhere" / "ext"
    outside.mkdir(parents=True)
    found = collect(
        {"a": snapshot(("style", style, True), ("unused", hidden, False)), "b": snapshot(("ext", outside, True))}, root
    )
    assert sorted(found.files) == [
        "inline-skills/style/SKILL.md",
        "inline-skills/style/logo.png",
        "inline-skills/style/scripts/fmt.sh",
    ]
    assert any("big.txt" in r for r in found.left_out) and any("skill ext" in r for r in found.left_out)

    cm, items = skills_config_map("clawplane-skills-default", "ns", found, owner=Owner("Gateway", "default", "u"))
    keys = {item["path"]: item["key"] for item in items}
    assert cm["data"][keys["inline-skills/style/scripts/fmt.sh"]] == "#!/bin/sh\n"
    assert base64.b64decode(cm["binaryData"][keys["inline-skills/style/logo.png"]]) == b"\x89PNG\x00\xff"
    assert all(len(k) <= 253 and "/" not in k for k in keys.values())
    volume = volume_json("clawplane-skills-default", items, str(root))
    assert volume["volumeMounts"] == [{"name": "clawplane-skills", "mountPath": str(root), "readOnly": True}]
