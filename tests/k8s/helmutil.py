"""Shared helpers of the chart and manifest tests: chart rendering, YAML loading, schema checks.

Helm runs in-process through helm-python-sdk (no ``helm`` binary, no cluster): ``render`` is the
equivalent of ``helm template`` and never needs a kubeconfig.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "clawplane"
MANIFESTS = ROOT / "manifests"
EXAMPLES = ROOT / "examples" / "k8s"
# A version that the installed kubernetes-validate has schemas for (it ships 1.25 and later)
# and that matches the kind node image of .github/workflows/e2e-kind.yaml.
KUBE_VERSION = "1.32.0"
RELEASE = "clawplane"
RELEASE_NAMESPACE = "clawplane-system"
HELM_HOME_VARS = ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")

Doc = dict[str, Any]


def load_docs(text: str) -> list[Doc]:
    """Every non-empty document of a (multi-document) YAML text."""
    return [doc for doc in YAML(typ="safe", pure=True).load_all(io.StringIO(text)) if doc]


def load_file(path: Path) -> list[Doc]:
    return load_docs(path.read_text(encoding="utf-8"))


def render(values: dict[str, Any] | None = None, *, namespace: str = RELEASE_NAMESPACE) -> list[Doc]:
    """The chart's rendered objects (templates only, like ``helm template``; no CRDs, no NOTES)."""
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values or {}, name=RELEASE, namespace=namespace)
    return [doc for name, text in sorted(files.items()) if name.endswith(".yaml") for doc in load_docs(text)]


def render_notes(values: dict[str, Any] | None = None) -> str:
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values or {}, name=RELEASE, namespace=RELEASE_NAMESPACE)
    return files[f"{CHART.name}/templates/NOTES.txt"]


def of_kind(docs: Iterable[Doc], kind: str) -> list[Doc]:
    return [doc for doc in docs if doc["kind"] == kind]


def one(docs: Iterable[Doc], kind: str) -> Doc:
    found = of_kind(docs, kind)
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


def ident(doc: Doc) -> str:
    meta = doc.get("metadata", {})
    return f"{doc.get('kind')}/{meta.get('namespace', '')}/{meta.get('name')}"


def kube_problems(docs: Iterable[Doc]) -> list[str]:
    """Strict schema problems of built-in kinds (and CRD manifests) for ``KUBE_VERSION``."""
    problems = []
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = "/".join(str(p) for p in getattr(exc, "absolute_path", []))
            problems.append(f"{ident(doc)} at /{where}: {getattr(exc, 'message', exc)}")
    return problems


def rbac_rules(docs: Iterable[Doc]) -> Iterator[tuple[str, Doc]]:
    """``(object id, rule)`` for every rule of every Role and ClusterRole."""
    for doc in docs:
        if doc["kind"] in ("Role", "ClusterRole"):
            for rule in doc.get("rules", []):
                yield ident(doc), rule


def least_privilege_problems(docs: Iterable[Doc]) -> list[str]:
    """Wildcards or privilege-escalation verbs in any rule, and Secrets mixed with other resources.

    The operator writes Secrets (the bridge tokens it generates), so their rule must name
    ``secrets`` alone, where a reviewer sees exactly what it may do.
    """
    problems = []
    for where, rule in rbac_rules(docs):
        for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
            if any("*" in str(v) for v in rule.get(field, [])):
                problems.append(f"{where}: wildcard in {field}: {rule}")
        if set(rule.get("verbs", [])) & {"escalate", "bind", "impersonate", "deletecollection"}:
            problems.append(f"{where}: dangerous verb: {rule}")
        if "secrets" in rule.get("resources", []) and rule["resources"] != ["secrets"]:
            problems.append(f"{where}: secrets share a rule with other resources: {rule}")
    return problems
