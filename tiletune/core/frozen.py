"""A faster `@dataclass(frozen=True)` (`frozen_dataclass`) and a faster way to build its slotted
instances (`positional_builder`).

Why it exists: an inspect creates about forty frozen dataclasses at start-up and builds several
records per cache entry; the plain decorator compiles every generated method from source and its
`__init__` stores each field through `object.__setattr__`. What this module makes is equivalent
(same fields, signature, frozenness, equality, hash, repr, pickling, dataclass parameters), only
made and built with less work. Each trick is pinned to its plain reference by the tests named in
docs/architecture.md's speed-layer table (tests/test_frozen_dataclass.py,
tests/test_records_init_code.py, tests/test_records_stored_init.py). It imports nothing from
tiletune: records.py and every stage's own frozen classes use it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import reprlib
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TypeVar


def _frozen_dataclass(cls: Optional[type] = None, /, *, slots: bool = False) -> Any:
    """`@dataclass(frozen=True, slots=...)`, made with less generated code.

    Why: dataclasses compiles each generated method from source, and an inspect creates about
    forty classes at start-up: compiling them was a sixth of a 2,000-entry run. So the methods
    never on a hot path are made without compiling: repr is one shared function and, through
    `_cheap_frozen`, the frozen `__setattr__`/`__delattr__` are closures, `__init__` is compiled
    from a shorter source (storing through the slots, which also builds faster), and equality and
    hash are the generated ones, compiled when first called (most classes never are in a run).
    tests/test_frozen_dataclass.py compares every class with its plain twin: the shared repr is
    `Name(field=value!r, ...)` over the fields with repr=True, `...` for a record inside itself.
    """

    def wrap(c: type) -> type:
        c = _cheap_frozen(c, slots) if _cheap_frozen_covers(c) else dataclass(c, frozen=True, slots=slots, repr=False)
        shown = tuple(f.name for f in dataclasses.fields(c) if f.repr)

        @reprlib.recursive_repr()
        def __repr__(self: Any) -> str:
            return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"

        __repr__.__qualname__ = f"{c.__qualname__}.__repr__"
        c.__repr__ = __repr__  # type: ignore[assignment]
        return c

    return wrap if cls is None else wrap(cls)


if TYPE_CHECKING:  # type checkers see a frozen dataclass
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True, field_specifiers=(field,))
    def frozen_dataclass(cls: Optional[type] = None, /, *, slots: bool = False) -> Any: ...
else:
    frozen_dataclass = _frozen_dataclass


# Names the built __init__ keeps for itself (a field must not shadow them).
_INIT_NAMES = ("self", "_FACTORY", "_setattr")


def _cheap_frozen_covers(c: type) -> bool:
    """Whether `_cheap_frozen` makes what `@dataclass(frozen=True)` would: a class with no dataclass
    base, none of the methods dataclasses writes defined by hand, and an `__init__` that takes every
    field in order and stores it (no `__post_init__`, InitVar, keyword-only or init=False field)."""
    if any(hasattr(b, "__dataclass_fields__") for b in c.__mro__[1:]) or hasattr(c, "__post_init__"):
        return False
    if any(m in c.__dict__ for m in ("__init__", "__eq__", "__hash__", "__setattr__", "__delattr__")):
        return False
    for name, kind in c.__dict__.get("__annotations__", {}).items():
        if name in _INIT_NAMES or name.startswith(("_set_", "_factory_")):
            return False
        if not isinstance(kind, str):
            kind = repr(kind)
        if "InitVar" in kind or "KW_ONLY" in kind:
            return False
        default = c.__dict__.get(name)
        if isinstance(default, dataclasses.Field) and (not default.init or default.kw_only is True):
            return False
    return True


def _cheap_frozen(c: type, slots: bool) -> type:
    """`dataclass(c, frozen=True, slots=slots, repr=False)` for a class `_cheap_frozen_covers`.

    dataclasses makes it unfrozen, without `__init__`, equality or hash (so it compiles nothing);
    then the class gets what frozen=True would have given it: `__setattr__`/`__delattr__` that
    refuse its fields (closures: the same checks and messages as the generated ones, over the
    same class object), an `__init__` that stores each field past them, equality and hash
    compiled on first use (`_eq_and_hash_on_first_use`), the pickling hooks of a frozen slotted
    class, and its parameters.
    """
    before: type = c  # dataclasses' frozen __setattr__ checks the class it was given, before slots copy it
    documented = bool(c.__dict__.get("__doc__"))
    if not documented:  # dataclasses would sign it now, without an __init__ (tokenizing object's); signed below
        c.__doc__ = c.__name__
    c = dataclass(c, init=False, repr=False, eq=False, slots=slots)
    fields = dataclasses.fields(c)
    names = tuple(f.name for f in fields)
    _eq_and_hash_on_first_use(c, fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is before or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(before, self).__setattr__(name, value)  # type: ignore[arg-type]  # (mypy wants a class name)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is before or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(before, self).__delattr__(name)  # type: ignore[arg-type]

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{c.__qualname__}.{fn.__name__}"
        fn.__module__ = c.__module__
        setattr(c, fn.__name__, fn)
    c.__init__ = _stored_init(c, fields, slots)  # type: ignore[misc]
    if slots:
        if "__getstate__" not in c.__dict__:
            c.__getstate__ = _frozen_getstate  # type: ignore[attr-defined]
        if "__setstate__" not in c.__dict__:
            c.__setstate__ = _frozen_setstate  # type: ignore[attr-defined]
    params = c.__dataclass_params__  # type: ignore[attr-defined]
    params.init, params.eq, params.frozen = True, True, True
    if not documented:  # as dataclasses documents a class without a docstring
        c.__doc__ = c.__name__ + str(inspect.signature(c)).replace(" -> None", "")
    return c


def _eq_and_hash_on_first_use(c: type, fields: tuple[dataclasses.Field, ...]) -> None:
    """Give `c` an `__eq__` and a `__hash__` that, the first time either is called, put in their
    place the two dataclasses generates for these fields (made on a twin class with the same fields,
    module and flags), then answer through them.

    Why: most classes are never compared or hashed in a run, and compiling the two for each class
    was a third of creating them; the ones that are get the generated methods themselves (a shared
    version measured twice as slow per call), from the first call on.
    """

    def compile_them() -> None:
        # a docstring, so dataclasses does not sign the twin (object's __init__: tokenizing its text
        # signature compiled tokenize's patterns, ~8 ms, in every run that compares a record)
        body: dict[str, Any] = {"__module__": c.__module__, "__doc__": c.__doc__ or c.__name__,
                                "__annotations__": {f.name: f.type for f in fields}}
        body.update((f.name, dataclasses.field(compare=f.compare, hash=f.hash)) for f in fields)
        twin: type = dataclass(type(c.__name__, (), body), init=False, repr=False, unsafe_hash=True, match_args=False)
        for name in ("__eq__", "__hash__"):
            method = twin.__dict__[name]
            method.__qualname__ = f"{c.__qualname__}.{name}"
            setattr(c, name, method)

    def __eq__(self: Any, other: Any) -> Any:
        compile_them()
        return c.__dict__["__eq__"](self, other)

    def __hash__(self: Any) -> int:
        compile_them()
        return c.__dict__["__hash__"](self)

    for fn in (__eq__, __hash__):
        fn.__qualname__ = f"{c.__qualname__}.{fn.__name__}"
        fn.__module__ = c.__module__
        setattr(c, fn.__name__, fn)


def _frozen_getstate(self: Any) -> list:
    """Pickling a frozen slotted dataclass: its field values, in order (as dataclasses does)."""
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _frozen_setstate(self: Any, state: list) -> None:
    for f, value in zip(dataclasses.fields(self), state):
        object.__setattr__(self, f.name, value)


class _UseFactory:
    """The default of a field with a default factory in a built `__init__` signature (as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_USE_FACTORY = _UseFactory()


def _stored_init(cls: type, fields: tuple[dataclasses.Field, ...], slots: bool) -> Any:
    """The `__init__` dataclasses generates for frozen `cls` (same signature, defaults, default
    factories and annotations), storing each field past the frozen `__setattr__`.

    Why: a slotted class's init stores through the slot descriptors' own setters, which builds the
    object about a third faster than the generated `object.__setattr__` per field (inspect builds
    several records per cache entry); the source is also shorter to compile. Its code is compiled
    once per shape (`_init_code`) and renamed for each class: compiling one per class was a tenth
    of an inspect's start-up.
    """
    ns: dict[str, Any] = {"__name__": cls.__module__, "_FACTORY": _USE_FACTORY, "_setattr": object.__setattr__}
    defaults: list[Any] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            defaults.append(f.default)  # (the function's own defaults: the code never names them)
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"_factory_{f.name}"] = f.default_factory
            defaults.append(_USE_FACTORY)
        elif defaults:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        if slots:
            ns[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
    shape = tuple(f.default_factory is not dataclasses.MISSING for f in fields)
    code = _init_code(shape, slots)
    rename = {f"_a{i}": f.name for i, f in enumerate(fields)}
    rename.update((f"_set__a{i}", f"_set_{f.name}") for i, f in enumerate(fields))
    rename.update((f"_factory__a{i}", f"_factory_{f.name}") for i, f in enumerate(fields))
    code = code.replace(co_varnames=tuple(rename.get(n, n) for n in code.co_varnames),
                        co_names=tuple(rename.get(n, n) for n in code.co_names),
                        co_consts=tuple(rename.get(c, c) if isinstance(c, str) else c for c in code.co_consts))
    init = types.FunctionType(code, ns, "__init__", tuple(defaults) or None)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return init


@functools.lru_cache(maxsize=None)
def _init_code(factories: tuple[bool, ...], slots: bool) -> types.CodeType:
    """The code of `_init_source`'s `__init__` for fields `_a0`, `_a1`, ... (True: a default factory)."""
    ns: dict[str, Any] = {}
    exec(_init_source([f"_a{i}" for i in range(len(factories))], factories, slots), ns)  # noqa: S102 - code built here
    return ns["__init__"].__code__


def _init_source(names: list[str], factories: Sequence[bool], slots: bool) -> str:
    """The source of a frozen class's `__init__` over these fields: each stored through its slot's
    setter `_set_<name>` (or `_setattr`, object's), a factory field's `_factory_<name>()` called when
    it was left at `_FACTORY`. Its defaults are the function's, not the source's."""
    body = []
    for name, factory in zip(names, factories):
        value = f"_factory_{name}() if {name} is _FACTORY else {name}" if factory else name
        body.append(f"    _set_{name}(self, {value})" if slots else f"    _setattr(self, {name!r}, {value})")
    return f"def __init__(self, {', '.join(names)}):\n" + ("\n".join(body) or "    pass") + "\n"


_T = TypeVar("_T")
_BUILDERS: dict[type, Any] = {}
_BUILDER_NAMES = ("self", "_Twin", "_cls")


def positional_builder(cls: type[_T]) -> Callable[..., _T]:
    """A function taking every field of slotted frozen `cls` positionally, in field order (no
    defaults), that returns what `cls(*values)` returns: an instance of `cls`, frozen, equal.

    Why: the init stores each field through its slot's setter, a call per field (the class's
    frozen `__setattr__` refuses plain stores). This builds the object as an instance of a twin
    class with the same slots and no `__setattr__`, where each store is a plain attribute store
    (the interpreter specialises it into a direct write), then gives it its own class (the same
    layout, so CPython allows it). The readers and decode build a record, a problem and an entry
    per cache entry this way: about 3x faster than the init for the 16-field record. Only for
    classes `_cheap_frozen` made with slots (their init stores the fields and does nothing else).
    tests/test_records_stored_init.py pins it to the init, class by class.
    """
    build = _BUILDERS.get(cls)
    if build is None:
        init_globals = getattr(cls.__init__, "__globals__", {})
        if "__slots__" not in cls.__dict__ or init_globals.get("_FACTORY") is not _USE_FACTORY or cls.__bases__ != (object,):
            raise TypeError(f"{cls.__qualname__} is not a slotted frozen_dataclass with the slot-storing init")
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        if set(names) & set(_BUILDER_NAMES) or list(cls.__slots__[:len(names)]) != names:  # type: ignore[attr-defined]
            raise TypeError(f"{cls.__qualname__}: fields clash with the builder's names or its slots")
        twin = type(cls.__name__, (), {"__slots__": cls.__slots__, "__module__": cls.__module__,  # type: ignore[attr-defined]
                                       "__qualname__": f"{cls.__qualname__}.builder_twin"})
        ns: dict[str, Any] = {"__name__": cls.__module__, "_Twin": twin, "_cls": cls}
        body = "".join(f"    self.{n} = {n}\n" for n in names)
        # `_Twin()`, not `object.__new__(_Twin)`: the class has no __new__ or __init__ of its own, so
        # the call makes the same empty object without `__new__`'s wrapper checks (~300 instructions)
        exec(f"def build({', '.join(names)}):\n    self = _Twin()\n{body}    self.__class__ = _cls\n    return self\n", ns)  # noqa: S102 - code built above
        build = _BUILDERS[cls] = ns["build"]
        build.__qualname__ = f"positional_builder({cls.__qualname__})"
    return build
