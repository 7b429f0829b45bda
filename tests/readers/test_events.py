"""Events, clues, aggregation and pasted fragments on real text.

Each quoted line names where it was published; the wild corpus (test_wild_corpus.py) holds the
longer artifacts. Lines are quoted verbatim as test data (never as code).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tiletune.analysis.pipeline import inspect
from tiletune.core import error_text
from tiletune.core.events import Event
from tiletune.core.records import InputProblem, Status, TuningRecord
from tiletune.core.timings import MAX_SAMPLES, TimeSamples
from tiletune.readers import logs
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]

# FlashInfer's own message (research notes section 4, from include/flashinfer/gemm/fp4_gemm_cutlass_template_sm120.h),
# as vLLM's EngineCore prints it when the exception escapes (vllm-project/vllm#24377 shows the older form).
FP4_RAISED = ("(EngineCore_0 pid=300) ERROR 09-06 10:02:40 [core.py:700] RuntimeError: [FP4 gemm Runner] "
              "Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal")
# flashinfer-ai/flashinfer#3568 (2026-06-10), quoted as printed per tactic on every model load
MXFP8_PRINTED = "[MXFP8 SM120 gemm Runner] Failed to initialize cutlass MXFP8 gemm on sm120. Error: Error Internal"
# NVIDIA/cutlass#947: a TMA descriptor dump (the dump comes before the error line)
TMA_DUMP = """TMA Desc Addr:   0x7ffd7d2800c0
format         6
dim            3
gmem_address   0
globalDim      (1024,1024,1,1,1)
globalStrides  (2,2048,2097152,0,0)
boxDim         (64,128,1,1,1)
elementStrides (1,1,1,1,1)
interleave     0
swizzle        3
l2Promotion    0
oobFill        0
Error: Failed to initialize the TMA descriptor 1"""
# flashinfer-ai/flashinfer#2077 (2025-11-11): the TRT-LLM assertion and its generated kernel file
TRT_ASSERT = ("[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal "
              "(/workspace/flashinfer/csrc/nv_internal/tensorrt_llm/cutlass_instantiations/120/gemm_grouped/120/"
              "cutlass_kernel_file_gemm_grouped_sm120_M256_BS_group0.generated.cu:60)")
# sgl-project/sglang#29595 (2026-06-29), GB300
SGLANG_CACHE = ("[2026-06-29 01:38:08 TP3] Running FlashInfer autotune with cache: "
                "/root/.cache/sglang/flashinfer/autotune/0.6.12/sm103/15fc7a2edb371f48/rank_tp3_pp0_dp0.json")
# research/flashinfer-autotuner.md section 6 (H200 measurement with FlashInfer 0.7.2.post1)
CACHE_HIT = ("2026-02-13 16:32:16,790 - INFO - autotuner.py:900 - flashinfer.jit: [Autotuner]: Config cache hit for fp8_gemm "
             "(runner=CublasFp8GemmRunner, source=config file)")


def events_of(*lines: str, source: str = "t.log") -> tuple[list, list, list]:
    items = list(logs.parse_lines(enumerate(lines, 1), source, ReadContext().environment()))
    return ([i for i in items if isinstance(i, Event)], [i for i in items if isinstance(i, TuningRecord)],
            [i for i in items if isinstance(i, InputProblem)])


def test_raised_runner_init_failure_is_fatal_with_facts_and_provenance():
    evs, _, _ = events_of("INFO 09-06 10:01:05 [api_server.py:1805] vLLM API server version 0.10.2", FP4_RAISED, FP4_RAISED)
    (ev,) = [e for e in evs if e.kind == "runner_init_failed"]
    assert ev.is_fatal and ev.count == 2 and ev.lines == (2, 3)
    f = ev.facts_dict()
    assert (f["op"].value, f["op"].how) == ("fp4_gemm", "inferred")
    assert (f["arch"].value, f["arch"].how) == ("sm120/sm121", "decoded") and "on sm120/sm121" in f["arch"].source
    assert f["cutlass_status"].value == "Error Internal"


def test_printed_runner_line_is_not_shown_fatal():
    evs, _, _ = events_of(MXFP8_PRINTED)
    (ev,) = evs
    assert ev.kind == "runner_init_failed" and not ev.is_fatal
    assert ev.fact("op") == "mxfp8_gemm" and ev.fact("ended_run") is False


def test_verdict_leads_with_what_ended_the_run(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("INFO 09-06 10:01:05 [api_server.py:1805] vLLM API server version 0.10.2\n" + FP4_RAISED + "\n")
    r = inspect([log], ReadContext())
    lead = r.verdicts[0]
    assert lead.fatal
    # nothing in the text places it at start-up or while serving: the stage is said to be unknown
    assert lead.text.startswith("the run ended: the fp4_gemm CUTLASS runner failed to initialize on sm120/sm121, "
                                "Error Internal; stage not shown")
    assert [(e.line, e.how) for e in lead.evidence] == [(2, "decoded")]
    assert "Failed to initialize cutlass FP4 gemm on sm120/sm121" in lead.evidence[0].words
    assert r.exit_code == 0 and r.fails_on("fatal") and r.fails_on("failed")


def test_trt_assertion_decodes_its_kernel_file():
    evs, _, _ = events_of("terminate called after throwing an instance of 'tensorrt_llm::common::TllmException'",
                          "  what():  " + TRT_ASSERT)
    (ev,) = [e for e in evs if e.kind == "runner_init_failed"]
    f = ev.facts_dict()
    assert (f["arch"].value, f["cta_m"].value, f["block_scaled"].value) == ("sm120", 256, True)
    assert f["arch"].how == "decoded" and "kernel file name" in f["arch"].source
    assert ev.is_fatal


def test_tma_dump_gives_the_box_and_is_not_fatal_without_an_abort():
    evs, _, _ = events_of(*TMA_DUMP.splitlines())
    (ev,) = evs
    assert ev.kind == "tma_descriptor_failed" and ev.fact("box_dim") == (64, 128, 1, 1, 1)
    assert not ev.is_fatal  # the text shows no process ending
    evs, _, _ = events_of(*TMA_DUMP.splitlines(), "Traceback (most recent call last):")
    assert evs[0].is_fatal and evs[0].fact("ended_run") is True


def test_smem_exceeded_and_cuda_error():
    # the TensorRT-LLM message of the events vocabulary (TensorRT-LLM PR #12704 adds the check on SM121)
    evs, _, _ = events_of("RuntimeError: MoE grouped GEMM requires 105472 bytes shared memory but device supports 101376",
                          # NVIDIA/TensorRT-LLM#1925 (older form, no numbers)
                          "what():  [TensorRT-LLM][ERROR] Assertion failed: GPU lacks the shared memory resources to run GroupedGEMM kernel",
                          # the torch form of a sticky CUDA error, then its name two lines later (one occurrence)
                          "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
                          "CUDA kernel errors might be asynchronously reported at some other API call",
                          "cudaErrorIllegalAddress")
    smem = [e for e in evs if e.kind == "smem_exceeded"]
    assert {(e.fact("smem_need_bytes"), e.fact("smem_limit_bytes")) for e in smem} == {(105472, 101376), (None, None)}
    (cuda,) = [e for e in evs if e.kind == "cuda_error"]
    assert cuda.count == 1 and cuda.fact("error_class") == "illegal_access" and cuda.is_fatal


def test_cache_path_rank_arch_version_and_cache_hit():
    evs, _, _ = events_of(SGLANG_CACHE, CACHE_HIT)
    by = {e.kind: e for e in evs}
    p = by["autotune_cache_path"]
    assert (p.fact("flashinfer_version"), p.fact("arch"), p.fact("rank")) == ("0.6.12", "sm103", "tp3_pp0_dp0")
    hit = by["config_cache_hit"]
    assert (hit.fact("op"), hit.fact("runner"), hit.fact("cache_source")) == ("fp8_gemm", "CublasFp8GemmRunner", "config file")


def test_clues_fill_the_environment_and_say_where_from():
    # flashinfer-ai/flashinfer#2077: a JIT path in a backtrace line names version and arch
    frame = ("(Worker_PP0 pid=38385) 2       0x7c6dd11ca0ad /home/weiliangl/.cache/flashinfer/0.5.2/120a/cached_ops/"
             "fused_moe_120/fused_moe_120.so(+0x9080ad) [0x7c6dd11ca0ad]")
    items = list(logs.parse_lines([(1, frame)], "t.log", ReadContext().environment()))
    (facts,) = [i for i in items if type(i).__name__ == "InputFacts"]
    assert (facts.arch.value, facts.flashinfer_version.value) == ("sm120", "0.5.2")
    assert "jit path" in facts.arch.source and "line 1" in facts.arch.source


def test_one_message_asks_for_everything_missing(tmp_path):
    log = tmp_path / "t.log"
    log.write_text("2026-01-01 00:00:00,000 - INFO - autotuner.py:1 - flashinfer.jit: [Autotuner]: profiling chosen runner: "
                   "<flashinfer.gemm.CutlassFp4GemmRunner object at 0x7f0000000000> 3 for ('fp4_gemm', 'CutlassFp4GemmRunner', "
                   "1, ((8, 64), (64, 128)))\n")
    r = inspect([log], ReadContext())
    reason = r.entries[0].entry.decode.reason
    assert "--flashinfer-version" in reason and "--arch" in reason and "_metadata" not in reason


def test_info_skipped_count_against_the_catalog_with_a_labelled_inference(tmp_path):
    log = tmp_path / "info.log"
    log.write_text("".join(f"2026-06-10 10:00:0{i},000 - INFO - autotuner.py:700 - flashinfer.jit: [Autotuner]: Skipped 4 "
                           "unsupported tactic(s) for mxfp8_gemm (enable debug logs to see details)\n" for i in range(2)))
    r = inspect([log], ReadContext(arch="sm121", flashinfer_version="0.6.14"))
    (f,) = r.failures
    assert f.runner == "" and not f.not_cutlass  # runner not named, never "not CUTLASS"
    text = next(v.text for v in r.verdicts if v.op == "mxfp8_gemm")
    # INFO counts skips of unsupported tactics: skips, not failures, and the line names no runner
    assert "unsupported tactic skips" in text and "4 of 10 tactics skipped" in text and "their runner are not named" in text
    # the four 2-stage 256x128 / 128x256 tiles: the model says exactly these do not fit (flashinfer-ai/flashinfer#3568)
    assert "likely tactics 6 (256x128x128" in text and "9 (128x256x128 swapAB" in text
    assert "an inference, not a decode" in text


def test_every_candidate_failed(tmp_path):
    log = tmp_path / "info.log"
    log.write_text("2026-06-10 10:00:00,000 - INFO - autotuner.py:700 - flashinfer.jit: [Autotuner]: Skipped 10 "
                   "unsupported tactic(s) for mxfp8_gemm (enable debug logs to see details)\n")
    r = inspect([log], ReadContext(arch="sm120", flashinfer_version="0.6.14"))
    assert "every candidate" in next(v.text for v in r.verdicts if v.op == "mxfp8_gemm")


def test_abbreviated_repr_and_pasted_cache_with_elisions(tmp_path):
    # flashinfer-ai/flashinfer#2077 style, abbreviated by hand as tickets do
    evs, recs, _ = events_of("[Autotuner]: Skipping tactic <MoERunner> 14, due to failure while profiling: Error Internal",
                             "[Autotuner]: Skipped 1 unsupported tactic(s) for trtllm::fused_moe::gemm1")
    assert [(r.runner, r.tactic, r.op) for r in recs if r.tactic is not None] == [("MoERunner", 14, "trtllm::fused_moe::gemm1")]
    paste = tmp_path / "paste.json"
    paste.write_text('{\n  "_metadata": {\n    "flashinfer_version": "0.6.14",\n    "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition",\n'
                     '    "_last_updated_by": "dev"\n  },\n'
                     '  "(\'fp4_gemm\', \'CutlassFp4GemmRunner\', ((8, 64), (64, 128)))": ["CutlassFp4GemmRunner", 3],\n'
                     '  ...\n'
                     '  "(\'fp4_gemm\', \'CutlassFp4GemmRunner\', ((16, 64), (64, 128)))": [\n    "CutlassFp4GemmRunner",\n    5\n  ],\n'
                     '  ...\n}\n')
    r = inspect([paste], ReadContext())
    got = sorted((ae.record.tactic, ae.record.env.arch, ae.record.env.flashinfer_version) for ae in r.entries)
    assert got == [(3, "sm120", "0.6.14"), (5, "sm120", "0.6.14")]
    assert r.exit_code == 0
    msg = " ".join(p.message for p in r.problems)
    assert "2 entries" in msg and "2 '...' elision line(s)" in msg and "_last_updated_by" in msg


def test_stdin_is_read_as_a_stream_and_fail_on_gates():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "tiletune", "inspect", "-", "-f", "json"], input=FP4_RAISED + "\n",
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["fatal"] and doc["events"][0]["kind"] == "runner_init_failed" and doc["sources"][0]["path"] == "<stdin>"
    p = subprocess.run([sys.executable, "-m", "tiletune", "inspect", "-", "--fail-on", "fatal"], input=FP4_RAISED + "\n",
                       capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "--fail-on fatal" in p.stderr


def test_growing_log_is_read_up_to_its_size_at_the_start(tmp_path):
    log = tmp_path / "grow.log"
    log.write_text(CACHE_HIT + "\n")

    class Growing:
        """A reader that appends to the file while it is read (as a live server would)."""

    items = []
    gen = logs.read_log(log, ReadContext())
    with open(log, "a") as f:
        for item in gen:
            items.append(item)
            f.write(CACHE_HIT + "\n")  # the log keeps growing while it is read
            f.flush()
    hits = [i for i in items if isinstance(i, Event) and i.kind == "config_cache_hit"]
    assert hits and hits[0].count == 1


def test_time_samples_are_counted_and_bounded():
    s = TimeSamples()
    for i in range(10_000):
        s.add(float(i % 100))
    assert s.count == 10_000 and s.min == 0.0 and s.max == 99.0
    assert len(s.samples) < MAX_SAMPLES and 30 <= s.median <= 70
    small = TimeSamples()
    for v in (3.0, 1.0, 2.0):
        small.add(v)
    assert small.detail()["time_samples_exact"] and small.median == 2.0


def test_repeated_profiling_lines_aggregate_with_samples():
    rep = "<flashinfer.gemm.CutlassFp4GemmRunner object at 0x7f3c2a1b5e50>"
    lines = [f"2026-01-01 00:00:00,000 - DEBUG - autotuner.py:1 - flashinfer.jit: [Autotuner]: profiling {rep} 3, "
             f"shapes=((8, 64),), avg_time {0.01 * (1 + i % 7):.3f}" for i in range(500)]
    lines.append(f"2026-01-01 00:00:00,000 - DEBUG - autotuner.py:1 - flashinfer.jit: [Autotuner]: profiling chosen runner: {rep} 3 "
                 "for ('fp4_gemm', 'CutlassFp4GemmRunner', 1, ((8, 64), (64, 128)))")
    _, recs, _ = events_of(*lines)
    (prof,) = [r for r in recs if r.status is Status.PROFILED]
    d = prof.detail_dict()
    assert prof.count == 500 and d["time_count"] == 500 and len(d["time_samples_ms"]) <= MAX_SAMPLES
    assert d["time_min_ms"] == 0.01 and prof.time_ms == d["time_median_ms"]


def test_one_vocabulary():
    d = error_text.diagnose("[MXFP8 SM120 gemm Runner] Failed to initialize cutlass MXFP8 gemm on sm120. Error: Error Internal "
                           "(kernel needs 111616 bytes of shared memory, device per-block limit is 101376 bytes)")
    assert d.cls is error_text.ErrorClass.SHARED_MEMORY and (d.smem_need, d.smem_limit) == (111616, 101376)
    assert d.op == "mxfp8_gemm" and d.archs == ("sm120",) and d.cutlass_status == "Error Internal"
    from tiletune.core.error_text import smem_need_limit as smem_from_text
    from tiletune.tuner.classify import classify_text
    from tiletune.tuner.engine import Diagnosis

    assert classify_text(TRT_ASSERT).diagnosis is Diagnosis.INITIALIZE_FAILED
    assert smem_from_text("MoE grouped GEMM requires 105472 bytes shared memory but device supports 101376") == (105472, 101376)


def test_repeated_ledger_attempts_aggregate(tmp_path):
    src = ROOT / "cache_samples/ledgers/h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
    lines = [ln for ln in src.read_text().splitlines() if ln.strip()]
    big = tmp_path / "ledger.jsonl"
    with open(big, "w") as f:
        for i in range(30):  # the same session appended 30 times, times varied
            for ln in lines:
                a = json.loads(ln)
                if isinstance(a.get("time_s"), float):
                    a["time_s"] *= 1 + i / 1000
                f.write(json.dumps(a) + "\n")
    from tiletune.readers import ledger

    recs = [r for r in ledger.read(big, ReadContext()) if isinstance(r, TuningRecord)]
    single = [r for r in ledger.read(src, ReadContext()) if isinstance(r, TuningRecord)]
    assert len(recs) == len(single) and sum(r.count for r in recs) == 30 * len(lines)
    timed = [r for r in recs if r.status is Status.PASSED]
    d = timed[0].detail_dict()
    assert d["time_count"] == 30 and len(d["time_samples_ms"]) <= MAX_SAMPLES and d["time_min_ms"] <= timed[0].time_ms


def test_server_banner_gives_the_pinned_flashinfer_as_an_inference():
    # an SGLang environment dump line; the pin comes from sglang 0.5.5's own published requirements
    items = list(logs.parse_lines([(1, "sglang==0.5.5"), (2, "[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on "
                                                              "sm120/sm121. Error: Error Internal")], "t.log", ReadContext().environment()))
    (facts,) = [i for i in items if type(i).__name__ == "InputFacts"]
    assert facts.flashinfer_version.value == "0.5.0" and facts.flashinfer_version.how == "inferred"
    assert "sglang==0.5.5" in facts.flashinfer_version.source and "sglang-0.5.5" in facts.flashinfer_version.source
    banner = next(i for i in items if isinstance(i, Event) and i.kind == "version_banner")
    assert banner.fact("flashinfer_version") == "0.5.0"


def test_pin_table_tool_reads_requirements_by_code():
    # tools/server_pins (its own tests: tests/tools/test_server_pins_*.py)
    from tools.server_pins.parse import flashinfer_requirements, summarize

    got = summarize(flashinfer_requirements("torch==2.8.0\nflashinfer-python[cu13]==0.6.12 ; extra == 'srt'\n"))
    assert (got["pin"], got["spec"], got["extra"]) == ("0.6.12", "flashinfer-python==0.6.12", "srt")
    assert summarize(flashinfer_requirements("flashinfer_python>=0.2.9\n"))["pin"] is None
    assert flashinfer_requirements("numpy\n") == []
    table = json.loads((ROOT / "tiletune/core/data/server_flashinfer_pins.json").read_text())
    assert table["generated_by"] and all(e["source"] for e in table["servers"]["sglang"].values())


def test_loose_logs_of_unknown_arch_are_not_merged(tmp_path):
    line = ("2026-06-10 10:00:00,000 - INFO - autotuner.py:700 - flashinfer.jit: [Autotuner]: Skipped 3 unsupported "
            "tactic(s) for fp4_gemm (enable debug logs to see details)\n")
    a, b = tmp_path / "machine-a.log", tmp_path / "machine-b.log"
    a.write_text(line)
    b.write_text(line)
    r = inspect([tmp_path], ReadContext())
    assert len(r.failures) == 2 and {f.group for f in r.failures} == {str(a), str(b)}
    texts = [v.text for v in r.verdicts if v.op == "fp4_gemm"]
    assert len(texts) == 2 and all("machine-" in t for t in texts)
    # --arch / --flashinfer-version say nothing about which machine wrote a log: still apart
    r = inspect([tmp_path], ReadContext(arch="sm120", flashinfer_version="0.6.14"))
    assert [f.count for f in r.failures] == [3, 3] and len({f.group for f in r.failures}) == 2
