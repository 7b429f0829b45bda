"""TensorRT-LLM's own texts: the assertion abort and the GEMM profiler's give-up line as a user posted
them (tests/data/trtllm_tickets, NVIDIA/TensorRT-LLM#4253), the torch autotuner's `[Autotuner]
Candidate:` lines rendered from the source's own f-string (NVIDIA/TensorRT-LLM#19162, no public post
of one yet), and the TRTLLM_CACHE_DIR layout with its ranks kept apart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tiletune.core.records import Status
from tiletune.readers import read_inputs
from tiletune.readers.discover import discover
from tiletune.readers.interface import ReadContext

CTX = ReadContext()
DATA = Path(__file__).resolve().parents[1] / "data"
T4253 = DATA / "trtllm_tickets" / "trtllm-4253-orin-moe-gemm1-config-not-set" / "ticket.txt"
V074 = DATA / "flashinfer_writers" / "0.7.4"
SAMPLES = Path(__file__).resolve().parents[2] / "cache_samples"


@pytest.fixture(autouse=True)
def _no_server_env(no_server_env):
    """No server cache variables (conftest.no_server_env)."""


def test_the_abort_is_a_fatal_event_with_file_line_and_runner(run):
    out = read_inputs([T4253], CTX)
    assert not [p for p in out.problems if p.loses_data]
    (e,) = [x for x in out.events if x.kind == "assertion_failed"]
    assert e.is_fatal
    assert e.fact("assertion") == "MOE GEMM1 Config is not set" and e.fact("file") == "moe_kernels.cu:2684"
    assert e.fact("runner") == "CutlassMoeFCRunner" and e.fact("function") == "CutlassMoeFCRunner::runMoe"
    r = run("inspect", str(T4253))
    assert r.exit_code == 0, r.output  # was "not a format tiletune reads", exit 2
    text = " ".join(r.stdout.split())
    assert "aborted" in text and "MOE GEMM1 Config is not set (moe_kernels.cu:2684)" in text


def test_no_valid_gemm_config_is_a_failure_per_shape():
    out = read_inputs([T4253], CTX)
    failed = sorted((r.detail_dict()["m"], r.detail_dict()["n"], r.detail_dict()["k"])
                    for r in out.records if r.status is Status.FAILED)
    assert failed == [(1, 768, 2048), (2, 768, 2048)]
    (e,) = [x for x in out.events if x.kind == "no_valid_config"]
    assert (e.fact("n"), e.fact("k"), e.fact("m"), e.count) == (768, 2048, (1, 2), 2)


# NVIDIA/TensorRT-LLM#19162, tensorrt_llm/_torch/autotuner.py:1334 (the single-candidate shortcut's
# line; the timed path logs the same fields with the measured time, `inf` for a failed tactic):
#   f"[Autotuner] Candidate: custom_op={custom_op}, runner={runner}, tactic={tac}, "
#   f"shapes={profile.get_opt_shapes()}, time={...:.3f}ms"
def _candidate(custom_op, runner, tac, shapes, time):
    return (f"[Autotuner] Candidate: custom_op={custom_op}, "
            f"runner={runner}, tactic={tac}, "
            f"shapes={shapes}, "
            f"time={time:.3f}ms")


class FP8RowwiseGemmRunner:  # only its default repr is used, as the f-string prints a runner
    pass


FP8RowwiseGemmRunner.__module__ = "tensorrt_llm._torch.custom_ops.torch_custom_ops"


def test_candidate_lines_are_timings_failures_and_unmeasured_pairs(tmp_path):
    r = FP8RowwiseGemmRunner()
    op = "trtllm::fp8_rowwise_gemm::gemm"
    lines = [_candidate(op, r, t, ((16, 4096), (4096, 4096)), ms)
             for t, ms in ((0, 0.0123), (1, 0.0101), (2, float("inf")), (1, 0.0103))]
    lines.append(_candidate("trtllm::single::op", r, 0, ((1, 8),), 0.0))  # the shortcut: recorded, not timed
    path = tmp_path / "trtllm.log"
    path.write_text("\n".join(f"[TRT-LLM] [D] {ln}" for ln in lines) + "\n")
    out = read_inputs([path], CTX)
    assert not [p for p in out.problems if p.loses_data]
    by = {(x.op, x.tactic, x.status): x for x in out.records}
    t1 = by[(op, 1, Status.PROFILED)]
    assert t1.runner == "FP8RowwiseGemmRunner" and t1.count == 2 and t1.shapes == ((16, 4096), (4096, 4096))
    assert sorted(t1.detail_dict()["time_samples_ms"]) == [0.010, 0.010]  # printed with three decimals
    assert by[(op, 0, Status.PROFILED)].time_ms == 0.012
    assert (op, 2, Status.FAILED) in by and by[(op, 2, Status.FAILED)].time_ms is None
    shortcut = by[("trtllm::single::op", 0, Status.CHOSEN)]
    assert shortcut.time_ms is None and "without profiling" in shortcut.detail_dict()["not_measured"]


def test_trtllm_cache_dir_layout_is_discovered_ranks_apart(tmp_path):
    root = tmp_path / "trtllm-cache"
    for r in (0, 1):
        (root / "autotuner" / f"rank-{r}").mkdir(parents=True)
        shutil.copyfile(SAMPLES / "trtllm" / f"autotuner_cache.rank{r}.json", root / "autotuner" / f"rank-{r}" / "cache.json")
        ws = root / "flashinfer" / f"rank-{r}" / ".cache" / "flashinfer" / "0.7.4" / "100a"
        ws.mkdir(parents=True)
        shutil.copyfile(V074 / "flashinfer_jit.log", ws / "flashinfer_jit.log")
    found = discover({"TRTLLM_CACHE_DIR": str(root)}, home=tmp_path / "home")
    assert root / "autotuner" in found.paths
    workspaces = [p for p in found.paths if p.name == "100a"]
    assert len(workspaces) == 2 and any("TRTLLM_CACHE_DIR FlashInfer JIT workspace (rank-1)" in s for s in found.searched)
    out = read_inputs(list(found.paths), CTX)
    trt = {r.rank for r in out.records if r.source_kind == "trtllm"}
    fi = {r.rank for r in out.records if r.source_kind == "log"}
    assert trt == {"rank0", "rank1"} and fi == {"rank0", "rank1"}
