"""Terminal width: the table fits COLUMNS, says what it left out, and never cuts mid-word (issue 25, item 11).

Before: at 80 columns 41 of 104 lines overflowed, the tile map and the never-tried column vanished
without a note, piped output was laid out for 120 columns whatever COLUMNS said, and cells were
cut mid-word ("or parameter was p…").
"""

from __future__ import annotations

import re

import pytest

from tiletune.cli.commands.inspect import terminal_width
from tiletune.core.words import clip_words

INPUTS = ("demo", "layouts/sglang/flashinfer/autotune/0.6.14", "ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl")
COMMAND = "      tiletune "  # a suggested command: the one line never wrapped (item 9)


def _inspect(run, sample, columns, *more):
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    res = CliRunner().invoke(app, ["inspect", *(str(sample(p)) for p in INPUTS), *more], env={"COLUMNS": str(columns)})
    assert res.exit_code == 0, res.output
    return res.stdout


def test_piped_output_honours_columns():
    assert terminal_width(None, {"COLUMNS": "80"}) == 80
    assert terminal_width(None, {"COLUMNS": "200"}) == 200
    assert terminal_width(None, {}) == 120  # (not a terminal here: the default)


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_every_line_fits_and_what_was_left_out_is_said(run, sample, columns):
    text = _inspect(run, sample, columns)
    wide = [ln for ln in text.splitlines() if len(ln) > columns and not ln.startswith(COMMAND)]
    assert wide == []
    if columns == 80:
        flat = " ".join(text.split())
        assert "columns left out to fit 80 columns: never tried" in flat
        assert "Tile map left out: it does not fit 80 columns" in flat
        assert "the error column left out to fit 80 columns" in flat


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_nothing_is_cut_mid_word(run, sample, columns, fmt):
    text = _inspect(run, sample, columns, "-f", fmt)
    assert not re.findall(r"\w\u2026", text), re.findall(r".{20}\w\u2026", text)


def test_markdown_never_cuts_an_error(run, sample):
    text = _inspect(run, sample, 80, "-f", "markdown")
    assert "an unsupported value or parameter was passed to the function" in text


def test_clip_words():
    assert clip_words("an unsupported value or parameter was passed", 40) == "an unsupported value or parameter was …"
    assert clip_words("fits", 10) == "fits"
    assert clip_words("CtaShape128x128x256B_swapAB", 10) == "CtaShape128x128x256B_swapAB"  # one word: whole
    assert clip_words("x" * 100, 10) == "x" * 9 + "\u2026"  # past LONGEST_WORD: no word a reader reads


def test_diff_fits_columns_and_cuts_no_word(sample):
    # Before: diff printed its undetermined lines whole (11 of 19 lines over 80 columns on the
    # issue's item-2 pair), whatever COLUMNS said.
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    pair = [str(sample("logs/sm120_0.6.17_warmup_debug.log")), str(sample("demo/flashinfer/0.6.17/120f/flashinfer_jit.log"))]
    wide = CliRunner().invoke(app, ["diff", *pair], env={"COLUMNS": "1000"}).stdout
    for columns in (80, 60):
        narrow = CliRunner().invoke(app, ["diff", *pair], env={"COLUMNS": str(columns)}).stdout
        long = [ln for ln in narrow.splitlines() if len(ln) > columns and " " in ln.strip()]
        assert not long, long
        assert narrow.split() == wide.split()  # the same words, none cut: only the line breaks moved
