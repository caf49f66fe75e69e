"""The planner: each action and reason, from compiled desired state and observed records."""

from __future__ import annotations

from pathlib import Path

from clawplane.desired import Compiler, DesiredState
from clawplane.planning import ActionType, Plan, ReasonCode, make_plan, render_plan
from clawplane.state import ObservedState, ResourceRecord, RuntimeRecord, ToolRecord
from clawplane.validation import validate_paths

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"
SERVER = HEAD + "kind: McpServer\nmetadata:\n  name: notes\nspec:\n  command: python3\n  args: [{arg}]\n  env:\n    TOKEN:\n      valueFrom: {{env: CANARY}}\n"
AGENT = HEAD + "kind: Agent\nmetadata:\n  name: coder\nspec:\n  skills: [{skill}]\n"
CANARY = "canary-secret-7f3a9"


def compile_folder(tmp_path: Path, files: dict[str, str], env: dict[str, str] | None = None,
                   compiler: Compiler | None = None) -> DesiredState:
    for old in tmp_path.glob("*.yaml"):
        old.unlink()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = validate_paths([tmp_path])
    assert result.ok, result.diagnostics.sorted()
    return (compiler or Compiler()).compile(result, folder=tmp_path, environ=env or {"CANARY": CANARY})


def applied(desired: DesiredState, *, supervisor: bool = True, phase: str = "ready",
            tools: tuple[ToolRecord, ...] = (ToolRecord("add", "notes__add", "h1"),)) -> ObservedState:
    """The observed state right after a successful apply of ``desired``."""
    resources = {k: ResourceRecord(k, d.kind, d.name, d.config_hash, 1, 1, d.spec, "Ready", [], {"digests": dict(d.digests)})
                 for k, d in desired.resources.items()}
    runtimes = {d.name: RuntimeRecord(d.name, d.config_hash, "clawplane", "stdio", phase, pid=1)
                for d in desired.of_kind("McpServer")}
    names = [d.name for d in desired.of_kind("McpServer")]
    return ObservedState(resources=resources, runtimes=runtimes,
                         tools_observed=dict.fromkeys(names, tools), tools_applied=dict.fromkeys(names, tools),
                         supervisor_alive=supervisor)


def plan(desired: DesiredState, observed: ObservedState, outputs: dict[str, str] | None = None) -> Plan:
    return make_plan(desired, observed, outputs=outputs or {}, created_at="2026-12-02T00:00:00Z")


def action(p: Plan, key: str) -> tuple[ActionType, list[ReasonCode]]:
    change = next(c for c in p.changes if c.key == key)
    return change.action, [r.code for r in change.reasons]


def test_new_resources_are_created(tmp_path: Path) -> None:
    desired = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py"), "a.yaml": AGENT.format(skill="x")})
    p = plan(desired, ObservedState())
    assert action(p, "McpServer/notes") == (ActionType.CREATE, [ReasonCode.NEW])
    assert p.summary().add == 2 and "Plan: 2 to add, 0 to change, 0 to destroy." in render_plan(p)


def test_converged_state_plans_no_changes(tmp_path: Path) -> None:
    desired = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py")})
    p = plan(desired, applied(desired))
    assert not p.has_changes
    assert render_plan(p).startswith("No changes.")


def test_changed_args_replace_the_server_with_a_field_diff(tmp_path: Path) -> None:
    before = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py")})
    after = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="b.py")})
    p = plan(after, applied(before))
    assert action(p, "McpServer/notes") == (ActionType.REPLACE, [ReasonCode.SPEC_CHANGED])
    change = p.changes[0]
    assert [(f.path, f.before, f.after) for f in change.diff] == [("spec.args[0]", "a.py", "b.py")]
    assert "~ spec.args[0]: \"a.py\" -> \"b.py\"" in render_plan(p)


def test_changed_secret_value_replaces_without_revealing_it(tmp_path: Path) -> None:
    text = SERVER.format(arg="a.py")
    before = compile_folder(tmp_path, {"s.yaml": text})
    after = compile_folder(tmp_path, {"s.yaml": text}, env={"CANARY": CANARY + "-rotated"})
    p = plan(after, applied(before))
    assert action(p, "McpServer/notes") == (ActionType.REPLACE, [ReasonCode.SECRET_CHANGED])
    assert CANARY not in p.to_json() and CANARY not in render_plan(p)


