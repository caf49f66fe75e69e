"""A render looks the folder's Agents and Gateway up once, not once per agent.

Per agent, `desired.agent_models` and `desired.gateway` each scanned every resource, so a
render grew with agents x resources: on the plan bench (200 agents, 1,200 resources) that
was a third of a re-plan. Counted, not timed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawplane.desired.state import DesiredState
from clawplane.reconcile.engine import Engine
from clawplane.state import StateDB
from clawplane.workspace import Workspace

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def _folder(root: Path, agents: int) -> Path:
    docs = [HEAD + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  agents:\n    defaults:\n      workspace: ./ws\n"]
    docs += [
        HEAD + f"kind: McpServer\nmetadata:\n  name: s{i}\nspec:\n  enabled: false\n  command: node\n  args: [s.js]\n"
        for i in range(agents)
    ]
    docs += [HEAD + f"kind: Agent\nmetadata:\n  name: a{i}\nspec:\n  mcpServers: [s{i}]\n" for i in range(agents)]
    root.mkdir()
    (root / "resources.yaml").write_text("---\n".join(docs))
    return root


def _scans(tmp: Path, agents: int, monkeypatch: pytest.MonkeyPatch) -> int:
    folder = _folder(tmp / f"n{agents}", agents)
    ws = Workspace.for_folder(folder)
    engine = Engine(ws)
    desired, _ = engine.load()
    observed = engine.observe(StateDB.open(ws.state_dir))
    calls = 0

    def counted(scan: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            nonlocal calls
            calls += 1
            return scan(*args)

        return run

    with monkeypatch.context() as patched:
        for name in ("of_kind", "models"):  # every scan over the resources goes through these
            patched.setattr(DesiredState, name, counted(getattr(DesiredState, name)))
        files = engine.renderer.render(desired, observed)
    assert sum(name.endswith("/tools.json") for name in files) == agents
    return calls


def test_a_render_scans_the_resources_a_fixed_number_of_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _scans(tmp_path, 3, monkeypatch) == _scans(tmp_path, 30, monkeypatch)
