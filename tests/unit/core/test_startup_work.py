"""What a quick command does not do: counted in a fresh interpreter, never timed.

``clawplane validate`` pays for what it imports and parses. These tests pin the work that
was taken out of it: model field descriptions are not read from the source on import (only
when a schema is made, and then every one is there), the YAML text is read by one loader,
and a command that ends runs without the cyclic collector.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from clawplane.loading import yamlparse
from clawplane.models import KINDS
from clawplane.models.base import Model
from clawplane.models.descriptions import describe_models, field_docstrings

ROOT = Path(__file__).resolve().parents[3]
QUICKSTART = ROOT / "examples" / "quickstart"


def fresh(code: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter; it prints one JSON object as its last line."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, check=True, cwd=ROOT,
    )  # fmt: skip
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_importing_the_models_reads_no_source() -> None:
    got = fresh(
        """
        import json, linecache
        read = []
        real = linecache.getlines
        linecache.getlines = lambda name, *a: read.append(name) or real(name, *a)
        from clawplane.models import McpServer
        before = sum("clawplane" in name for name in read), McpServer.model_fields["spec"].description
        from clawplane.models.base import Model
        from clawplane.models.descriptions import describe_models
        describe_models(Model)
        print(json.dumps({"before": before, "after": McpServer.model_fields["spec"].description}))
        """
    )
    assert got["before"] == [0, None]
    assert got["after"] == "Desired configuration."


def test_every_documented_field_gets_its_docstring() -> None:
    describe_models(Model)
    documented = 0
    for cls in _models():
        own = field_docstrings(cls)
        for name, info in cls.model_fields.items():
            if name in own:
                documented += 1
                assert info.description == own[name], (cls.__name__, name)
    assert documented > 100
    for kind in KINDS.values():  # inherited fields keep the envelope's descriptions
        assert kind.model_fields["metadata"].description == "Name, namespace, labels and annotations."


def _models() -> list[type[Model]]:
    out, stack = [], [Model]
    while stack:
        for sub in stack.pop().__subclasses__():
            out.append(sub)
            stack.append(sub)
    return out


def test_one_loader_reads_each_text(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    made: list[object] = []
    real = yamlparse._Loader

    class Counting(real):  # type: ignore[misc,valid-type]
        def __init__(self, stream: object) -> None:
            made.append(stream)
            super().__init__(stream)

    monkeypatch.setattr(yamlparse, "_Loader", Counting)
    docs = yamlparse.parse_documents("a: &x [1, 2]\nb: *x\n---\nc: 3\n")
    assert [d.data for d in docs] == [{"a": [1, 2], "b": [1, 2]}, {"c": 3}]
    assert len(made) == 1


def test_a_quiet_valid_validate_imports_no_terminal_library() -> None:
    got = fresh(
        f"""
        import json, sys, atexit
        sys.argv = ["clawplane", "validate", {str(QUICKSTART)!r}, "--quiet"]
        atexit.register(lambda: print(json.dumps(sorted(
            m for m in sys.modules if m.split(".")[0] in ("rich", "mcp", "httpx", "anyio", "jsonschema")
        ))))
        from clawplane.cli import main
        main()
        """
    )
    assert got == []


def test_validation_builds_validators_only_for_the_kinds_it_meets() -> None:
    got = fresh(
        f"""
        import json
        from clawplane.models import KINDS
        from clawplane.validation import validate_paths
        result = validate_paths([{str(QUICKSTART / "mcp-servers.yaml")!r}])
        met = sorted({{item.resource.kind for item in result.resources}})
        built = sorted(kind for kind, cls in KINDS.items() if cls.__pydantic_complete__)
        print(json.dumps({{"met": met, "built": built}}))
        """
    )
    assert got["met"] == got["built"] == ["McpServer"]


def test_a_command_that_ends_runs_without_the_collector() -> None:
    got = fresh(
        f"""
        import gc, json, sys, atexit
        runs = []
        gc.callbacks.append(lambda phase, info: phase == "start" and runs.append(info["generation"]))
        sys.argv = ["clawplane", "validate", {str(QUICKSTART)!r}, "--quiet"]
        from clawplane.cli import main
        before = len(runs)
        atexit.register(
            lambda: print(json.dumps({{"collections": len(runs) - before, "frozen": gc.get_freeze_count() > 0}}))
        )
        main()
        """
    )
    assert got == {"collections": 0, "frozen": True}
