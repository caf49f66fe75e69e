"""SKILL.md frontmatter and manifest parsing against OpenClaw 2026.9.6's own functions.

One Node process loads ``parseSkillFrontmatter``, ``resolveSkillManifestMetadata``
and ``resolveSkillInvocationPolicy`` from the installed package (found by their
``//#region`` marker) and parses thousands of documents: a hand-written corpus of
edge cases and seeded random ones (tricky values, indentation, tabs, CRLF, BOM,
flow collections, quotes, anchors, line separators). clawplane must give the
same strings, or reject exactly the documents OpenClaw rejects.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.compat.conftest import require_oracle
from tests.oracles import locate
from tests.support.frontmatter_docs import nested_docs, simple_docs

from clawplane.skills import FrontmatterError, parse_manifest, parse_skill_frontmatter
from clawplane.skills.manifest import Manifest, parse_invocation

_SCRIPT = r"""
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
const [pkg, input] = process.argv.slice(2);
const dist = path.join(pkg, "dist");
const wanted = ["parseSkillFrontmatter", "resolveSkillManifestMetadata", "resolveSkillInvocationPolicy"];
const fns = {};
for (const f of fs.readdirSync(dist).filter((f) => f.endsWith(".mjs")).sort()) {
  const text = fs.readFileSync(path.join(dist, f), "utf8");
  if (!text.includes("//#region src/skills/loading/frontmatter.ts\n")) continue;
  const aliases = {};
  for (const m of text.matchAll(/export\s*\{([^}]*)\}/g)) for (const part of m[1].split(",")) {
    const [local, alias] = part.trim().split(/\s+as\s+/);
    if (wanted.includes(local)) aliases[local] = alias ?? local;
  }
  if (Object.keys(aliases).length !== wanted.length) continue;
  const mod = await import(pathToFileURL(path.join(dist, f)).href);
  for (const name of wanted) fns[name] = mod[aliases[name]];
  break;
}
if (Object.keys(fns).length !== 3) { console.error("frontmatter functions not found"); process.exit(3); }
const docs = JSON.parse(fs.readFileSync(input, "utf8"));
const out = docs.map((doc) => {
  try {
    const fm = fns.parseSkillFrontmatter(doc);
    return { ok: fm, manifest: fns.resolveSkillManifestMetadata(fm) ?? null,
             invocation: fns.resolveSkillInvocationPolicy(fm) };
  } catch (e) { return { error: e.message }; }
});
process.stdout.write(JSON.stringify(out));
"""

CORPUS_BLOCKS = [
    "name: x\ndescription: plain",
    "name: x\ndescription: Use this: when X happens",
    "description: Use this: when X happens\nname: x",
    "name: x\ndescription: [unclosed",
    "description: [unclosed\nname: y",
    "description: `code` here",
    "name: @scope/x\ndescription: d",
    'name: x\ndescription: "quoted" trailing',
    "name: x\ndescription: d\nsummary: a: b",
    "name: x\ndescription: d\nsummary:\ta: b",
    "name: x\ndescription: d\nhomepage: a: b",
    "name: x\ndescription: *undefined",
    "a: &x 1\nname: *x\ndescription: d",
    "a: &x 1\nb: &x 2\nname: *x\ndescription: d",
    "name: 1.0\ndescription: 1e3",
    "name: 0o17\ndescription: 0x1F",
    "name: .inf\ndescription: -.Inf",
    "name: yes\ndescription: on",
    "name: ~\ndescription: d",
    "description: >\n  folded\n  text\n\n  para\nname: f",
    "description: |-\n  strip\nname: l",
    'metadata: {"openclaw": {"always": true}}\ndescription: d',
    "metadata:\n  openclaw:\n    always: yes\n    requires:\n      bins: [a, b]\ndescription: d",
    'metadata: {\n  "openclaw": {"emoji": "x"}\n}\ndescription: d',
    'metadata: {"openclaw":\n{"emoji": "x"}}\ndescription: d',
    'description: "x\ny"',
    "description: d\ndescription: e",
    "- a\n- b",
    " ",
    "# only comment",
    "description: d\nuser-invocable: no\ndisable-model-invocation: 'yes'",
    "description: d\nuser-invocable: OFF\ndisable-model-invocation: 1",
    "description: d\nuser-invocable: maybe",
    "description: d\nmetadata: '{\"openclaw\": {\"os\": \"darwin, linux\"}}'",
    "description: d\nmetadata: {openclaw: {os: [darwin]}}",
    "description: d\nmetadata: '{openclaw: {requires: {bins: [\"a\",],}, always: true,},}'",
    'description: d\nmetadata: { "clawdbot": { "emoji": "🦞", "skillKey": " spaced " } }',
    'description: d\nmetadata: {"openclaw": [1, 2]}',
    'description: d\nmetadata: {"openclaw": {"requires": [1]}}',
    'description: d\nmetadata: {"openclaw": {"requires": {"bins": [1, null, true, "", " x "]}}}',
    'description: d\nmetadata: {"openclaw": {"install": [{"kind": "brew", "formula": "jq"}, '
    '{"type": "NODE", "package": "left-pad@^1"}, {"kind": "node", "package": "@scope/pkg@1.2.3+b"}, '
    '{"kind": "go", "module": "example.com/x@v1"}, {"kind": "uv", "package": "ruff==0.5"}, '
    '{"kind": "download", "url": "HTTP://Example.COM:80/a/../b.tgz", "sha256": "' + "A" * 64 + '"}, '
    '{"kind": "download", "url": "https://x/y", "sha256": "nope"}, '
    '{"kind": "brew", "cask": "--evil"}, {"kind": "brew", "formula": "a..b"}, '
    '{"kind": "download", "url": "ftp://x/y"}, {"kind": "brew", "formula": "x", "id": "", '
    '"label": "L", "bins": "a, b", "os": ["linux"], "extract": true, "stripComponents": 1, '
    '"targetDir": "t", "archive": "tar"}]}}',
    "description: d\nmetadata: not json at all",
    "description: d\nmetadata: 42",
    'description: "emoji 😀 and \\u00e9"',
    "description: a\u2028b\nname: ls",
    "description: d\nname: n\u0085x",
    "description:null\nname: x",
    "description: d\nmetadata:\n  urls: [http://x/y, a:b]\n  m: {a:b}\n  q: [?, x]\n  k: {-: x}",
    "description: d\nmetadata:\n  k: [-, x]",
    "description: d\nmetadata:\n  k: {x: -, y}",
    "description: d\nurls: [http://x/y]\nflow: {a:b}",
]


def _doc(block: str) -> str:
    return f"---\n{block}\n---\n# Body\n"


def _random_docs(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    keys = ["name", "description", "metadata", "homepage", "user-invocable", "summary", "read_when",
            "x-key", "emoji", "1", '"quoted"', "key with space"]
    values = ["plain", "Use this: when", "a: b", "[unclosed", "[a, b]", "{a: 1}",
              '{"openclaw": {"always": true}}', '"dq"', "'sq'", '"dq" tail', "`tick`", "@at", "%pct",
              "&anc val", "*alias", "!tag v", "!!str 5", "1.0", "0x1F", "0o17", "1e3", "-.inf",
              ".nan", "yes", "No", "TRUE", "~", "null", "", " spaced ", "tab\there", "#notcomment",
              "v # comment", "- item", "? q", ": colon", "a,b,c", "😀 emoji", "é accent", "\\back",
              "ends:", "|", ">", "|-", ">+2", "'it''s'", '"esc \\" q"', '"\\u00e9"', "x]", "x}",
              "a\u2028b", "nul\x00x", "del\x7fx", "c1\x9bx", "bom\ufeffx"]
    continuations = ["  more text", "    deeper", " one", "\tTab", "", "# comment", "  - li",
                     "  k: v", "}", "  }", "]", "not indented", '  "q"']
    docs = []
    for _ in range(count):
        lines = []
        for _ in range(rng.randint(1, 6)):
            key, value = rng.choice(keys), rng.choice(values)
            sep = rng.choice([" ", " ", "  ", "", "\t"])
            indent = rng.choice(["", "", "", "", " ", "  "])
            lines.append(f"{indent}{key}:{sep}{value}".rstrip() if value else f"{indent}{key}:")
            lines += [rng.choice(continuations) for _ in range(rng.choice([0, 0, 0, 1, 2]))]
        newline = rng.choice(["\n", "\n", "\r\n"])
        bom = "\ufeff" if rng.random() < 0.05 else ""
        block = newline.join(lines)
        docs.append(f"{bom}---{newline}{block}{newline}---{newline}body")
    return docs


def _run_oracle(tmp_path: Path, docs: list[str]) -> list[dict[str, Any]]:
    require_oracle("openclaw")
    cmd = locate.openclaw_cmd()
    package = locate.openclaw_package_dir()
    assert cmd is not None and package is not None
    script = tmp_path / "frontmatter.mjs"
    script.write_text(_SCRIPT, encoding="utf-8")
    data = tmp_path / "docs.json"
    data.write_text(json.dumps(docs), encoding="utf-8")
    proc = subprocess.run([cmd[0], str(script), str(package), str(data)], capture_output=True,
                          text=True, timeout=110, check=False)
    assert proc.returncode == 0, proc.stderr
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


def _manifest_json(manifest: Manifest | None) -> dict[str, Any] | None:
    if manifest is None:
        return None
    out: dict[str, Any] = {}
    for key, value in (("always", manifest.always), ("emoji", manifest.emoji),
                       ("homepage", manifest.homepage), ("skillKey", manifest.skill_key),
                       ("primaryEnv", manifest.primary_env)):
        if value is not None:
            out[key] = value
    if manifest.os:
        out["os"] = list(manifest.os)
    if manifest.requires is not None:
        r = manifest.requires
        out["requires"] = {"bins": list(r.bins), "anyBins": list(r.any_bins), "env": list(r.env),
                           "config": list(r.config)}
    if manifest.install:
        out["install"] = [spec.to_dict() for spec in manifest.install]
    return out


def _ours(doc: str) -> dict[str, Any]:
    try:
        fm = parse_skill_frontmatter(doc)
    except FrontmatterError as exc:
        return {"error": str(exc)}
    invocation = parse_invocation(fm)
    return {"ok": fm, "manifest": _manifest_json(parse_manifest(fm)),
            "invocation": {"userInvocable": invocation.user_invocable,
                           "disableModelInvocation": invocation.disable_model_invocation}}


def _differences(docs: list[str], theirs: list[dict[str, Any]]) -> list[str]:
    problems = []
    for doc, oracle in zip(docs, theirs, strict=True):
        mine = _ours(doc)
        if "error" in oracle or "error" in mine:
            same = "error" in oracle and "error" in mine
        else:
            same = mine == oracle
        if not same:
            problems.append(f"{doc!r}\n  openclaw:  {oracle!r}\n  clawplane: {mine!r}")
    return problems


def test_frontmatter_corpus_matches_openclaw(tmp_path: Path) -> None:
    docs = [_doc(block) for block in CORPUS_BLOCKS]
    docs += ["\ufeff---\r\nname: bom\r\ndescription: crlf\r\n---\r\nbody",
             "---\rname: cr\rdescription: cr\r---\r", "---  \nname: ws\ndescription: d\n---  ",
             "---\nname: unterminated\ndescription: d\n", "no frontmatter\n---\nname: x\n---\n",
             " ---\nname: x\ndescription: d\n---\n", "---\n---\n", ""]
    problems = _differences(docs, _run_oracle(tmp_path, docs))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_frontmatter_matches_openclaw(tmp_path: Path, seed: int) -> None:
    docs = _random_docs(seed, 2000) + simple_docs(seed, 1500) + nested_docs(seed, 1500)
    problems = _differences(docs, _run_oracle(tmp_path, docs))
    assert not problems, f"{len(problems)} of {len(docs)} differ:\n" + "\n".join(problems[:20])
