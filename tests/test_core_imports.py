"""The core installs with its declared dependencies alone (issue 8 item 1): every import a module
runs when it is loaded names the standard library, tiletune itself or a core dependency from
pyproject.toml. Extras (torch, matplotlib, jsonschema, ...) may only be imported inside functions,
where the command that needs them says what to install. 3d96422's cli.py imported
typing_extensions at load time, which no dependency declared: `pip install .` then failed on the
README's first command.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tiletune"

# distribution name -> the import names it provides
_IMPORT_NAMES = {"typer": {"typer"}, "click": {"click"}, "tabulate": {"tabulate"}, "packaging": {"packaging"},
                 "orjson": {"orjson"}, "msgspec": {"msgspec"}}


def _core_imports() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block, "pyproject.toml has no dependencies list"
    names = re.findall(r'^\s*"([A-Za-z0-9_.-]+)', block.group(1), re.M)
    out: set[str] = set()
    for n in names:
        out |= _IMPORT_NAMES.get(n.lower(), {n.lower().replace("-", "_")})
    return out


def _load_time_imports(tree: ast.Module) -> set[str]:
    """Top-level names imported when the module loads (not inside functions; TYPE_CHECKING blocks skipped)."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)  # a try/except ImportError still runs the import at load time
            elif isinstance(node, (ast.With,)):
                visit(node.body)
            # def / class bodies run later (class bodies at load, but hold no imports here)
    visit(tree.body)
    return found


def test_load_time_imports_are_stdlib_tiletune_or_core_dependencies():
    allowed = _core_imports() | set(sys.stdlib_module_names) | {"tiletune", "__future__"}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        names = _load_time_imports(ast.parse(path.read_text(), filename=str(path)))
        for name in sorted(names - allowed):
            offenders.append(f"{path.relative_to(ROOT)} imports {name} at load time")
    assert offenders == [], "\n".join(offenders)


def test_the_check_catches_an_undeclared_import():
    tree = ast.parse("from typing_extensions import Annotated\nimport typer\n")
    assert _load_time_imports(tree) - _core_imports() - set(sys.stdlib_module_names) == {"typing_extensions"}
