"""No test asserts a time (wall or CPU): on a busy machine any limit fails for the wrong reason.
Speed is shown by bench/ scripts that print figures; tests count work instead (regex steps, read
calls). This scans every test's source: an `assert` may not use a clock reading, directly or
through a variable computed from one. Waiting loops with a generous bound are not assertions."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = {"time", "monotonic", "perf_counter", "process_time", "thread_time", "monotonic_ns", "perf_counter_ns",
          "process_time_ns", "time_ns"}


def _reads_clock(node: ast.AST, tainted: set) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in CLOCKS \
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == "time":
            return True
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return True
    return False


def timed_asserts(source: str) -> list:
    """Line numbers of asserts that depend on a clock reading."""
    tree = ast.parse(source)
    tainted: set = set()
    changed = True
    while changed:  # variables computed from clock readings, transitively (t0, elapsed, ...)
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                    and _reads_clock(node.value, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id not in tainted:
                            tainted.add(n.id)
                            changed = True
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert) and _reads_clock(n.test, tainted)]


def test_the_scan_finds_timed_asserts():
    assert timed_asserts("import time\nt0 = time.process_time()\nf()\nassert time.process_time() - t0 < 0.5\n") == [4]
    assert timed_asserts("t0 = time.perf_counter()\nel = time.perf_counter() - t0\nassert el < 60\n") == [3]
    assert timed_asserts("deadline = time.time() + 5\nwhile time.time() < deadline:\n    pass\nassert x\n") == []


def test_no_test_asserts_a_time():
    found = [f"{p.relative_to(TESTS)}:{line}" for p in sorted(TESTS.rglob("*.py"))
             for line in timed_asserts(p.read_text(encoding="utf-8"))]
    assert found == [], f"tests asserting a time (count work instead, keep timings in bench/): {found}"
