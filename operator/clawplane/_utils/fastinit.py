"""A faster ``__init__`` for frozen, slotted dataclasses that hold many fields.

A frozen dataclass's generated ``__init__`` stores each field through
``object.__setattr__`` (its own ``__setattr__`` refuses), which costs about a
third more than a plain attribute store. A cold scan of thousands of skills
builds hundreds of thousands of such fields (records, manifests, verdicts,
statuses), so the hot classes get an ``__init__`` that writes each slot
through its descriptor instead: same signature, same defaults and factories,
same values, and the instance stays frozen afterwards.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["fast_init"]

T = TypeVar("T")
_FACTORY = object()


def fast_init(cls: type[T]) -> type[T]:
    """Give ``cls`` (a frozen dataclass with ``slots=True``) a descriptor-based ``__init__``."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_init needs @dataclass(frozen=True, slots=True)")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = [field.name for field in fields]
    signature = list(inspect.signature(cls.__init__).parameters)[1:]
    if signature != names or hasattr(cls, "__post_init__") or any(f.kw_only for f in fields):
        # InitVars, init=False fields, keyword-only fields and __post_init__ are not handled.
        raise TypeError(f"{cls.__name__}: fast_init supports plain fields only")
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    arguments, body = [], []
    for field in fields:
        name = field.name
        namespace[f"_set_{name}"] = cls.__dict__[name].__set__
        if field.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = field.default
            arguments.append(f"{name}=_default_{name}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = field.default_factory
            arguments.append(f"{name}=_FACTORY")
            body.append(f"    if {name} is _FACTORY:\n        {name} = _factory_{name}()")
        else:
            arguments.append(name)
        body.append(f"    _set_{name}(self, {name})")
    source = f"def __init__(self, {', '.join(arguments)}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)  # the text is built from the class's own field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
