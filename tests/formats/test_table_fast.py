"""The table formatter's own column aligner writes exactly what tabulate writes for the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest
import tabulate

from tiletune.formats import table, view
from tiletune.pipeline import inspect
from tiletune.readers.interface import ReadContext

SAMPLES = Path(__file__).resolve().parents[2] / "cache_samples"


def _tabulate(rows, headers):
    old = tabulate.MIN_PADDING
    tabulate.MIN_PADDING = 0
    try:
        return tabulate.tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                                 colalign=["right" if h in table._NUMERIC else "left" for h in headers])
    finally:
        tabulate.MIN_PADDING = old


@pytest.mark.parametrize("sample", ["demo", "v1", "v2store", "layouts", "trtllm", "logs", "jit", "real", "ledgers"])
def test_entry_tables_match_tabulate(sample):
    result = inspect([SAMPLES / sample], ReadContext())
    sections = view.entry_sections(result)
    assert sections, f"{sample}: no entry tables to compare"
    for sec in sections:
        fast = table._simple_table(sec.rows, sec.headers, ["right" if h in table._NUMERIC else "left" for h in sec.headers])
        assert fast is not None, sec.title
        assert fast == _tabulate(sec.rows, sec.headers), sec.title


@pytest.mark.parametrize("rows", [
    [],  # headers only
    [["  padded  ", "1"], ["x", "  22"]],  # tabulate strips cells
    [["a much longer cell than its header", ""], ["", "333333333"]],  # empty cells, trailing left column
])
def test_edge_rows_match_tabulate(rows):
    headers = ["tile", "N"]
    assert table._tab(rows, headers) == _tabulate(rows, headers)


@pytest.mark.parametrize("rows", [
    [["caf\u00e9 \u4e2d", "1"]],  # non-ASCII: tabulate's width rules apply
    [["two\nlines", "1"]],  # multi-line cells
    [[None, "1"]],  # not a string
    [["short row"]],
])
def test_other_cells_fall_back_to_tabulate(rows):
    headers = ["tile", "N"]
    assert table._simple_table(rows, headers, ["left", "right"]) is None
    assert table._tab(rows, headers) == _tabulate(rows, headers)
