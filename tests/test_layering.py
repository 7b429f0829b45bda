"""The package's imports flow one way: no import cycle, no import of a higher layer.

Every module's imports are read with `ast`, top-level and lazy ones inside functions alike (a lazy
import is still a dependency; it only moves the cost). `TYPE_CHECKING` blocks count too: a type a
module names is a type it depends on.

The layers, lowest first (docs/architecture.md draws the same picture). A module may import its
own layer's modules (without a cycle) and the layers in its ALLOWED row, nothing else.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tiletune"

# Layer of each module: the longest matching name wins ("tiletune.readers" covers its modules;
# "tiletune" alone is only the package's __init__, so a new top-level module must be placed here).
LAYER_OF = {
    # records: the vocabulary and the one record type every stage passes on
    "tiletune": "records",
    "tiletune.__main__": "cli",
    "tiletune.archs": "records",
    "tiletune.buckets": "records",
    "tiletune.errors": "records",
    "tiletune.fileio": "records",
    "tiletune.inputs": "records",
    "tiletune.ledger_format": "records",
    "tiletune.moe_extras": "records",
    "tiletune.frozen": "records",  # the frozen-dataclass machinery every record type is made with
    "tiletune.records": "records",
    "tiletune.vocabulary": "records",
    "tiletune.diagnosis": "records",  # error text -> class, numbers, names (no I/O)
    "tiletune.events": "records",
    "tiletune.samples": "records",
    "tiletune.data": "records",
    # readers: sources -> TuningRecord
    "tiletune.readers": "readers",
    # decode: op semantics + the tactic catalogs -> TileConfig
    "tiletune.catalogs": "catalogs",
    "tiletune.ops": "decode",
    "tiletune.decode": "decode",
    # analysis: the model, then the inspect result types, verdicts and the stages that build them
    "tiletune.model": "model",
    "tiletune.results": "analysis",
    "tiletune.doctor_report": "analysis",  # tiletune doctor's report types
    "tiletune.verdicts": "analysis",
    "tiletune.event_verdicts": "analysis",
    "tiletune.model_adapter": "analysis",
    "tiletune.failures": "analysis",
    "tiletune.source_groups": "analysis",  # which inputs are one server run (records in, groups out)
    "tiletune.not_tried": "analysis",
    "tiletune.regret": "analysis",
    "tiletune.l2_state": "analysis",  # the L2 state of each timing: decoded, inferred (data/flashinfer_l2_policy.json), unknown
    "tiletune.pipeline": "analysis",
    "tiletune.overview": "analysis",
    "tiletune.diff": "analysis",
    # formats: results -> text (they compute nothing)
    "tiletune.formats": "formats",
    # the tuner: retry attempts in isolated processes (beside the analysis, not above it)
    "tiletune.tuner": "tuner",
    # cli: argument parsing, one module per command's glue, exit statuses
    "tiletune.commands": "cli",
    "tiletune.cli": "cli",
    "tiletune.cli_core": "cli",
    "tiletune.launch": "cli",
}

ALLOWED = {
    "records": set(),
    "readers": {"records"},
    "catalogs": {"records"},
    "decode": {"records", "catalogs"},
    "model": {"records"},
    "analysis": {"records", "readers", "catalogs", "decode", "model"},
    "formats": {"records", "catalogs", "model", "analysis", "tuner"},
    # the tuner reads the inputs it retries the way inspect does (readers, decode)
    "tuner": {"records", "readers", "catalogs", "decode", "model"},
    "cli": {"records", "readers", "catalogs", "decode", "model", "analysis", "formats", "tuner"},
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _layer(module: str) -> str:
    best = max((name for name in LAYER_OF if module == name or name != "tiletune" and module.startswith(name + ".")),
               key=len, default=None)
    if best is None:
        raise AssertionError(f"{module}: no layer in tests/test_layering.py's LAYER_OF; add it")
    return LAYER_OF[best]


def _imports(module: str, path: Path) -> list[tuple[str, int]]:
    """(imported tiletune module, line) for every import in the file, wherever it sits."""
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "tiletune"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "tiletune":
                continue
            for alias in node.names:  # `from tiletune.x import y`: y may be a module itself
                sub = f"{target}.{alias.name}"
                found.add((sub if sub in MODULES else target, node.lineno))
    return sorted(found)


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    for m in MODULES:
        _layer(m)


def test_the_parser_sees_lazy_imports():
    """A lazy import inside a function is an edge too (cli_core imports the pipeline lazily)."""
    assert "tiletune.pipeline" in {t for t, _ in GRAPH["tiletune.cli_core"]}


def test_no_upward_import():
    bad = []
    for m, imports in GRAPH.items():
        mine = _layer(m)
        for target, line in imports:
            theirs = _layer(target)
            if theirs != mine and theirs not in ALLOWED[mine]:
                bad.append(f"{MODULES[m].relative_to(PACKAGE.parent)}:{line}: {m} ({mine}) imports {target} ({theirs})")
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan). `a.b` importing the package
    `a` is an edge to `a` (it runs a/__init__.py)."""
    edges = {m: sorted({t for t, _ in imps if t in MODULES and t != m}) for m, imps in GRAPH.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    cycles = _cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": ["b"], "b": ["a"]}, [["a", "b"]]),
        ({"a": ["b"], "b": ["c"], "c": []}, []),
    ],
)
def test_cycle_finder_finds_a_planted_cycle(graph, expected, monkeypatch):
    """The checker itself can fail: a planted two-module cycle is reported, a chain is not."""
    monkeypatch.setitem(globals(), "GRAPH", {m: [(t, 1) for t in ts] for m, ts in graph.items()})
    monkeypatch.setitem(globals(), "MODULES", {m: Path(m) for m in graph})
    assert _cycles() == expected


def test_no_import_error_guard_against_the_package_itself():
    """`try: from tiletune... except ImportError` hides a broken module behind a fallback; the
    package's own modules are always there."""
    bad = []
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try):
                continue
            guards_import_error = any(
                h.type is not None and "ImportError" in ast.unparse(h.type) for h in node.handlers
            )
            own = any(
                isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("tiletune"))
                or isinstance(n, ast.Import) and any(a.name.startswith("tiletune") for a in n.names)
                for stmt in node.body for n in ast.walk(stmt)
            )
            if guards_import_error and own:
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not bad, "ImportError guards around tiletune imports:\n" + "\n".join(bad)


def _private_uses(source: str) -> list[str]:
    """`from tiletune.x import _name` and `x._name` (x an imported tiletune module or name): another
    module's underscore names used from outside it. Dunders (`__version__`) are not private."""
    tree = ast.parse(source)
    imported: set[str] = set()
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("tiletune")):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    bad.append(f"{node.lineno}: from {node.module} import {a.name}")
                imported.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            imported |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("tiletune")}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            bad.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return bad


def test_no_module_reaches_into_another_modules_private_names():
    """A name another module uses is that module's interface, so it is public (no underscore):
    an underscore says "only here", and a reader can trust it."""
    bad = [f"{path.relative_to(PACKAGE.parent)}:{use}" for path in MODULES.values()
           for use in _private_uses(path.read_text(encoding="utf-8"))]
    assert not bad, "private names used across modules:\n" + "\n".join(bad)


def test_the_private_name_finder_finds_both_forms():
    planted = ("from tiletune.cli_core import _emit, say\nfrom tiletune import cli_core\n"
               "import tiletune.records\ncli_core._gate(1)\ncli_core.__doc__\nlocal._x\n")
    assert _private_uses(planted) == ["1: from tiletune.cli_core import _emit", "4: cli_core._gate"]
