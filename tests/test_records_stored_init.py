"""The `__init__` frozen_dataclass builds for slotted records (frozen._stored_init, storing through the
slots): it must behave exactly like the dataclass-generated one."""

import dataclasses
import inspect

import pytest

from tiletune.analysis.results import AnalyzedEntry, BucketLine, Pick
from tiletune.core import frozen
from tiletune.core.records import Entry, Environment, Problem, Status, TuningRecord


def _twin(cls: type) -> type:
    """The same fields as `cls`, with the dataclass-generated __init__."""
    fields = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__ + "Twin", fields, frozen=True, slots=True)


@pytest.mark.parametrize("cls", [TuningRecord, Problem, Entry, AnalyzedEntry, Pick, BucketLine])
def test_same_signature_as_the_generated_init(cls: type) -> None:
    assert cls.__init__.__globals__.get("_FACTORY") is frozen._USE_FACTORY  # the slot-storing init (hot classes)
    ours = inspect.signature(cls)
    generated = inspect.signature(_twin(cls))
    assert [(p.name, p.kind, repr(p.default)) for p in ours.parameters.values()] == [
        (p.name, p.kind, repr(p.default)) for p in generated.parameters.values()
    ]


def test_fields_defaults_factory_and_frozen() -> None:
    a = TuningRecord("f.json", "flashinfer-v1", "fp4_gemm", "CutlassFp4GemmRunner", 3, Status.CHOSEN)
    b = TuningRecord(source="f.json", source_kind="flashinfer-v1", op="fp4_gemm", runner="CutlassFp4GemmRunner",
                     tactic=3, status=Status.CHOSEN)
    twin = _twin(TuningRecord)("f.json", "flashinfer-v1", "fp4_gemm", "CutlassFp4GemmRunner", 3, Status.CHOSEN)
    assert a == b and hash(a) == hash(b)
    assert dataclasses.astuple(a) == dataclasses.astuple(twin)
    assert a.env == Environment() and a.env is not b.env  # the default factory runs per instance
    env = Environment(arch="sm120")
    assert TuningRecord("s", "k", "o", "r", 1, Status.FAILED, env, count=4).env is env
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.op = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Problem(1, 2)  # type: ignore[call-arg]  # k missing
    with pytest.raises(TypeError):
        Problem(1, 2, 3, bogus=1)  # type: ignore[call-arg]


def test_field_order_the_hot_positional_calls_rely_on():
    # readers/flashinfer_v1.read_object and ops._fp4 build these positionally (one per cache entry):
    # reordering a field must fail here, not silently swap values there
    import dataclasses

    assert [f.name for f in dataclasses.fields(TuningRecord)] == [
        "source", "source_kind", "op", "runner", "tactic", "status", "env", "shapes", "extras", "raw_key",
        "error", "time_ms", "count", "rank", "line", "detail"]
    assert [f.name for f in dataclasses.fields(Problem)] == [
        "m", "n", "k", "batch", "m_range", "experts", "top_k", "dtype_a", "dtype_b", "dtype_out", "notes"]


# --- frozen.positional_builder: the hot paths' way to build a record (the readers, decode, ops) ---

def _odd_values(cls: type, seed: int) -> list:
    """Field values of every kind a record holds: None, ints, strings, nested tuples, an unhashable
    list, a shared object, an enum, a frozen record."""
    import random

    rng = random.Random(seed)
    pool = [None, 0, 1, -1, True, 1.5, "", "x", (), ((1, 2), (3,)), [1, [2]], Status.CHOSEN, Environment(arch="sm120"),
            float("nan"), "naïve"]
    return [rng.choice(pool) for _ in dataclasses.fields(cls)]


@pytest.mark.parametrize("cls", [TuningRecord, Problem, Entry, Environment, AnalyzedEntry, Pick, BucketLine])
def test_positional_builder_builds_what_the_init_builds(cls: type) -> None:
    import copy
    import pickle

    build = frozen.positional_builder(cls)
    assert frozen.positional_builder(cls) is build  # made once per class
    for seed in range(40):
        values = _odd_values(cls, seed)
        fast, plain = build(*values), cls(*values)
        assert type(fast) is cls
        names = [f.name for f in dataclasses.fields(cls)]
        assert all(getattr(fast, n) is getattr(plain, n) for n in names)  # the very objects, in their fields
        assert repr(fast) == repr(plain)
        assert (fast == plain) == (plain == plain)  # (nan inside: a record equals itself only by identity)
        try:
            assert hash(fast) == hash(plain)
        except TypeError:  # an unhashable field value: unhashable both ways
            with pytest.raises(TypeError):
                hash(plain)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(fast, names[0], 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(fast, names[-1])
        refusals = []
        for obj in (fast, plain):  # any other attribute: refused alike (whatever the frozen class raises)
            with pytest.raises((AttributeError, TypeError)) as refused:
                obj.not_a_field = 1  # type: ignore[attr-defined]
            refusals.append(refused.type)
        assert refusals[0] is refusals[1]
        assert copy.copy(fast) == fast or fast != fast
        if seed < 5 and not any(isinstance(v, list) for v in values):
            assert repr(pickle.loads(pickle.dumps(fast))) == repr(fast)
        assert dataclasses.replace(fast, **{names[0]: "other"}) == dataclasses.replace(plain, **{names[0]: "other"})
    with pytest.raises(TypeError):
        build(*values[:-1])  # every field, positionally: no defaults
    with pytest.raises(TypeError):
        build(*values, None)


def test_positional_builder_refuses_classes_it_cannot_build() -> None:
    @frozen.frozen_dataclass
    class Unslotted:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Plain:
        a: int

    @frozen.frozen_dataclass(slots=True)
    class Clash:
        self: int = 0  # a field the built function would shadow (the init refuses it too)

    for cls in (Unslotted, Plain, Clash, int):
        with pytest.raises(TypeError):
            frozen.positional_builder(cls)
