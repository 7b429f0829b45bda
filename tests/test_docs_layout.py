"""The layout the docs draw is the tree as it is (issue 25, item 15).

docs/guide.md's "Layout" block names every folder of the package and every top-level folder of the
repository; docs/architecture.md's diagram names every package folder. A folder added, removed or
renamed without the docs following fails here, and so does a docs line naming a folder that is gone.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):  # an sdist or a copy without .git: the folders on disk
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return out.splitlines()


def _layout_block() -> str:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("\n## Layout\n", 1)[1]
    return section.split("```", 2)[1]


def test_the_guides_layout_names_each_folder_there_is_and_no_other():
    files = _tracked()
    top = {f.split("/")[0] for f in files if "/" in f}
    package = {f.split("/")[1] for f in files if f.startswith("tiletune/") and f.count("/") >= 2}
    named = re.findall(r"^(\S+)", _layout_block(), re.M)
    named_top = {n.split("/")[0] for n in named}
    named_package = {n.split("/")[1] for n in named if n.startswith("tiletune/") and n.count("/") >= 2}
    assert named_package == package, "docs/guide.md Layout vs tiletune/'s folders"
    assert named_top == top, "docs/guide.md Layout vs the repository's top-level folders"


def test_the_architecture_diagram_names_each_package_folder():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = text.split("```", 2)[1]
    drawn = set(re.findall(r"(?:^ ?|\s{4,})(\w+)/ ", diagram, re.M))  # a stage box: at a line's start or after a gap
    package = {p.name for p in (ROOT / "tiletune").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert drawn == package
