"""One vocabulary for error text: class, shared-memory need and limit, CUTLASS status, tile, arch.

The log reader (per-tactic failures and fatal events), the verdicts (why a failure happened) and
the tuner (what a retry child printed) all read the same library strings: FlashInfer runner
messages, CUTLASS `Status` names, CUDA runtime/driver error names, TensorRT-LLM assertions. They
all ask this module, so one text gets one class everywhere.

`diagnose(text)` returns an `ErrorTextFacts`:
- `cls`: the most specific `ErrorClass` a line supports (priority order below: an "Error
  Internal" whose text also says the kernel needs more shared memory than the limit is
  SHARED_MEMORY, not INITIALIZE);
- numbers stated by the text: shared memory need/limit (bytes), the CUTLASS status string;
- what the text names: the arch(s) in "on sm120/sm121", a TensorRT-LLM generated kernel file
  (`..._gemm_grouped_sm120_M128_BS_group2.generated.cu`: arch, CTA M, block scaling), a TMA
  descriptor dump's boxDim, the runner label (`[FP4 gemm Runner]`) and the op it serves.

Nothing here reads files or knows about records: plain text in, plain facts out.
"""

from __future__ import annotations

import enum
import re
from typing import Optional, Tuple

from msgspec import Struct, field


class ErrorClass(str, enum.Enum):
    """What kind of failure an error text describes. Values are the JSON `failure_kind` strings."""

    SHARED_MEMORY = "shared_memory"  # needs more shared memory than the per-block limit
    COMPILE_ERROR = "compile_error"  # nvcc / JIT build failed
    NO_KERNEL_IMAGE = "no_kernel_image"  # binary built for another arch
    NOT_INSTANTIATED = "not_instantiated"  # no kernel for this tile/config in the build
    INITIALIZE = "initialize"  # CUTLASS initialize() failed (Error Internal) for an unstated reason
    CAN_IMPLEMENT = "can_implement"  # CUTLASS can_implement() rejected the problem
    TMA_DESCRIPTOR = "tma_descriptor"  # cuTensorMapEncode rejected a TMA descriptor
    ILLEGAL_INSTRUCTION = "illegal_instruction"
    ILLEGAL_ACCESS = "illegal_access"  # illegal memory access / address, misaligned address
    OUT_OF_MEMORY = "out_of_memory"
    LAUNCH_FAILURE = "launch_failure"
    CUDA_ERROR = "cuda_error"  # another CUDA error

    def __str__(self) -> str:
        return self.value


# (class, pattern) in priority order; the first class any line matches wins.
_PATTERNS: Tuple[Tuple[ErrorClass, "re.Pattern[str]"], ...] = tuple(
    (c, re.compile(p, re.IGNORECASE))
    for c, p in (
        (ErrorClass.OUT_OF_MEMORY, r"out of memory|OutOfMemoryError|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|resource allocation failed|CUDA_ERROR_OUT_OF_MEMORY|failed to allocate|OOM detected"),
        (ErrorClass.ILLEGAL_INSTRUCTION, r"illegal instruction|cudaErrorIllegalInstruction|CUDA_ERROR_ILLEGAL_INSTRUCTION"),
        (ErrorClass.ILLEGAL_ACCESS, r"illegal memory access|illegal address|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|misaligned address|cudaErrorMisalignedAddress"),
        (ErrorClass.NO_KERNEL_IMAGE, r"no kernel image is available|cudaErrorNoKernelImageForDevice|invalid device function|cudaErrorInvalidDeviceFunction|not compiled with support for this Architecture|unsupported (?:gpu )?architecture"),
        # compiler diagnostics carry a source location ("x.cu(42): error:", "x.cpp:12:5: error:");
        # a bare "Error:" is a runtime message (CUTLASS "Error: Error Internal"), not a compile error
        # FlashInfer's runtime checks read "Error in function 'run' at x.cu:258: Error occurred when
        # running GEMM!": a source location too, but a run-time failure, not a compiler's
        (ErrorClass.LAUNCH_FAILURE, r"Error occurred when running"),
        (ErrorClass.COMPILE_ERROR, r"^(?!.*Error in function ').*?(?:Ninja build failed|\.(?:cu|cuh|h|hpp|cpp|cc|inl)(?:\(\d+\)|:\d+(?::\d+)?):\s*(?:fatal )?error|static assertion failed|nvcc fatal|compilation terminated|(?-i:^error: ))"),
        (ErrorClass.SHARED_MEMORY, r"bytes of shared memory|bytes shared memory|lacks the shared memory resources|shared memory .*exceeds|smem_over_limit|too much shared data"),
        (ErrorClass.TMA_DESCRIPTOR, r"Failed to initialize the TMA descriptor|cuTensorMapEncode\w* failed|CUDA_ERROR_INVALID_VALUE.*TMA"),
        (ErrorClass.INITIALIZE, r"Failed to initialize|Error Internal|kErrorInternal|initialize\(\) failed"),
        (ErrorClass.CAN_IMPLEMENT, r"will fail for params|can_implement|Error Misaligned Operand|Error Invalid Problem|kErrorMisalignedOperand|kErrorInvalidProblem|workspace size insufficient|CUBLAS_STATUS_NOT_SUPPORTED|CUBLAS_STATUS_INVALID_VALUE|unsupported value or parameter was passed|functionality requested is not supported|failed revalidation"),
        (ErrorClass.NOT_INSTANTIATED, r"Unsupported tile|Config is invalid|Configuration was disabled by FAST_BUILD|Unsupported SM90 configuration|not instantiated|out of range|no kernel for|unsupported tactic"),
        (ErrorClass.LAUNCH_FAILURE, r"launch failure|cudaErrorLaunch|too many resources requested for launch|CUBLAS_STATUS_EXECUTION_FAILED|GPU program failed to execute|launch failed|invalid configuration argument"),
        (ErrorClass.CUDA_ERROR, r"CUDA error|cudaError\w+|CUDA_ERROR_\w+|AcceleratorError"),
    )
)

