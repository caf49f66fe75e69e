"""Custom resources → engine folder: invalid specs fall back to the last accepted one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawplane.k8s.adapter.materialize import Materializer


def cr(kind: str, name: str, spec: dict[str, Any], generation: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "generation": generation, "uid": f"u-{name}"},
        "spec": spec,
    }


SERVER = {"transport": "stdio", "command": "uvx", "args": ["a"]}


def test_valid_resources_are_accepted_at_their_generation(tmp_path: Path) -> None:
    m = Materializer(tmp_path)
    out = m.sync([cr("McpServer", "a", SERVER, 3), cr("Agent", "bot", {"mcpServers": ["a"]})])
    assert out.result.ok and not out.problems
    assert out.accepted_generation == {"McpServer/a": 3, "Agent/bot": 1}
    assert out.in_effect == {"McpServer/a": SERVER, "Agent/bot": {"mcpServers": ["a"]}}


def test_invalid_new_spec_keeps_the_last_accepted_one(tmp_path: Path) -> None:
    m = Materializer(tmp_path)
    m.sync([cr("McpServer", "a", SERVER, 1)])
    out = m.sync([cr("McpServer", "a", {**SERVER, "bogus": 1}, 2)])
    assert out.result.ok
    assert out.problems["McpServer/a"].reason == "Invalid"
    assert "bogus" in out.problems["McpServer/a"].message
    assert out.stale == {"McpServer/a"} and out.accepted_generation["McpServer/a"] == 1
    assert [r.key for r in out.result.resources] == ["McpServer/a"]
    # What runs (and so what the config hash's Secret digests follow) is the accepted spec.
    assert out.in_effect["McpServer/a"] == SERVER


def test_never_accepted_invalid_resource_is_left_out(tmp_path: Path) -> None:
    out = Materializer(tmp_path).sync(
        [cr("McpServer", "a", {"transport": "stdio"}), cr("McpServer", "b", SERVER)]
    )
    assert "McpServer/a" in out.problems and "McpServer/a" not in out.accepted_generation
    assert [r.key for r in out.result.resources] == ["McpServer/b"]


def test_dangling_reference_is_reported_as_ref_not_found(tmp_path: Path) -> None:
    out = Materializer(tmp_path).sync([cr("Agent", "bot", {"mcpServers": ["missing"]})])
    assert out.problems["Agent/bot"].reason == "RefNotFound"
    assert out.result.ok and not out.result.resources


def test_deleted_resources_leave_the_folder(tmp_path: Path) -> None:
    m = Materializer(tmp_path)
    m.sync([cr("McpServer", "a", SERVER), cr("McpServer", "b", SERVER)])
    out = m.sync([cr("McpServer", "b", SERVER)])
    assert [r.key for r in out.result.resources] == ["McpServer/b"]
    assert sorted(p.name for p in tmp_path.rglob("*.yaml")) == ["b.yaml"]