def test_agent_changes_update_in_place(tmp_path: Path) -> None:
    before = compile_folder(tmp_path, {"a.yaml": AGENT.format(skill="x")})
    after = compile_folder(tmp_path, {"a.yaml": AGENT.format(skill="y")})
    assert action(plan(after, applied(before)), "Agent/coder") == (ActionType.UPDATE, [ReasonCode.SPEC_CHANGED])


def test_removed_resources_are_deleted_and_mass_delete_is_flagged(tmp_path: Path) -> None:
    before = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py"), "a.yaml": AGENT.format(skill="x")})
    after = compile_folder(tmp_path, {"a.yaml": AGENT.format(skill="x")})
    p = plan(after, applied(before))
    assert action(p, "McpServer/notes") == (ActionType.DELETE, [ReasonCode.REMOVED])
    assert not p.mass_delete  # one of two
    empty = compile_folder(tmp_path, {"g.yaml": HEAD + "kind: Gateway\nmetadata:\n  name: default\n"})
    assert plan(empty, applied(before)).mass_delete


def test_missing_supervisor_or_crashed_runtime_replaces(tmp_path: Path) -> None:
    desired = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py")})
    assert action(plan(desired, applied(desired, supervisor=False)), "McpServer/notes") == (
        ActionType.REPLACE, [ReasonCode.RUNTIME_MISSING])
    assert action(plan(desired, applied(desired, phase="crashed")), "McpServer/notes") == (
        ActionType.REPLACE, [ReasonCode.RUNTIME_CRASHED])


def test_upstream_tool_changes_show_as_drift(tmp_path: Path) -> None:
    desired = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py")})
    observed = applied(desired)
    drifted = ObservedState(
        resources=observed.resources, runtimes=observed.runtimes, supervisor_alive=True,
        tools_applied=observed.tools_applied,
        tools_observed={"notes": (ToolRecord("add", "notes__add", "h2"), ToolRecord("rm", "notes__rm", "h3"))},
    )
    p = plan(desired, drifted)
    assert action(p, "McpServer/notes") == (ActionType.UPDATE, [ReasonCode.TOOLS_DRIFTED])
    assert "+rm, ~add" in p.changes[0].reasons[0].message


def test_outputs_are_planned_by_content_hash(tmp_path: Path) -> None:
    desired = compile_folder(tmp_path, {"a.yaml": AGENT.format(skill="x")})
    observed = applied(desired)
    observed.outputs.update({"openclaw.json": "old", "agents/gone/snapshot.json": "x", "same.txt": "s"})
    p = plan(desired, observed, outputs={"openclaw.json": "new", "agents/coder/tools.json": "t", "same.txt": "s"})
    by_name = {c.name: c.action for c in p.outputs}
    assert by_name == {"openclaw.json": ActionType.UPDATE, "agents/coder/tools.json": ActionType.CREATE,
                       "same.txt": ActionType.NOOP, "agents/gone/snapshot.json": ActionType.DELETE}


def test_plan_json_round_trips_and_keeps_its_hash(tmp_path: Path) -> None:
    desired = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py")})
    p = plan(desired, ObservedState())
    again = Plan.from_json(p.to_json())
    assert again == p and again.plan_hash() == p.plan_hash()


def test_recompile_reuses_unchanged_resources(tmp_path: Path) -> None:
    from clawplane.validation import ValidationCache

    compiler, cache = Compiler(), ValidationCache(racy_window_ns=0)  # trust files written just now
    (tmp_path / "a.yaml").write_text(AGENT.format(skill="x"))
    (tmp_path / "b.yaml").write_text(AGENT.replace("coder", "w").format(skill="z"))
    first = compiler.compile(validate_paths([tmp_path], cache=cache), folder=tmp_path)
    (tmp_path / "a.yaml").write_text(AGENT.format(skill="y"))
    second = compiler.compile(validate_paths([tmp_path], cache=cache), folder=tmp_path)
    assert second.resources["Agent/w"] is first.resources["Agent/w"]
    assert second.resources["Agent/coder"] is not first.resources["Agent/coder"]
    assert second.resources["Agent/coder"].resource.spec.skills == ["y"]  # type: ignore[attr-defined]