# --- numbers and names stated by the text ------------------------------------------------------
# "(kernel needs 111616 bytes of shared memory, device per-block limit is 101376 bytes)" (the
# 0.7.2.post1 wheel's MXFP8 runner), "requested 102400 bytes ... limit 101376", TensorRT-LLM
# "MoE grouped GEMM requires 105472 bytes shared memory but device supports 101376".
_SMEM_FORMS = (
    re.compile(r"needs?\s+(?P<need>\d[\d,]*)\s*(?:bytes|B)\b[^()\n]*?limit(?:\s+is)?\s+(?P<limit>\d[\d,]*)\s*(?:bytes|B)?", re.I),
    re.compile(r"requires?\s+(?P<need>\d[\d,]*)\s*(?:bytes|B)\b[^\n]{0,40}?shared memory[^\n]{0,30}?(?:device|limit)\D{0,30}?(?P<limit>\d[\d,]{3,})", re.I),
    re.compile(r"(?:needs|requires|need)\s+(?P<need>\d+)\s+bytes of shared memory.*?(?:limit|allows|max\w*)\D{0,20}(?P<limit>\d+)", re.I),
    re.compile(r"(?:shared memory|smem)[^\d\n]{0,40}(?P<need>\d[\d,]{3,})\s*(?:bytes|B)\b[^\d\n]{0,60}?(?:limit|max(?:imum)?|available|supports)[^\d\n]{0,20}(?P<limit>\d[\d,]{3,})", re.I),
    re.compile(r"smem(?:_bytes)?\D{1,4}(?P<need>\d+).{0,80}?smem_limit\D{1,4}(?P<limit>\d+)", re.I),
)
_CUTLASS_STATUS = re.compile(r"Error: (Error [A-Z][A-Za-z ]+?)(?=\s*(?:\(|$|\.|,|\)))")
# TensorRT-LLM / FlashInfer fused-MoE generated translation unit (the template's instantiation).
_KERNEL_FILE = re.compile(
    r"(?P<name>[\w]*?gemm_grouped_sm(?P<arch>\d{2,3})_M(?P<m>\d+)(?P<bs>_BS)?(?P<mixed>_Mixed)?_group(?P<group>\d+)\.generated\.cu)(?::(?P<line>\d+))?"
)
# "on sm120/sm121", "on sm100", "for SM120", "_sm100_module", "fp4_gemm_cutlass_sm120"
_ARCH_IN_ERROR = re.compile(r"\bon (sm_?\d{2,3}[af]?(?:\s*/\s*sm_?\d{2,3}[af]?)*)", re.I)
_BOX_DIM = re.compile(r"boxDim\s*[:=]?\s*[\(\[]?\s*(\d+(?:\s*,\s*\d+)*)")
_RUNNER_LABEL = re.compile(r"\[(?P<label>[A-Za-z0-9 _-]*?(?:Runner|gemm|GEMM)[A-Za-z0-9 _-]*)\]")

# A FlashInfer runner label -> (op, runner-family words). Order: most specific first.
_LABEL_OPS: Tuple[Tuple[str, str], ...] = (
    (r"mxfp8", "mxfp8_gemm"),
    (r"fp4", "fp4_gemm"),
    (r"fp8", "fp8_gemm"),
    (r"bf16", "bf16_gemm"),
)


class KernelFile(Struct, frozen=True, gc=False):
    """What a generated grouped-GEMM kernel file name says (decoded from the name)."""

    name: str
    arch: str  # "sm120"
    cta_m: int
    block_scaled: bool
    mixed: bool
    group: int
    line: Optional[int] = None


