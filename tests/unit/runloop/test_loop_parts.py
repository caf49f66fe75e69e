"""Unit tests of the loop's parts: metrics endpoint, log formats, loop status."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request

from clawplane.reconcile.logs import JsonFormatter, reconcile_context
from clawplane.reconcile.loop import LoopState
from clawplane.reconcile.metrics import LoopMetrics, MetricsServer
from clawplane.state import ObservedState, ResourceRecord, RuntimeRecord, ToolRecord


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_metrics_server_answers_health_readiness_and_metrics() -> None:
    metrics = LoopMetrics()
    ready = {"value": False}
    server = MetricsServer(metrics, healthy=lambda: True, ready=lambda: ready["value"])
    url = server.start("127.0.0.1", 0)
    try:
        assert _get(url + "/healthz") == (200, "ok\n")
        assert _get(url + "/readyz")[0] == 503
        ready["value"] = True
        assert _get(url + "/readyz") == (200, "ready\n")
        observed = ObservedState(
            resources={
                "Agent/a": ResourceRecord(
                    "Agent/a", "Agent", "a", "h", 1, 1, {}, "Ready", [], {"promptChars": 12}
                ),
                "McpServer/s": ResourceRecord(
                    "McpServer/s", "McpServer", "s", "h", 1, 1, {}, "Ready", [], {"sessionEvictions": 5}
                ),
            },
            runtimes={"s": RuntimeRecord("s", "h", "clawplane", "stdio", "ready", restarts=2)},
            tools_observed={"s": (ToolRecord("t", "s__t", "x"),)},
        )
        metrics.observe_state(observed)
        metrics.folder_valid.set(1)
        code, text = _get(url + "/metrics")
        assert code == 200
        for line in (
            'clawplane_runtimes{phase="ready"} 1.0',
            'clawplane_runtime_restarts{server="s"} 2.0',
            'clawplane_server_tools{server="s"} 1.0',
            'clawplane_agent_prompt_chars{agent="a"} 12.0',
            'clawplane_session_evictions{server="s"} 5.0',
            "clawplane_folder_valid 1.0",
        ):
            assert line in text
        metrics.observe_state(ObservedState())
        assert 'server="s"' not in _get(url + "/metrics")[1]
    finally:
        server.stop()
    assert server.url == ""


def test_json_log_lines_carry_the_reconcile_id() -> None:
    record = logging.LogRecord("clawplane.reconcile", logging.INFO, __file__, 1, "hello %s", ("x",), None)
    with reconcile_context("abc-0001"):
        record.reconcile_id = "abc-0001"
        doc = json.loads(JsonFormatter().format(record))
    assert doc["msg"] == "hello x" and doc["reconcile_id"] == "abc-0001" and doc["level"] == "info"


def test_loop_state_is_json_ready() -> None:
    doc = LoopState(folder_valid=False, diagnostics=["a.yaml:1:1 error"]).to_dict()
    assert json.loads(json.dumps(doc))["folderValid"] is False
