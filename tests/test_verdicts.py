"""Failure reasons and one-line verdicts: the evidence wins over the shared-memory model.

Inputs are hand-built records and model results with recorded shared-memory values (numbers from research/hardware-perf-model.md
2.3: NVFP4 SM120 under CUTLASS 4.5, 128x128x256 -> 2 stages, 83,968 B; 256x128x128 -> 3 stages,
93,184 B; SM12x per-block opt-in limit 101,376 B).
"""

from __future__ import annotations

from pathlib import Path

from synthetic import model_result  # a real ModelResult with recorded values (tests/synthetic.py)

from tiletune.analysis.failures import explain_failure
from tiletune.analysis.results import AnalyzedEntry, Failure, FailureReason, NotTried
from tiletune.analysis.verdicts import verdicts
from tiletune.core.error_text import short_error
from tiletune.core.error_text import smem_need_limit as smem_from_text
from tiletune.core.records import CatalogRef, Decoded, Entry, Environment, Problem, Status, TileConfig, TuningRecord
from tiletune.model.perf import ModelResult

WHEEL_MXFP8 = (
    "[MXFP8 SM120 gemm Runner] Failed to initialize cutlass MXFP8 gemm on sm120. Error: Error Internal "
    "(kernel needs 111616 bytes of shared memory, device per-block limit is 101376 bytes)"
)
FP4_INTERNAL = "[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal"


def _analysis(smem: int, verdict: str, stages: int = 2) -> ModelResult:
    return model_result(smem=dict(shared_storage_bytes=smem, limit_bytes=101_376, stages=stages, verdict=verdict))


def test_smem_numbers_come_from_the_error_text():
    assert smem_from_text(WHEEL_MXFP8) == (111_616, 101_376)
    assert smem_from_text(FP4_INTERNAL) is None
    assert smem_from_text("kernel needs 102,400 B of smem; limit is 101,376 B") == (102_400, 101_376)


def test_short_error_keeps_the_informative_core():
    assert short_error(FP4_INTERNAL) == "Error Internal"
    assert short_error("") == "no error text"
    assert short_error("x" * 100, width=10) == "x" * 9 + "…"  # (one "word" past core.words.LONGEST_WORD)
    assert short_error("an unsupported value or parameter was passed", width=24) == "an unsupported value …"


def test_error_text_bytes_win_over_the_model():
    # the model underestimates (says fits at 93,184 B); the error states 111,616 B: evidence wins
    r = explain_failure(errors=[WHEEL_MXFP8], analysis=_analysis(93_184, "fits", 3))
    assert (r.kind, r.basis, r.need_bytes, r.limit_bytes) == ("smem", "error text", 111_616, 101_376)
    assert "model estimated 93,184 B and says it fits" in r.summary
    assert r.model_disagrees  # shown, but the reason stays the error text's
    r = explain_failure(errors=[WHEEL_MXFP8], analysis=_analysis(111_616, "overflows_at_initialize"))
    assert r.kind == "smem" and not r.model_disagrees


def test_log_reader_detail_numbers_are_used():
    r = explain_failure(errors=[FP4_INTERNAL], analysis=None, detail={"smem_needed_bytes": 104_000, "smem_limit_bytes": 101_376})
    assert (r.kind, r.need_bytes) == ("smem", 104_000)


def test_model_fits_but_it_failed_is_not_blamed_on_shared_memory():
    r = explain_failure(errors=[FP4_INTERNAL], analysis=_analysis(93_184, "fits", 3))
    assert r.kind == "runtime" and r.model_disagrees
    assert "not explained by shared memory" in r.summary
    assert "93,184 B fits in 101,376 B" in r.summary


def test_model_overflow_explains_a_bare_error_internal():
    r = explain_failure(errors=[FP4_INTERNAL], analysis=_analysis(110_000, "overflows_at_initialize"))
    assert (r.kind, r.basis, r.need_bytes, r.limit_bytes) == ("smem", "model", 110_000, 101_376)
    assert "overflows at initialize" in r.summary and "Error Internal" in r.summary
    r = explain_failure(errors=[], analysis=_analysis(130_000, "does_not_build"))
    assert "fewer than 2 stages" in r.summary


def test_never_instantiated_from_catalog_error_text_and_jit():
    r = explain_failure(errors=["boom"], analysis=_analysis(83_968, "fits"), known_failure="dispatcher has no case for this tile")
    assert (r.kind, r.basis) == ("not_instantiated", "catalog")
    r = explain_failure(errors=["[TensorRT-LLM][ERROR] Unsupported tile (128x256) and cluster (1x1) shape combination for arch 120."], analysis=None)
    assert (r.kind, r.basis) == ("not_instantiated", "error text")
    r = explain_failure(errors=["Error Internal"], analysis=None, jit_not_built="fused_moe_120")
    assert (r.kind, r.basis) == ("not_instantiated", "jit workspace") and "fused_moe_120" in r.summary


def test_no_text_no_model_is_unknown_not_a_guess():
    r = explain_failure(errors=[], analysis=None)
    assert r.kind == "unknown"
    r = explain_failure(errors=["Error Misaligned Operand"], analysis=None, detail={"failure_kind": "can_implement"})
    assert r.kind == "runtime" and r.summary.startswith("can_implement rejected")


# --- verdict lines ---------------------------------------------------------------------------

ENV = Environment(flashinfer_version="0.6.14", arch="sm120", gpu="NVIDIA RTX PRO 6000 Blackwell Server Edition")
OP, RUNNER = "trtllm::fused_moe::gemm1", "CutlassFusedMoERunner"
REF = CatalogRef("0.6.14", "sm120", OP, RUNNER, "x.h", size=3)


