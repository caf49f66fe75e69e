"""ModelProviders through the real CLI and supervisor: probed, recorded, rotated, failing, never leaking."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures.providers.fake_provider import FakeProvider
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.engine.test_apply_quickstart import _all_text

from clawplane.state import StateDB, store

KEY_1 = "sk-canary-first-4c1d9a"
KEY_2 = "sk-canary-second-77b0e2"
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def _provider(name: str, base_url: str, key_file: str, models: list[str]) -> str:
    listed = "".join(f"    - id: {m}\n" for m in models)
    return (
        HEAD + f"kind: ModelProvider\nmetadata: {{name: {name}}}\nspec:\n  baseUrl: {base_url}\n"
        f"  apiKey: {{valueFrom: {{file: {key_file}}}}}\n  connectionTimeoutMs: 5000\n  models:\n{listed}---\n"
    )


class World:
    def __init__(self, folder: Path, cli: Cli, main: FakeProvider, other: FakeProvider) -> None:
        self.folder, self.cli, self.main, self.other = folder, cli, main, other

    def key(self, name: str, value: str) -> None:
        path = self.folder / name
        path.write_text(value + "\n")
        os.chmod(path, 0o600)

    def status(self) -> dict[str, dict[str, Any]]:
        return {r["key"]: r for r in self.cli.json("status", str(self.folder), "--json")["resources"]}

    def plan(self) -> dict[str, Any]:
        proc = self.cli("plan", str(self.folder), "--format", "json")
        assert proc.returncode == 0, proc.stdout
        doc: dict[str, Any] = json.loads(proc.stdout)
        return doc


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    folder = tmp_path / "models"
    folder.mkdir()
    with (
        FakeProvider(key=KEY_1, models=["llama-3.1-8b", "qwen2.5-coder"]) as main,
        FakeProvider(key="other-key-0000", models=["m1"]) as other,
    ):
        cli = Cli(folder)
        w = World(folder, cli, main, other)
        w.key("main.key", KEY_1)
        w.key("other.key", "other-key-0000")
        text = _provider("main", main.base_url, "main.key", ["llama-3.1-8b", "qwen2.5-coder"])
        text += _provider("other", other.base_url, "other.key", ["m1"])
        text += HEAD + "kind: Agent\nmetadata: {name: writer}\nspec:\n  model: main/llama-3.1-8b\n"
        (folder / "resources.yaml").write_text(text)
        yield w
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def test_providers_are_probed_and_their_models_recorded(world: World) -> None:
    applied = world.cli("apply", str(world.folder), "--yes")
    assert applied.returncode == 0, applied.stdout
    main = world.status()["ModelProvider/main"]
    assert main["phase"] == "Ready" and main["models"] == ["llama-3.1-8b", "qwen2.5-coder"]
    assert main["modelCount"] == 2 and main["endpoint"] == f"{world.main.base_url}/models"
    conditions = {c["type"]: (c["status"], c["reason"]) for c in main["conditions"]}
    assert conditions == {
        "Accepted": ("True", "Valid"),
        "ResolvedRefs": ("True", "AllResolved"),
        "Programmed": ("True", "Rendered"),
        "ModelsDiscovered": ("True", "ModelsListed"),
        "Ready": ("True", "Ready"),
    }
    table = world.cli("status", str(world.folder))
    assert "2 models (llama-3.1-8b, qwen2.5-coder)" in table.stdout
    assert world.cli("plan", str(world.folder), "--detailed-exitcode").returncode == 0
    rendered = json.loads((world.folder / ".clawplane/out/openclaw.json").read_text())
    assert rendered["models"]["providers"]["main"]["apiKey"]["source"] == "file"
    assert KEY_1 not in _all_text(world.folder) + applied.stdout + table.stdout


def test_key_rotation_replans_and_reprobes_exactly_that_provider(world: World) -> None:
    assert world.cli("apply", str(world.folder), "--yes").returncode == 0
    out = world.folder / ".clawplane/out/openclaw.json"
    before = out.read_text()
    probes = (len(world.main.seen()), len(world.other.seen()))
    world.main.key = KEY_2
    world.key("main.key", KEY_2)

    plan = world.plan()
    changed = {c["key"]: c for c in plan["changes"] if c["action"] != "noop"}
    assert list(changed) == ["ModelProvider/main"]
    assert changed["ModelProvider/main"]["action"] == "update"
    assert [r["code"] for r in changed["ModelProvider/main"]["reasons"]] == ["secret-changed"]
    assert [c for c in plan["outputs"] if c["action"] != "noop"] == []

    applied = world.cli("apply", str(world.folder), "--yes")
    assert applied.returncode == 0, applied.stdout
    assert (len(world.main.seen()), len(world.other.seen())) == (probes[0] + 1, probes[1])
    assert world.main.seen()[-1].authorized
    # Re-rendered from the new state, and still only a reference: nothing to rewrite.
    assert out.read_text() == before
    entries = store.audit_entries(StateDB.open(world.folder / ".clawplane", create=False))
    assert [a["key"] for a in entries[0].actions if a["action"] != "noop"] == ["ModelProvider/main"]
    status = world.status()
    assert status["ModelProvider/main"]["phase"] == "Ready" and status["ModelProvider/main"]["generation"] == 2
    assert status["ModelProvider/other"]["generation"] == 1
    assert KEY_1 not in _all_text(world.folder) and KEY_2 not in _all_text(world.folder)


def test_a_key_rotated_through_the_applying_shell_is_the_key_the_probe_sends(world: World) -> None:
    """The supervisor started with the old value in its environment; the apply's value must win."""
    text = (world.folder / "resources.yaml").read_text()
    (world.folder / "resources.yaml").write_text(text.replace("{file: main.key}", "{env: MAIN_LLM_KEY}"))
    world.cli.env["MAIN_LLM_KEY"] = KEY_1
    assert world.cli("apply", str(world.folder), "--yes").returncode == 0
    world.main.key = KEY_2
    world.cli.env["MAIN_LLM_KEY"] = KEY_2
    applied = world.cli("apply", str(world.folder), "--yes")
    assert applied.returncode == 0, applied.stdout
    assert world.main.seen()[-1].authorized
    assert world.status()["ModelProvider/main"]["phase"] == "Ready"
    assert KEY_1 not in _all_text(world.folder) and KEY_2 not in _all_text(world.folder)


