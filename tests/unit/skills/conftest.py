"""Fixtures of the skills unit tests (helpers live in ``skilltree``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.skills.skilltree import Run, Tree


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


@pytest.fixture
def run(tree: Tree) -> Run:
    return Run(tree)
