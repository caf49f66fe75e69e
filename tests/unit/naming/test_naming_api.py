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


STANDARD = {"__future__", "collections", "dataclasses", "functools", "re", "string", "typing"}
# The JavaScript string rules naming rests on live in jscompat, as dependency-free as naming.
JS_RULES = {"clawplane.jscompat.strings", "clawplane.jscompat.utf16"}


def _imported(paths: list[Path]) -> set[str]:
    imported: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
    return imported


def test_package_imports_only_the_standard_library_and_itself() -> None:
    foreign = {
        name
        for name in _imported(list(PACKAGE_DIR.glob("*.py")))
        if not name.startswith("clawplane.naming") and name not in JS_RULES and name.split(".")[0] not in STANDARD
    }
    assert foreign == set()


def test_the_javascript_rules_it_rests_on_import_only_the_standard_library() -> None:
    jscompat = PACKAGE_DIR.parent / "jscompat"
    paths = [jscompat / f"{name.rsplit('.', 1)[1]}.py" for name in sorted(JS_RULES)]
    assert {name for name in _imported(paths) if name.split(".")[0] not in STANDARD} == set()
