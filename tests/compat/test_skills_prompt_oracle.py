"""The skills prompt text against OpenClaw 2026.9.6's own ``prepareSkillsForPrompt``.

Seeded random skill lists (escaping characters, emoji, whitespace runs, long
descriptions, mixed-case and punctuated names) under random budgets go through
OpenClaw's formatter in one Node process; clawplane's ``prepare_prompt`` must
return the identical text and the same included skills, in full, compact,
shortened and truncated modes alike.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

from tests.compat.conftest import require_oracle
from tests.oracles import locate

from clawplane.jscompat import locale_sort_key, utf16_len
from clawplane.skills import PromptSkill, prepare_prompt

_SCRIPT = r"""
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
const [pkg, input] = process.argv.slice(2);
const dist = path.join(pkg, "dist");
let prepare;
for (const f of fs.readdirSync(dist).filter((f) => f.endsWith(".mjs")).sort()) {
  const text = fs.readFileSync(path.join(dist, f), "utf8");
  if (!text.includes("//#region src/skills/loading/skill-prompt-limits.ts\n")) continue;
  for (const m of text.matchAll(/export\s*\{([^}]*)\}/g)) for (const part of m[1].split(",")) {
    const [local, alias] = part.trim().split(/\s+as\s+/);
    if (local === "prepareSkillsForPrompt") prepare = (await import(pathToFileURL(path.join(dist, f)).href))[alias ?? local];
  }
  if (prepare) break;
}
if (!prepare) { console.error("prepareSkillsForPrompt not found"); process.exit(3); }
const cases = JSON.parse(fs.readFileSync(input, "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => {
  const r = prepare({ skills: c.skills, maxSkillsInPrompt: c.maxSkillsInPrompt, maxSkillsPromptChars: c.maxSkillsPromptChars });
  return { prompt: r.prompt, names: r.skills.map((s) => s.name) };
})));
"""

_NAME_PARTS = ["alpha", "Beta", "b2", "B2", "a-b", "a_b", "ab", "zeta", "é", "Ω", "x&y", "q<'\">",
               "10", "2", "_lead", "-dash", "😀"]
_DESC_PARTS = ["Does things.", "Escapes & < > \" '.", "Emoji 😀😀 here.", "Tabs\tand\n newlines",
               "   padded   ", "word " * 12, "Use this: when needed", "ü" * 30, "x" * 230]


def _case(rng: random.Random) -> dict[str, Any]:
    count = rng.choice([0, 1, 2, 5, 20, 60, 160])
    skills, seen = [], set()
    for index in range(count):
        name = rng.choice(_NAME_PARTS) + rng.choice(["", str(index), f"-{index}"])
        if name in seen:
            continue
        seen.add(name)
        description = " ".join(rng.choice(_DESC_PARTS) for _ in range(rng.randint(1, 3)))
        skills.append({"name": name, "description": description,
                       "filePath": f"/ws/skills/{name}/SKILL.md"})
    return {"skills": skills, "maxSkillsInPrompt": rng.choice([None, 150, 10, 3, 0]),
            "maxSkillsPromptChars": rng.choice([None, 18000, 6000, 2000, 900, 500, 380, 100, 0])}


def _run(tmp_path: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    require_oracle("openclaw")
    cmd, package = locate.openclaw_cmd(), locate.openclaw_package_dir()
    assert cmd is not None and package is not None
    script = tmp_path / "prompt.mjs"
    script.write_text(_SCRIPT, encoding="utf-8")
    data = tmp_path / "cases.json"
    data.write_text(json.dumps(cases), encoding="utf-8")
    proc = subprocess.run([cmd[0], str(script), str(package), str(data)], capture_output=True,
                          text=True, timeout=110, check=False)
    assert proc.returncode == 0, proc.stderr
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


def test_random_prompts_match_openclaw(tmp_path: Path) -> None:
    rng = random.Random(20260906)
    cases = [_case(rng) for _ in range(300)]
    problems = []
    shapes: set[tuple[str, bool, bool]] = set()
    for case, oracle in zip(cases, _run(tmp_path, cases), strict=True):
        skills = [PromptSkill(s["name"], s["description"], s["filePath"]) for s in case["skills"]]
        mine = prepare_prompt(skills, max_skills=case["maxSkillsInPrompt"],
                              max_chars=case["maxSkillsPromptChars"], sort_key=locale_sort_key)
        shapes.add((mine.format, mine.truncated, bool(mine.description_max_chars)))
        if mine.text != oracle["prompt"] or list(mine.skills) != oracle["names"]:
            problems.append(f"case {json.dumps(case)[:300]}…\n  openclaw:  {oracle['prompt'][:300]!r}"
                            f"\n  clawplane: {mine.text[:300]!r}")
    assert not problems, f"{len(problems)} of {len(cases)} differ:\n" + "\n".join(problems[:5])
    # Every fitting mode was exercised: full, truncated by count, compact with shortened or
    # omitted descriptions, truncated compact, and nothing at all.
    assert {("full", False, False), ("full", True, False), ("compact", False, True),
            ("compact", False, False), ("compact", True, False), ("compact", True, True),
            ("empty", False, False)} <= shapes


def test_full_mode_formula_370_plus_97_per_skill(tmp_path: Path) -> None:
    skills = [{"name": "alpha", "description": "Does alpha things.",
               "filePath": "/ws/skills/alpha/SKILL.md"}]
    oracle = _run(tmp_path, [{"skills": skills, "maxSkillsInPrompt": None,
                              "maxSkillsPromptChars": None}])[0]
    assert utf16_len(oracle["prompt"]) == 515 == 370 + 97 + 5 + 18 + 25
    mine = prepare_prompt([PromptSkill("alpha", "Does alpha things.", "/ws/skills/alpha/SKILL.md")])
    assert mine.text == oracle["prompt"]