class ErrorTextFacts(Struct, frozen=True, gc=False):
    """Everything one error text states. Absent facts are None."""

    cls: Optional[ErrorClass]
    line: str = ""  # the line that decided `cls` (one line, trimmed)
    smem_need: Optional[int] = None
    smem_limit: Optional[int] = None
    cutlass_status: Optional[str] = None
    archs: Tuple[str, ...] = ()  # "sm120", "sm121" from "on sm120/sm121"
    kernel_file: Optional[KernelFile] = None
    box_dim: Optional[Tuple[int, ...]] = None
    runner_label: Optional[str] = None  # "FP4 gemm Runner", "MXFP8 SM120 gemm Runner"
    op: Optional[str] = None  # the op that runner label serves (inferred from its words)
    notes: Tuple[str, ...] = field(default=())

    @property
    def smem_over(self) -> bool:
        return self.smem_need is not None and self.smem_limit is not None and self.smem_need > self.smem_limit


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def smem_need_limit(text: str) -> Optional[Tuple[int, int]]:
    """(need, limit) in bytes when an error text states both, else None."""
    for rx in _SMEM_FORMS:
        m = rx.search(text)
        if m:
            return _int(m.group("need")), _int(m.group("limit"))
    return None


def cutlass_status(text: str) -> Optional[str]:
    m = _CUTLASS_STATUS.search(text)
    return m.group(1).strip() if m else None


def kernel_file(text: str) -> Optional[KernelFile]:
    m = _KERNEL_FILE.search(text)
    if not m:
        return None
    return KernelFile(name=m.group("name"), arch="sm" + m.group("arch"), cta_m=int(m.group("m")),
                      block_scaled=bool(m.group("bs")), mixed=bool(m.group("mixed")), group=int(m.group("group")),
                      line=int(m.group("line")) if m.group("line") else None)


def archs_named(text: str) -> Tuple[str, ...]:
    """Archs an error text names ("on sm120/sm121" -> ("sm120", "sm121"))."""
    m = _ARCH_IN_ERROR.search(text)
    if not m:
        return ()
    return tuple("sm" + re.sub(r"\D", "", a) for a in m.group(1).split("/"))


def box_dim(text: str) -> Optional[Tuple[int, ...]]:
    m = _BOX_DIM.search(text)
    if not m:
        return None
    return tuple(int(g) for g in re.split(r"\s*,\s*", m.group(1)))


def op_for_runner_label(label: str) -> Optional[str]:
    low = label.lower()
    for word, op in _LABEL_OPS:
        if word in low:
            return op
    return None


def classify(text: str) -> Tuple[Optional[ErrorClass], str]:
    """(class, deciding line) for a possibly multi-line text; shared memory stated over the limit wins."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    nl = smem_need_limit(text)
    if nl is not None and nl[0] > nl[1]:
        for ln in lines:
            if smem_need_limit(ln) is not None:
                return ErrorClass.SHARED_MEMORY, ln
        return ErrorClass.SHARED_MEMORY, lines[0] if lines else ""
    for cls, rx in _PATTERNS:
        for ln in lines:
            if rx.search(ln):
                return cls, ln
    return None, ""


def diagnose(text: str) -> ErrorTextFacts:
    """All facts one error text states (see the module docstring)."""
    cls, line = classify(text)
    nl = smem_need_limit(text)
    label_m = _RUNNER_LABEL.search(text)
    label = label_m.group("label").strip() if label_m else None
    return ErrorTextFacts(
        cls=cls,
        line=" ".join(line.split())[:300],
        smem_need=nl[0] if nl else None,
        smem_limit=nl[1] if nl else None,
        cutlass_status=cutlass_status(text),
        archs=archs_named(text),
        kernel_file=kernel_file(text),
        box_dim=box_dim(text),
        runner_label=label,
        op=op_for_runner_label(label) if label else None,
    )


def short_error(text: str, width: int = 60) -> str:
    """The informative core of an error text: 'Error Internal' out of the runner's long line."""
    t = " ".join(text.split())
    if not t:
        return "no error text"
    m = re.search(r"Error:\s*([^(.;]+)", t)
    core = m.group(1).strip() if m else ""
    if len(core.split()) < 2 or core.endswith(":"):
        # "RuntimeError: Check failed: (...) is false: run failed: an unsupported value ...": the
        # last clause of three words or more says the most
        clauses = [c.strip() for c in t.split(": ") if len(c.split()) >= 3]
        core = clauses[-1] if clauses else t
    from tiletune.core.words import clip_words

    return clip_words(core, width)


__all__ = ["ErrorTextFacts", "ErrorClass", "KernelFile", "archs_named", "box_dim", "classify", "cutlass_status",
           "diagnose", "kernel_file", "op_for_runner_label", "short_error", "smem_need_limit"]
