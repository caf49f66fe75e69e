"""The package exports exactly its documented public API and stays dependency-free."""

import ast
from pathlib import Path

import clawplane.naming as naming

PACKAGE_DIR = Path(naming.__file__).parent


def test_all_lists_every_public_name_exactly_once_and_sorted() -> None:
    public = {name for name in vars(naming) if not name.startswith("_")}
    modules = {
        "channelfields", "envpolicy", "envsubst", "jsstring", "sensitive", "servers", "toolapproval",
        "toolfilter", "toolpolicy", "tools", "utf16",
    }
    assert set(naming.__all__) == public - modules
    assert naming.__all__ == sorted(naming.__all__)


def test_package_imports_only_the_standard_library_and_itself() -> None:
    imported: set[str] = set()
    for path in PACKAGE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
    foreign = {
        name
        for name in imported
        if not name.startswith("clawplane.naming")
        and name.split(".")[0]
        not in {"__future__", "collections", "dataclasses", "functools", "re", "string", "typing"}
    }
    assert foreign == set()
