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
import signal as _signal
from typing import Optional

from msgspec import Struct

from tiletune.core.error_text import ErrorClass, diagnose
from tiletune.core.vocabulary import torch_dtype_name
from tiletune.tuner.engine import Diagnosis

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


class Verdict(Struct, frozen=True, gc=False):
    """A diagnosis and the one-line message that says why."""

    diagnosis: Diagnosis
    message: str
    smem_bytes: Optional[int] = None
    smem_limit: Optional[int] = None


# The error-text vocabulary is shared with the log reader and the verdicts (tiletune.core.error_text);
# this maps its classes onto the retry diagnoses.
_FROM_CLASS = {
    ErrorClass.OUT_OF_MEMORY: Diagnosis.OUT_OF_MEMORY,
    ErrorClass.ILLEGAL_INSTRUCTION: Diagnosis.ILLEGAL_INSTRUCTION,
    ErrorClass.ILLEGAL_ACCESS: Diagnosis.ILLEGAL_ADDRESS,
    ErrorClass.NO_KERNEL_IMAGE: Diagnosis.NO_KERNEL_IMAGE,
    ErrorClass.COMPILE_ERROR: Diagnosis.COMPILE_ERROR,
    ErrorClass.SHARED_MEMORY: Diagnosis.SMEM_OVER_LIMIT,
    ErrorClass.TMA_DESCRIPTOR: Diagnosis.INITIALIZE_FAILED,
    ErrorClass.INITIALIZE: Diagnosis.INITIALIZE_FAILED,
    ErrorClass.CAN_IMPLEMENT: Diagnosis.CAN_IMPLEMENT,
    ErrorClass.NOT_INSTANTIATED: Diagnosis.NOT_INSTANTIATED,
    ErrorClass.LAUNCH_FAILURE: Diagnosis.LAUNCH_FAILURE,
}

_MAX_MESSAGE = 300


def classify_text(text: str) -> Optional[Verdict]:
    """The most specific diagnosis any line of `text` supports, with that line; None if none does."""
    if not text.strip():
        return None
    d = diagnose(text)
    if d.smem_over:
        assert d.smem_need is not None and d.smem_limit is not None
        return Verdict(
            Diagnosis.SMEM_OVER_LIMIT,
            f"kernel needs {d.smem_need:,} B of shared memory, device limit is {d.smem_limit:,} B per block",
            smem_bytes=d.smem_need,
            smem_limit=d.smem_limit,
        )
    diagnosis = _FROM_CLASS.get(d.cls) if d.cls is not None else None
    if diagnosis is None:  # a bare "CUDA error" the classes above do not narrow: nothing specific
        return None
    return Verdict(diagnosis, _one_line(d.line))


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
