"""Names a package exports but loads on first use (PEP 562), so importing it stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any


class LazyNames:
    """A package's ``__getattr__`` and ``__dir__`` over a table of where each public name lives."""

    def __init__(self, package: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any]) -> None:
        self.package, self.homes, self.namespace = package, homes, namespace

    def getattr(self, name: str) -> Any:
        """Import the module that defines ``name`` when it is first read, and keep the value."""
        home = self.homes.get(name)
        if home is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        self.namespace[name] = value
        return value

    def dir(self) -> list[str]:
        """The public names, loaded or not."""
        return sorted(set(self.namespace) | set(self.homes))
