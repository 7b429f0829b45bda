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
    [["2 winners by source: tactic 57 undecoded, tacti\u2026", "1"], ["\u2026", "22"]],  # cut cells (ellipsis)
])
def test_edge_rows_match_tabulate(rows):
    headers = ["tile", "N"]
    assert table._simple_table(rows, headers, ["left", "right"]) is not None  # the fast path writes these
    assert table._tab(rows, headers) == _tabulate(rows, headers)


@pytest.mark.parametrize("rows", [
    [["caf\u00e9 \u4e2d", "1"]],  # non-ASCII: tabulate's width rules apply
    [["two\nlines", "1"]],  # multi-line cells
    [[None, "1"]],  # not a string
])
def test_other_cells_fall_back_to_tabulate(rows):
    headers = ["tile", "N"]
    assert table._simple_table(rows, headers, ["left", "right"]) is None
    assert table._tab(rows, headers) == _tabulate(rows, headers)


def test_wrapped_cells_match_tabulate_without_touching_its_global():
    """The tabulate path (failure tables wrap long cells) writes what tabulate writes with no header
    padding, and leaves tabulate's module-wide MIN_PADDING as it found it (other users share it)."""
    before = tabulate.MIN_PADDING
    rows = [["fp8_gemm", "a long error text that wraps around somewhere in the middle", "3"], ["bf16", "é", "12"]]
    headers, caps = ["op", "error", "count"], [26, 20, 8]
    got = table._tab(rows, headers, caps)
    assert tabulate.MIN_PADDING == before
    old = tabulate.MIN_PADDING
    tabulate.MIN_PADDING = 0
    try:
        want = tabulate.tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, maxcolwidths=caps,
                                 colalign=["right" if h in table._NUMERIC else "left" for h in headers])
    finally:
        tabulate.MIN_PADDING = old
    assert got == want
    assert len(got.splitlines()) > len(rows) + 2  # the error cell did wrap


def test_a_short_row_keeps_every_header():
    """tabulate drops the first headers when rows have fewer cells; the table keeps them all."""
    assert table._simple_table([["short row"]], ["tile", "N"], ["left", "right"]) is None
    assert table._tab([["short row"]], ["tile", "N"]).splitlines()[0].split() == ["tile", "N"]
