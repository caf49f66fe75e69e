"""Field docstrings as field descriptions, attached when a schema is made, not on import.

pydantic can read them as each model class is created (``use_attribute_docstrings``), but
that reads and parses the source of every class on every import: a fifth of importing the
models, paid by every ``clawplane validate`` run, which never shows a description. The
schema generators (``clawplane.schema``: JSON Schemas, CRDs, ``explain``) call
``describe_models()`` first; it gives each field the description pydantic would have given
it (the string right under its annotation, cleaned like a docstring, inherited with the
field) and rebuilds the models, so the schemas are exactly what they were.
"""

from __future__ import annotations

import ast
import inspect
import sys
import threading
import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["describe_models", "field_docstrings"]

_lock = threading.Lock()
_described: set[type[BaseModel]] = set()


def field_docstrings(cls: type) -> dict[str, str]:
    """``{field: docstring}`` for the annotations in ``cls``'s own body (a module-level class)."""
    module = sys.modules[cls.__module__]
    tree = _module_tree(module.__name__, inspect.getsource(module))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return _docstrings_in(node)
    return {}


_trees: dict[str, ast.Module] = {}


def _module_tree(name: str, source: str) -> ast.Module:
    tree = _trees.get(name)
    if tree is None:
        tree = _trees[name] = ast.parse(source)
    return tree


def _docstrings_in(node: ast.ClassDef) -> dict[str, str]:
    docs: dict[str, str] = {}
    for before, stmt in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(before, ast.AnnAssign)
            and isinstance(before.target, ast.Name)
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            docs[before.target.id] = inspect.cleandoc(stmt.value.value)
    return docs


def describe_models(root: type[BaseModel]) -> None:
    """Describe every field of ``root``'s subclasses (once per class; thread-safe)."""
    with _lock:
        order = [cls for cls in _dependency_order(root) if cls not in _described]
        for cls in order:
            own = field_docstrings(cls)
            annotated = inspect.get_annotations(cls)
            for name, info in cls.model_fields.items():
                if info.description is not None:
                    continue
                if name not in annotated:  # inherited: pydantic copies the parent's field
                    info.description = _inherited(cls, name)
                if info.description is None and name in own:
                    info.description = own[name]
        # Children first: a model's schema embeds the schemas of the models its fields hold.
        for cls in order:
            cls.model_rebuild(force=True, _parent_namespace_depth=0)
            _described.add(cls)


def _inherited(cls: type[BaseModel], name: str) -> str | None:
    for base in cls.__mro__[1:]:
        if isinstance(base, type) and issubclass(base, BaseModel) and name in base.model_fields:
            return base.model_fields[name].description
    return None


def _dependency_order(root: type[BaseModel]) -> list[type[BaseModel]]:
    """``root``'s subclasses, each after its bases and after the models its fields hold."""
    out: list[type[BaseModel]] = []
    seen: set[type[BaseModel]] = set()

    def visit(cls: type[BaseModel]) -> None:
        if cls in seen:
            return
        seen.add(cls)
        for base in cls.__bases__:
            if issubclass(base, root) and base is not root:
                visit(base)
        for info in cls.model_fields.values():
            for held in _models_in(info.annotation):
                if issubclass(held, root):
                    visit(held)
        out.append(cls)

    stack: list[type[BaseModel]] = [root]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            visit(sub)
            stack.append(sub)
    return out


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        node = stack.pop()
        if isinstance(node, type) and issubclass(node, BaseModel):
            found.append(node)
        stack.extend(typing.get_args(node))
    return found
