"""tools/readme.py: the README's generated blocks (issue 25, item 15).

CI runs `tools/readme.py --check` (`.ci/run`), which compares the README's quick-start output and
test count with what the software says now. Here: the blocks are found, replaced and judged stale
as they should be, and the README in the repository holds both blocks and the quick-start line
`.ci/run` parses.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools import readme

ROOT = Path(__file__).resolve().parents[2]

TEXT = """intro
<!-- generated:quick-start (tools/readme.py) -->
old output
<!-- /generated:quick-start -->
middle
<!-- generated:tests (tools/readme.py) -->
Over 100 tests (`pytest --collect-only` counts them; CI checks this figure). Measured then.
<!-- /generated:tests -->
end
"""


def test_blocks_are_found_and_replaced_alone():
    have = readme.blocks(TEXT)
    assert have == {"quick-start": "old output\n",
                    "tests": "Over 100 tests (`pytest --collect-only` counts them; CI checks this figure). Measured then.\n"}
    new = readme.replace(TEXT, "quick-start", readme.quick_block("fresh output\n"))
    assert "fresh output" in new and "old output" not in new and readme.blocks(new)["tests"] == have["tests"]


def test_the_test_count_is_stated_rounded_down_so_a_new_test_keeps_it_true():
    assert readme.tests_block(2743, "Measured x.").startswith("Over 2,700 tests")
    assert readme.tests_block(2799, "") == readme.tests_block(2700, "")


def test_the_readme_holds_the_blocks_and_the_ci_quick_start_line():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    have = readme.blocks(text)
    assert set(have) == {"quick-start", "tests"}
    assert have["quick-start"].startswith("```text\n$ tiletune inspect cache_samples/demo\ntiletune inspect: ")
    # .ci/run takes the quick start from this exact form
    assert re.search(r"^python3 -m pip install -e \. && tiletune inspect cache_samples/demo$", text, re.M)
    # ... and its test command from this one (the install early, the pytest half last)
    assert re.search(r"^python3 -m pip install -e '\.\[test\]' && python3 -m pytest( .*)?$", text, re.M)
    for term in ("2st", "swapAB", "`~`", "`!N`", "`*`"):  # the glossary of the notation
        assert term in text, term
    # a newcomer's page: the rest lives in docs/ (the quick start's output not counted: it is what it is)
    prose = readme.replace(text, "quick-start", "")
    assert (ROOT / "docs" / "guide.md").is_file() and len(prose.splitlines()) < 160
