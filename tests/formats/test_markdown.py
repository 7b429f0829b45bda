"""`--format markdown` for inspect and the Markdown helpers the report uses."""

from __future__ import annotations

from tiletune.formats import markdown as md


def test_cells_are_escaped():
    assert md.cell("a|b\nc <x>") == "a\\|b c &lt;x&gt;"
    assert md.code("a`b") == "`` a`b ``"


def test_table_and_fold():
    t = md.table(("M", "N"), [["1", "2"]], align_right=[1])
    assert t.splitlines() == ["| M | N |", "|---|---:|", "| 1 | 2 |"]
    folded = md.maybe_fold("rows", "body", md.FOLD_ROWS + 1)
    assert folded.startswith("<details>") and "\n\nbody\n\n" in folded
    assert md.maybe_fold("rows", "body", 1) == "body"


def test_inspect_markdown(synthetic_result):
    text = md.format_inspect(synthetic_result, all_rows=True)  # --all: one row per tactic
    assert text.startswith("# tiletune inspect\n")
    assert "## sm120 fp4_gemm - CutlassFp4GemmRunner (flashinfer 0.6.14)" in text
    assert "| 9-16 | 7168 | 4608 | 3 | 128x128x256 |" in text
    # every table row has the header's column count
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| src |"))
    ncol = lines[head].count(" | ") + 1
    for line in lines[head + 2 : head + 6]:
        assert line.replace("\\|", "").count(" | ") + 1 == ncol
