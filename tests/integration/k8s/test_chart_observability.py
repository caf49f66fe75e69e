"""The chart's Grafana dashboard and alerting rules: rendered on request, valid PromQL, real metric names.

Rendering runs in-process through helm-python-sdk (as test_chart.py). Every query and rule
expression is parsed by ``promql_parser`` (the Rust PromQL parser), and every ``clawplane_*`` series
it names must be one clawplane serves: the supervisor's and operator's registries
(``LoopMetrics`` + ``CallMetrics``, read through ``prometheus_client``'s own families) and the
operator's ``clawplane_leader``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import helm_python as helm
import promql_parser
import pytest
from ruamel.yaml import YAML
from tests.k8s.helmutil import CHART, kube_problems, of_kind, one, render

from clawplane.reconcile.metrics import LoopMetrics
from clawplane.telemetry import CallMetrics

ROOT = Path(__file__).resolve().parents[3]
SERIES = re.compile(r"\bclawplane_[a-z_]+\b")
ENABLED = {"metrics": {"grafanaDashboard": {"enabled": True}, "prometheusRule": {"enabled": True}}}


def served_series() -> set[str]:
    """Every series name clawplane exposes, as Prometheus sees them (suffixes included)."""
    loop = LoopMetrics()
    CallMetrics(loop.registry)
    names: set[str] = set()
    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"], "gauge": [""]}
    for family in loop.registry.collect():
        names.update(family.name + suffix for suffix in suffixes[family.type])
    runner = (ROOT / "operator" / "clawplane" / "k8s" / "runner.py").read_text()
    assert '"clawplane_leader"' in runner  # the elected operator's gauge, made where the election runs
    names.add("clawplane_leader")
    return names


def dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]
    exprs += [v["definition"].removeprefix("label_values(").split(",")[0] for v in dashboard["templating"]["list"]
              if v["type"] == "query"]  # fmt: skip
    return exprs


def grafana_vars(expr: str) -> str:
    """An expression as Prometheus would receive it once Grafana filled in its variables."""
    return expr.replace("$server", ".*")


def test_nothing_is_rendered_unless_asked() -> None:
    docs = render()
    assert not [d for d in of_kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("grafana-dashboard")]
    assert of_kind(docs, "PrometheusRule") == []


def test_the_dashboard_configmap_carries_the_dashboard_for_the_sidecar() -> None:
    docs = render(
        {
            **ENABLED,
            "metrics": {
                **ENABLED["metrics"],
                "grafanaDashboard": {"enabled": True, "namespace": "monitoring"},
            },
        }
    )
    cm = next(d for d in of_kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("grafana-dashboard"))
    assert cm["metadata"]["namespace"] == "monitoring"
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = json.loads((CHART / "files" / "grafana-dashboard.json").read_text())
    assert json.loads(cm["data"]["clawplane.json"]) == shipped
    assert kube_problems([cm]) == []


def test_every_dashboard_query_parses_and_names_served_series() -> None:
    dashboard = json.loads((CHART / "files" / "grafana-dashboard.json").read_text())
    served = served_series()
    exprs = dashboard_exprs(dashboard)
    assert len(exprs) >= 20
    for expr in exprs:
        promql_parser.parse(grafana_vars(expr))  # raises on a syntax error
        assert set(SERIES.findall(expr)) <= served, expr
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    # The four things the issue asks the dashboard to show: counts, errors, latency, sessions.
    titles = " ".join(p["title"] for p in dashboard["panels"]).lower()
    for wanted in ("requests per second", "error ratio", "p95", "sessions", "reconcile"):
        assert wanted in titles


def test_the_alerting_rules_parse_name_served_series_and_say_what_to_do() -> None:
    rules = YAML(typ="safe").load((CHART / "files" / "prometheus-rules.yaml").read_text())
    served = served_series()
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert len(alerts) >= 8
    for rule in alerts:
        promql_parser.parse(rule["expr"])
        assert set(SERIES.findall(rule["expr"])) <= served, rule["alert"]
        assert rule["labels"]["severity"] in ("info", "warning", "critical")
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    assert len({r["alert"] for r in alerts}) == len(alerts)


@pytest.mark.parametrize("labels", [{}, {"release": "kube-prometheus-stack"}])
def test_the_prometheus_rule_wraps_the_rule_file(labels: dict[str, str]) -> None:
    values = {"metrics": {"prometheusRule": {"enabled": True, "labels": labels}}}
    rule = one(render(values), "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert labels.items() <= rule["metadata"]["labels"].items()
    shipped = YAML(typ="safe").load((CHART / "files" / "prometheus-rules.yaml").read_text())
    assert rule["spec"] == shipped


def test_strict_lint_is_clean_with_both_enabled() -> None:
    result = helm.lint(CHART, ENABLED, strict=True)
    serious = [m for m in result["messages"] if m["severity"] >= 2]
    assert serious == [] and result["errors"] == [], result


def test_the_values_schema_rejects_unknown_keys_in_both() -> None:
    for part in ("grafanaDashboard", "prometheusRule"):
        with pytest.raises(helm.HelmValuesError) as info:
            render({"metrics": {part: {"enabled": True, "surprise": 1}}})
        assert part in str(info.value)
