"""Repeated subschemas written once: ``$defs`` keyed by a hash of their content.

OpenClaw repeats whole objects (every plugin entry has the same ``enabled``/``hooks``/…, every
secret field the same SecretRef union), and clawplane's schemas inline a copy of a part for
every place it sits. A subschema big enough and found more than once becomes
``$defs/shared-<hash>``, referenced from each place; one that ends up referenced from a single
place is put back. The content decides the name, so the files stay stable from run to run.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

PREFIX = "shared-"
MIN_SIZE = 60
"""Smallest subschema (compact JSON characters) worth a reference: a ``$ref`` costs about 42."""

_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_ONE = (
    "items", "additionalProperties", "unevaluatedProperties", "propertyNames", "contains", "not", "if",
    "then", "else",
)  # fmt: skip


def map_subschemas(node: dict[str, Any], fn: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of ``node`` with ``fn`` applied to each of its direct subschemas."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _MAPS and isinstance(value, dict):
            out[key] = {k: fn(v) for k, v in value.items()}
        elif key in _LISTS and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in _ONE:
            out[key] = fn(value)
        else:
            out[key] = value
    return out


def subschemas(node: dict[str, Any]) -> list[Any]:
    """The direct subschemas of ``node``."""
    found: list[Any] = []
    map_subschemas(node, lambda sub: found.append(sub))
    return found


class _Digests:
    """Content hash and compact size of every subschema, computed once per object."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, str, int]] = {}

    def of(self, node: Any) -> tuple[str, int]:
        found = self.memo.get(id(node))
        if found is not None and found[0] is node:
            return found[1], found[2]
        if isinstance(node, dict):
            sizes: list[int] = []

            def digest(sub: Any) -> str:
                text, size = self.of(sub)
                sizes.append(size)
                return text

            canonical = json.dumps(map_subschemas(node, digest), sort_keys=True, ensure_ascii=False)
            # Each digest stands in the text as 66 characters ("…"); count the subschema's own size.
            size = len(canonical) + sum(size - 66 for size in sizes)
        else:
            canonical = json.dumps(node, sort_keys=True, ensure_ascii=False)
            size = len(canonical)
        text = hashlib.sha256(canonical.encode()).hexdigest()
        self.memo[id(node)] = (node, text, size)
        return text, size


def share(
    doc: dict[str, Any], *, min_size: int = MIN_SIZE, candidate: Callable[[Any], bool] = lambda _: True
) -> dict[str, Any]:
    """``doc`` with every repeated ``candidate`` subschema of at least ``min_size`` moved into ``$defs``."""
    digests = _Digests()
    counts: Counter[str] = Counter()

    def count(node: Any) -> None:
        if isinstance(node, dict):
            counts[digests.of(node)[0]] += 1
            for sub in subschemas(node):
                count(sub)

    for sub in subschemas(doc):
        count(sub)
    shared: dict[str, Any] = {}

    def rewrite(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if not candidate(node):
            return map_subschemas(node, rewrite)
        text, size = digests.of(node)
        if counts[text] < 2 or size < min_size:
            return map_subschemas(node, rewrite)
        name = PREFIX + text[:16]
        if name not in shared:
            shared[name] = map_subschemas(node, rewrite)
        return {"$ref": f"#/$defs/{name}"}

    body = {k: v for k, v in doc.items() if k != "$defs"}
    out = map_subschemas(body, rewrite)
    defs = {
        k: map_subschemas(v, rewrite) if isinstance(v, dict) else v for k, v in doc.get("$defs", {}).items()
    }
    return _put_back_singles(out, defs, shared)


def _put_back_singles(body: dict[str, Any], defs: dict[str, Any], shared: dict[str, Any]) -> dict[str, Any]:
    """Shared definitions referenced from one place only go back into that place."""
    uses: Counter[str] = Counter()

    def tally(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/" + PREFIX):
                uses[ref.rsplit("/", 1)[-1]] += 1
            for sub in subschemas(node):
                tally(sub)

    tally(body)
    for value in [*defs.values(), *shared.values()]:
        tally(value)
    single = {name for name in shared if uses[name] == 1}

    def inline(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] in single and len(node) == 1:
            return inline(shared[ref.rsplit("/", 1)[-1]])
        return map_subschemas(node, inline)

    out = map_subschemas(body, inline)
    kept = {k: inline(v) for k, v in defs.items()}
    kept.update({k: inline(v) for k, v in sorted(shared.items()) if k not in single})
    if kept:
        out["$defs"] = kept
    return out


__all__ = ["MIN_SIZE", "PREFIX", "map_subschemas", "share", "subschemas"]
