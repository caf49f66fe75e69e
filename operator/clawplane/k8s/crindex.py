"""The custom resources as kopf's own watch last delivered them, so a pass reads them from memory.

A pass listed each of the six custom resource kinds of its namespace, although kopf already
watches them all. kopf's indices (``@kopf.index``) hold the latest body of every object, and kopf
runs no handler before every kind's initial list is indexed, and updates an object's index entry
before the handlers of the same event run: once a handler has handed the indices over
(``track``), a pass started by that handler (or any later one) sees at least the version the
handler saw. Until then, a pass lists as before (``objects`` answers None).

The operator's own status writes go in from the write's answer (``wrote``), so the next pass does
not take the index's older copy, still in kopf's queue, for the current status and write it again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]
Indexed = Mapping[Any, Iterable[JSON]]
"""A kopf index: namespace → the bodies of that namespace's objects."""


def index_id(plural: str) -> str:
    """The id of a kind's index (also the keyword kopf passes it to handlers under)."""
    return f"clawplane_{plural}_by_namespace"


def _version(obj: JSON) -> int | None:
    try:
        return int(str((obj.get("metadata") or {}).get("resourceVersion")))
    except ValueError:
        return None


@dataclass
class ResourceIndex:
    """Every custom resource kind's kopf index, plus the operator's own newer writes."""

    plurals: tuple[str, ...]
    _indices: dict[str, Indexed] = field(default_factory=dict)
    _written: dict[tuple[str, str, str], JSON] = field(default_factory=dict)

    def track(self, handler_kwargs: Mapping[str, Any]) -> None:
        """Take the indices from a kopf handler's keyword arguments (every handler gets them all)."""
        if len(self._indices) == len(self.plurals):
            return
        for plural in self.plurals:
            found = handler_kwargs.get(index_id(plural))
            if found is not None:
                self._indices[plural] = found

    def wrote(self, plural: str, obj: JSON) -> None:
        """The operator's own write of a resource (its status), as the API server answered it."""
        meta = obj.get("metadata") or {}
        self._written[(plural, str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = obj

    def objects(self, namespace: str) -> list[JSON] | None:
        """The namespace's custom resources of every kind; None until kopf's indices are handed over."""
        if len(self._indices) < len(self.plurals):
            return None
        out: list[JSON] = []
        listed: set[tuple[str, str, str]] = set()
        for plural in self.plurals:
            for obj in self._indices[plural].get(namespace) or ():
                key = (plural, namespace, str((obj.get("metadata") or {}).get("name") or ""))
                listed.add(key)
                ours = self._written.get(key)
                if ours is not None:
                    mine, theirs = _version(ours), _version(obj)
                    if mine is not None and theirs is not None and mine > theirs:
                        obj = ours
                    else:  # the index caught up with our write (or passed it)
                        del self._written[key]
                out.append(obj)
        for key in [k for k in self._written if k[1] == namespace and k not in listed]:
            del self._written[key]  # deleted since we wrote it
        return out
