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


def _plain_table(headers, rows, align_right=()):
    """The pipe table with `cell` called on every cell (what `md.table`'s escape memo stands for)."""
    head = "| " + " | ".join(md.cell(h, line_start=False) for h in headers) + " |"
    sep = "|" + "|".join("---:" if i in align_right else "---" for i in range(len(headers))) + "|"
    return "\n".join([head, sep, *("| " + " | ".join(md.cell(c, line_start=False) for c in r) + " |" for r in rows)])


def test_table_escapes_each_distinct_cell_as_cell_does():
    odd = ["-", "?", "1", 1, True, 1.0, None, "True", "a|b", "x_y", "_x_", "<b>", "a&b", "@me", "see http://x",
           "www.example.com", "`c`", "*e*", "~s~", "[l](u)", "  pad  ", "two\nlines", "\x1b[31mred", "caf\u00e9",
           "1. item", "# head", "128x128x256 swapAB", "+3.1% ~", "\u2026", ""]
    odd_str = type("OddStr", (str,), {"__str__": lambda self: "printed otherwise"})
    rows = [[odd[(i * 7 + j) % len(odd)] for j in range(4)] for i in range(3 * len(odd))]
    shared: dict = {}
    text_rows = [[c for c in r if type(c) is str] for r in rows]  # text cells only
    text_rows = [r[:3] for r in text_rows if len(r) >= 3]
    for table_rows in (rows, rows[::-1], rows[5:9], text_rows, text_rows[::-1], [["-", odd_str("-"), "x"]]):
        heads = ("a", "b", "c", "d", "|", "b")[:len(table_rows[0])]
        want = _plain_table(heads, table_rows, [1, 3])
        assert md.table(heads, table_rows, align_right=[1, 3]) == want
        assert md.table(heads, table_rows, align_right=[1, 3], escaped=shared) == want
    assert "True" in shared and shared["True"] == "True" and 1 not in shared  # only str cells are memoised