def _chosen(tile, m) -> AnalyzedEntry:
    r = TuningRecord(source="c.json", source_kind="flashinfer-v1", op=OP, runner=RUNNER, tactic=0, status=Status.CHOSEN, env=ENV)
    return AnalyzedEntry(Entry(r, Problem(m=m, n=2048, k=7168), Decoded(TileConfig(tile), REF, 0)))


def _failure(tile, tactic, count, reason: FailureReason) -> Failure:
    return Failure(op=OP, runner=RUNNER, tactic=tactic, arch="sm120", flashinfer_version="0.6.14",
                   config=TileConfig(tile), decode_note=None, count=count,
                   errors=((FP4_INTERNAL, count),), sources=("w.log",), reason=reason)


def test_the_issue_example_verdict():
    # "sm120 trtllm::fused_moe::gemm1: winners 128x128 only; 256x128 and 128x256 failed 16 times (Error Internal)"
    smem = FailureReason("smem", "s", "model", need_bytes=111_616, limit_bytes=101_376)
    entries = [_chosen((128, 128, 128), m) for m in (1, 2, 4, 8)]
    fails = [_failure((256, 128, 128), 5, 10, smem), _failure((128, 256, 128), 6, 6, smem)]
    (v,) = list(verdicts(entries, fails, []))
    assert v.text == (
        "sm120 trtllm::fused_moe::gemm1: winners 128x128x128 only; 256x128x128 and 128x256x128 failed 16 times "
        "(Error Internal: shared memory 111,616 B > 101,376 B by the model)"
    )
    assert (v.failed, v.winners, v.disagreements) == (16, (("128x128x128", 4),), 0)


def test_verdict_says_when_shared_memory_does_not_explain_it():
    rt = FailureReason("runtime", "s", "error text", model_disagrees=True)
    (v,) = list(verdicts([_chosen((128, 128, 128), 1)], [_failure((256, 128, 128), 5, 3, rt)], []))
    assert "256x128x128 failed 3 times (Error Internal; not explained by shared memory)" in v.text
    assert v.disagreements == 1


def test_verdict_counts_winners_and_never_tried():
    entries = [_chosen((128, 128, 128), 1), _chosen((128, 128, 128), 2), _chosen((128, 64, 128), 4)]
    nt = NotTried(arch="sm120", flashinfer_version="0.6.14", op=OP, runner=RUNNER, catalog=REF,
                  tactics=((2, TileConfig((64, 64, 128))),), tried=2, evidence="winners only")
    (v,) = list(verdicts(entries, [], [nt]))
    assert v.text == ("sm120 trtllm::fused_moe::gemm1: winners 128x128x128 (2) and 128x64x128 (1); "
                      "1 catalog tile(s) never tried (no log of the attempts)")


def test_short_error_takes_the_telling_clause_and_ledger_classes():
    cublas = ("crashed: child exited with status 1: RuntimeError: Check failed: (status == CUBLAS_STATUS_SUCCESS) is "
              "false: bmm_fp8_run_with_algo failed: an unsupported value or parameter was passed to the function")
    assert short_error(cublas, 90) == "an unsupported value or parameter was passed to the function"
    r = explain_failure(errors=["not_instantiated: tactic 99 out of range: cuBLASLt returned 8 algorithm(s)"], analysis=None)
    assert r.kind == "not_instantiated"


def test_ambiguous_moe_tactic_shows_what_its_candidates_share():
    # pre-0.6.18rc2 SM120 MoE key: no dtype, so nvfp4 and fp8 x mxfp4 lists both match; their
    # tiles agree on M x N and swap-AB and differ in K (elements: 128-byte K is 256 fp4 / 128 fp8)
    from tiletune.core.records import TileConfig, Undecoded

    u = Undecoded(reason="ambiguous", candidates=(TileConfig((128, 128, 256), swap_ab=True),
                                                   TileConfig((128, 128, 128), swap_ab=True)))
    assert u.candidates_label() == "128x128x{128|256} swapAB"
    mixed = Undecoded(reason="ambiguous", candidates=(TileConfig((128, 64, 128)), TileConfig((128, 64, 128), swap_ab=True)))
    assert mixed.candidates_label() == "128x64x128 swapAB?"
    assert Undecoded(reason="no catalog").candidates_label() is None


def test_verdict_lists_ambiguous_candidates(sample):
    from tiletune.analysis.pipeline import inspect
    from tiletune.readers.interface import ReadContext

    result = inspect([sample("v1/sm120-rtxpro6000-0.6.14-fp4-moe.json")], ReadContext())
    (line,) = [v.text for v in result.verdicts if "fused_moe::gemm1" in v.text]
    assert "undecoded (ambiguous), candidates 128x" in line and "x{64|128}" in line


def test_a_fallback_only_op_says_so_in_its_verdict(run):
    """vllm#47720 (real): a shortened 'No tuned config covers bf16_gemm ...' line is the op's only
    record; its verdict says the fallback ran, not that nothing was recorded."""
    import json

    root = Path(__file__).resolve().parent.parent / "cache_samples"
    out = run("inspect", root / "wild/vllm-47720-lm-head-bf16-gemm-no-tuned-config/pr.md", "--format", "json")
    [v] = [v for v in json.loads(out.stdout)["verdicts"] if v["op"] == "bf16_gemm"]
    assert "fallback tactic (-1, untuned; a fallback, not a failure)" in v["text"] and "no chosen" not in v["text"]
    out = run("inspect", root / "logs/sm120_0.6.17_warmup_debug.log", "--format", "json")
    [v] = [v for v in json.loads(out.stdout)["verdicts"] if v["op"] == "fp4_gemm"]
    assert "no tuned config covered a call at runtime M 5000" in v["text"]
