"""The terminal table: sections per arch/op, units, model-vs-measured legend, 120 columns."""

from __future__ import annotations

from tiletune.analysis.results import InspectResult
from tiletune.formats.table import format_inspect


def test_sections_rows_and_units(synthetic_result):
    text = format_inspect(synthetic_result, all_rows=True)
    assert "== sm120 fp4_gemm - CutlassFp4GemmRunner (flashinfer 0.6.14) ==" in text
    assert "modelled on RTX PRO 6000 Blackwell Server Edition (named in the inputs)" in text
    # 83,968 B / 1024 = 82.0 KiB; 16 failures across two logs are one failure row with count 16
    row = next(line for line in text.splitlines() if line.startswith("[1]") and "9-16" in line and "128x128x256" in line)
    assert "82.0 fits" in row and "56.0" in row and "mem" in row and "16.0" in row
    fail = next(line for line in text.splitlines() if line.startswith("sm120 fp4_gemm") and "256x128x128" in line)
    assert " 16 " in fail
    for header in ("smem KiB*", "FLOP/B*", "t us*", "eff %*"):
        assert header in text
    assert "DENSE tensor peak" in text and "not a measurement" in text


def test_undecoded_shows_the_reason_not_a_tile(synthetic_result):
    text = format_inspect(synthetic_result, all_rows=True)
    line = next(line for line in text.splitlines() if " 40 " in line and "257-512" in line)
    assert "undecoded [" in line
    assert "index 40 out of range" in text


def test_fits_in_120_columns(synthetic_result):
    text = format_inspect(synthetic_result)
    # a suggested command is the one line never wrapped (pasted, it must run as shown)
    too_wide = [line for line in text.splitlines() if len(line) > 120 and not line.startswith("      tiletune ")]
    assert too_wide == []


def test_nothing_found_says_what_was_searched():
    r = InspectResult((), (), (), (), (), (), searched=("FLASHINFER_AUTOTUNE_CACHE_DIR (unset)", "/root/.cache/flashinfer (absent)"), discovered=True)
    text = format_inspect(r)
    assert "no autotune caches" in text and "/root/.cache/flashinfer (absent)" in text
    assert r.exit_code == 0
