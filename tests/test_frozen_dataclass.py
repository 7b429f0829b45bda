"""frozen.frozen_dataclass: its shared repr (and the generated equality and hash it keeps) must
behave exactly like the methods `@dataclass(frozen=True)` generates. Every class the package makes
with it is compared with its plain twin (the same fields through the stdlib decorator) over many
field values."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import itertools
import math
import pkgutil

import pytest

import tiletune
from tiletune.core import frozen
from tiletune.core.frozen import frozen_dataclass
from tiletune.core.records import TileConfig


def _made_with_it() -> list[type]:
    for info in pkgutil.walk_packages(tiletune.__path__, "tiletune."):
        if info.name != "tiletune.__main__" and not info.name.startswith(("tiletune.tuner", "tiletune.cli.commands")):
            importlib.import_module(info.name)
    out = []
    seen: set[type] = set()
    for mod in list(importlib.sys.modules.values()):  # type: ignore[attr-defined]
        if not getattr(mod, "__name__", "").startswith("tiletune"):
            continue
        for obj in vars(mod).values():
            if (isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj not in seen
                    and getattr(obj.__repr__, "__module__", None) == "tiletune.core.frozen"):
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
    for name in ("__eq__", "__hash__"):  # by now compiled on first use: the generated methods themselves
        ours_fn, plain_fn = cls.__dict__[name], twin.__dict__[name]
        assert ours_fn.__code__.co_code == plain_fn.__code__.co_code
        assert ours_fn.__code__.co_names == plain_fn.__code__.co_names
        assert ours_fn.__qualname__ == f"{cls.__qualname__}.{name}" and ours_fn.__module__ == cls.__module__


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
    assert frozen.frozen_dataclass is frozen._frozen_dataclass


# --- The methods frozen_dataclass builds without compiling (frozen._cheap_frozen) -------------------------

def _exact_twin(cls: type) -> type:
    """The same fields, defaults and default factories through the plain `@dataclass(frozen=True[, slots=True])`."""
    fields = []
    for f in dataclasses.fields(cls):
        kw = dict(compare=f.compare, hash=f.hash, repr=f.repr)
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        fields.append((f.name, f.type, dataclasses.field(**kw)))
    twin = dataclasses.make_dataclass(cls.__name__, fields, frozen=True, slots="__slots__" in cls.__dict__)
    twin.__qualname__ = cls.__qualname__
    return twin


def _outcome(fn, *args: object) -> tuple:  # noqa: ANN001
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception is the thing compared
        return (type(e), str(e))


def _same_as_plain(cls: type, twin: type, args: tuple) -> None:
    import copy
    import pickle
    import sys

    ours, plain = cls(*args), twin(*args)
    names = [f.name for f in dataclasses.fields(cls)]
    assert [getattr(ours, n) for n in names] == [getattr(plain, n) for n in names]
    assert ours.__class__ is cls and ours == cls(*args) and _outcome(hash, ours) == _outcome(hash, plain)
    for n in names + ["not_a_field"]:
        assert _outcome(setattr, ours, n, 1) == _outcome(setattr, plain, n, 1)
        assert _outcome(delattr, ours, n) == _outcome(delattr, plain, n)
    assert [getattr(ours, n) for n in names] == [getattr(plain, n) for n in names]  # nothing changed
    if "__slots__" in cls.__dict__:
        if getattr(sys.modules[cls.__module__], cls.__qualname__, None) is cls:  # picklable by name
            back = pickle.loads(pickle.dumps(ours))
            assert back.__class__ is cls and repr(back) == repr(ours)
        assert (copy.copy(ours) == ours) == (copy.copy(plain) == plain)  # the same pickling hooks
        assert repr(ours.__getstate__()) == repr(plain.__getstate__())  # type: ignore[attr-defined]


def _params(cls: type) -> dict:
    p = cls.__dataclass_params__  # type: ignore[attr-defined]
    return {k: getattr(p, k) for k in ("init", "eq", "order", "unsafe_hash", "frozen")}


@pytest.mark.parametrize("cls", CLASSES, ids=[f"{c.__module__}.{c.__qualname__}" for c in CLASSES])
def test_same_init_frozenness_and_pickling_as_the_plain_decorator(cls: type) -> None:
    twin = _exact_twin(cls)
    ours_sig, plain_sig = inspect.signature(cls), inspect.signature(twin)
    assert [(p.name, p.kind, repr(p.default), p.annotation) for p in ours_sig.parameters.values()] == [
        (p.name, p.kind, repr(p.default), p.annotation) for p in plain_sig.parameters.values()]
    assert cls.__init__.__annotations__ == twin.__init__.__annotations__
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    assert cls.__setattr__.__qualname__ == f"{cls.__qualname__}.__setattr__"
    assert _params(cls) == _params(twin)
    assert cls.__match_args__ == twin.__match_args__  # type: ignore[attr-defined]
    assert cls.__dict__.get("__slots__") == twin.__dict__.get("__slots__")
    required = [p for p in ours_sig.parameters.values() if p.default is inspect.Parameter.empty]
    for i in range(len(SAMPLES)):
        args = tuple(SAMPLES[(i + j) % len(SAMPLES)] for j in range(len(required)))
        if all(not isinstance(a, list) for a in args):
            _same_as_plain(cls, twin, args)
    if required:
        assert _outcome(cls)[0] is TypeError and _outcome(twin)[0] is TypeError
    assert _outcome(cls, *range(len(ours_sig.parameters) + 1))[0] is TypeError


def test_odd_classes_match_the_plain_decorator() -> None:
    import typing

    def both(body: dict, slots: bool) -> tuple[type, type]:
        made = []
        for deco in (frozen_dataclass(slots=slots), dataclasses.dataclass(frozen=True, slots=slots)):
            ns = dict(body)
            made.append(deco(type("Odd", (), ns)))
        return made[0], made[1]

    cases = [
        ({"__annotations__": {}}, ()),  # no fields, no docstring
        ({"__annotations__": {"a": "int"}, "__doc__": None}, (1,)),
        ({"__annotations__": {"a": "int", "b": "list"}, "b": dataclasses.field(default_factory=list)}, (1,)),
        ({"__annotations__": {"a": int, "b": "typing.ClassVar[int]"}, "b": 3}, (1,)),
        ({"__annotations__": {"a": "int", "b": "int"}, "b": dataclasses.field(default=2, compare=False, hash=False)},
         (1, 5)),
        ({"__annotations__": {"_FACTORY": "int", "self": "int"}}, (1, 2)),  # names the built init keeps: plain path
        ({"__annotations__": {"a": "int", "b": "dataclasses.InitVar[int]"},
          "__post_init__": lambda self, b: None}, (1, 2)),
        ({"__annotations__": {"a": "int", "b": "int"}, "b": dataclasses.field(default=0, init=False)}, (1,)),
        ({"__annotations__": {"a": "int", "b": "int"}, "b": dataclasses.field(default=0, kw_only=True)}, (1,)),
    ]
    assert typing  # the ClassVar annotation's module
    for slots in (False, True):
        for body, args in cases:
            ours, plain = both(body, slots)
            assert ours.__doc__ == plain.__doc__
            assert str(inspect.signature(ours)) == str(inspect.signature(plain))
            assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(plain)]
            assert _params(ours) == _params(plain)
            _same_as_plain(ours, plain, args)
            a, b = ours(*args), ours(*args)
            if "b" in body and isinstance(body["b"], dataclasses.Field) and body["b"].default_factory is not \
                    dataclasses.MISSING:
                assert a.b == [] and a.b is not b.b  # the default factory runs per instance


def test_refusals_match_the_plain_decorator() -> None:
    for slots in (False, True):
        body = {"__annotations__": {"a": "int", "b": "int"}, "a": 1}  # a field without a default after one with
        got = [_outcome(d, type("Bad", (), dict(body)))
               for d in (frozen_dataclass(slots=slots), dataclasses.dataclass(frozen=True, slots=slots))]
        assert got[0] == got[1] and got[0][0] is TypeError

    @frozen_dataclass(slots=True)
    class Base:
        a: int

    @frozen_dataclass(slots=True)
    class Sub(Base):  # a dataclass base: made by the plain decorator
        b: int = 0

    assert Sub(1, 2) == Sub(1, 2) and Sub(1).b == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        Sub(1).a = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="non-frozen dataclass from a frozen one"):
        dataclasses.dataclass(type("Thawed", (Base,), {"__annotations__": {"c": "int"}, "c": 0}))


def test_equality_and_hash_compiled_on_first_use_answer_that_first_call_too() -> None:
    def fresh() -> tuple[type, type]:
        body = {"__annotations__": {"a": "int", "b": "str", "c": "int"},
                "c": dataclasses.field(default=0, compare=False)}
        return (frozen_dataclass(slots=True)(type("Fresh", (), dict(body))),
                dataclasses.dataclass(frozen=True, slots=True)(type("Fresh", (), dict(body))))

    firsts = [lambda x, y: x == y, lambda x, y: x != y, lambda x, y: hash(x), lambda x, y: {x: 1}.get(y),
              lambda x, y: x.__eq__(object())]
    for first in firsts:
        for args in [((1, "x", 2), (1, "x", 3)), ((1, "x"), (2, "x")), ((math.nan, "x"), (math.nan, "x"))]:
            ours, plain = fresh()
            stub = ours.__dict__["__eq__"]
            got = first(ours(*args[0]), ours(*args[1]))
            want = first(plain(*args[0]), plain(*args[1]))
            assert got == want or (got is want)
            assert ours.__dict__["__eq__"] is not stub  # replaced by the generated one
            assert ours.__dict__["__hash__"].__code__.co_code == plain.__dict__["__hash__"].__code__.co_code
            o1, o2, p1, p2 = ours(*args[0]), ours(*args[1]), plain(*args[0]), plain(*args[1])
            assert (o1 == o2, o1 != o2, hash(o1) == hash(p1)) == (p1 == p2, p1 != p2, True)

    class Sub(fresh()[0]):  # a plain subclass hashing first still gets the same answers
        pass

    assert hash(Sub(1, "x")) == hash(fresh()[1](1, "x")) and Sub(1, "x") == Sub(1, "x", 5)


def test_compiling_equality_and_hash_signs_no_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin class the methods are compiled on has a docstring, so dataclasses does not sign it
    (object's __init__: tokenizing its text signature compiled tokenize's patterns in every run);
    the methods are still the generated ones (the test above)."""
    import inspect

    Late = frozen_dataclass(slots=True)(type("Late", (), {"__annotations__": {"a": "int"}}))
    signed: list[object] = []
    monkeypatch.setattr(inspect, "signature", lambda *a, **k: signed.append(a))
    assert Late(1) == Late(1) and hash(Late(1)) == hash(Late(1)) and Late(1) != Late(2)
    assert signed == [] and Late.__doc__ == "Late(a: 'int')"
