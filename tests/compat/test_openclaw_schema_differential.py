"""clawplane's check of OpenClaw's config and the real ``openclaw config validate`` agree.

Values are drawn from OpenClaw 2026.9.6's own schema (valid and invalid, at any leaf key, with a
fixed seed), each in a config of its own, and validated in one OpenClaw process (the batch oracle).
clawplane's verdict is OpenClaw's schema as ``validate`` checks it plus the refinements it knows
(``clawplane.schema.openclaw.refinements``). A disagreement fails the test, except where
OpenClaw's message is one of the refinements named in ``NOT_YET`` — rules of OpenClaw's zod code
that clawplane does not check, listed so that the gap is visible and stays small.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from tests.oracles.runners import OpenClawOracle
from tests.support.openclaw_samples import NoSample, Sample, draw, leaf_paths

from clawplane.schema.openclaw import config_schema
from clawplane.schema.openclaw.check import check
from clawplane.schema.openclaw.refinements import refine

SAMPLES = 240
SEED = 20261206
NOT_YET = {
    "plugin not found": "a plugin id in plugins.slots must name an installed plugin (depends on the install)",
    "Invalid input": "zod unions with cross-field rules (e.g. gateway.roles.definitions.*.agents)",
}
"""OpenClaw messages of rules clawplane does not check yet, and what they are."""
TYPED_ELSEWHERE = ("models",)
"""Sections clawplane types wholly with its own models and checks there (ModelProvider, spec.models)."""


def _samples() -> list[Sample]:
    rng = random.Random(SEED)
    paths = [p for p in leaf_paths() if "[]" not in p and p[0] not in TYPED_ELSEWHERE]
    found: list[Sample] = []
    while len(found) < SAMPLES:
        try:
            found.append(draw(rng, paths, valid=rng.random() < 0.5))
        except NoSample:
            continue
    return found


@pytest.mark.oracle_calls(SAMPLES // 8)
def test_clawplane_and_openclaw_agree_on_values_drawn_from_openclaws_schema(
    openclaw: OpenClawOracle, tmp_path: Path
) -> None:
    samples = _samples()
    envs = []
    for i, sample in enumerate(samples):
        path = tmp_path / f"config-{i}.json"
        path.write_text(json.dumps(sample.config), encoding="utf-8")
        envs.append({"OPENCLAW_CONFIG_PATH": str(path)})
    results = openclaw.batch([("config", "validate", "--json")] * len(samples), envs=envs)
    disagreements = []
    agreed_valid = agreed_invalid = 0
    for sample, result in zip(samples, results, strict=True):
        verdict = json.loads(result.stdout)
        ours = not check(sample.config, config_schema()) and not refine(sample.config, whole=True)
        if verdict["valid"] == ours:
            agreed_valid += ours
            agreed_invalid += not ours
            continue
        messages = [issue["message"] for issue in verdict.get("issues", [])]
        if not ours or not all(any(m.startswith(k) for k in NOT_YET) for m in messages):
            disagreements.append((".".join(sample.path), sample.value, verdict["valid"], messages))
    assert disagreements == [], json.dumps(disagreements, indent=1, default=str)
    # Both verdicts are exercised, not one of them only.
    assert agreed_valid > SAMPLES // 4 and agreed_invalid > SAMPLES // 4
