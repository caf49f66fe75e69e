"""docs/architecture.md names every package of operator/clawplane/ and no package that does not exist.

A package is named as a code span ending in a slash (`reconcile/`, `runtimes/proxy/`). Every
such span must be a package of clawplane or a folder of the repository, so a room that moves or
goes away cannot stay on the page, and a new room cannot be missing from it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "operator" / "clawplane"
PAGE = ROOT / "docs" / "architecture.md"


def packages() -> set[str]:
    """Every package under operator/clawplane/, as a path relative to it (``runtimes/proxy``)."""
    return {str(init.parent.relative_to(PACKAGE)) for init in PACKAGE.rglob("__init__.py") if init.parent != PACKAGE}


def named() -> set[str]:
    """The folder paths the page names in code spans (without the trailing slash)."""
    return {m.rstrip("/") for m in re.findall(r"`([\w./-]+/)`", PAGE.read_text(encoding="utf-8"))}


def test_every_package_is_named() -> None:
    missing = sorted(packages() - named())
    assert missing == [], f"docs/architecture.md does not name these packages: {missing}"


def test_every_named_folder_exists() -> None:
    unknown = sorted(n for n in named() if not (PACKAGE / n).is_dir() and not (ROOT / n).is_dir())
    assert unknown == [], f"docs/architecture.md names packages or folders that do not exist: {unknown}"


def test_the_layers_drawn_are_the_contracts() -> None:
    """Each layer line of the contract in pyproject.toml is a line of the page's layer drawing."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["type"] == "layers")["layers"]
    text = PAGE.read_text(encoding="utf-8")
    drawing = text.split("## The layers", 1)[1].split("```", 2)[1]
    drawn = [line.split("  ")[0].strip() for line in drawing.strip().splitlines()]
    assert drawn == [layer.replace("clawplane.", "") for layer in layers]
