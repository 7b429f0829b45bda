"""Turning what a finished child said (text, exit status, signal, numbers) into a Diagnosis.

Both engines use this: the FlashInfer engine's python child and the CUTLASS engine's binaries
print the library's own error strings (FlashInfer/TVM-FFI exceptions, CUTLASS `Status` names,
CUDA runtime and cuBLAS error names), and the patterns below match those strings. Order matters:
the most specific class wins (an "Error Internal" that also says the kernel needs more shared
memory than the device allows is SMEM_OVER_LIMIT, not INITIALIZE_FAILED).

Wrong results are decided from numbers, not text: `judge_numerics` compares the relative error
against a float32 reference computed from the dequantized inputs with the bound for the output
dtype in `ERROR_BOUNDS`.
"""

from __future__ import annotations

import math
import re
import signal as _signal
from dataclasses import dataclass
from typing import Optional, Tuple

from tiletune.tuner.engine import Diagnosis
from tiletune.vocabulary import torch_dtype_name

# Relative error bounds, ||out - ref||_F / ||ref||_F, where ref is the float32 product of the
# dequantized inputs. The output dtype's rounding dominates (inputs are exact after dequantizing),
# so each bound is 4x the output dtype's unit roundoff: rounding alone gives about 0.3-0.6 of
# one ulp in this norm, and 4x leaves room for a different accumulation order without letting a
# broken kernel (errors of order 1) through.
# float32 outputs are the exception: 4 ulp (2.4e-7) is tighter than a reordered K-term sum can
# promise, so they are held to 1e-5.
ERROR_BOUNDS = {
    "float32": 1e-5,
    "bfloat16": 4 * 2.0**-8,  # 1.56e-2
    "float16": 4 * 2.0**-11,  # 1.95e-3
    "float8_e4m3fn": 4 * 2.0**-4,  # 0.25 (fp8 outputs are rare; listed for completeness)
}


def error_bound(dtype_out: Optional[str]) -> Optional[float]:
    """The relative-error bound an output dtype is held to, or None if tiletune has none for it."""
    name = torch_dtype_name(dtype_out)
    return ERROR_BOUNDS.get(name) if name else None


@dataclass(frozen=True)
class Verdict:
    """A diagnosis and the one-line message that says why."""

    diagnosis: Diagnosis
    message: str
    smem_bytes: Optional[int] = None
    smem_limit: Optional[int] = None


_SMEM_NEED = re.compile(
    r"(?:needs|requires|need)\s+(\d+)\s+bytes of shared memory.*?(?:limit|allows|max\w*)\D{0,20}(\d+)",
    re.IGNORECASE,
)
_SMEM_JSON_LIKE = re.compile(r"smem(?:_bytes)?\D{1,4}(\d+).{0,80}?smem_limit\D{1,4}(\d+)", re.IGNORECASE)

