"""frozen._stored_init compiles an `__init__` once per shape (`_init_code`: the fields' count, which
have a default factory, slotted or not) and renames it for each class. Pinned to the plain way, the
source compiled for the class itself as it was before (defaults in the signature, evaluated names):
over every frozen class of the package and 400 generated ones (defaults, factories, slotted or not,
odd names), the code objects are identical attribute by attribute (but the columns of its line table), the defaults are the same
objects, and the inits build equal instances."""

from __future__ import annotations
import __future__

import dataclasses
import importlib
import keyword
import random
from typing import Any

import pytest

from tiletune.core import frozen

_CODE_ATTRS = ("co_code", "co_consts", "co_names", "co_varnames", "co_argcount", "co_posonlyargcount",
               "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_flags", "co_name", "co_qualname",
               "co_filename", "co_firstlineno", "co_exceptiontable", "co_freevars", "co_cellvars")
# co_linetable is left out: its column offsets follow the names' lengths (the code has no source file
# for a traceback to point into); the lines per instruction (co_lines) are compared instead


def _plain_init(cls: type, fields: tuple[dataclasses.Field, ...], slots: bool) -> Any:
    """The init as frozen_dataclass built it before: this class's own source, compiled as frozen.py compiles
    (with its `from __future__ import annotations`)."""
    ns: dict[str, Any] = {"__name__": cls.__module__, "_FACTORY": frozen._USE_FACTORY, "_setattr": object.__setattr__}
    args, body = [], []
    for f in fields:
        value = f.name
        if f.default is not dataclasses.MISSING:
            ns[f"_default_{f.name}"] = f.default
            args.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"_factory_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_FACTORY")
            value = f"_factory_{f.name}() if {f.name} is _FACTORY else {f.name}"
        else:
            args.append(f.name)
        if slots:
            ns[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
            body.append(f"    _set_{f.name}(self, {value})")
        else:
            body.append(f"    _setattr(self, {f.name!r}, {value})")
    src = f"def __init__(self, {', '.join(args)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(compile(src, "<string>", "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True), ns)  # noqa: S102
    return ns["__init__"]


def _same(cls: type) -> None:
    fields = dataclasses.fields(cls)
    slots = "__slots__" in cls.__dict__
    ours, plain = frozen._stored_init(cls, fields, slots), _plain_init(cls, fields, slots)
    for attr in _CODE_ATTRS:
        assert getattr(ours.__code__, attr) == getattr(plain.__code__, attr), (cls, attr)
    assert list(ours.__code__.co_lines()) == list(plain.__code__.co_lines())
    assert ours.__defaults__ == plain.__defaults__ and ours.__kwdefaults__ is plain.__kwdefaults__ is None
    assert all(a is b for a, b in zip(ours.__defaults__ or (), plain.__defaults__ or ()))
    assert (ours.__name__, ours.__module__) == (plain.__name__, plain.__module__)
    # the same names for the code to find (exec also left the function itself in the plain namespace,
    # and the plain source's signature read its defaults from `_default_<field>` names, once, at def
    # time: ours carries them as the function's own defaults, so its namespace has no such names)
    ns = {k: v for k, v in ours.__globals__.items() if k != "__builtins__"}
    assert ns == {k: v for k, v in plain.__globals__.items()
                  if k not in ("__builtins__", "__init__") and not k.startswith("_default_")}
    assert set(ours.__code__.co_names) <= set(ns) and not any(k.startswith("_default_") for k in ns)


_MODULES = ["tiletune.core.records", "tiletune.analysis.results", "tiletune.analysis.overview", "tiletune.core.events", "tiletune.model.gpus",
            "tiletune.model.perf", "tiletune.model.smem", "tiletune.decode.buckets", "tiletune.catalogs",
            "tiletune.readers.interface", "tiletune.readers.json_common", "tiletune.formats.interface"]


@pytest.mark.parametrize("module", _MODULES)
def test_every_frozen_class_gets_the_plain_init_code(module: str) -> None:
    classes = [c for c in vars(importlib.import_module(module)).values()
               if isinstance(c, type) and c.__module__ == module and "__dataclass_fields__" in c.__dict__]
    assert classes
    for cls in classes:
        _same(cls)


def test_generated_classes_get_the_plain_init_code_and_build_the_same_objects() -> None:
    rng = random.Random(5)
    words = ["a", "b", "value", "x1", "_under", "self_", "cls", "type_", "FACTORY", "set_x", "a0", "_a1", "n"]
    for i in range(400):
        names = list(dict.fromkeys(rng.choice(words) + str(rng.randint(0, 3)) for _ in range(rng.randint(0, 9))))
        names = [n for n in names if not keyword.iskeyword(n)]
        body: dict[str, Any] = {"__annotations__": {n: "Any" for n in names}}
        first_default = rng.randint(0, len(names))
        for n in names[first_default:]:
            body[n] = rng.choice([None, 0, 1.5, "s", (), dataclasses.field(default_factory=list),
                                  dataclasses.field(default_factory=lambda: {"k": 1})])
        slots = rng.random() < 0.6
        cls = frozen.frozen_dataclass(slots=slots)(type(f"Gen{i}", (), body))
        _same(cls)
        args = [rng.randint(0, 9) for _ in names[:first_default]]
        plain = dataclasses.dataclass(frozen=True, slots=slots)(type(f"Gen{i}", (), dict(body)))
        got, want = cls(*args), plain(*args)
        assert [getattr(got, n) for n in names] == [getattr(want, n) for n in names]


def test_a_shape_is_compiled_once() -> None:
    frozen._init_code.cache_clear()
    a = frozen.frozen_dataclass(slots=True)(type("A", (), {"__annotations__": {"x": "int", "y": "str"}}))
    b = frozen.frozen_dataclass(slots=True)(type("B", (), {"__annotations__": {"p": "int", "q": "str"}, "q": ""}))
    assert frozen._init_code.cache_info().misses == 1 and frozen._init_code.cache_info().hits == 1
    assert a(1, "z").y == "z" and b(2).q == "" and a.__init__.__code__.co_varnames == ("self", "x", "y")
