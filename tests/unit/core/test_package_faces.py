"""Each package's face is deliberate: what it exports is defined inside it, resolves, and is what
other packages import (as httpx's ``test_exported_members``)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "operator" / "clawplane"
# Packages whose faces are kept deliberate here. Not faced, and imported by module on purpose: the
# engine's and the operator's rooms (reconcile/, k8s/), whose callers are the floors right above
# them; schema/ and _utils/ (leaf helpers); the rooms inside runtimes/ (client/, proxy/eras/).
FACED = [
    "clawplane.approvals", "clawplane.desired", "clawplane.editing", "clawplane.events", "clawplane.interop",
    "clawplane.interop.openclaw", "clawplane.jscompat", "clawplane.loading", "clawplane.models", "clawplane.naming", "clawplane.planning", "clawplane.providers",
    "clawplane.reconcile.queries", "clawplane.render", "clawplane.render.clients", "clawplane.render.openclaw",
    "clawplane.runtimes", "clawplane.runtimes.oauth", "clawplane.runtimes.process", "clawplane.runtimes.proxy",
    "clawplane.schema.openclaw", "clawplane.secrets", "clawplane.state", "clawplane.skills", "clawplane.skills.frontmatter",
    "clawplane.supervisor", "clawplane.telemetry", "clawplane.ui", "clawplane.validation", "clawplane.validation.openclaw",
    "clawplane.workspace",
]  # fmt: skip
# Importers allowed to reach past a face, and why.
PAST_THE_FACE = {
    # naming stays free of anything but the standard library (tests/unit/naming): it imports the
    # two dependency-free modules of jscompat, not the package that also holds values and ICU.
    ("clawplane.jscompat", "naming"),
}


@pytest.mark.parametrize("name", FACED)
def test_exported_members(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert len(exported) == len(set(exported)), "no name is exported twice"
    for member in exported:
        value = getattr(package, member)
        if inspect.isclass(value) or inspect.isfunction(value):  # aliases and constants have no home
            home = value.__module__
            assert home == name or home.startswith(name + "."), (
                f"{name}.{member} is defined in {home}, outside the package"
            )


@pytest.mark.parametrize("name", FACED)
def test_other_packages_import_the_face_not_the_rooms(name: str) -> None:
    """Outside ``name``, code imports its exported names from the package, never from a module in it."""
    exported = set(importlib.import_module(name).__all__)
    room = re.compile(rf"^\s*from {re.escape(name)}\.(\w+) import ([^\n(]+)$", re.M)
    own = PACKAGE.joinpath(*name.split(".")[1:])
    found = []
    for path in PACKAGE.rglob("*.py"):
        if own in path.parents or (name, path.relative_to(PACKAGE).parts[0]) in PAST_THE_FACE:
            continue
        for match in room.finditer(path.read_text(encoding="utf-8")):
            names = {n.strip() for n in match.group(2).split(",")}
            if names & exported:
                found.append(f"{path.relative_to(PACKAGE)}: {match.group(0).strip()}")
    assert found == []
