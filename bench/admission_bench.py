"""Benchmark the admission webhook's verdicts during a bulk apply into one namespace.

``kubectl apply -f`` of N McpServers sends N reviews one after another; review i sees the i-1
objects applied before it. The webhook keeps each namespace's validated objects between reviews
(``Baseline``) and re-validates only what changed; the baseline measured in the same run is
a fresh whole-namespace validation per review (what the webhook did before). Both give the same
verdicts (tests/unit/k8s/test_admission_verdict.py checks that property).

    .venv/bin/python bench/admission_bench.py [--objects 500]

Prints the CPU time of each and their ratio; exit 0 when the carried baseline is at most half
the fresh one (target), 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from clawplane.k8s.admission.verdict import Baseline, review, review_with

TARGET = 0.5


def _server(n: int) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": f"server-{n:05d}", "namespace": "bench", "resourceVersion": str(n + 1)},
        "spec": {"command": "npx", "args": ["-y", f"server-{n}"], "env": {"LEVEL": str(n % 7)}},
    }


def _carried(objects: list[dict[str, Any]]) -> float:
    previous: Baseline | None = None
    start = time.process_time()
    for i, obj in enumerate(objects):
        verdict, previous = review_with(obj, objects[:i], previous)
        assert verdict.allowed, verdict.message
    return time.process_time() - start


def _fresh(objects: list[dict[str, Any]]) -> float:
    start = time.process_time()
    for i, obj in enumerate(objects):
        assert review(obj, objects[:i]).allowed
    return time.process_time() - start


def main() -> int:
    """Run both and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--objects", type=int, default=500)
    args = parser.parse_args()
    objects = [_server(n) for n in range(args.objects)]
    _carried(objects[:20])  # warm imports and caches for both
    fresh = _fresh(objects)
    carried = _carried(objects)
    ratio = carried / fresh
    print(f"{args.objects} reviews in one namespace (CPU seconds)")
    for label, seconds in (("fresh validation per review (baseline)", fresh), ("carried baseline", carried)):
        print(f"  {label:<40} {seconds:7.2f} s ({seconds / args.objects * 1000:.1f} ms/review)")
    print(f"  ratio {ratio:.3f}× (target ≤ {TARGET}×)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
