"""inspect --dtype, report filters and measured times, retry --no-run listing (issue 25, item 13).

The SGLang 0.6.14 layout's fused-MoE keys record no dtype: every gemm1 tactic is ambiguous between
the nvfp4 x nvfp4 and fp8 x mxfp4 lists ("128x64x{64|128} swapAB"). retry had --dtype; inspect did
not. report had no --op / --rank / --m and no measured times; retry --no-run listed nothing.
"""

from __future__ import annotations

import json

LAYOUT = "layouts/sglang/flashinfer/autotune/0.6.14"


def _moe(run, sample, *more):
    doc = json.loads(run("inspect", sample(LAYOUT), "--op", "trtllm::fused_moe::gemm1", "-f", "json", *more).stdout)
    return [e for e in doc["entries"] if e["status"] == "chosen"], doc


def test_inspect_dtype_settles_ambiguous_fused_moe_tiles(run, sample):
    plain, _ = _moe(run, sample)
    assert plain and all(e["config"] is None for e in plain)
    settled, doc = _moe(run, sample, "--dtype", "nvfp4")
    assert all(e["config"] is not None for e in settled)
    assert any("--dtype nvfp4: 32 fused-MoE entries" in n for n in doc["notes"])
    other, _ = _moe(run, sample, "--dtype", "fp8")
    assert [e["config"]["label"] for e in other] != [e["config"]["label"] for e in settled]  # the dtype decides
    assert run("inspect", sample(LAYOUT), "--dtype", "nonsense").exit_code == 2


def test_a_dtype_no_key_allows_says_so(run, sample):
    _, doc = _moe(run, sample, "--dtype", "bf16")
    assert any("bf16 is none of the variants" in n and "nvfp4 x nvfp4" in n for n in doc["notes"])


def test_report_filters_and_measured_times(run, sample):
    md = run("report", sample("demo"), "--op", "fp4_gemm", "--m", "12", "--no-plot").stdout
    assert "fp4_gemm" in md and "mxfp8_gemm - CutlassMxfp8GemmRunner" not in md
    assert "## At runtime M" in md and "M 12 -&gt; bucket 16" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| 9-16 |"))
    assert "| 11.8 |" in row  # the winner's time the log measured
    assert run("report", sample(LAYOUT), "--rank", "tp0_pp0_dp0", "--no-plot").exit_code == 0
    assert run("report", sample("demo"), "--op", "nonsense", "--no-plot").exit_code == 2


def test_retry_no_run_lists_what_it_would_try(run, sample, tmp_path):
    res = run("retry", sample("demo"), "--no-run", "--ledger", tmp_path / "l.jsonl")
    assert res.exit_code == 0 and "Would try (4 target(s)" in res.stdout
    for tile in ("256x128x128 2st", "128x256x128 swapAB 2st"):
        assert tile in res.stdout
    doc = json.loads(run("retry", sample("demo"), "--no-run", "-f", "json", "--ledger", tmp_path / "l.jsonl").stdout)
    assert sorted(p["tactic"] for p in doc["planned"]) == [6, 7, 8, 9]