def test_a_failing_provider_is_a_condition_with_its_cause_and_is_probed_again(world: World) -> None:
    world.key("main.key", KEY_2)  # the fake still wants KEY_1
    applied = world.cli("apply", str(world.folder), "--yes")
    assert applied.returncode == 1
    assert "ModelProvider/main: FAILED" in applied.stdout
    assert "Apply FAILED: 2 succeeded, 1 failed" in applied.stdout
    assert "ModelProvider/main: ProbeFailedError: Unauthorized: " in applied.stdout
    main = world.status()["ModelProvider/main"]
    ready = next(c for c in main["conditions"] if c["type"] == "Ready")
    assert main["phase"] == "Failed" and ready["status"] == "False" and ready["reason"] == "Unauthorized"
    assert "Incorrect API key provided: <redacted>" in ready["message"]
    assert "check the API key" in ready["message"]
    assert world.status()["ModelProvider/other"]["phase"] == "Ready"

    plan = world.plan()
    retry = next(c for c in plan["changes"] if c["key"] == "ModelProvider/main")
    assert retry["action"] == "update" and retry["reasons"][0]["code"] == "models-not-discovered"
    world.main.key = KEY_2  # the provider now accepts the key: the next apply heals it
    assert world.cli("apply", str(world.folder), "--yes").returncode == 0
    assert world.status()["ModelProvider/main"]["phase"] == "Ready"
    assert world.cli("plan", str(world.folder), "--detailed-exitcode").returncode == 0
    assert KEY_2 not in _all_text(world.folder) + applied.stdout + json.dumps(plan)


def test_a_model_the_provider_does_not_list_is_a_warning_in_plan_and_status(world: World) -> None:
    assert world.cli("apply", str(world.folder), "--yes").returncode == 0
    world.main.models = ["qwen2.5-coder"]  # the server dropped a model
    world.key("main.key", KEY_2)  # a secret change re-probes
    world.main.key = KEY_2
    assert world.cli("apply", str(world.folder), "--yes").returncode == 0
    plan = world.plan()
    assert [(w["code"], w["key"]) for w in plan["warnings"]] == [
        ("provider.model-not-listed", "ModelProvider/main"),
        ("model.not-listed", "Agent/writer"),
    ]
    text = world.cli("plan", str(world.folder)).stdout
    assert "! Agent/writer (spec.model): main/llama-3.1-8b is not among the models 'main' lists (qwen2.5-coder)" in text
    status = world.status()
    assert status["Agent/writer"]["warnings"][0]["code"] == "model.not-listed"
    assert status["ModelProvider/main"]["missingModels"] == ["llama-3.1-8b"]
    assert "warning:" in world.cli("status", str(world.folder)).stdout


def test_an_agent_naming_an_undeclared_model_is_refused_with_a_suggestion(world: World) -> None:
    path = world.folder / "resources.yaml"
    path.write_text(path.read_text().replace("model: main/llama-3.1-8b", "model: main/llama-3.1-8"))
    proc = world.cli("plan", str(world.folder))
    assert proc.returncode == 1
    assert "error[model.unknown]: ModelProvider 'main' declares no model 'llama-3.1-8'" in proc.stdout
    assert "hint: did you mean main/llama-3.1-8b?" in proc.stdout
    assert processes_under(world.folder) == []  # nothing was started for an invalid folder
