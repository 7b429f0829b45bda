"""Terminal width for the other commands (issue 25, item 11): catalog, check, gpus, doctor, retry
--no-run and model fit COLUMNS (piped output too), wrap at spaces, never cut a word, and name any
column they leave out. `inspect`, `diff` and `report` are held to it by test_terminal_width.py.

Before (COLUMNS=80, lines over 80 / lines): catalog 23/23, check cache_samples/demo 2/4, gpus 21/22,
doctor 11/22, retry --no-run 7/10, model (fp8, 128x4096x4096 on h200) 35/49.
"""

from __future__ import annotations

import re

import pytest

from tiletune.formats.fit import fit_table, prose

MODEL = ("model", "--gpu", "h200", "--dtype", "fp8", "--m", "128", "--n", "4096", "--k", "4096", "--tile", "128x128x128")
COMMANDS = {
    "catalog": ("catalog",),
    "catalog --all": ("catalog", "--all"),
    "catalog tactics": ("catalog", "--flashinfer-version", "0.6.14", "--arch", "sm100", "--op", "fp8_gemm"),
    "check": ("check", "{demo}"),
    "gpus": ("gpus",),
    "doctor": ("doctor",),
    "retry --no-run": ("retry", "{demo}", "--no-run", "--ledger", "{ledger}"),
    "model": MODEL,
}
NOTE = re.compile(r"Left out to fit (\d+) columns: (.*?) \(see them with")
HUGE = 100_000  # no line is this wide: the output as it was before fitting


def _cli(name, columns, sample, tmp_path):
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    args = [a.format(demo=sample("demo"), ledger=tmp_path / "ledger.jsonl") for a in COMMANDS[name]]
    res = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    assert res.exit_code in (0, 1), res.output
    return res.stdout


def _overflows(text: str, width: int) -> list[str]:
    """Lines wider than `width`, but for a line that is over only by the end of one unbreakable
    token (a long path or op name, or the rule under its column): cutting that would lose it."""
    return [ln for ln in text.splitlines() if len(ln) > width and " " in ln[width - 1:].rstrip()]


def _left_out(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [c.strip() for m in NOTE.finditer(flat) for c in m.group(2).split(",")]


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_line_fits_and_no_fact_is_lost(name, columns, sample, tmp_path):
    wide = _cli(name, HUGE, sample, tmp_path)
    narrow = _cli(name, columns, sample, tmp_path)
    assert _overflows(narrow, columns) == []
    assert not re.findall(r"\w\u2026", narrow)  # no word cut short
    gone = _left_out(narrow)
    missing = set(wide.split()) - set(narrow.split())
    if not gone:
        # wrapped only: every word is still there (tabulate's rules and padding aside)
        assert {w for w in missing if set(w) != {"-"}} == set(), sorted(missing)[:20]
    else:
        # a column was left out: its header is named, and the first column (what a row is) stays
        assert all(g in wide for g in gone), gone
        first = wide.split("\n-", 1)[0].split("\n")[-1].split()[0]
        assert first not in gone


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_wide_terminal_sees_the_same_words(name, sample, tmp_path):
    """At 200 columns the output is as before; only what is wider than 200 wraps (the same words)."""
    wide = _cli(name, HUGE, sample, tmp_path)
    at_200 = _cli(name, 200, sample, tmp_path)

    def words(text):
        return [w for w in text.split() if set(w) != {"-"}]  # a table's rules follow its column widths

    assert words(wide) == words(at_200)
    if max(map(len, wide.splitlines())) <= 200:
        assert at_200 == wide


def test_gpus_at_60_keeps_every_gpu_and_names_the_peaks_left_out(sample, tmp_path):
    wide = _cli("gpus", HUGE, sample, tmp_path)
    narrow = _cli("gpus", 60, sample, tmp_path)
    keys = [ln.split()[0] for ln in wide.split("\n\n")[0].splitlines()[2:]]
    assert len(keys) > 10 and all(k in narrow.split() for k in keys)
    assert "fp6 TF" in _left_out(narrow) and "-f json" in " ".join(narrow.split())


def test_json_and_markdown_ignore_columns(sample, tmp_path):
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    for args in (("gpus", "-f", "json"), ("catalog", "-f", "markdown"), ("doctor", "-f", "json"), (*MODEL, "-f", "markdown")):
        out = [CliRunner().invoke(app, list(args), env={"COLUMNS": str(c)}).stdout for c in (60, HUGE)]
        assert out[0] == out[1], args


# --- the helper itself -----------------------------------------------------------------------

HEAD = ["name", "where", "why"]
ROWS = [["alpha", "/a/very/long/path/that/has/no/space/in/it", "the reason it failed, said in words"],
        ["beta", "/short", "a second reason that is long enough to wrap at spaces"]]


def test_a_table_that_fits_is_tabulates_own():
    from tabulate import tabulate

    assert fit_table(HEAD, ROWS, 500) == (tabulate(ROWS, headers=HEAD, tablefmt="simple"), "")
    assert fit_table(HEAD, ROWS, None)[1] == ""


def test_wrapping_keeps_every_word_whole():
    text, note = fit_table(HEAD, ROWS, 90, wrap=("why",), drops=("where",))
    assert note == "" and max(map(len, text.splitlines())) <= 90
    assert text.split()[3:] and set(" ".join(sum(ROWS, [])).split()) <= set(text.split())


def test_a_column_is_left_out_only_when_wrapping_is_not_enough_and_the_note_names_it():
    text, note = fit_table(HEAD, ROWS, 50, wrap=("why",), drops=("where",), see="-f json")
    assert max(map(len, text.splitlines())) <= 50
    assert "/short" not in text and note == "Left out to fit 50 columns: where (see them with -f json)."
    assert {"alpha", "beta", "reason", "failed,"} <= set(text.split())


def test_an_unbreakable_cell_stays_whole_even_past_the_width():
    text, _ = fit_table(["path"], [["/x/" + "y" * 70]], 40)
    assert "/x/" + "y" * 70 in text


def test_prose_wraps_at_spaces_with_a_hanging_indent():
    out = prose("  one two three four five six seven eight nine ten", 20).splitlines()
    assert out[0] == "  one two three four" and all(ln.startswith("      ") for ln in out[1:])
    assert prose("a " + "z" * 50, 20).splitlines() == ["a", "    " + "z" * 50]
