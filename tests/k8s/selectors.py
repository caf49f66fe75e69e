"""Kubernetes label and field selectors, parsed from query strings and matched against objects."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Matcher = Callable[[Mapping[str, Any]], bool]

# One requirement of a label selector: `key in (a,b)`, `key notin (a)`, `k=v`, `k==v`, `k!=v`, `k`, `!k`.
_SET_RE = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*(?:(in|notin)\s*\(([^)]*)\)|(==|=|!=)\s*([^\s,]*))?\s*$")


class SelectorError(ValueError):
    """A selector string that cannot be parsed."""


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses (set-based values contain commas)."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (s.strip() for s in parts) if p]


def _requirement(text: str) -> Callable[[Mapping[str, str]], bool]:
    match = _SET_RE.match(text)
    if not match:
        raise SelectorError(f"unable to parse requirement: {text!r}")
    negated, key, set_op, set_values, op, value = match.groups()
    if negated:
        if set_op or op:
            raise SelectorError(f"'!' only negates a key: {text!r}")
        return lambda labels: key not in labels
    if set_op:
        values = {v.strip() for v in set_values.split(",") if v.strip()}
        if set_op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if op in ("=", "=="):
        return lambda labels: labels.get(key) == value
    if op == "!=":
        return lambda labels: labels.get(key) != value
    return lambda labels: key in labels


def label_matcher(selector: str | None) -> Matcher:
    """A predicate on objects for a labelSelector string (all requirements must hold)."""
    reqs = [_requirement(part) for part in _split_top_level(selector or "")]

    def matches(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(req(labels) for req in reqs)

    return matches


def field_value(obj: Mapping[str, Any], path: str) -> str | None:
    """The dotted ``path`` of ``obj`` rendered as a selector would see it (None when absent)."""
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    if isinstance(current, bool):
        return "true" if current else "false"
    return None if isinstance(current, dict | list) else str(current)


# Field labels each kind's registry supports (pkg/registry/*/strategy.go ``...ToSelectableFields``);
# every kind has metadata.name and metadata.namespace; custom resources add their selectableFields.
_EVENT = ("reason", "type", "source", "reportingComponent")
SELECTABLE_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): (
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName",
    ),
    ("", "events"): (
        *_EVENT, *(f"involvedObject.{k}" for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")),
    ),
    ("events.k8s.io", "events"): (
        "reason", "type", "reportingController",
        *(f"regarding.{k}" for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")),
    ),
    ("", "secrets"): ("type",),
    ("", "namespaces"): ("status.phase",),
    ("", "nodes"): ("spec.unschedulable",),
}  # fmt: skip


def field_matcher(selector: str | None, allowed: tuple[str, ...] | None = None) -> Matcher:
    """A predicate on objects for a fieldSelector string (``=``, ``==``, ``!=`` on dotted paths).

    With ``allowed``, any other field label is refused as the API server does.
    """
    checks: list[tuple[str, bool, str]] = []
    for part in _split_top_level(selector or ""):
        match = re.match(r"^([^!=\s]+)\s*(==|=|!=)\s*(.*)$", part)
        if not match:
            raise SelectorError(f"invalid field selector: {part!r}")
        path, op, value = match.groups()
        if allowed is not None and path not in ("metadata.name", "metadata.namespace", *allowed):
            raise SelectorError(f'field label not supported: {path}')
        checks.append((path, op != "!=", value.strip()))

    def matches(obj: Mapping[str, Any]) -> bool:
        # An absent field compares as the empty string, as in the real API server.
        return all(
            (field_value(obj, path) or "") == value if eq else (field_value(obj, path) or "") != value
            for path, eq, value in checks
        )

    return matches


def combined_matcher(
    label_selector: str | None, field_selector: str | None, allowed: tuple[str, ...] | None = None
) -> Matcher:
    """Both selectors at once (``allowed``: the field labels the kind supports)."""
    labels, fields = label_matcher(label_selector), field_matcher(field_selector, allowed)
    return lambda obj: labels(obj) and fields(obj)


def label_selector_matcher(selector: Mapping[str, Any]) -> Callable[[Mapping[str, str]], bool]:
    """A predicate on label sets for a ``LabelSelector`` object (matchLabels and matchExpressions)."""
    checks: list[Callable[[Mapping[str, str]], bool]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        checks.append(lambda labels, k=key, v=value: labels.get(k) == v)
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), set(expr.get("values") or [])
        if op == "In":
            checks.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
        elif op == "NotIn":
            checks.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
        elif op == "Exists":
            checks.append(lambda labels, k=key: k in labels)
        elif op == "DoesNotExist":
            checks.append(lambda labels, k=key: k not in labels)
        else:
            raise SelectorError(f"{op!r} is not a valid label selector operator")
    return lambda labels: all(check(labels) for check in checks)
