"""Warm-up cost from a log's timestamps (analysis/warmup_cost.py, readers/logs/timeline.py).

Inputs, all written by the software named, none typed by hand:
- tests/data/flashinfer_writers/0.7.4/timed/: FlashInfer 0.7.4's own logger and autotuner, driven on CPU
  by tools/flashinfer_writers (`--timed`; PROVENANCE.json: wheel sha256, command, the wall time drive.py
  gives each runner call). slow.log is a cold start whose tactics 5 and 7 fail after WALL_FAIL_S each;
  warm.log the same start with the cache slow.log saved; hang.log a start whose M=4 tactic 3 never
  returns, killed by SIGKILL once its log was quiet.
- cache_samples/ledgers/h200-fp8_gemm-autotune-debug-0.7.2.post1.log: a real FlashInfer 0.7.2.post1 DEBUG
  log from an H200 (a JIT build inside the first profile).
- cache_samples/wild/dspark-gx10-gb10-vllm-moe-autotune-glued-tqdm-saved-60/head.log: a real vLLM INFO log
  (working side of SPLIT.json), tqdm bars glued to FlashInfer's lines after carriage returns.

Expected figures are recomputed here from the raw lines (the stamps themselves), not copied from a run.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from tiletune.analysis.pipeline import inspect
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]
TIMED = ROOT / "tests" / "data" / "flashinfer_writers" / "0.7.4" / "timed"
H200 = ROOT / "cache_samples" / "ledgers" / "h200-fp8_gemm-autotune-debug-0.7.2.post1.log"
DSPARK = ROOT / "cache_samples" / "wild" / "dspark-gx10-gb10-vllm-moe-autotune-glued-tqdm-saved-60" / "head.log"
STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - [A-Z]+ - ")


def _at(line: str) -> float:
    m = STAMP.search(line)
    assert m, line
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _lines(path: Path, needle: str) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if needle in ln and STAMP.search(ln)]


@pytest.fixture(scope="module")
def runs():
    return {name: inspect([TIMED / f"{name}.log"], ReadContext()) for name in ("slow", "warm", "hang")}


def _one(result):
    assert len(result.warmup) == 1
    return result.warmup[0]


def test_provenance_says_who_wrote_the_timed_logs():
    prov = json.loads((TIMED / "PROVENANCE.json").read_text())
    assert prov["release"] == "0.7.4" and prov["wheel"]["sha256"]
    assert "--timed" in prov["command"]
    assert prov["scenarios"]["hang"]["exit_status"] == -9  # killed, as a watchdog would


def test_tuning_time_is_the_window_between_its_own_lines(runs):
    w = _one(runs["slow"])
    start, end = _at(_lines(TIMED / "slow.log", "Autotuning process starts")[0]), _at(_lines(TIMED / "slow.log", "Autotuning process ends")[0])
    assert w.tuning is not None and w.tuning.seconds == pytest.approx(end - start, abs=1e-6)
    assert "estimated from these timestamps" in w.tuning.basis and w.label == "estimated from these timestamps"
    assert w.headline.startswith("Autotuning took about")


def test_per_op_and_per_profile_spans_follow_the_chosen_lines(runs):
    w = _one(runs["slow"])
    chosen = _lines(TIMED / "slow.log", "profiling chosen runner")
    fp4 = [ln for ln in chosen if "custom_op='fp4_gemm'" in ln]
    first_profile = _lines(TIMED / "slow.log", "generated profile")[0]  # fp4_gemm's profiles are generated first
    ops = {o.op: o for o in w.ops}
    assert ops["fp4_gemm"].profiles == 4 and ops["fp8_gemm"].profiles == 1
    assert ops["fp4_gemm"].seconds == pytest.approx(_at(fp4[-1]) - _at(first_profile), abs=0.002)
    assert ops["fp4_gemm"].failed == 8 and ops["fp4_gemm"].timed == 24  # 2 failing x 4 buckets; 6 timed x 4
    # drive.py gives every call WALL_CALL_S x (1 + M/4): the M=8 bucket is the slowest, the log shows it too
    assert w.slowest[0].op == "fp4_gemm" and w.slowest[0].bucket.startswith("M=8")


def test_always_failing_tactics_and_what_skipping_them_saves(runs):
    w = _one(runs["slow"])
    prov = json.loads((TIMED / "PROVENANCE.json").read_text())["scenarios"]["slow"]
    assert w.blocklist is not None and w.blocklist.seconds is not None
    assert [i.split(" (")[0] for i in w.blocklist.items] == ["fp4_gemm CutlassFp4GemmRunner tactic 5",
                                                             "fp4_gemm CutlassFp4GemmRunner tactic 7"]
    assigned = 2 * 4 * prov["wall_fail_s"]  # two tactics, four buckets, each failing after wall_fail_s (at least)
    assert assigned <= w.blocklist.seconds < assigned * 1.5
    assert "retry --blocklist" in w.blocklist.basis


def test_warm_cache_estimate_against_the_warm_start_that_was_run(runs):
    cold, warm = _one(runs["slow"]), _one(runs["warm"])
    assert cold.warm_cache is not None and cold.tuning is not None
    assert cold.warm_cache.seconds == pytest.approx(sum(o.seconds for o in cold.ops), abs=1e-6)
    # the same start with slow.json loaded: every profile a cache hit, tuning a small part of the cold one
    assert warm.cache_hits == 2 and warm.warm_cache is not None and warm.warm_cache.seconds == 0.0
    assert warm.tuning is not None and warm.tuning.seconds < 0.05 * cold.tuning.seconds
    # nothing profiled: no failing tactic took time (not "unknown": the log is DEBUG, it just tuned nothing)
    assert warm.blocklist is not None and warm.blocklist.seconds == 0.0 and "nothing was profiled" in warm.blocklist.basis
    # the cache load before `Autotuning process starts` is not a silence "during tuning"
    start = next(i for i, ln in enumerate((TIMED / "warm.log").read_text().splitlines(), 1) if "Autotuning process starts" in ln)
    assert warm.longest_silence is None or warm.longest_silence.before_line >= start


def test_where_a_killed_run_stopped(runs):
    w = _one(runs["hang"])
    last = [ln for ln in (TIMED / "hang.log").read_text().splitlines() if ln.strip()][-1]
    st = w.stopped
    assert st is not None and w.open_window and w.tuning is None
    assert (st.op, st.profiles_done, st.timed, st.last_tactic) == ("fp4_gemm", 2, 3, 2)  # hung in tactic 3 of M=4
    assert "(4, 256)" in st.text and st.last_words.split(" - ")[0] == last.split(" - ")[0]
    assert w.stall is not None and w.stall.seconds is None and w.stall.after_line is None  # nothing followed
    # the text alone cannot tell this kill from a cut excerpt: it says where tuning was, never why it ended
    assert w.headline.startswith("No `Autotuning process ends` follows the window opened at line 2")
    assert "tuning was last in fp4_gemm's profile 3" in w.headline and "stopped" not in w.headline
    # no window closed: a saving's share is of the finished profiles, and says so
    assert w.blocklist is not None and w.blocklist.share_of.startswith("the finished profiles'")


def test_real_h200_log_jit_build_is_named_and_left_out_of_the_warm_cache_saving():
    w = _one(inspect([H200], ReadContext()))
    build = _lines(H200, "Building JIT module trtllm_utils")[0]
    lines = H200.read_text().splitlines()
    after = next(ln for ln in lines[lines.index(build) + 1:] if STAMP.search(ln))
    assert [j.module for j in w.jit] == ["trtllm_utils"]
    assert w.jit[0].seconds == pytest.approx(_at(after) - _at(build), abs=1e-6)
    assert w.slowest[0].bucket.startswith("M=1") and w.slowest[0].seconds > w.jit[0].seconds
    assert w.warm_cache is not None and w.warm_cache.seconds == pytest.approx(
        sum(o.seconds for o in w.ops) - w.jit[0].seconds, abs=1e-6)
    assert "JIT build" in w.longest_silence.text if w.longest_silence else False


def test_real_info_log_spans_between_skipped_lines_and_tqdm_elapsed():
    w = _one(inspect([DSPARK], ReadContext()))
    text = DSPARK.read_text()
    start = _at(next(ln for ln in text.splitlines() if "Autotuning process starts" in ln))
    gemm1 = [seg for ln in text.splitlines() for seg in ln.split("\r")
             if "Skipped" in seg and "gemm1" in seg and STAMP.search(seg)]
    ops = {o.op: o for o in w.ops}
    assert ops["trtllm::fused_moe::gemm1"].profiles == len(gemm1) == 21
    assert ops["trtllm::fused_moe::gemm1"].seconds == pytest.approx(_at(gemm1[-1]) - start, abs=0.002)
    assert ops["trtllm::fused_moe::gemm1"].bar_seconds == 25.0  # "21/21 [00:25<00:00"
    assert w.windows == 2 and "Skipped N unsupported" in w.profile_basis
    assert w.blocklist is not None and w.blocklist.seconds is None  # INFO: no per-tactic lines, said so


def test_every_view_shows_the_figures_with_their_label(runs):
    from tiletune.formats import render_text
    from tiletune.formats.report import ReportContext, format_report

    r = runs["slow"]
    headline = _one(r).headline
    for fmt in ("table", "markdown"):
        text = render_text("inspect", r, fmt)
        assert "Warm-up cost" in text and "estimated from these timestamps" in text
        assert "skipping the always-failing tactics would have saved about" in text
    report = format_report(r, ReportContext())
    assert "## Warm-up cost" in report and headline[:40] in report
    doc = json.loads(render_text("inspect", r, "json"))
    (w,) = doc["warmup"]
    assert w["how"] == "estimated" and w["tuning_s"] == pytest.approx(_one(r).tuning.seconds)
    assert [o["op"] for o in w["ops"]] == ["fp4_gemm", "fp8_gemm"]


def test_spans_past_the_bound_are_counted_not_kept(monkeypatch):
    from tiletune.readers.logs import timeline

    monkeypatch.setattr(timeline, "MAX_SPANS", 2)
    w = _one(inspect([TIMED / "slow.log"], ReadContext()))
    assert sum(o.profiles for o in w.ops) == 2
    assert any("3 more profile span(s)" in n for n in w.notes)


def test_a_tickets_excerpt_that_ends_inside_autotuning_is_not_called_a_stop():
    # a real vLLM PR description (cache_samples/wild, artifact.json: its URL) quoting a log up to `starts`
    (path,) = (ROOT / "cache_samples" / "wild").glob("vllm-23439-*/pr.md")
    w = _one(inspect([path], ReadContext()))
    assert w.stopped is not None and "this text is a ticket's excerpt" in w.stopped.text
    assert "stopped" not in w.headline and "hung" not in w.headline


def test_an_info_log_ending_inside_tuning_names_the_op_its_progress_bar_shows():
    # a real vLLM + FlashInfer log (cache_samples/wild/flashinfer-3530-*): the fp4 MoE bar finished, the bf16 one at 0/21
    (path,) = [p for p in (ROOT / "cache_samples" / "wild").glob("flashinfer-3530-*/*") if p.name != "artifact.json"]
    w = _one(inspect([path], ReadContext()))
    assert w.stopped is not None and "in flashinfer::trtllm_bf16_moe, 0 of 21 profiles done" in w.stopped.text
