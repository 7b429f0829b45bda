"""Classification of the error text FlashInfer, CUTLASS, cuBLAS and the CUDA runtime really print.

The strings are the libraries' own (research/flashinfer-autotuner.md section 4 quotes them from
FlashInfer 0.7.2.post1 and TRT-LLM sources; cuBLAS's from cublasGetStatusString).
"""

import pytest

from tiletune.tuner.classify import ERROR_BOUNDS, classify_exit, classify_text, error_bound, judge_numerics
from tiletune.tuner.engine import Diagnosis as D

CASES = [
    ("[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal", D.INITIALIZE_FAILED),
    ("[MXFP8 SM120 gemm Runner] Failed to initialize cutlass MXFP8 gemm on sm120. Error: Error Internal "
     "(kernel needs 111616 bytes of shared memory, device per-block limit is 101376 bytes)", D.SMEM_OVER_LIMIT),
    ("GPU lacks the shared memory resources to run GroupedGEMM kernel", D.SMEM_OVER_LIMIT),
    ("[FP4 gemm Runner] FP4 Gemm cutlass kernel will fail for params. Error: Error Misaligned Operand", D.CAN_IMPLEMENT),
    ("RuntimeError: bmm_fp8_run_with_algo failed: the functionality requested is not supported", D.CAN_IMPLEMENT),
    ("Unsupported tile (128, 256) and cluster (2, 1) shape combination for arch 90.", D.NOT_INSTANTIATED),
    ("tactic 12 out of range: cuBLASLt returned 8 algorithm(s) for this shape", D.NOT_INSTANTIATED),
    ("torch.AcceleratorError: CUDA error: an illegal memory access was encountered", D.ILLEGAL_ADDRESS),
    ("CUDA error: an illegal instruction was encountered", D.ILLEGAL_INSTRUCTION),
    ("CUDA error: no kernel image is available for execution on the device", D.NO_KERNEL_IMAGE),
    ("FP4 gemm kernel is not compiled with support for this Architecture.", D.NO_KERNEL_IMAGE),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 GiB", D.OUT_OF_MEMORY),
    ("/k/gemm.cu(41): error: static assertion failed with \"Stages set to value 2 or more\"", D.COMPILE_ERROR),
    ("RuntimeError: Ninja build failed. Ninja output:\nFAILED: x.cuda.o", D.COMPILE_ERROR),
    ("CUDA error: unspecified launch failure", D.LAUNCH_FAILURE),
    ("CUDA error: too many resources requested for launch", D.LAUNCH_FAILURE),
]


@pytest.mark.parametrize("text,diagnosis", CASES)
def test_library_error_text(text, diagnosis):
    v = classify_text("some preamble\n" + text + "\ntrailing backtrace line")
    assert v is not None and v.diagnosis is diagnosis
    assert "\n" not in v.message


def test_smem_need_and_limit_are_extracted():
    v = classify_text("Error Internal (kernel needs 232449 bytes of shared memory, device per-block limit is 232448 bytes)")
    assert (v.smem_bytes, v.smem_limit) == (232449, 232448)
    assert "232,449" in v.message


def test_runtime_error_word_is_not_a_compile_error():
    v = classify_text("RuntimeError: Error: Error Internal")
    assert v.diagnosis is D.INITIALIZE_FAILED


def test_exit_without_known_text():
    assert classify_exit(text="", exit_code=None, signal=None, timed_out=True, timeout_s=5).diagnosis is D.TIMEOUT
    v = classify_exit(text="boom\n", exit_code=None, signal=11, timed_out=False)
    assert v.diagnosis is D.CRASHED and "SIGSEGV" in v.message and "boom" in v.message
    v = classify_exit(text="", exit_code=7, signal=None, timed_out=False)
    assert v.diagnosis is D.CRASHED and "status 7" in v.message


def test_numeric_bounds():
    # bound = 4 x unit roundoff of the output dtype: bf16 2^-8 -> 0.015625, fp16 2^-11 -> 0.001953125
    assert error_bound("bfloat16") == pytest.approx(0.015625)
    assert error_bound("torch.float16") == pytest.approx(0.001953125)
    assert error_bound("float32") == 1e-5 and error_bound("int4") is None
    assert judge_numerics(rel_error=0.01, nonfinite=0, dtype_out="bfloat16") is None
    assert judge_numerics(rel_error=0.01, nonfinite=0, dtype_out="float16").diagnosis is D.WRONG_RESULTS
    assert judge_numerics(rel_error=None, nonfinite=3, dtype_out="bfloat16").diagnosis is D.WRONG_RESULTS
    assert judge_numerics(rel_error=float("nan"), nonfinite=0, dtype_out="bfloat16").diagnosis is D.WRONG_RESULTS
    assert set(ERROR_BOUNDS) >= {"bfloat16", "float16", "float32"}


def test_real_h200_ledger_messages_classify_as_the_failures_they_are():
    """The ledger from the H200 run (cache_samples/ledgers) holds real FlashInfer/cuBLAS/torch text.

    Its four zero-workspace attempts were recorded as `crashed` by the classifier of that run,
    which did not know cuBLAS's CUBLAS_STATUS_INVALID_VALUE text; today's classifier must call
    them can_implement (cuBLASLt rejected the algorithm for this problem), and every other
    recorded diagnosis must be reproduced from the stored text.
    """
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "cache_samples" / "ledgers" / "h200-fp8_gemm-cublas-0.7.2.post1.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    seen = {}
    for a in rows:
        if a["passed"] or a["diagnosis"] in ("timeout", "wrong_results"):
            continue  # decided by the time limit / the numbers, not by text
        v = classify_text(a["message"] + "\n" + a["stderr_tail"])
        expected = "can_implement" if "|ws=0" in a["key"] else a["diagnosis"]
        assert v is not None and v.diagnosis.value == expected, (a["key"], a["message"])
        seen[expected] = seen.get(expected, 0) + 1
    assert seen == {"not_instantiated": 2, "out_of_memory": 1, "can_implement": 4}
    assert {a["diagnosis"] for a in rows} >= {"passed", "timeout", "wrong_results"}
