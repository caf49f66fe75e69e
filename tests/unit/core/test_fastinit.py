"""``fast_init`` builds the same frozen instances as the dataclass ``__init__`` it replaces."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from clawplane._utils.fastinit import fast_init


def _record_class() -> Any:
    """A fresh frozen, slotted dataclass with a plain field, a default and two factories."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Record:
        a: int
        b: str = "x"
        c: tuple[int, ...] = dataclasses.field(default_factory=tuple)
        d: list[int] = dataclasses.field(default_factory=list)

    return Record


Plain = _record_class()
Fast = fast_init(_record_class())


@pytest.mark.parametrize(("args", "kwargs"), [
    ((1,), {}), ((1, "y"), {}), ((1,), {"d": [2]}), ((), {"a": 3, "b": "z", "c": (1,)}),
])
def test_same_values_as_the_dataclass_init(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    plain, fast = Plain(*args, **kwargs), Fast(*args, **kwargs)
    assert dataclasses.astuple(plain) == dataclasses.astuple(fast)


def test_factories_run_per_instance_and_the_instance_stays_frozen() -> None:
    one, two = Fast(1), Fast(1)
    assert one.d == [] and one.d is not two.d
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2
    assert one == two and Fast(1, "q", (2,), [3]) == Fast(1, "q", (2,), [3])


def test_the_signature_and_errors_are_the_dataclass_ones() -> None:
    assert list(inspect.signature(Fast).parameters) == ["a", "b", "c", "d"]
    with pytest.raises(TypeError):
        Fast()  # a required argument is missing
    with pytest.raises(TypeError):
        Fast(1, e=2)  # no such field


def test_classes_it_cannot_speed_up_are_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int] = 0

    for cls in (NoSlots, NotFrozen, PostInit, WithInitVar):
        with pytest.raises(TypeError):
            fast_init(cls)