# (diagnosis, pattern) in priority order; the first matching line becomes the message.
_PATTERNS: Tuple[Tuple[Diagnosis, re.Pattern[str]], ...] = tuple(
    (d, re.compile(p, re.IGNORECASE))
    for d, p in (
        (Diagnosis.OUT_OF_MEMORY, r"out of memory|OutOfMemoryError|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|resource allocation failed|CUDA_ERROR_OUT_OF_MEMORY|failed to allocate"),
        (Diagnosis.ILLEGAL_INSTRUCTION, r"illegal instruction|cudaErrorIllegalInstruction|CUDA_ERROR_ILLEGAL_INSTRUCTION"),
        (Diagnosis.ILLEGAL_ADDRESS, r"illegal memory access|illegal address|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|misaligned address|cudaErrorMisalignedAddress"),
        (Diagnosis.NO_KERNEL_IMAGE, r"no kernel image is available|cudaErrorNoKernelImageForDevice|invalid device function|cudaErrorInvalidDeviceFunction|not compiled with support for this Architecture|unsupported (?:gpu )?architecture"),
        # compiler diagnostics carry a source location ("x.cu(42): error:", "x.cpp:12:5: error:");
        # a bare "Error:" is a runtime message (CUTLASS "Error: Error Internal"), not a compile error
        (Diagnosis.COMPILE_ERROR, r"Ninja build failed|\.(?:cu|cuh|h|hpp|cpp|cc|inl)(?:\(\d+\)|:\d+(?::\d+)?):\s*(?:fatal )?error|static assertion failed|nvcc fatal|compilation terminated|(?-i:^error: )"),
        (Diagnosis.SMEM_OVER_LIMIT, r"bytes of shared memory|lacks the shared memory resources|shared memory .*exceeds|smem_over_limit|too much shared data"),
        (Diagnosis.INITIALIZE_FAILED, r"Failed to initialize|Error Internal|kErrorInternal|initialize\(\) failed"),
        (Diagnosis.CAN_IMPLEMENT, r"will fail for params|can_implement|Error Misaligned Operand|Error Invalid Problem|kErrorMisalignedOperand|kErrorInvalidProblem|workspace size insufficient|CUBLAS_STATUS_NOT_SUPPORTED|not supported|CUBLAS_STATUS_INVALID_VALUE|unsupported value or parameter was passed|functionality requested is not supported"),
        (Diagnosis.NOT_INSTANTIATED, r"Unsupported tile|Config is invalid|Configuration was disabled by FAST_BUILD|Unsupported SM90 configuration|not instantiated|out of range|no kernel for"),
        (Diagnosis.LAUNCH_FAILURE, r"launch failure|cudaErrorLaunch|too many resources requested for launch|CUBLAS_STATUS_EXECUTION_FAILED|GPU program failed to execute|launch failed|invalid configuration argument"),
    )
)

_MAX_MESSAGE = 300


def classify_text(text: str) -> Optional[Verdict]:
    """The most specific diagnosis any line of `text` supports, with that line; None if none does."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    m = _SMEM_NEED.search(text) or _SMEM_JSON_LIKE.search(text)
    if m:
        need, limit = int(m.group(1)), int(m.group(2))
        if need > limit:
            return Verdict(
                Diagnosis.SMEM_OVER_LIMIT,
                f"kernel needs {need:,} B of shared memory, device limit is {limit:,} B per block",
                smem_bytes=need,
                smem_limit=limit,
            )
    for diagnosis, pattern in _PATTERNS:
        for line in lines:
            if pattern.search(line):
                return Verdict(diagnosis, _one_line(line))
    return None


def classify_exit(
    *,
    text: str,
    exit_code: Optional[int],
    signal: Optional[int],
    timed_out: bool,
    timeout_s: Optional[float] = None,
) -> Verdict:
    """Diagnose a child that did not report success, from everything it left behind."""
    if timed_out:
        limit = f"{timeout_s:g} s " if timeout_s is not None else ""
        return Verdict(Diagnosis.TIMEOUT, f"killed after the {limit}time limit (hang or too slow)")
    found = classify_text(text)
    if found is not None:
        return found
    last = _last_line(text)
    if signal is not None:
        name = _signal_name(signal)
        return Verdict(Diagnosis.CRASHED, f"child killed by {name}" + (f": {last}" if last else ""))
    if exit_code is not None and exit_code != 0:
        return Verdict(Diagnosis.CRASHED, f"child exited with status {exit_code}" + (f": {last}" if last else ""))
    return Verdict(Diagnosis.CRASHED, "child ended without a result" + (f": {last}" if last else ""))


def judge_numerics(
    *, rel_error: Optional[float], nonfinite: int, dtype_out: Optional[str]
) -> Optional[Verdict]:
    """WRONG_RESULTS if the output has NaN/Inf or its relative error is above the dtype's bound."""
    if nonfinite:
        return Verdict(Diagnosis.WRONG_RESULTS, f"{nonfinite} NaN/Inf value(s) in the output")
    bound = error_bound(dtype_out)
    if rel_error is None or bound is None:
        return None
    if math.isnan(rel_error) or rel_error > bound:
        return Verdict(
            Diagnosis.WRONG_RESULTS,
            f"relative error {rel_error:.3g} above the {dtype_out} bound {bound:.3g} (vs float32 reference)",
        )
    return None


def _one_line(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 1] + "…"


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return _one_line(line)
    return ""


def _signal_name(num: int) -> str:
    try:
        return _signal.Signals(num).name
    except ValueError:
        return f"signal {num}"