def test_agent_views_follow_edits_to_the_agent_and_to_the_servers(tmp_path: Path) -> None:
    from clawplane.validation import ValidationCache

    compiler, cache = Compiler(), ValidationCache(racy_window_ns=0)
    server = HEAD + "kind: McpServer\nmetadata:\n  name: {name}\nspec:\n  enabled: {on}\n  command: node\n"
    agent = HEAD + "kind: Agent\nmetadata:\n  name: coder\nspec:\n  mcpServers: [{servers}]\n"
    (tmp_path / "a.yaml").write_text(agent.format(servers="s1"))
    (tmp_path / "s1.yaml").write_text(server.format(name="s1", on="true"))
    (tmp_path / "s2.yaml").write_text(server.format(name="s2", on="false"))

    def views() -> tuple[str, ...]:
        desired = compiler.compile(validate_paths([tmp_path], cache=cache), folder=tmp_path)
        fresh = Compiler().compile(validate_paths([tmp_path]), folder=tmp_path)
        assert desired.agents == fresh.agents
        return desired.agents["coder"].servers

    assert views() == ("s1",)
    (tmp_path / "a.yaml").write_text(agent.format(servers="s1, s2"))
    assert views() == ("s1",)
    (tmp_path / "s2.yaml").write_text(server.format(name="s2", on="true"))  # the agent's file is unchanged
    assert views() == ("s1", "s2")
    (tmp_path / "s1.yaml").write_text(server.format(name="s1", on="false"))
    assert views() == ("s2",)


def test_resources_of_a_kind_or_type_keep_declaration_order(tmp_path: Path) -> None:
    from clawplane.models import Agent, McpServer, Resource

    server = HEAD + "kind: McpServer\nmetadata:\n  name: {name}\nspec:\n  command: node\n"
    agent = HEAD + "kind: Agent\nmetadata:\n  name: {name}\n"
    desired = compile_folder(tmp_path, {"a.yaml": "---\n".join(
        [server.format(name="s2"), agent.format(name="b"), server.format(name="s1"), agent.format(name="a")]
    )})
    assert [r.name for r in desired.of_kind("McpServer")] == ["s2", "s1"]
    assert [r.name for r in desired.of_type(Agent)] == ["b", "a"]
    assert [r.name for r in desired.of_type(Resource)] == ["s2", "b", "s1", "a"]  # a base class: every group
    assert desired.of_kind("Channel") == [] and desired.models(McpServer)[0].name == "s2"
    assert desired.of_type(McpServer) is not desired.of_type(McpServer)  # callers may change the list


def test_a_kept_plan_reuses_no_ops_but_finds_reasons_to_act_again(tmp_path: Path) -> None:
    """The memo keeps a no-op per resource; a crash, drift or new applied hash still shows."""
    from clawplane.planning import PlanMemo

    desired = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="a.py"), "a.yaml": AGENT.format(skill="x")})
    memo = PlanMemo()
    settled = applied(desired)
    first = make_plan(desired, settled, outputs={}, created_at="t", memo=memo)
    again = make_plan(desired, applied(desired), outputs={}, created_at="t", memo=memo)
    assert [c.action for c in again.changes] == [ActionType.NOOP, ActionType.NOOP]
    assert all(a is b for a, b in zip(first.changes, again.changes, strict=True))  # nothing rebuilt
    crashed = make_plan(desired, applied(desired, phase="crashed"), outputs={}, created_at="t", memo=memo)
    assert action(crashed, "McpServer/notes") == (ActionType.REPLACE, [ReasonCode.RUNTIME_CRASHED])
    drifted = applied(desired)
    drifted = ObservedState(resources=drifted.resources, runtimes=drifted.runtimes,
                            tools_observed={"notes": (ToolRecord("add", "notes__add", "h2"),)},
                            tools_applied=drifted.tools_applied, supervisor_alive=True)
    assert action(make_plan(desired, drifted, outputs={}, created_at="t", memo=memo),
                  "McpServer/notes")[1] == [ReasonCode.TOOLS_DRIFTED]
    # Applied at another hash: the kept no-op (made against the old one) is not reused.
    other = compile_folder(tmp_path, {"s.yaml": SERVER.format(arg="b.py"), "a.yaml": AGENT.format(skill="x")})
    moved = make_plan(desired, applied(other), outputs={}, created_at="t", memo=memo)
    assert action(moved, "McpServer/notes")[0] is ActionType.REPLACE
    back = make_plan(desired, settled, outputs={}, created_at="t", memo=memo)
    assert [c.model_dump() for c in back.changes] == [c.model_dump() for c in plan(desired, settled).changes]
    # The edit applied: the no-op now names the new hash, not the one the kept no-op had.
    now = make_plan(other, applied(other), outputs={}, created_at="t", memo=memo)
    assert [c.model_dump() for c in now.changes] == [c.model_dump() for c in plan(other, applied(other)).changes]
