"""The table formatter's own column aligner writes exactly what tabulate writes for the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest
import tabulate
from msgspec import structs
from wild_split import without_held_out  # (held-out artifacts are never read)

from tiletune.analysis.pipeline import inspect
from tiletune.formats import table, view
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


def _textwrap(text, indent, width):
    import textwrap

    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ",
                         break_on_hyphens=False) or [indent]


_PROSE = ["", " ", "a", "ab cd", "  lead", "trail ", "trail\u3000", "mid\u3000 word", "tab\there", "line\nbreak",
          "cr\rlf", "v\x0btab", "f\x0cfeed", "nel\x85x", "a-b-c hyphen-ated", "x" * 30, "word " * 8, "\u2026 cut",
          "sm120 fp4_gemm: winners 128x128x256 only", "ends with a newline\n", "double  space", " \t "]


@pytest.mark.parametrize("text", _PROSE)
@pytest.mark.parametrize("indent", ["", "  "])
@pytest.mark.parametrize("width", [8, 12, 20, 40, 120])  # (textwrap itself loops when width < the indent)
def test_wrap_of_a_line_that_fits_is_what_textwrap_gives(text, indent, width):
    assert table._wrap(text, indent=indent, width=width) == _textwrap(text, indent, width)


def test_wrap_matches_textwrap_on_generated_text():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.text(alphabet=st.sampled_from("ab -\t\n\r\x0b\x0c\x85\u3000\u2026x"), max_size=40),
           st.sampled_from(["", "  "]), st.integers(min_value=8, max_value=50))
    def check(text, indent, width):
        assert table._wrap(text, indent=indent, width=width) == _textwrap(text, indent, width)

    check()


def _compact_plain(rows, width):
    """The compact table the plain way: drop columns to fit (the chosen cells wrapped when even that
    is too wide), then the simple table (else tabulate)."""
    return table.compact_table_plain(rows, width)


def _sample_rows():
    import importlib.util

    from tiletune.formats import glance

    # the bench's workload generator, loaded by path
    spec = importlib.util.spec_from_file_location("big_caches", SAMPLES.parent / "tests" / "readers" / "big_caches.py")
    assert spec is not None and spec.loader is not None
    big_caches = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(big_caches)
    out = []
    for name in ("demo", "v1", "v2store", "layouts", "trtllm", "logs", "jit", "real", "ledgers", "wild", "blocklists"):
        result = inspect(without_held_out(SAMPLES / name), ReadContext())
        analyses = glance.analyses_by_choice(result)
        out += [glance.compact_rows(g, analyses) for g in result.overview.groups]
    return out, big_caches.make_cache


_ROW = ["1-16", "128x128x256 swapAB", "12.5", "10.1", "43", "128x64x128", "+3.1%", "2", "5"]


def _odd_rows():
    def row(**cells):
        r = list(_ROW)
        for i, v in cells.items():
            r[int(i[1:])] = v
        return r

    return [
        [row()], [row(), row(c1="x" * 70)], [row(c1="y" * 100, c5="z" * 40)],  # wide: columns dropped
        [row(c8="")], [row(c0="")], [row(c8=""), row()],  # empty cells (the last column among them)
        [row(c1=" lead")], [row(c8="5 ")], [row(c1="mid dle"), row(c1="trail ")],  # edge spaces: stripped
        [row(c1="caf\u00e9")], [row(c1="tab\there")], [row(c1="cut\u2026")], [row(c1="x\x00y")],
        [row(c6="100%"), row(c6="%s %d")],  # %-signs are cells, not formats
        [row()[:8]], [row(), row()[:8]], [row(c3=None)],  # short rows, a non-str cell
    ]


@pytest.mark.parametrize("width", [40, 80, 100, 120, 200])
def test_compact_table_is_the_plain_compact_table(width, tmp_path):
    rows_sets, make_cache = _sample_rows()
    from tiletune.formats import glance

    make_cache(600, tmp_path / "mixed.json")
    big = inspect([tmp_path / "mixed.json"], ReadContext())
    analyses = glance.analyses_by_choice(big)
    rows_sets += [glance.compact_rows(g, analyses) for g in big.overview.groups]
    rows_sets += _odd_rows()
    assert len(rows_sets) > 60
    for rows in rows_sets:
        assert _outcome(table._compact_table, rows, width) == _outcome(_compact_plain, rows, width), rows


def _outcome(render, rows, width):
    """The text, or the exception's type for rows no compact view holds (short rows, non-str cells)."""
    try:
        return render(rows, width)
    except (IndexError, TypeError) as e:
        return type(e)


def _widest_map_line(ov, width):
    from tiletune.formats import glance

    text = glance.tile_map_text(ov)
    widest = max(len(x) for x in text.splitlines()) if text else None
    return widest if widest is not None and widest <= width else None


def test_tile_map_width_is_the_widest_line_of_the_map_text():
    from tiletune.analysis.results import BucketLine, Group, Overview, Pick
    from tiletune.core.records import Problem
    from tiletune.formats import glance

    overviews = [(inspect(without_held_out(SAMPLES / name), ReadContext())).overview
                 for name in ("demo", "v1", "layouts", "logs", "real", "wild", "trtllm")]

    def line(m, tactic):  # a tactic with no tile: its map cell is "tac <tactic>", line breaks and all
        pick = Pick(tactic, None, None)
        return BucketLine(Problem(m, 8, 8), (pick,), None, None, None, None, None, 0, None, False)

    for tactic in ("a\nb", "ends\n", "x\u2028y", "plain"):
        g = Group("sm90", "fp8_gemm", "r", 8, 8, "0.7.2", (line(1, tactic), line(2, 7)), ())
        overviews.append(Overview((g, g), ()))
    # two lines of one bucket (the later one's cell is shown), fallback lines (in the label, not a
    # column), a wide bucket header, labelled groups, and a map whose width only the last group decides
    fallback = structs.replace(line(300, 1), fallback_only=True)
    two = Group("sm90", "fp8_gemm", "r", 8, 8, "0.7.2", (line(4, "long-tactic-name"), line(4, 1), fallback), (), "s", "srv")
    wide = Group("sm90", "fp8_gemm", "r", 8, 8, "0.7.2", (line(1, 1), line(123456789, 2)), ())
    late = Group("sm90", "fp8_gemm", "r", 8, 8, "0.7.2", (line(1, "x" * 50),), ())
    overviews += [Overview((two,), ()), Overview((two, wide), ()), Overview((wide, two, late), ()), Overview((), ())]
    assert sum(1 for ov in overviews if ov.groups) > 8
    for ov in overviews:
        widest = _widest_map_line(ov, 10 ** 6)
        edges = (widest - 1, widest, widest + 1) if widest else ()
        for width in (10, 30, 60, 120, 400, *edges):
            assert glance.tile_map_width(ov, width) == _widest_map_line(ov, width)


def test_an_uncovered_line_is_made_from_the_uncovered_ranges_alone():
    """What the table's memo of wrapped uncovered lines (keyed by `Group.uncovered`) relies on."""
    from tiletune.formats import glance

    groups = [g for name in ("demo", "v1", "layouts", "logs", "real", "wild", "trtllm")
              for g in (inspect(without_held_out(SAMPLES / name), ReadContext())).overview.groups]
    assert sum(1 for g in groups if g.uncovered) > 5
    for g in groups:
        for other in groups[:40]:
            assert glance.uncovered_line(structs.replace(other, uncovered=g.uncovered)) == glance.uncovered_line(g)
