"""The at-a-glance view: per-bucket lines, tuning quality, uncovered M, rank disagreements, --m."""

from __future__ import annotations

import json
from pathlib import Path

from tiletune.analysis.overview import at_runtime_m, uncovered, which_bucket
from tiletune.analysis.pipeline import inspect
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parent.parent
RANKS = Path(__file__).parent / "data" / "h200_warmups" / "ranks"
KEY = "('fp4_gemm', 'CutlassFp4GemmRunner', (({m}, 1024), (1024, 7168), (-1, 128), (128, 7168), (), (0,), (-1, 7168), (0,), (0,), (-1,)))"


def _ov(*paths, **ctx):
    return (inspect([Path(p) for p in paths], ReadContext(**ctx))).overview


def _cache(path: Path, version: str, winners: dict[int, int]) -> Path:
    data: dict = {"_metadata": {"flashinfer_version": version, "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}}
    for m, tactic in winners.items():
        data[KEY.format(m=m)] = ["CutlassFp4GemmRunner", tactic]
    path.write_text(json.dumps(data))
    return path


def test_one_line_per_bucket_with_the_decoded_winner(tmp_path):
    ov = _ov(_cache(tmp_path / "c.json", "0.6.11", {16: 8, 1: 0, 128: 12}))
    [g] = ov.groups
    assert (g.arch, g.op, g.n, g.k) == ("sm120", "fp4_gemm", 7168, 2048)  # K in elements: 1024 bytes of packed FP4
    assert [line.problem.m for line in g.lines] == [1, 16, 128]
    assert [line.chosen[0].config.label() for line in g.lines] == ["128x32x128 swapAB", "128x64x128 swapAB", "128x64x256 swapAB"]
    # nothing was profiled: no runner-up, attempts unknown
    assert all(line.runner_up is None and line.never_tried is None for line in g.lines)


def test_uncovered_runtime_m_between_and_above_the_held_buckets(tmp_path):
    ov = _ov(_cache(tmp_path / "c.json", "0.6.11", {1: 0, 2: 0, 16: 8}))
    [g] = ov.groups
    # 0.6.11 maps runtime M up onto powers of two: 3-4 and 5-8 map to buckets 4 and 8, not held
    assert g.uncovered == ((3, 8), (17, None))


def test_release_before_0_6_10_uses_power_of_two_floor(tmp_path):
    assert which_bucket(37, "0.6.9") == 32
    assert which_bucket(37, "0.6.11") == 64
    assert which_bucket(300, "0.6.11") == 512


def test_runtime_m_finds_the_serving_bucket_or_none(tmp_path):
    ov = _ov(_cache(tmp_path / "c.json", "0.6.11", {16: 8, 64: 12}))
    [g] = ov.groups
    b, line = at_runtime_m(g, 37)
    assert b == 64 and line is not None and line.chosen[0].config.label() == "128x64x256 swapAB"
    b, line = at_runtime_m(g, 100)
    assert b == 128 and line is None


def test_demo_log_gives_runner_up_margin_and_won_by_noise():
    ov = _ov(ROOT / "cache_samples" / "demo")
    fp4 = next(g for g in ov.groups if g.op == "fp4_gemm")
    line = next(line for line in fp4.lines if line.problem.m == 16)
    assert line.chosen_time_ms is not None and line.runner_up is not None
    # the runner-up's measured time over the winner's, as the log printed them
    assert abs(line.margin - (line.runner_up.time_ms - line.chosen_time_ms) / line.chosen_time_ms) < 1e-12
    assert line.won_by_noise is (line.margin < 0.05) and line.noise_basis == "default 5 %"
    # the log shows a runtime M with no bucket: served by the fallback tactic, not a bucket
    fb = [line for line in fp4.lines if line.fallback_only]
    assert [line.problem.m for line in fb] == [5000]
    assert all(hi is None or lo <= hi for lo, hi in fp4.uncovered)


def test_failed_counts_per_bucket_from_the_debug_log():
    ov = _ov(ROOT / "cache_samples" / "demo")
    mx = next(g for g in ov.groups if g.op == "mxfp8_gemm")
    assert sum(line.failed for line in mx.lines) >= 4


def test_real_rank_files_of_one_server_disagree_in_two_buckets():
    ov = _ov(RANKS)
    ds = ov.rank_disagreements
    assert [(d.problem.n, d.problem.k, d.problem.m) for d in ds] == [(7168, 2048, 32), (7168, 2048, 256)]
    assert [[(r, p.tactic) for r, p in d.choices] for d in ds] == [
        [("tp0_pp0_dp0", 0), ("tp1_pp0_dp0", 1)], [("tp0_pp0_dp0", 1), ("tp1_pp0_dp0", 0)]]
    assert all(d.beyond_noise is None for d in ds)  # the caches hold no times


def test_rank_files_in_different_directories_are_not_compared(tmp_path):
    for i, t in ((0, 8), (1, 9)):
        d = tmp_path / f"server{i}" / "flashinfer" / "autotune" / "0.6.11" / "sm120" / "0123456789abcdef"
        d.mkdir(parents=True)
        _cache(d / f"rank_tp{i}_pp0_dp0.json", "0.6.11", {16: t})
    assert _ov(tmp_path).rank_disagreements == ()


def test_rank_files_in_one_directory_that_agree_are_not_flagged(tmp_path):
    server = tmp_path / "flashinfer" / "autotune" / "0.6.11" / "sm120" / "0123456789abcdef"  # SGLang's layout
    server.mkdir(parents=True)
    _cache(server / "rank_tp0_pp0_dp0.json", "0.6.11", {16: 8})
    _cache(server / "rank_tp1_pp0_dp0.json", "0.6.11", {16: 8})
    assert _ov(tmp_path).rank_disagreements == ()
    _cache(server / "rank_tp1_pp0_dp0.json", "0.6.11", {16: 9})
    [d] = _ov(tmp_path).rank_disagreements
    assert [p.config.label() for _, p in d.choices] == ["128x64x128 swapAB", "128x64x128"]


def test_uncovered_is_unknown_for_custom_buckets(tmp_path):
    ov = _ov(_cache(tmp_path / "c.json", "0.6.11", {24: 8}))
    [g] = ov.groups
    assert uncovered(g.lines, "0.6.11", moe=False) == ()


def test_the_json_carries_the_overview_the_table_shows():
    """The overview is analysis: built once in the pipeline, and `inspect -f json` holds its facts
    (margins, won by noise, uncovered M) as the table does (issue 21 item 4)."""
    import json
    from pathlib import Path

    from tiletune.analysis.pipeline import inspect
    from tiletune.formats import json_out, table
    from tiletune.readers.interface import ReadContext

    demo = Path(__file__).resolve().parents[1] / "cache_samples" / "demo"
    result = inspect([demo], ReadContext())
    margins = [line.margin for g in result.overview.groups for line in g.lines if line.margin is not None]
    assert margins  # the demo's DEBUG log times runners-up
    doc = json.loads(json_out.format_inspect(result))
    got = [line["margin"] for g in doc["overview"]["groups"] for line in g["lines"] if line["margin"] is not None]
    assert got == margins
    assert [g["uncovered_m"] for g in doc["overview"]["groups"]] == [[list(r) for r in g.uncovered] for g in result.overview.groups]
    shown = table.format_inspect(result, width=200)
    assert f"+{100 * margins[0]:.1f}%" in shown


def test_no_formatter_builds_the_overview():
    """Formatters only render: none calls the overview's builder (they read `result.overview`)."""
    from pathlib import Path

    formats = Path(__file__).resolve().parents[1] / "tiletune" / "formats"
    callers = [p.name for p in formats.glob("*.py") if "overview(" in p.read_text(encoding="utf-8")]
    assert callers == []
