"""A filter that matches nothing says so and lists what exists (issue 25, item 6).

Before, `--op nonsense`, `--op fp4`, `--rank rank_tp0_pp0_dp0` and `--only-arch sm90` each
exited 0 with zero entries and, on the demo's DEBUG log, the false verdict "which tactics won or
failed is not in this log (set FLASHINFER_LOGGING_LEVEL=debug ...)".
"""

from __future__ import annotations

import json

import pytest

LAYOUT = "layouts/sglang/flashinfer/autotune/0.6.14"


@pytest.mark.parametrize("flag, value, listed", [
    ("--op", "nonsense", "fp4_gemm"),
    ("--only-arch", "sm90", "sm120"),
])
def test_a_value_naming_nothing_is_one_line_listing_what_exists(run, sample, flag, value, listed):
    res = run("inspect", sample("demo"), flag, value)
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and value in lines[0] and listed in lines[0], res.output
    assert "FLASHINFER_LOGGING_LEVEL" not in res.output


def test_an_unknown_rank_lists_the_ranks(run, sample):
    res = run("inspect", sample(LAYOUT), "--rank", "tp7_pp0_dp0")
    assert res.exit_code == 2 and "tp0_pp0_dp0" in res.output and "tp1_pp0_dp0" in res.output


def test_an_unambiguous_prefix_or_a_file_named_rank_matches(run, sample):
    fp4 = json.loads(run("inspect", sample("demo"), "--op", "fp4", "-f", "json").output)
    assert fp4["entries"] and {e["op"] for e in fp4["entries"]} == {"fp4_gemm"}
    ranked = json.loads(run("inspect", sample(LAYOUT), "--rank", "rank_tp0_pp0_dp0", "-f", "json").output)
    assert ranked["entries"] and {e.get("rank") for e in ranked["entries"]} == {"tp0_pp0_dp0"}


def test_an_ambiguous_prefix_names_the_candidates(run, sample):
    res = run("inspect", sample("v1/sm120-rtxpro6000-0.6.14-fp4-moe.json"), "--op", "trtllm::fused_moe::gemm")
    assert res.exit_code == 2 and "several ops" in res.output
    assert "trtllm::fused_moe::gemm1" in res.output and "trtllm::fused_moe::gemm2" in res.output


def test_values_that_exist_but_keep_nothing_together_say_so_first(run, sample):
    res = run("inspect", sample("demo"), "--op", "fp4_gemm", "--status", "failed")
    assert res.exit_code == 0
    verdicts = " ".join(res.output[res.output.index("Verdicts"):].split())
    assert verdicts.startswith("Verdicts the filters (--op fp4_gemm --status failed) matched none of the 89 entries")
    assert "failed (4)" in verdicts and "FLASHINFER_LOGGING_LEVEL" not in res.output
    md = run("inspect", sample("demo"), "--op", "fp4_gemm", "--status", "failed", "-f", "markdown").output
    assert "matched none of the 89 entries" in md


def test_a_filter_does_not_make_a_debug_log_look_like_an_info_log(run, sample):
    res = run("inspect", sample("demo"), "--op", "mxfp8_gemm")
    assert res.exit_code == 0 and "FLASHINFER_LOGGING_LEVEL" not in res.output
