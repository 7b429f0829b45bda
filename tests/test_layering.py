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

# A module's layer is the stage folder it sits in (tiletune/<layer>/...): the folders are the
# layers, in this order, lowest first. The package's own __init__ (the version) is core's;
# `python -m tiletune` is the CLI's. Nothing else may sit at the package root.
LAYERS = ("core", "readers", "catalogs", "decode", "model", "analysis", "tuner", "formats", "cli")
ROOT_MODULES = {"tiletune": "core", "tiletune.__main__": "cli"}

ALLOWED = {
    "core": set(),
    "readers": {"core"},
    "catalogs": {"core"},
    "decode": {"core", "catalogs"},
    "model": {"core"},
    "analysis": {"core", "readers", "catalogs", "decode", "model"},
    # the tuner reads the inputs it retries the way inspect does (readers, decode)
    "tuner": {"core", "readers", "catalogs", "decode", "model"},
    "formats": {"core", "catalogs", "model", "analysis", "tuner"},
    "cli": {"core", "readers", "catalogs", "decode", "model", "analysis", "formats", "tuner"},
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
    if module in ROOT_MODULES:
        return ROOT_MODULES[module]
    parts = module.split(".")  # tiletune.<layer> is the folder's __init__, tiletune.<layer>.x its modules
    if len(parts) < 2 or parts[1] not in LAYERS:
        raise AssertionError(f"{module}: not inside a stage folder; put it in one of tiletune/{{{','.join(LAYERS)}}}/")
    return parts[1]


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
    """A lazy import inside a function is an edge too (the inspect command imports the pipeline lazily)."""
    assert "tiletune.analysis.pipeline" in {t for t, _ in GRAPH["tiletune.cli.commands.inspect"]}


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
    planted = ("from tiletune.cli.output import _emit, say\nfrom tiletune import cli_core\n"
               "import tiletune.core.records\ncli_core._gate(1)\ncli_core.__doc__\nlocal._x\n")
    assert _private_uses(planted) == ["1: from tiletune.cli.output import _emit", "4: cli_core._gate"]


def test_each_layer_may_import_only_layers_below_it():
    """The folder order is the data flow: an ALLOWED row naming a layer above its own would let
    data flow back up."""
    for layer, allowed in ALLOWED.items():
        assert allowed <= set(LAYERS[: LAYERS.index(layer)]), layer


def test_a_module_outside_the_stage_folders_has_no_layer():
    with pytest.raises(AssertionError, match="not inside a stage folder"):
        _layer("tiletune.pipeline")
    assert _layer("tiletune.readers.logs.parser") == "readers" and _layer("tiletune") == "core"
