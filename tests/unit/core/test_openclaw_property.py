"""Property: values drawn from OpenClaw's own schema, valid and invalid, at any leaf key, declared under
the resource that stands for their object and under the Gateway's raw ``spec.config``: ``validate``
accepts exactly what OpenClaw's schema accepts, and each refusal names the line of the value.

The reference is the ``jsonschema`` library on OpenClaw 2026.9.6's schema (an implementation
independent of clawplane's own validator) plus OpenClaw's refinements that the schema cannot say
(``clawplane.schema.openclaw.refinements``, themselves checked against the real OpenClaw by
tests/compat/test_openclaw_schema_differential.py). Where clawplane decides more than OpenClaw's
schema on purpose, the sample is exempt, each for the reason written in ``_exempt``.
"""

from __future__ import annotations

import io
import random
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from tests.support.openclaw_samples import (
    NoSample,
    Placed,
    Sample,
    draw,
    in_raw_config,
    leaf_paths,
    typed_home,
)

from clawplane.diagnostics import Diagnostics
from clawplane.loading import format_path, read_text
from clawplane.schema.openclaw.refinements import refine
from clawplane.validation import validate_texts

PATHS = [p for p in leaf_paths() if "[]" not in p]


def _text(documents: list[dict[str, Any]]) -> str:
    yaml = YAML()
    buf = io.StringIO()
    yaml.dump_all(documents, buf)
    return buf.getvalue()


def _exempt(sample: Sample, placed: Placed, raw: bool) -> str | None:
    """Why clawplane's answer may rightly differ from OpenClaw's schema here (None: it may not)."""
    path = sample.path
    if raw and path[0] in ("session", "models"):
        return "clawplane types session and models wholly and refuses them in spec.config"
    if not raw and path[:2] == ("mcp", "servers") and path[3:5] == ("codex", "agents"):
        return "clawplane also checks that the named agents are declared"
    if not raw and path[0] == "agents" and "model" in path[3:5] + path[2:3]:
        return "clawplane also checks that a model reference names a declared provider's model"
    if path[:4] == ("agents", "defaults", "systemAgent", "agentId"):
        return "clawplane renders systemAgent from agents.defaultAgent and checks it against the Agents"
    typed_secret = path[:2] == ("skills", "entries") and path[3:4] in (("apiKey",), ("env",))
    if not raw and typed_secret and len(path) > 4 + (path[3] == "env"):
        return "clawplane's typed secret fields take references as valueFrom, not as OpenClaw SecretRefs"
    if not raw and isinstance(sample.value, dict) and {"source", "provider", "id"} <= set(sample.value):
        return "clawplane's typed secret fields take references as valueFrom, not as OpenClaw SecretRefs"
    return None


def _value_lines(text: str, documents: list[dict[str, Any]], placed: Placed) -> tuple[int, str]:
    """The line of the drawn value's key in the owning document, and its diagnostic path prefix."""
    index = next(
        i for i, d in enumerate(documents) if d["kind"] == placed.kind and d["metadata"]["name"] == placed.name
    )
    docs = read_text("r.yaml", text, Diagnostics())
    path = ("spec", *placed.spec_path)
    line = docs[index].positions.of_key(path)[0]
    return line, format_path(path)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(seed=st.integers(0, 2**32 - 1), valid=st.booleans())
def test_validate_takes_exactly_what_openclaws_schema_takes(seed: int, valid: bool) -> None:
    rng = random.Random(seed)
    try:
        sample = draw(rng, PATHS, valid=valid)
    except NoSample:
        assume(False)
        return
    expected = sample.valid and not refine(sample.config, whole=True)
    for raw, placed in ((False, typed_home(sample)), (True, in_raw_config(sample))):
        if placed is None or _exempt(sample, placed, raw):
            continue
        text = _text(placed.documents)
        result = validate_texts([("r.yaml", text)])
        errors = [d for d in result.diagnostics if d.is_error]
        where = "spec.config" if raw else f"{placed.kind}/{placed.name}"
        assert (not errors) == expected, (where, sample.path, sample.value, [str(e) for e in errors])
        if errors and not sample.valid:
            # The drawn value is what OpenClaw's schema refuses: the error is at it (or inside it).
            line, prefix = _value_lines(text, placed.documents, placed)
            at_value = [e for e in errors if e.path.startswith(prefix) and e.location and e.location.line >= line]
            assert at_value, (where, sample.path, line, [str(e) for e in errors])
