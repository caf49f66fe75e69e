"""Server-side printing: ``kubectl get`` asks for a ``meta.k8s.io/v1`` Table.

For custom resources the columns are Name plus the CRD's ``additionalPrinterColumns``,
each cell found with the column's JSONPath (apiextensions-apiserver
``pkg/registry/customresource/tableconvertor``): a path that finds nothing gives an empty
cell, which kubectl prints as ``<none>``. The JSONPath subset here (fields, indexes,
``[*]`` and ``[?(@.key=="value")]`` filters) is what CRD columns use; anything else is
refused when the CRD is written, so a column can never silently print nothing.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

JSON = dict[str, Any]
_STEP = re.compile(r"""\.([A-Za-z0-9_-]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\)\]""")


class JsonPathError(ValueError):
    """A printer-column path outside the supported subset."""


def parse(path: str) -> list[tuple[str, Any]]:
    """``[("field", name) | ("index", n) | ("all", None) | ("filter", (key, value))]``."""
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            raise JsonPathError(f"unrecognized column definition {path!r}")
        field, index, fkey, dq, sq = match.groups()
        if field is not None:
            steps.append(("field", field))
        elif index == "*":
            steps.append(("all", None))
        elif index is not None:
            steps.append(("index", int(index)))
        else:
            steps.append(("filter", (fkey, dq if dq is not None else sq)))
        pos = match.end()
    return steps


def find(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` reaches in ``obj`` (missing keys give nothing, as ``AllowMissingKeys``)."""
    current = [obj]
    for kind, arg in parse(path):
        nxt: list[Any] = []
        for value in current:
            if (kind == "field" and isinstance(value, dict) and arg in value) or (kind == "index" and isinstance(value, list) and arg < len(value)):
                nxt.append(value[arg])
            elif kind == "all" and isinstance(value, list):
                nxt.extend(value)
            elif kind == "filter" and isinstance(value, list):
                key, wanted = arg
                nxt.extend(item for item in value if _dig(item, key) == wanted)
        current = nxt
    return current


def _dig(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj if not isinstance(obj, bool) else ("true" if obj else "false")


def human_age(timestamp: str, now: datetime.datetime | None = None) -> str:
    """``duration.HumanDuration`` of the time since ``timestamp`` (``<invalid>`` when unparsable)."""
    try:
        then = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    seconds = int(((now or datetime.datetime.now(datetime.UTC)) - then).total_seconds())
    if seconds < 0:
        return "<invalid>"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    return f"{days}d" if days < 365 * 2 else f"{days // 365}y"


def _cell(column: JSON, obj: JSON) -> Any:
    found = find(obj, column["jsonPath"])
    if not found:
        return None
    value = found[0]
    ctype = column.get("type")
    if ctype == "string":
        return value if isinstance(value, str) else json.dumps(value)
    if ctype == "integer":
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if ctype == "number":
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if ctype == "boolean":
        return value if isinstance(value, bool) else None
    if ctype == "date":
        return human_age(value) if isinstance(value, str) else None
    return None


def wants_table(accept: str) -> bool:
    """Whether the Accept header asks for a ``meta.k8s.io`` Table."""
    return "as=Table" in accept


def to_table(columns: list[JSON], objects: list[JSON], *, resource_version: str, include: str) -> JSON:
    """The Table for ``objects`` (one row each) with ``columns`` after Name."""
    headers = [{"name": "Name", "type": "string", "format": "name", "description": "Name of the object", "priority": 0}]
    for col in columns:
        headers.append(
            {
                "name": col["name"],
                "type": col["type"],
                "format": col.get("format", ""),
                "description": col.get("description")
                or f"Custom resource definition column (in JSONPath format): {col['jsonPath']}",
                "priority": int(col.get("priority") or 0),
            }
        )
    rows = []
    for obj in objects:
        row: JSON = {"cells": [obj["metadata"]["name"], *(_cell(col, obj) for col in columns)]}
        if include == "Object":
            row["object"] = obj
        elif include != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": headers,
        "rows": rows,
    }
