"""The autotuner log reader on the bundled logs, line-level edge cases, bad input and a big log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from tiletune.core.records import InputProblem, Status, TuningRecord
from tiletune.readers import logs
from tiletune.readers.interface import ReadContext

ROOT = Path(__file__).resolve().parents[2]
FP4 = "<flashinfer.gemm.gemm_base._create_cutlass_fp4_gemm_module.<locals>.cutlass_fp4_gemm_runner.<locals>.CutlassFp4GemmRunner object at 0x7f3c2a1b5e50>"
MOE = "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7c70ccce8350>"


def read_all(path, ctx=None):
    ctx = ReadContext() if ctx is None else ctx
    items = list(logs.read(Path(path), ctx))
    recs = [i for i in items if isinstance(i, TuningRecord)]
    probs = [i for i in items if isinstance(i, InputProblem)]
    return recs, probs


def lines_of(*texts):
    return [(i + 1, t) for i, t in enumerate(texts)]


def hdr(level="DEBUG", loc="autotuner.py:1"):
    return f"2026-08-03 10:00:00,000 - {level} - {loc} - flashinfer.jit: "


def parse(*texts):
    items = list(logs.parse_lines(lines_of(*texts), "x.log", ReadContext().environment()))
    return [i for i in items if isinstance(i, TuningRecord)], [i for i in items if isinstance(i, InputProblem)]


# --- bundled samples ---------------------------------------------------------------------------
def test_sm120_debug_log(sample):
    recs, probs = read_all(sample("logs/sm120_0.6.17_warmup_debug.log"))
    assert probs == []
    by = Counter((r.status, r.op) for r in recs)
    assert by[(Status.PROFILED, "fp4_gemm")] == 64  # 32 tactics x 2 buckets
    assert by[(Status.PROFILED, "mxfp8_gemm")] == 12  # tactics 0-5 x 2 buckets
    assert by[(Status.CHOSEN, "fp4_gemm")] == 2 and by[(Status.CHOSEN, "mxfp8_gemm")] == 2

    failed = sorted((r for r in recs if r.status is Status.FAILED), key=lambda r: r.tactic)
    # the DEBUG "Failed when profiling" twin is not a second failure; the INFO summary adds nothing
    assert [(r.op, r.runner, r.tactic, r.count) for r in failed] == [
        ("mxfp8_gemm", "CutlassMxfp8GemmRunner", t, 2) for t in (6, 7, 8, 9)
    ]
    f6 = failed[0]
    assert f6.error == "[MXFP8 SM120 gemm Runner] Failed to initialize cutlass MXFP8 gemm on sm120. Error: Error Internal"
    d = f6.detail_dict()
    assert d["cutlass_status"] == "Error Internal" and d["failure_kind"] == "initialize"
    assert f6.shapes[0] == (16, 4096)  # the bucketed key profile from the block's chosen line
    assert [b[0] for b in d["buckets"]] == [(16, 4096), (32, 4096)]
    assert d["tensor_shapes"][0] == (16, 4096)

    prof = [r for r in recs if r.status is Status.PROFILED and r.op == "fp4_gemm"]
    assert all(r.time_ms and 0.005 < r.time_ms < 0.05 for r in prof)
    assert prof[0].shapes[2] == (-1, 288)  # key profile (constrained dim -1), not the tensor's 16
    assert prof[0].detail_dict()["tensor_shapes"][2] == (16, 288)

    chosen = [r for r in recs if r.status is Status.CHOSEN and r.op == "mxfp8_gemm"]
    assert chosen[0].extras == ("torch.bfloat16",) and chosen[0].raw_key.startswith("ProfilingCacheKey(")
    # the chosen tactic is the fastest profiled one of its block
    for c in (r for r in recs if r.status is Status.CHOSEN):
        block = [p for p in recs if p.status is Status.PROFILED and p.op == c.op and p.shapes == c.shapes]
        assert c.tactic == min(block, key=lambda p: p.time_ms).tactic

    (fb,) = [r for r in recs if r.status is Status.FALLBACK]
    assert (fb.op, fb.runner, fb.tactic, fb.count) == ("fp4_gemm", "CutlassFp4GemmRunner", -1, 2)
    assert fb.shapes[0] == (5000, 2304) and fb.detail_dict()["out_of_bucket"] is True
    assert fb.detail_dict()["nearest_profile"][0] == (8192, 2304)


def test_info_level_summaries(sample):
    recs, probs = read_all(sample("logs/sm120_0.6.17_warmup_info.log"))
    assert probs == []
    got = {(r.op, r.count) for r in recs}
    assert got == {("mxfp8_gemm", 8), ("trtllm::fused_moe::gemm1", 4), ("trtllm::fused_moe::gemm2", 8)}
    for r in recs:
        assert r.status is Status.FAILED and r.tactic is None and r.runner == ""
        assert r.detail_dict()["tactics_known"] is False and "FLASHINFER_LOGGING_LEVEL=debug" in r.error


def test_pre_068_warning_with_backtrace(sample):
    recs, probs = read_all(sample("logs/sm120_moe_0.6.7_warning_backtrace.log"))
    assert probs == []
    assert all(r.status is Status.FAILED and r.runner == "MoERunner" for r in recs)
    g1 = {r.tactic: r for r in recs if r.op == "trtllm::fused_moe::gemm1"}
    g2 = {r.tactic: r for r in recs if r.op == "trtllm::fused_moe::gemm2"}
    assert sorted(g1) == [2, 3, 4, 5, 12, 13, 14, 15] and sorted(g2) == [22, 23, 24, 25, 42, 43, 44, 45]
    assert all(r.count == 2 for r in recs)  # two buckets each
    r = g1[2]
    # the backtrace is folded away: one informative line, the generated TU named in detail
    assert r.error.startswith("[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal (")
    assert "\n" not in r.error and "throwRuntimeError" not in r.error
    d = r.detail_dict()
    assert d["instantiation"] == "cutlass_kernel_file_gemm_grouped_sm120_M256_BS_group0.generated.cu:60"
    assert d["error_lines_folded"] == 5 and d["level"] == "WARNING"
    assert "progress bar" in d["op_note"]
    assert g1[4].error == "[TensorRT-LLM][ERROR] Unsupported tile shape config 128128256 for MoE gemm."
    assert g1[4].detail_dict()["failure_kind"] == "not_instantiated"


def test_h200_log_agrees_with_the_real_cache(sample):
    """The chosen tactic per bucket equals the one in the real H200 cache the same run wrote."""
    recs, probs = read_all(sample("logs/h200_0.7.2.post1_fp8_gemm_cublas.log"))
    assert probs == []
    chosen = {r.shapes[0][1]: r.tactic for r in recs if r.status is Status.CHOSEN}
    cache = json.loads((ROOT.parent / "shared/samples/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json").read_text()) \
        if (ROOT.parent / "shared/samples").is_dir() else None
    if cache is None:
        pytest.skip("../shared/samples not present")
    from tiletune.readers.keyparse import parse_key

    expected = {parse_key(k).shapes[0][1]: v[1] for k, v in cache.items() if not k.startswith("_")}
    assert chosen == expected
    c = next(r for r in recs if r.status is Status.CHOSEN)
    assert c.detail_dict()["log_saved_to"] == ("/tmp/tiletune-h200/cache_bmm_fp8.json",)
    fb = next(r for r in recs if r.status is Status.FALLBACK)
    assert fb.detail_dict()["log_loaded_from"] == ("/tmp/tiletune-h200/cache_bmm_fp8.json",)
    assert sum(r.status is Status.PROFILED for r in recs) == 64


def test_real_h200_debug_log_matches_the_cache_it_wrote(sample):
    """REAL files from one H200 run (cache_samples/ledgers/README.md): FlashInfer 0.7.2.post1's DEBUG
    stderr, with tqdm bars glued to log lines, and the cache the same run saved."""
    log = sample("ledgers/h200-fp8_gemm-autotune-debug-0.7.2.post1.log")
    cache = json.loads(sample("ledgers/h200-fp8_gemm-autotune-cache-0.7.2.post1.json").read_text())
    from tiletune.readers.keyparse import parse_key

    p = logs.LogParser(str(log), ReadContext().environment())
    items = list(logs.read_log(log, ReadContext(), parser=p))
    assert not [i for i in items if isinstance(i, InputProblem)]
    recs = [i for i in items if isinstance(i, TuningRecord)]
    chosen = {(r.op, r.runner, r.shapes, r.extras, r.tactic) for r in recs if r.status is Status.CHOSEN}
    expected = set()
    for k, v in cache.items():
        if k.startswith("_"):
            continue
        key = parse_key(k)
        expected.add((key.op, key.runner, key.shapes, tuple(str(e) for e in key.extras), v[1]))
    assert {(o, r, s, tuple(str(e) for e in x), t) for o, r, s, x, t in chosen} == expected
    assert sum(r.status is Status.PROFILED for r in recs) == 64
    assert all(r.time_ms > 0 for r in recs if r.status is Status.PROFILED)
    (fb,) = [r for r in recs if r.status is Status.FALLBACK]
    assert fb.shapes[0] == (1, 5000, 4096) and fb.detail_dict()["out_of_bucket"]
    assert p.facts.modules_built == ["trtllm_utils"] and p.facts.caches_saved == ["out/fp8_gemm_cache_h200.json"]


def test_log_facts(sample):
    p = logs.LogParser("h", ReadContext().environment())
    list(logs.read_log(sample("logs/h200_0.7.2.post1_fp8_gemm_cublas.log"), ReadContext(), parser=p))
    f = p.facts
    assert f.modules_built == ["gemm", "trtllm_utils"]
    assert f.caches_saved == ["/tmp/tiletune-h200/cache_bmm_fp8.json"] == f.caches_loaded
    assert f.runs == 1 and f.has_debug and f.levels["WARNING"] == 1


def test_jit_log_takes_version_and_arch_from_its_path(sample):
    recs, _ = read_all(sample("jit/flashinfer/0.6.14/120f/flashinfer_jit.log"))
    assert recs and all(r.env.flashinfer_version == "0.6.14" and r.env.arch == "sm120" for r in recs)
    assert recs[0].env.arch_source == "jit-path" and recs[0].env.version_source == "jit-path"
    chosen = [r for r in recs if r.status is Status.CHOSEN]
    assert [c.tactic for c in chosen] == [1, 1] and chosen[0].extras == ()  # 5-tuple key with extras ()
    # overrides beat the path
    recs2, _ = read_all(sample("jit/flashinfer/0.6.14/120f/flashinfer_jit.log"), ReadContext(arch="sm121"))
    assert recs2[0].env.arch == "sm121" and recs2[0].env.arch_source == "--arch"


def test_multi_arch_workspace_log_has_no_arch(tmp_path):
    d = tmp_path / "flashinfer" / "0.7.2.post1" / "90a_120f"
    d.mkdir(parents=True)
    (d / "flashinfer_jit.log").write_text(hdr() + f"[Autotuner]: profiling {FP4} 3, shapes=((1, 2),), avg_time 0.5\n")
    recs, _ = read_all(d / "flashinfer_jit.log")
    assert recs[0].env.flashinfer_version == "0.7.2.post1" and recs[0].env.arch is None


# --- line grammar -------------------------------------------------------------------------------
@pytest.mark.parametrize("key,op,shapes0,extras", [
    ("('fp4_gemm', 'CutlassFp4GemmRunner', 123, ((16, 2304), (2304, 7168)))", "fp4_gemm", (16, 2304), None),
    ("('fp8_gemm', 'CublasFp8GemmRunner', -9, ((1, 8, 4096),), (torch.float8_e4m3fn, torch.bfloat16))", "fp8_gemm", (1, 8, 4096),
     ("torch.float8_e4m3fn", "torch.bfloat16")),
    ("ProfilingCacheKey(custom_op='trtllm::fused_moe::gemm1', runner_class_name='MoERunner', runner_hash=77, "
     "nearest_profile=((128, 3584), (256, 4096, 3584)), extras=(torch.uint8, <ActivationType.Swiglu: 3>, 8))",
     "trtllm::fused_moe::gemm1", (128, 3584), ("torch.uint8", "ActivationType.Swiglu", 8)),
])
def test_profiling_key_forms(key, op, shapes0, extras):
    k = logs.parse_profiling_key(key)
    assert k.op == op and k.shapes[0] == shapes0 and k.extras == extras


def test_bad_key_is_a_line_problem_not_a_crash():
    recs, probs = parse(hdr() + f"[Autotuner]: profiling chosen runner: {FP4} 3 for ProfilingCacheKey(custom_op='x', garbage")
    assert recs == []
    assert len(probs) == 1 and probs[0].message.startswith("x.log:1: could not parse") and not probs[0].fatal


@pytest.mark.parametrize("text,tactic", [("3", 3), ("-1", -1), ("(8, 34)", (8, 34)), ("[8, 34]", (8, 34)),
                                         ("(0, [[1, 2], [3, 4]])", (0, ((1, 2), (3, 4))))])
def test_tactic_forms(text, tactic):
    recs, _ = parse(hdr() + f"[Autotuner]: profiling {FP4} {text}, shapes=((1, 2),), avg_time 0.25",
                    hdr() + f"[Autotuner]: profiling chosen runner: {FP4} {text} for ('fp4_gemm', 'CutlassFp4GemmRunner', 1, ((1, 2),), ())")
    assert [r.tactic for r in recs] == [tactic, tactic]


def test_debug_pre_068_pair_across_backtrace_counts_once():
    """v0.6.7 at DEBUG: WARNING Skipping + backtrace, then DEBUG Failed + the same backtrace = one failure."""
    err = "[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal (x.cu:60)"
    bt = ["1       0x7c6dd0a58b16 tensorrt_llm::common::throwRuntimeError(char const*) + 97",
          "2       0x7c6dd11ca0ad /x/fused_moe_120.so(+0x9080ad) [0x7c6dd11ca0ad]"]
    recs, probs = parse(
        hdr("WARNING") + f"[Autotuner]: Skipping tactic {MOE} 15, due to failure while profiling: {err}", *bt,
        hdr("DEBUG") + f"[Autotuner]: Failed when profiling {MOE} 15, shapes=[torch.Size([64, 3584]), torch.Size([0])]. Error occurred: {err}", *bt,
        hdr("DEBUG") + f"[Autotuner]: profiling chosen runner: {MOE} 0 for ('trtllm::fused_moe::gemm1', 'MoERunner', 1, ((64, 3584), (0,)))",
    )
    assert probs == []
    (f,) = [r for r in recs if r.status is Status.FAILED]
    assert (f.op, f.tactic, f.count, f.error) == ("trtllm::fused_moe::gemm1", 15, 1, err)
    assert f.shapes == ((64, 3584), (0,)) and f.detail_dict()["tensor_shapes"] == ((64, 3584), (0,))


def test_traceback_first_line_is_replaced_by_the_informative_one():
    recs, _ = parse(
        hdr() + f"[Autotuner]: Skipping tactic {FP4} 24, due to failure while profiling: Traceback (most recent call last):",
        '  File "/x/gemm_base.py", line 10, in forward',
        "RuntimeError: [FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal "
        "(kernel needs 111616 bytes of shared memory, device per-block limit is 101376 bytes)",
        hdr("INFO") + "[Autotuner]: Skipped 1 unsupported tactic(s) for fp4_gemm (enable debug logs to see details)",
    )
    (f,) = recs
    assert f.error.startswith("RuntimeError: [FP4 gemm Runner] Failed to initialize") and f.op == "fp4_gemm"
    d = f.detail_dict()
    assert (d["smem_needed_bytes"], d["smem_limit_bytes"]) == (111616, 101376)
    assert d["failure_kind"] == "shared_memory"


def test_ranking_failure_names_its_op():
    recs, _ = parse(hdr() + f"[Autotuner]: Skipping tactic {FP4} 7 while ranking fp4_gemm: CUDA error: an illegal instruction was encountered")
    (f,) = recs
    assert (f.op, f.tactic, f.detail_dict()["phase"], f.detail_dict()["failure_kind"]) == ("fp4_gemm", 7, "ranking", "illegal_instruction")


def test_partial_debug_block_keeps_unattributed_remainder():
    recs, _ = parse(
        hdr() + f"[Autotuner]: Skipping tactic {FP4} 24, due to failure while profiling: boom",
        hdr("INFO") + "[Autotuner]: Skipped 3 unsupported tactic(s) for fp4_gemm (enable debug logs to see details)",
    )
    named = [r for r in recs if r.tactic == 24]
    summary = [r for r in recs if r.tactic is None]
    assert named[0].op == "fp4_gemm" and summary[0].count == 2


def test_oom_and_blocklist_lines():
    recs, _ = parse(
        hdr("WARNING") + "[AutoTuner]: Tuning fp4_gemm:   0%|          | 0/2",
        hdr("WARNING") + "[Autotuner]: OOM detected, falling back to default tactic",
        hdr() + "[TacticsBlocklist]: Filtered 4 invalid tactic(s) for trtllm::fused_moe::gemm1::MoERunner (16 remaining)",
        hdr() + "[TacticsBlocklist]: Filtered 4 invalid tactic(s) for trtllm::fused_moe::gemm1::MoERunner (16 remaining)",
        hdr() + "[AutoTuner]: Skipping autotuning for 'bf16_gemm' (in skip_ops). Using fallback tactic.",
    )
    assert not [r for r in recs if r.status is Status.FAILED]  # an OOM fallback is no failed tactic
    oom, skip_ops = sorted((r for r in recs if r.status is Status.FALLBACK), key=lambda r: r.line)
    # the OOM fallback keeps its op (the bar being drawn) and says why FlashInfer used its default tactic (the
    # line does not print the tactic: -1 is FlashInfer's default, kept as a detail)
    assert (oom.op, oom.tactic, oom.detail_dict()["default_tactic"]) == ("fp4_gemm", None, -1)
    assert oom.detail_dict()["failure_kind"] == "out_of_memory"
    b = next(r for r in recs if r.status is Status.BLOCKED)
    assert (b.op, b.runner, b.count, b.detail_dict()["remaining"]) == ("trtllm::fused_moe::gemm1", "MoERunner", 2, 16)
    assert skip_ops.op == "bf16_gemm"


def test_same_error_with_changing_addresses_is_one_failure():
    recs, _ = parse(*(hdr() + f"[Autotuner]: Skipping tactic {FP4} 9, due to failure while profiling: "
                      f"CUDA error: an illegal memory access at 0x7f00{i:08x}" for i in range(3)),
                    hdr("INFO") + "[Autotuner]: Skipped 3 unsupported tactic(s) for fp4_gemm (enable debug logs to see details)")
    (f,) = recs
    assert f.count == 3 and f.error.endswith("0x7f0000000000") and f.detail_dict()["failure_kind"] == "illegal_access"


def test_cache_from_another_environment_is_noted():
    p = logs.LogParser("x.log", ReadContext().environment())
    msg = ("[Autotuner]: Cache file /c/autotune.json was created in a different environment (gpu: saved=NVIDIA B200 vs "
           "current=NVIDIA H200). Ignoring cached configs. Results will not be saved to this file.")
    recs = list(logs.parse_lines(lines_of(hdr("WARNING") + msg,
                                          hdr() + "[AutoTuner]: Using fallback tactic for fp8_gemm with input shapes ((1, 8, 4096),)"),
                                 "x.log", ReadContext().environment(), parser=p))
    assert p.facts.cache_env_mismatches == [msg[len("[Autotuner]: "):]]
    assert recs[0].status is Status.FALLBACK and "saved=NVIDIA B200" in recs[0].detail_dict()["log_cache_ignored"][0]


def test_revalidation_failure_070():
    # a cache miss of that key, not a tactic that failed: with no fallback line after it (INFO), the
    # miss is a fallback record of its own naming the cached tactic
    recs, probs = parse(hdr("WARNING") + "[Autotuner]: cached tactic 24 for fp4_gemm (runner=CutlassFp4GemmRunner, "
                        "source=config file) failed revalidation; treating as a cache miss.")
    assert probs == []
    (f,) = recs
    assert (f.op, f.runner, f.tactic, f.status) == ("fp4_gemm", "CutlassFp4GemmRunner", -1, Status.FALLBACK)
    assert f.detail_dict()["cached_tactic"] == 24 and f.detail_dict()["cache_miss"] == "revalidation failed"


def test_other_loggers_lines_end_a_backtrace():
    recs, _ = parse(
        hdr() + f"[Autotuner]: Skipping tactic {FP4} 1, due to failure while profiling: first line",
        "INFO 08-03 10:12:44 [gpu_model_runner.py:2101] Error: this is vLLM, not part of the exception",
    )
    assert recs[0].error == "first line" and "error_lines_folded" not in recs[0].detail_dict()


# --- sniff and bad input ----------------------------------------------------------------------
def test_sniff(tmp_path, sample):
    cache = ROOT.parent / "shared/samples/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
    for p in (sample("logs/sm120_moe_0.6.7_warning_backtrace.log"), sample("logs/h200_0.7.2.post1_fp8_gemm_cublas.log")):
        assert logs.sniff(p, p.read_bytes()[:4096])
    blk = sample("blocklists/tactics_NVIDIA_B200_wildcard.json")
    assert not logs.sniff(blk, blk.read_bytes()[:4096])
    if cache.exists():
        assert not logs.sniff(cache, cache.read_bytes()[:4096])
    txt = tmp_path / "notes.log"
    txt.write_text("2026-08-03 10:00:00,000 - INFO - server.py:1 - some other logger: hello\nflashinfer is great\n")
    assert not logs.sniff(txt, txt.read_bytes())
    late = tmp_path / "server.log"  # a server log whose tuning starts after pages of other output
    late.write_text("INFO 08-03 10:00:00 [config.py:1] model config: " + "x" * 100 + "\n" * 2 + ("INFO line\n" * 20000)
                    + hdr() + f"[Autotuner]: profiling {FP4} 3, shapes=((1, 2),), avg_time 0.5\n")
    assert logs.sniff(late, late.read_bytes()[:4096])
    late_txt = tmp_path / "notes.md"  # not a log-like name: only the head counts
    late_txt.write_bytes(late.read_bytes())
    assert not logs.sniff(late_txt, late_txt.read_bytes()[:4096])
    empty = tmp_path / "flashinfer_jit.log"
    empty.write_text("")
    assert logs.sniff(empty, b"")  # FlashInfer creates it empty at import: by name
    assert list(logs.read(empty, ReadContext())) == []


def test_text_without_autotuner_lines_says_so(tmp_path):
    p = tmp_path / "flashinfer_jit.log"
    p.write_text(hdr("INFO", "core.py:1") + "Building JIT module gemm; this can take several minutes on first use.\n")
    recs, probs = read_all(p)
    assert recs == [] and len(probs) == 1 and not probs[0].fatal
    assert probs[0].message.startswith(f"{p}: nothing tiletune reads: looked for FlashInfer autotuner lines")


def test_missing_and_directory_inputs_are_fatal_one_liners(tmp_path):
    for p in (tmp_path / "nope.log", tmp_path):
        _, probs = read_all(p)
        assert len(probs) == 1 and probs[0].fatal and probs[0].message.startswith(str(p) + ": cannot open log")
        assert "\n" not in probs[0].message


def test_overlong_line_is_cut_and_reading_goes_on(tmp_path):
    p = tmp_path / "x.log"
    with open(p, "w") as f:
        f.write("x" * (3 * logs.MAX_LINE_BYTES) + "\n")
        f.write(hdr() + f"[Autotuner]: profiling {FP4} 3, shapes=((1, 2),), avg_time 0.5\n")
    parser = logs.LogParser(str(p), ReadContext().environment())
    recs = [r for r in logs.read_log(p, ReadContext(), parser=parser) if isinstance(r, TuningRecord)]
    assert parser.facts.truncated_lines == 1 and recs[0].line == 2 and recs[0].time_ms == 0.5


def test_input_file_is_not_modified(sample):
    p = sample("logs/sm120_0.6.17_warmup_debug.log")
    before = (p.stat().st_mtime_ns, p.read_bytes())
    read_all(p)
    assert (p.stat().st_mtime_ns, p.read_bytes()) == before


def test_big_log_streams_in_flat_memory(tmp_path):
    """~40 MB of appended warm-ups: peak RSS of a fresh process grows by far less than the file."""
    src = (ROOT / "cache_samples/logs/sm120_0.6.17_warmup_debug.log").read_text().splitlines()
    big = tmp_path / "big.log"
    size, i = 0, 0
    with open(big, "w") as f:
        while size < 40 << 20:
            chunk = "\n".join(src).replace("0x7f3c2a1b5e50", f"0x7f{i:010x}") + "\n"
            f.write(chunk)
            size += len(chunk)
            i += 1
    script = textwrap.dedent(f"""
        import json, resource, sys
        from pathlib import Path
        from collections import Counter
        from tiletune.readers import logs
        from tiletune.readers.interface import ReadContext
        from tiletune.core.records import TuningRecord
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        c = Counter()
        for r in logs.read(Path({str(big)!r}), ReadContext()):
            c[f"{{r.status.value}}x{{r.count}}" if isinstance(r, TuningRecord) else type(r).__name__] += 1
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((peak - base) // 1024, json.dumps(c))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.split(" ", 1)
    grew_mb, counts = int(out[0]), json.loads(out[1])
    assert grew_mb < 40, f"RSS grew {grew_mb} MiB while reading a {size >> 20} MiB log"
    # repeats are counted, not repeated: one record per distinct failure, count = every occurrence
    assert counts[f"failedx{2 * i}"] == 4 and counts[f"chosenx{i}"] == 4
    # timings too: one aggregate per (op, runner, tactic, bucket), each with bounded samples
    assert counts[f"profiledx{i}"] == 76 and "InputProblem" not in counts


def test_profiling_lines_without_an_op_take_it_from_the_runner_class_and_their_own_shapes():
    """flashinfer#4163 (real, SM103): DEBUG profiling lines name CutlassFp4GemmRunner and the tensor
    shapes, but no op and no key line. The op is inferred from the runner class (said so), and the
    profiling line's shapes give the problem: M 512, N 6144, K 6144 (packed 3072)."""
    from tiletune.decode.problems import problem_for

    recs, probs = read_all(ROOT / "cache_samples/wild/flashinfer-4163-sm103-fp4-gemm-debug-profiling/test.log")
    assert [r.tactic for r in recs] == [8, 9] and not probs
    for r in recs:
        d = dict(r.detail)
        assert r.op == "fp4_gemm" and "inferred from the runner class" in d["op_note"]
        assert d["shapes_from"] == "the profiling line's tensor shapes"
        p, why = problem_for(r)
        assert why is None and (p.m, p.n, p.k) == (512, 6144, 6144)
