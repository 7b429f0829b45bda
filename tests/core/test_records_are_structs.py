"""Records are msgspec Structs (issue 21): no hand-made replacement for what the library does.

A frozen record is `msgspec.Struct(frozen=True)`: typed (mypy checks every construction through
msgspec's dataclass_transform), built in C, hashable. Mutable builders (a parser's state, a
command's options) may stay plain dataclasses; frozen dataclasses, code generated at run time and
tuple.__new__ on a NamedTuple may not come back."""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec
import pytest

from tiletune.analysis.results import AnalyzedEntry, BucketLine, InspectResult
from tiletune.core.records import Entry, Environment, Problem, TileConfig, TuningRecord
from tiletune.model.perf import ModelResult

PACKAGE = Path(__file__).resolve().parents[2] / "tiletune"


def _frozen_dataclasses_and_tricks() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(PACKAGE.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for d in node.decorator_list:
                    if isinstance(d, ast.Call) and any(k.arg == "frozen" for k in d.keywords):
                        found.append(f"{where}:{node.lineno}: {node.name} is a frozen dataclass")
            if isinstance(node, ast.Attribute) and node.attr == "__new__" and isinstance(node.value, ast.Name) \
                    and node.value.id == "tuple":
                found.append(f"{where}:{node.lineno}: tuple.__new__")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "compile"):
                found.append(f"{where}:{node.lineno}: {node.func.id}()")
    return found


def test_no_frozen_dataclass_or_generated_code_is_left():
    assert _frozen_dataclasses_and_tricks() == []


@pytest.mark.parametrize("cls", [TuningRecord, Environment, Problem, TileConfig, Entry, AnalyzedEntry, BucketLine,
                                 InspectResult, ModelResult])
def test_the_records_crossing_stages_are_frozen_structs(cls):
    assert issubclass(cls, msgspec.Struct) and cls.__struct_config__.frozen


def test_a_record_is_frozen_hashable_and_replaced_by_the_library():
    p = Problem(m=16, n=7168, k=4608, m_range=(9, 16))
    with pytest.raises(AttributeError):
        p.m = 32  # type: ignore[misc]
    q = msgspec.structs.replace(p, m=32)
    assert (q.m, q.n, p.m) == (32, 7168, 16) and hash(p) == hash(Problem(m=16, n=7168, k=4608, m_range=(9, 16)))
    assert p != q and len({p, q, Problem(16, 7168, 4608, m_range=(9, 16))}) == 2
