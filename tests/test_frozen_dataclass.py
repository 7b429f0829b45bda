"""records.frozen_dataclass: its shared repr (and the generated equality and hash it keeps) must
behave exactly like the methods `@dataclass(frozen=True)` generates. Every class the package makes
with it is compared with its plain twin (the same fields through the stdlib decorator) over many
field values."""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import math
import pkgutil

import pytest

import tiletune
from tiletune import records
from tiletune.records import TileConfig, frozen_dataclass


def _made_with_it() -> list[type]:
    for info in pkgutil.walk_packages(tiletune.__path__, "tiletune."):
        if info.name != "tiletune.__main__" and not info.name.startswith(("tiletune.tuner", "tiletune.commands")):
            importlib.import_module(info.name)
    out = []
    seen: set[type] = set()
    for mod in list(importlib.sys.modules.values()):  # type: ignore[attr-defined]
        if not getattr(mod, "__name__", "").startswith("tiletune"):
            continue
        for obj in vars(mod).values():
            if (isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj not in seen
                    and getattr(obj.__repr__, "__module__", None) == "tiletune.records"):
                seen.add(obj)
                out.append(obj)
    return sorted(out, key=lambda c: (c.__module__, c.__qualname__))


CLASSES = _made_with_it()


def _twin(cls: type) -> type:
    """The same fields through the plain `@dataclass(frozen=True[, slots=True])`."""
    fields = [(f.name, f.type, dataclasses.field(default=None, compare=f.compare, hash=f.hash, repr=f.repr))
              for f in dataclasses.fields(cls)]
    twin = dataclasses.make_dataclass(cls.__name__, fields, frozen=True, slots="__slots__" in cls.__dict__)
    twin.__qualname__ = cls.__qualname__
    return twin


def _build(cls: type, values: dict) -> object:
    obj = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(obj, name, value)
    return obj


SAMPLES = [None, 0, 1, -1.5, math.nan, "x", "with 'quotes'\n", (), (1, 2, 3), ((1, "a"), (2, None)), True,
           TileConfig((128, 128, 64)), [1, 2]]


def test_the_package_uses_it() -> None:
    names = {c.__qualname__ for c in CLASSES}
    assert {"TuningRecord", "TileConfig", "Entry", "AnalyzedEntry", "InspectResult", "GpuSpec", "Catalog"} <= names
    assert len(CLASSES) >= 30


@pytest.mark.parametrize("cls", CLASSES, ids=[f"{c.__module__}.{c.__qualname__}" for c in CLASSES])
def test_same_equality_hash_and_repr_as_the_generated_methods(cls: type) -> None:
    twin = _twin(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    assert [f.name for f in dataclasses.fields(twin)] == names
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    rows = []
    for i in range(len(SAMPLES)):
        rows.append({n: SAMPLES[(i + j) % len(SAMPLES)] for j, n in enumerate(names)})
    rows.append({n: rows[0][n] for n in names})  # equal to the first, other objects
    rows += [{**rows[0], n: "changed"} for n in names]  # one field different
    ours = [_build(cls, r) for r in rows]
    plain = [_build(twin, r) for r in rows]
    for o, p in zip(ours, plain):
        assert repr(o) == repr(p)
        if not any(isinstance(v, list) for v in _hashed_values(o)):
            assert hash(o) == hash(p)
        assert o.__eq__(object()) is NotImplemented and p.__eq__(object()) is NotImplemented
    for (o1, p1), (o2, p2) in itertools.product(zip(ours, plain), repeat=2):
        assert (o1 == o2) == (p1 == p2) and (o1 != o2) == (p1 != p2)


def _hashed_values(obj: object) -> list:
    return [getattr(obj, f.name) for f in dataclasses.fields(obj)  # type: ignore[arg-type]
            if (f.compare if f.hash is None else f.hash)]


def test_fields_left_out_of_compare_hash_and_repr() -> None:
    @frozen_dataclass(slots=True)
    class C:
        a: int
        b: int = dataclasses.field(default=0, compare=False, repr=False)
        c: int = dataclasses.field(default=0, hash=False)

    @dataclasses.dataclass(frozen=True, slots=True)
    class P:
        a: int
        b: int = dataclasses.field(default=0, compare=False, repr=False)
        c: int = dataclasses.field(default=0, hash=False)

    P.__qualname__ = C.__qualname__
    for args in [(1, 2, 3), (1, 5, 3), (1, 2, 4), (2, 2, 3)]:
        assert repr(C(*args)) == repr(P(*args)) and hash(C(*args)) == hash(P(*args))
        assert (C(*args) == C(1, 2, 3)) == (P(*args) == P(1, 2, 3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        C(1).a = 2  # type: ignore[misc]
    assert dataclasses.replace(C(1, 2, 3), a=7) == C(7, 2, 3)


def test_no_fields_and_one_field() -> None:
    @frozen_dataclass
    class Empty:
        pass

    @frozen_dataclass
    class One:
        x: object

    assert Empty() == Empty() and hash(Empty()) == hash(()) and repr(Empty()).endswith("Empty()")
    assert hash(One((1, 2))) == hash(((1, 2),)) and One(1) != One(2) and repr(One("a")).endswith("One(x='a')")


def test_a_record_inside_itself_is_shown_as_dots() -> None:
    @frozen_dataclass
    class Box:
        items: list

    box = Box([])
    box.items.append(box)
    assert repr(box).endswith("Box(items=[...])")
    assert records.frozen_dataclass is records._frozen_dataclass
