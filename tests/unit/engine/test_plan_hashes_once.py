"""A plan hashes the desired state's fingerprint once, from the copy it plans.

A pass makes several copies of the desired state (compile, then the skills digests), and
each copy hashed every resource's config hash at once: on the plan bench (1,200 resources)
the copies' fingerprints were ~5% of a re-plan. The fingerprint is now computed on first use.
Counted, not timed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from clawplane.desired import state
from clawplane.reconcile.engine import Engine
from clawplane.state import StateDB
from clawplane.workspace import Workspace

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def _folder(root: Path) -> Path:
    docs = [
        HEAD + f"kind: McpServer\nmetadata:\n  name: s{i}\nspec:\n  enabled: false\n  command: node\n  args: [s.js]\n"
        for i in range(5)
    ]
    docs += [HEAD + f"kind: Agent\nmetadata:\n  name: a{i}\nspec:\n  mcpServers: [s{i}]\n" for i in range(5)]
    root.mkdir()
    (root / "resources.yaml").write_text("---\n".join(docs))
    return root


def test_a_plan_fingerprints_the_desired_state_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.for_folder(_folder(tmp_path / "f"))
    db = StateDB.open(ws.state_dir)
    engine = Engine(ws)
    seen: list[int] = []
    real = state.fingerprint_of

    def counted(resources: Any) -> str:
        seen.append(len(resources))
        return real(resources)

    for module in list(sys.modules.values()):  # wherever it was imported to
        if getattr(module, "fingerprint_of", None) is real:
            monkeypatch.setattr(module, "fingerprint_of", counted)
    planned = engine.plan(db)
    assert seen == [10]
    # The plan carries the fingerprint of what it planned: the copy with the skills digests.
    assert planned.plan.desired_fingerprint == real(planned.desired.resources) == planned.desired.fingerprint
    assert seen == [10]  # read again from the same copy: not hashed again


def test_a_copy_does_not_inherit_the_fingerprint_of_its_original(tmp_path: Path) -> None:
    ws = Workspace.for_folder(_folder(tmp_path / "f"))
    desired, _ = Engine(ws).load()
    before = desired.fingerprint
    key = next(iter(desired.resources))
    changed = desired.with_digests("skills", {key: "a-new-digest"})
    assert changed.fingerprint != before
    assert changed.fingerprint == state.fingerprint_of(changed.resources)
    assert desired.fingerprint == before


def test_the_fingerprint_follows_keys_and_hashes_not_declaration_order() -> None:
    import hashlib
    import json
    from types import SimpleNamespace

    def resources(keys: list[str], bump: str = "") -> dict[str, Any]:
        return {k: SimpleNamespace(config_hash=hashlib.sha256((k + bump * (k == keys[0])).encode()).hexdigest())
                for k in keys}

    def expected(found: dict[str, Any]) -> str:  # the definition, spelt out
        doc = json.dumps(sorted((k, r.config_hash) for k, r in found.items()), separators=(",", ":"))
        return hashlib.sha256(doc.encode()).hexdigest()[:16]

    keys = [f"McpServer/s-{i:03d}" for i in range(300, 0, -1)] + ["Agent/é", "Odd/\"\\\n🦞"]
    seen = set()
    for found in (resources(keys), resources(keys[::-1]), resources(keys, "x"), resources(keys[1:]),
                  resources([*keys, "Agent/a"])):
        assert state.fingerprint_of(found) == expected(found)
        seen.add(state.fingerprint_of(found))
    assert len(seen) == 4  # only the reversed declaration order gives the same fingerprint
