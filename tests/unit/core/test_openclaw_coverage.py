"""How much of OpenClaw's config clawplane covers: every leaf key declarable in a typed home, every one checked.

A *leaf key* is a key of OpenClaw 2026.9.6's config schema whose value is not an object of
named fields (a scalar, a list, or a map of free keys); objects of named fields are walked
into, as are map entries and list items that are such objects (see
``tests.support.openclaw_samples.leaf_paths``).

- *Declarable in a typed home*: the key can be written, by its OpenClaw name, under the ``spec``
  of the resource that stands for its object (Gateway, McpServer, Agent, Channel, ModelProvider)
  without clawplane calling it an unknown field.
- *Checked*: an invalid value drawn from the schema at that key, written there, is refused by
  ``clawplane validate``.

The figures are printed (``-s``) and quoted in docs/resources.md ("OpenClaw's config, all of it").
"""

from __future__ import annotations

import io
import random
from collections import Counter
from typing import Any

from ruamel.yaml import YAML
from tests.support.openclaw_samples import NoSample, Sample, leaf_paths, sample, typed_home

from clawplane.models import KINDS
from clawplane.schema.openclaw import node_at
from clawplane.validation import validate_texts
from clawplane.validation.openclaw import RAW_HOMES
from clawplane.validation.openclaw.projection import unknown_in_raw

BOOKKEEPING = ("$schema", "meta")
"""OpenClaw's own bookkeeping: no typed home on purpose (import drops it)."""
SECRET_REF_IN_TYPED_SECRET = {
    ("skills", "entries", "*", "apiKey", part) for part in ("source", "provider", "id")
}
"""Written as ``valueFrom`` in clawplane's typed secret field, not as an OpenClaw SecretRef object."""


def _text(documents: list[dict[str, Any]]) -> str:
    yaml = YAML()
    buf = io.StringIO()
    yaml.dump_all(documents, buf)
    return buf.getvalue()


def _declarable(found: Sample) -> bool:
    placed = typed_home(found, providers=True)
    assert placed is not None
    for doc in placed.documents:
        if (doc["kind"], doc["metadata"]["name"]) != (placed.kind, placed.name):
            continue
        spec = doc["spec"]
        home = ("channels", spec["type"]) if doc["kind"] == "Channel" else RAW_HOMES[doc["kind"]]
        spec_cls = KINDS[doc["kind"]].model_fields["spec"].annotation
        return not unknown_in_raw(spec_cls, spec, node_at(home) or {})
    return False


def test_every_openclaw_leaf_key_has_a_typed_home_and_is_checked() -> None:
    paths = leaf_paths()
    rng = random.Random(5039)
    counts: Counter[str] = Counter()
    undeclarable: list[tuple[str | int, ...]] = []
    unchecked: list[tuple[str | int, ...]] = []
    for path in paths:
        if path[0] in BOOKKEEPING:
            counts["bookkeeping"] += 1
            continue
        try:
            valid = sample(path, rng, valid=True)
        except NoSample:
            counts["unsampled"] += 1
            continue
        if path in SECRET_REF_IN_TYPED_SECRET:
            counts["as valueFrom"] += 1
        elif _declarable(valid):
            counts["declarable"] += 1
        else:
            undeclarable.append(path)
        try:
            invalid = sample(path, rng, valid=False)
        except NoSample:
            counts["unsampled invalid"] += 1
            continue
        if invalid.valid:
            counts["no invalid value"] += 1
            continue
        placed = typed_home(invalid, providers=True)
        assert placed is not None
        if not validate_texts([("r.yaml", _text(placed.documents))]).diagnostics.has_errors:
            unchecked.append(path)
        else:
            counts["checked"] += 1
    total = len(paths)
    print(f"\nOpenClaw leaf keys: {total}; declarable in a typed home: {counts['declarable']} "
          f"(+{counts['as valueFrom']} as valueFrom, {counts['bookkeeping']} bookkeeping); "
          f"checked: {counts['checked']} of {total - counts['unsampled'] - counts['unsampled invalid']}"
          f" with an invalid value drawn; {dict(counts)}")
    assert undeclarable == []
    assert unchecked == []
    assert counts["declarable"] + counts["as valueFrom"] + counts["bookkeeping"] + counts["unsampled"] == total
    # The sampler reaches nearly every key: a figure about a handful would prove nothing.
    assert counts["checked"] >= 0.98 * (total - counts["bookkeeping"])
