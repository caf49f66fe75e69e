"""The Argo CD health checks, run by a real Lua runtime (lupa) over the statuses clawplane writes.

Statuses are produced by clawplane's own code, not written by hand: the engine's conditions
for each runtime phase (``reconcile.applier``) stored as a resource record, then turned into a
custom resource's ``.status`` by the operator (``k8s.statuses.build_status``), including refused
specs, missing references, missing secrets and a newer generation not yet reconciled. Every kind
in ``clawplane.models.KINDS`` is checked in every phase, from the generated argocd-cm (manifests/)
and from the chart, which must carry the same scripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lupa
import pytest
from ruamel.yaml import YAML
from tests.k8s.helmutil import one, render

from clawplane.desired.state import DesiredResource, RuntimeMode
from clawplane.k8s.adapter.materialize import Problem
from clawplane.k8s.adapter.statuses import build_status
from clawplane.models import KINDS
from clawplane.providers import DiscoveredModel, ProbeResult
from clawplane.reconcile.applier import _conditions
from clawplane.reconcile.backend import RuntimeReport
from clawplane.reconcile.conditions import merge
from clawplane.reconcile.modelproviders import provider_status
from clawplane.schema import ARGOCD_CM, health_checks
from clawplane.schema.argocd import health_key
from clawplane.state import ResourceRecord

ROOT = Path(__file__).resolve().parents[3]
API = "clawplane.dev/v1alpha1"
SPECS: dict[str, dict[str, Any]] = {
    "McpServer": {"command": "srv"},
    "Channel": {"type": "telegram"},
    "Skill": {"description": "d"},
}


def _resource(kind: str, name: str = "x") -> Any:
    return KINDS[kind].model_validate({"apiVersion": API, "kind": kind, "metadata": {"name": name},
                                       "spec": SPECS.get(kind, {})})


def _cr(kind: str, generation: int, status: dict[str, Any] | None) -> dict[str, Any]:
    cr: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": {"name": "x", "generation": generation}}
    if status is not None:
        cr["status"] = status
    return cr


def _engine_status(kind: str, runtime: RuntimeMode, phase: str | None, *, generation: int = 1,
                   problem: Problem | None = None, secrets: list[str] | None = None,
                   cr_generation: int | None = None) -> dict[str, Any]:
    """``.status`` as the operator writes it after the engine applied ``kind`` in ``phase``."""
    resource = _resource(kind)
    desired = DesiredResource(key=resource.key, kind=kind, name="x", resource=resource, spec={}, base_hash="h",
                              source_file="f", base_dir=ROOT, runtime=runtime)
    report = RuntimeReport(phase=phase, last_error=f"server {phase}" if phase else None) if phase else None
    conds, record_phase, fields = _conditions(desired, report)
    record = ResourceRecord(key=resource.key, kind=kind, name="x", config_hash="c", generation=generation,
                            observed_generation=generation, spec={}, phase=record_phase,
                            conditions=merge([], conds, generation=generation), status=fields)
    cr = _cr(kind, cr_generation or generation, None)
    return build_status(cr, record, problem=problem, accepted_generation=generation,
                        secret_problems=secrets or [], tools=[])


def _rejected(kind: str, reason: str) -> dict[str, Any]:
    return build_status(_cr(kind, 1, None), None, problem=Problem(reason, f"{reason} here"),
                        accepted_generation=None, secret_problems=[], tools=[])


def cases(kind: str) -> list[tuple[str, dict[str, Any], str]]:
    """``(case, custom resource, expected health)`` for every phase ``kind`` can be in."""
    out: list[tuple[str, dict[str, Any], str]] = [
        ("no status yet", _cr(kind, 1, None), "Progressing"),
        ("invalid spec", _cr(kind, 1, _rejected(kind, "Invalid")), "Degraded"),
        ("missing reference", _cr(kind, 1, _rejected(kind, "RefNotFound")), "Degraded"),
    ]
    if kind == "ModelProvider":
        return out + _provider_cases(kind)
    if kind != "McpServer":
        ready = _engine_status(kind, RuntimeMode.NONE, None)
        out += [
            ("ready", _cr(kind, 1, ready), "Healthy"),
            ("newer generation not reconciled", _cr(kind, 2, ready), "Progressing"),
            ("newer generation refused", _cr(kind, 2, _engine_status(
                kind, RuntimeMode.NONE, None, problem=Problem("Invalid", "bad"), cr_generation=2)), "Degraded"),
        ]
        return out
    hosted = RuntimeMode.HOSTED
    out += [
        ("ready", _cr(kind, 1, _engine_status(kind, hosted, "ready")), "Healthy"),
        ("starting", _cr(kind, 1, _engine_status(kind, hosted, "starting")), "Progressing"),
        ("remote starting", _cr(kind, 1, _engine_status(kind, RuntimeMode.REMOTE, "starting")), "Progressing"),
        ("crash-looping", _cr(kind, 1, _engine_status(kind, hosted, "crashed")), "Degraded"),
        ("backing off", _cr(kind, 1, _engine_status(kind, hosted, "backoff")), "Degraded"),
        ("paused after failures", _cr(kind, 1, _engine_status(kind, RuntimeMode.PROBED, "paused")), "Degraded"),
        ("failed to start", _cr(kind, 1, _engine_status(kind, hosted, "failed")), "Degraded"),
        ("remote unreachable", _cr(kind, 1, _engine_status(kind, RuntimeMode.REMOTE, "failed")), "Degraded"),
        ("disabled", _cr(kind, 1, _engine_status(kind, RuntimeMode.NONE, None)), "Suspended"),
        ("secret missing", _cr(kind, 1, _engine_status(kind, hosted, "ready", secrets=["env X unset"])), "Degraded"),
        ("newer generation not reconciled", _cr(kind, 2, _engine_status(kind, hosted, "ready")), "Progressing"),
        ("newer generation refused", _cr(kind, 2, _engine_status(
            kind, hosted, "ready", problem=Problem("Invalid", "bad"), cr_generation=2)), "Degraded"),
    ]
    waiting = _engine_status(kind, hosted, "starting")
    # Approval gating writes Programmed=False with reason AwaitingApproval.
    waiting["conditions"] = [
        {**c, "status": "False", "reason": "AwaitingApproval", "message": "waiting for an operator's approval"}
        if c["type"] == "Programmed" else c for c in waiting["conditions"]
    ]
    out.append(("awaiting approval", _cr(kind, 1, waiting), "Suspended"))
    return out


def _probed(result: ProbeResult, *, generation: int = 1) -> dict[str, Any]:
    """``.status`` of a ModelProvider after a probe, as the operator writes it."""
    resource = _resource("ModelProvider")
    desired = DesiredResource(key=resource.key, kind="ModelProvider", name="x", resource=resource, spec={},
                              base_hash="h", source_file="f", base_dir=ROOT)
    conds, phase, fields = provider_status(desired, result)
    record = ResourceRecord(key=resource.key, kind="ModelProvider", name="x", config_hash="c",
                            generation=generation, observed_generation=generation, spec={}, phase=phase,
                            conditions=merge([], conds, generation=generation), status=fields)
    return build_status(_cr("ModelProvider", generation, None), record, problem=None,
                        accepted_generation=generation, secret_problems=[], tools=[])


def _provider_cases(kind: str) -> list[tuple[str, dict[str, Any], str]]:
    listed = ProbeResult("ready", "ModelsListed", "2 models listed", (DiscoveredModel("a"), DiscoveredModel("b")))
    return [
        ("ready", _cr(kind, 1, _probed(listed)), "Healthy"),
        ("unauthorized", _cr(kind, 1, _probed(ProbeResult("failed", "Unauthorized", "HTTP 401"))), "Degraded"),
        ("timed out", _cr(kind, 1, _probed(ProbeResult("failed", "Timeout", "no answer"))), "Degraded"),
        ("key unresolved", _cr(kind, 1, _probed(ProbeResult("failed", "SecretUnresolved", "env K unset"))), "Degraded"),
        ("not probed", _cr(kind, 1, _probed(ProbeResult("not-probed", "ProbeDisabled", "probe: false"))), "Healthy"),
        ("newer generation not reconciled", _cr(kind, 2, _probed(listed)), "Progressing"),
    ]


def _run(script: str, cr: dict[str, Any]) -> dict[str, str]:
    runtime = lupa.LuaRuntime(unpack_returned_tuples=True)
    # JSON round trip: the script sees plain tables, as Argo CD's gopher-lua does.
    to_table = runtime.eval("function(decode, text) return decode(text) end")
    decode = runtime.eval(_JSON_DECODER)
    runtime.globals().obj = to_table(decode, json.dumps(cr))
    result = runtime.execute(script)
    return {"status": result["status"], "message": result["message"]}


# A tiny JSON decoder in Lua, so that arrays become 1-based Lua sequences as in Argo CD.
_JSON_DECODER = r'''
function(text)
  local pos = 1
  local value
  local function ws() pos = text:find("[^ \t\r\n]", pos) or #text + 1 end
  local function str()
    local out, i = {}, pos + 1
    while true do
      local c = text:sub(i, i)
      if c == '"' then pos = i + 1; return table.concat(out) end
      if c == "\\" then
        local n = text:sub(i + 1, i + 1)
        local map = {n = "\n", t = "\t", r = "\r", b = "\b", f = "\f"}
        if n == "u" then out[#out + 1] = utf8.char(tonumber(text:sub(i + 2, i + 5), 16)); i = i + 6
        else out[#out + 1] = map[n] or n; i = i + 2 end
      else out[#out + 1] = c; i = i + 1 end
    end
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      local t = {}; pos = pos + 1; ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws(); local k = str(); ws(); pos = pos + 1
        t[k] = value(); ws()
        local d = text:sub(pos, pos); pos = pos + 1
        if d == "}" then return t end
      end
    elseif c == "[" then
      local t = {}; pos = pos + 1; ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value(); ws()
        local d = text:sub(pos, pos); pos = pos + 1
        if d == "]" then return t end
      end
    elseif c == '"' then return str()
    elseif text:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif text:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif text:sub(pos, pos + 3) == "null" then pos = pos + 4; return nil
    else
      local s, e = text:find("^-?[0-9.eE+-]+", pos); pos = e + 1
      return tonumber(text:sub(s, e))
    end
  end
  return value()
end
'''


def _argocd_cm() -> dict[str, Any]:
    doc: dict[str, Any] = YAML(typ="safe").load(ROOT / ARGOCD_CM)
    return doc


ALL = [(kind, name, cr, expected) for kind in sorted(KINDS) for name, cr, expected in cases(kind)]


@pytest.mark.parametrize(("kind", "case", "cr", "expected"), ALL, ids=[f"{k}-{c}" for k, c, _, _ in ALL])
def test_health_of_every_kind_in_every_phase(kind: str, case: str, cr: dict[str, Any], expected: str) -> None:
    script = _argocd_cm()["data"][health_key(kind)]
    health = _run(script, cr)
    assert health["status"] == expected, (case, health, cr.get("status"))
    assert health["message"], case


def test_every_kind_has_a_check_and_the_chart_ships_the_same_scripts() -> None:
    data = _argocd_cm()["data"]
    assert set(data) == {f"resource.customizations.health.clawplane.dev_{k}" for k in KINDS}
    assert data == health_checks()
    assert not [d for d in render() if d["kind"] == "ConfigMap"]  # off by default
    cm = one(render({"argocd": {"healthChecks": {"enabled": True}}}), "ConfigMap")
    assert cm["metadata"]["name"] == "argocd-cm" and cm["metadata"]["namespace"] == "argocd"
    assert cm["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "ServerSideApply=true"
    assert cm["data"] == data


def test_statuses_carry_what_flux_kstatus_reads() -> None:
    """kstatus (Flux's health checks): ``status.observedGeneration`` and a ``Ready`` condition."""
    for kind in sorted(KINDS):
        for case, cr, expected in cases(kind):
            status = cr.get("status")
            if status is None:
                continue
            assert isinstance(status.get("observedGeneration"), int), (kind, case)
            ready = [c for c in status["conditions"] if c["type"] == "Ready"]
            assert len(ready) == 1 and ready[0]["status"] in ("True", "False"), (kind, case)
            assert isinstance(ready[0]["observedGeneration"], int), (kind, case)
            # Healthy in Argo CD implies Current in kstatus (Ready=True at the current generation);
            # Argo CD is stricter only where a running resource lost a reference (Degraded).
            current = ready[0]["status"] == "True" and status["observedGeneration"] >= cr["metadata"]["generation"]
            assert current == (expected == "Healthy") or (current and case == "secret missing"), (kind, case)

