"""Tests never read bench/ (its files are results of experiments, moved and re-run at will) and never
edit sys.path: recorded data a test needs is copied under tests/data/ (see its README)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _strings_outside_docstrings(tree: ast.AST):
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


def test_no_test_names_a_path_into_bench_or_edits_sys_path():
    bad = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _strings_outside_docstrings(tree):
            if node.value == "bench" or node.value.startswith("bench/"):
                bad.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}: {node.value!r}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("insert", "append") and ast.unparse(node.value) == "sys.path":
                bad.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}: sys.path.{node.attr}")
    assert not bad, "tests reading bench/ or editing sys.path:\n" + "\n".join(bad)
