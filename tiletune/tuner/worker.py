"""The FlashInfer engine's child process: `python -m tiletune.tuner.worker SPEC.json`.

The only module in tiletune that imports torch and flashinfer (inside functions: the table of
runners below is read by the parent and by CPU tests without torch). It runs in a fresh process
per attempt (see isolation.py), does one thing, writes one JSON result file atomically, and exits:

- mode "attempt": build realistic inputs for the recorded problem, force the tactic on
  FlashInfer's own runner (`runner.forward(inputs, tactic=t)`), check the output against a
  float32 reference computed from the dequantized inputs, time it with CUDA events;
- mode "jit-status": for each (op, runner) say which JIT modules it needs on THIS GPU and
  whether each .so exists (FlashInfer's own `JitSpec.is_compiled`), or why the runner cannot run
  on this GPU at all, so the parent never triggers a build silently nor builds for nothing;
- mode "jit-build": build the named modules (only when the user allowed it) and time them.

An exception is written into the result as text (`error`), then the process exits 1; a sticky
CUDA error or a crash kills the process and the parent diagnoses from stderr.

Runners (FlashInfer 0.7.2.post1, read from the wheel's gemm_base.py):
- fp8_gemm / CublasFp8GemmRunner: bmm_fp8's cuBLASLt path; tactic = index into the algorithms
  cuBLASLt's heuristic returns for that exact shape. Ran on the H200.
- bf16_gemm / CublasltBf16GemmRunner: mm_bf16's cuBLASLt path (module mm_bf16_cublaslt, SM80+),
  same tactic meaning; the runner itself raises for a tactic >= the algorithm count. Ran on the
  H200 (bench/retry_h200_x2), as did the tinygemm2 runner below.
- bf16_gemm / TinyGemmBf16GemmRunner: mm_bf16's small-M kernel (module tinygemm2, SM90+); one
  tactic (0), and its forward ignores the tactic, so tiletune refuses any other instead of
  timing tactic 0 under another number.
- fp4_gemm / CutlassFp4GemmRunner and mxfp8_gemm / CutlassMxfp8GemmRunner: FlashInfer's CUTLASS
  block-scaled GEMMs, built only for SM100/SM103/SM110 and SM120/SM121. Inputs come from
  FlashInfer's own quantizers (nvfp4_quantize with the 128x4 scale layout and a global scale
  448*6/amax; mxfp8_quantize with swizzled ue8m0 scales), the reference from the dequantized
  bytes (blockscaled.py). NEVER RUN ON A GPU: no Blackwell GPU was available; on other GPUs the
  attempt stops with a one-line engine_error before any module is looked up or built.
- trtllm::fused_moe::gemm1 / gemm2 / MoERunner: FlashInfer's CUTLASS fused MoE (module
  fused_moe_90 on SM90, fused_moe_100/103/120 on Blackwell, fused_moe_89 on SM89); bf16/fp16 and
  FP8 per-tensor layers only (nvfp4 and the other variants are refused with the reason). The
  tactic is forced with cutlass_fused_moe's profile_ids for the checked output and with
  MoERunner.forward(tactic, gemm_idx) for the time (attempt_fused_moe). NEVER RUN ON A GPU: its
  JIT module takes 15-60 minutes to build on SM90, which no session could afford.
- cuDNN runners (CudnnBf16GemmRunner ...) are not supported: they need the cudnn Python frontend,
  which is not installed where tiletune was tested.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from msgspec import Struct

from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER, torch_dtype_name

BLACKWELL_MAJORS = (10, 11, 12)


class RunnerInfo(Struct, frozen=True, gc=False):
    """One FlashInfer runner the engine can drive: where it runs and what it needs."""

    op: str
    runner: str
    gpus: str  # human-readable: which GPUs FlashInfer builds it for
    majors: Optional[Tuple[int, ...]]  # compute-capability majors it runs on; None = SM80 and later
    min_cc: Tuple[int, int] = (8, 0)
    ran_on_gpu: bool = False  # has tiletune ever run this path on a real GPU (docs and report honesty)


RUNNERS: Dict[Tuple[str, str], RunnerInfo] = {
    (r.op, r.runner): r
    for r in (
        RunnerInfo("fp8_gemm", "CublasFp8GemmRunner", "SM89 and later (cuBLASLt)", None, (8, 9), True),
        RunnerInfo("bf16_gemm", "CublasltBf16GemmRunner", "SM80 and later (cuBLASLt)", None, (8, 0), True),
        RunnerInfo("bf16_gemm", "TinyGemmBf16GemmRunner", "SM90 and later (tinygemm2)", None, (9, 0), True),
        RunnerInfo("fp4_gemm", "CutlassFp4GemmRunner", "SM100/SM103/SM110/SM120/SM121 (CUTLASS, Blackwell only)", BLACKWELL_MAJORS, (10, 0)),
        RunnerInfo("mxfp8_gemm", "CutlassMxfp8GemmRunner", "SM100/SM103/SM110/SM120/SM121 (CUTLASS, Blackwell only)", BLACKWELL_MAJORS, (10, 0)),
        *(RunnerInfo(op, MOE_RUNNER, "SM89, SM90, SM100/SM103/SM110, SM120/SM121 (CUTLASS fused MoE)", (8, 9, 10, 11, 12), (8, 9))
          for op in FUSED_MOE_OPS),
    )
}

# get_cutlass_fused_moe_module's backend -> FlashInfer JIT module (flashinfer/jit/fused_moe.py, 0.7.2.post1;
# an H20, 78 SMs, gets the variant 'fused_moe_90_h20_prebuilt_d', which the generator names itself)
_MOE_MODULES = {"89": "fused_moe_89", "90": "fused_moe_90", "100": "fused_moe_100", "107": "fused_moe_100",
                "110": "fused_moe_100", "103": "fused_moe_103", "120": "fused_moe_120", "121": "fused_moe_120"}


def arch_refusal(op: str, runner: str, major: int, minor: int, gpu: str = "") -> Optional[str]:
    """One line saying why this runner cannot run on a GPU of compute capability major.minor, or None."""
    info = RUNNERS.get((op, runner))
    if info is None:
        return f"the FlashInfer engine cannot run {op} / {runner} (it drives: {', '.join(f'{o}/{r}' for o, r in RUNNERS)})"
    on = f"{gpu + ' ' if gpu else ''}(SM{major}{minor})"
    if (major, minor) < info.min_cc or (info.majors is not None and major not in info.majors):
        return (f"{op} / {runner} runs only on {info.gpus} in FlashInfer 0.7.2.post1; this GPU is {on}: "
                "not attempted, nothing built")
    return None


def jit_modules(op: str, runner: str, major: int, minor: int, cuda: str = "13.0") -> Tuple[str, ...]:
    """The FlashInfer JIT modules this runner needs on a GPU of compute capability major.minor.

    Names are FlashInfer's own module names (the .so it would build under its JIT workspace).
    Call only after `arch_refusal` returned None.
    """
    if (op, runner) == ("fp8_gemm", "CublasFp8GemmRunner"):
        return ("gemm",)
    if (op, runner) == ("bf16_gemm", "CublasltBf16GemmRunner"):
        return ("mm_bf16_cublaslt",)
    if (op, runner) == ("bf16_gemm", "TinyGemmBf16GemmRunner"):
        return ("tinygemm2",)
    if (op, runner) == ("fp4_gemm", "CutlassFp4GemmRunner"):
        if major == 12:
            gemm = "fp4_gemm_cutlass_sm120"
        else:
            gemm = "fp4_gemm_cutlass_sm103" if (major, minor) == (10, 3) else "fp4_gemm_cutlass"
        return (gemm, "fp4_quantization_" + _fp4_quant_backend(major, minor, cuda))
    if (op, runner) == ("mxfp8_gemm", "CutlassMxfp8GemmRunner"):
        return ("mxfp8_gemm_cutlass_sm120" if major == 12 else "mxfp8_gemm_cutlass", "mxfp8_quantization_sm100")
    if runner == MOE_RUNNER and op in FUSED_MOE_OPS:
        name = _MOE_MODULES.get(f"{major * 10 + minor}")
        return (name,) if name else ()
    return ()


def _fp4_quant_backend(major: int, minor: int, cuda: str) -> str:
    """get_fp4_quantization_module's backend for this GPU: f'{major}{minor}', '120f' on SM12x with CUDA >= 12.9."""
    backend = f"{major}{minor}"
    if backend in ("120", "121"):
        try:
            parts = tuple(int(x) for x in str(cuda).split(".")[:2])
        except ValueError:
            parts = (0, 0)
        if parts >= (12, 9):
            backend = "120f"
    return backend


def _write(path: str, result: Dict[str, Any]) -> None:
    from tiletune.core.fileio import write_atomic

    write_atomic(path, json.dumps(result, default=str))


def _device_env() -> Dict[str, Any]:
    """What only a CUDA context knows; merged into the attempt's fingerprint.

    The GPU's UUID and PCI bus id say which physical GPU ran the attempt when several are
    visible (the parent pins each child with CUDA_VISIBLE_DEVICES, so device 0 here).
    """
    import torch

    env: Dict[str, Any] = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda,
                           "child_cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    try:
        import flashinfer

        env["flashinfer"] = flashinfer.__version__
    except Exception as e:  # reported, not fatal: the attempt will say what failed
        env["flashinfer_import_error"] = f"{type(e).__name__}: {e}"
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env.update(
            gpu=p.name,
            compute_capability=f"{p.major}.{p.minor}",
            sm_count=p.multi_processor_count,
            smem_per_block_optin=getattr(p, "shared_memory_per_block_optin", None),
            memory_total_bytes=p.total_memory,
            gpu_uuid=str(getattr(p, "uuid", "")) or None,
            gpu_pci_bus_id=getattr(p, "pci_bus_id", None),
        )
    env["cutlass_bundled"] = _bundled_cutlass_version()
    try:
        from flashinfer.autotuner.autotuner import _collect_metadata

        env["flashinfer_metadata"] = _collect_metadata()  # exactly what FlashInfer compares on load
    except Exception:
        pass
    return env


def _bundled_cutlass_version():
    """The CUTLASS FlashInfer ships and builds its JIT kernels with (data/cutlass/.../version.h)."""
    import re

    try:
        import flashinfer

        text = (Path(flashinfer.__file__).parent / "data" / "cutlass" / "include" / "cutlass" / "version.h").read_text()
    except Exception:
        return None
    parts = [re.search(rf"#define CUTLASS_{k} (\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


def _jit_spec(name: str):
    """FlashInfer's own JitSpec for a module name (the generator functions of 0.7.2.post1)."""
    from flashinfer.jit import gemm as jit_gemm

    makers: Dict[str, Callable[[], Any]] = {
        "gemm": jit_gemm.gen_gemm_module,
        "mm_bf16_cublaslt": jit_gemm.gen_mm_bf16_cublaslt_module,
        "fp4_gemm_cutlass": jit_gemm.gen_gemm_sm100_module_cutlass_fp4,
        "fp4_gemm_cutlass_sm103": jit_gemm.gen_gemm_sm103_module_cutlass_fp4,
        "fp4_gemm_cutlass_sm120": jit_gemm.gen_gemm_sm120_module_cutlass_fp4,
        "mxfp8_gemm_cutlass": jit_gemm.gen_gemm_sm100_module_cutlass_mxfp8,
        "mxfp8_gemm_cutlass_sm120": jit_gemm.gen_gemm_sm120_module_cutlass_mxfp8,
    }
    if name in makers:
        return makers[name]()
    if name.startswith("fused_moe_"):
        # Making the spec writes the generated CUTLASS instantiation sources (write-if-different,
        # ~0.1 s) but compiles nothing; building is jit_build's job, and only when allowed.
        from flashinfer.jit import fused_moe as jit_moe

        arch = name[len("fused_moe_"):].split("_")[0]
        gen = {"89": jit_moe.gen_cutlass_fused_moe_sm89_module, "90": jit_moe.gen_cutlass_fused_moe_sm90_module,
               "100": jit_moe.gen_cutlass_fused_moe_sm100_module, "103": jit_moe.gen_cutlass_fused_moe_sm103_module,
               "120": jit_moe.gen_cutlass_fused_moe_sm120_module}.get(arch)
        if gen is None:
            raise KeyError(f"no FlashInfer fused-MoE JIT module generator for {name!r}")
        return gen(use_fast_build=False)  # cutlass_fused_moe's own default
    if name == "tinygemm2":
        from flashinfer.jit.tinygemm2 import gen_tinygemm2_module

        return gen_tinygemm2_module()
    if name == "mxfp8_quantization_sm100":
        from flashinfer.jit.fp8_quantization import gen_mxfp8_quantization_sm100_module

        return gen_mxfp8_quantization_sm100_module()
    if name.startswith("fp4_quantization_"):
        from flashinfer.quantization import fp4_quantization

        return getattr(fp4_quantization, f"gen_fp4_quantization_sm{name[len('fp4_quantization_'):]}_module")()
    raise KeyError(f"no FlashInfer JIT module generator known for {name!r}")


def _this_gpu() -> Tuple[int, int, str, str]:
    """(major, minor, name, CUDA runtime) of device 0 in this process."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device visible to the FlashInfer engine's child (torch.cuda.is_available() is False)")
    p = torch.cuda.get_device_properties(0)
    return p.major, p.minor, p.name, str(torch.version.cuda or "0.0")


def jit_status(spec: Dict[str, Any]) -> Dict[str, Any]:
    """Modules each (op, runner) needs on this GPU and whether they are built; or why it cannot run here.

    Refused runners are answered without touching their JIT specs (a Blackwell-only generator
    raises, or would write sources, on other GPUs).
    """
    major, minor, name, cuda = _this_gpu()
    wanted: Dict[str, None] = {}
    refused: Dict[str, str] = {}
    for op, runner in spec.get("pairs") or []:
        reason = arch_refusal(op, runner, major, minor, name)
        if reason:
            refused[f"{op}|{runner}"] = reason
            continue
        for m in jit_modules(op, runner, major, minor, cuda):
            wanted[m] = None
    for m in spec.get("modules") or []:
        wanted[m] = None
    out = {}
    for m in wanted:
        js = _jit_spec(m)
        out[m] = {"compiled": bool(js.is_compiled), "path": str(js.get_library_path())}
    return {"ok": True, "modules": out, "refused": refused, "compute_capability": f"{major}.{minor}", "gpu": name}


def jit_build(spec: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for name in spec["modules"]:
        js = _jit_spec(name)
        t0 = time.monotonic()
        js.build_and_load()
        out[name] = {"built_s": round(time.monotonic() - t0, 1), "path": str(js.get_library_path())}
    return {"ok": True, "modules": out}


def _not_built(op: str, runner: str) -> Optional[Dict[str, Any]]:
    """An engine_error result if a module this runner needs is not built (never build inside an attempt)."""
    major, minor, _, cuda = _this_gpu()
    missing = [m for m in jit_modules(op, runner, major, minor, cuda) if not _jit_spec(m).is_compiled]
    if missing:
        return {"ok": False, "engine_error": True,
                "error": f"FlashInfer JIT module(s) {', '.join(missing)} not built; tiletune will not build them inside an attempt"}
    return None


def _out_dtype(spec: Dict[str, Any], torch):
    return getattr(torch, torch_dtype_name(spec.get("dtype_out") or "bfloat16") or "bfloat16")


def _measure(run: Callable[[], Any], out, ref, spec: Dict[str, Any], flops: float, result: Dict[str, Any]) -> Dict[str, Any]:
    """Compare `out` (after one run) with the float32 `ref`, then time `run` with CUDA events."""
    import torch

    got = out.float()
    nonfinite = int((~torch.isfinite(got)).sum().item())
    denom = float(torch.linalg.vector_norm(ref))
    rel = float(torch.linalg.vector_norm(torch.nan_to_num(got - ref, nan=0.0, posinf=0.0, neginf=0.0))) / denom if denom else None
    del got
    times = _event_times(run, spec, torch)
    med = sorted(times)[len(times) // 2]
    result.update(
        ok=True,
        rel_error=rel,
        nonfinite=nonfinite,
        times_s=times,
        time_s=med,
        tflops=flops / med / 1e12 if med > 0 else None,
        timing_note="CUDA events around each forward(), L2 warm (same inputs every sample)",
    )
    return result


def _fp8_quantize(x, torch):
    """Per-tensor e4m3 quantization as serving stacks do it: scale = amax / 448."""
    fp8 = torch.float8_e4m3fn
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = amax / torch.finfo(fp8).max
    q = (x.float() / scale).clamp(torch.finfo(fp8).min, torch.finfo(fp8).max).to(fp8)
    return q, scale.reshape(())


def attempt_fp8_gemm(spec: Dict[str, Any]) -> Dict[str, Any]:
    import torch
    from flashinfer.jit import gemm as jit_gemm

    if not jit_gemm.gen_gemm_module().is_compiled:
        # never build inside an attempt: the parent decides (and says how long) before any attempt
        return {"ok": False, "engine_error": True, "error": "FlashInfer JIT module 'gemm' is not built; tiletune will not build it inside an attempt"}
    from flashinfer.gemm.gemm_base import DEFAULT_WORKSPACE_SIZE, get_gemm_module

    p = spec["problem"]
    b, m, n, k = p["batch"], p["m"], p["n"], p["k"]
    out_dtype = getattr(torch, torch_dtype_name(spec.get("dtype_out") or "bfloat16") or "bfloat16")
    amplitude = float(spec.get("input_amplitude") or 0.0)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference must be true fp32
    gen = torch.Generator(device=dev).manual_seed(int(spec.get("seed", 0)))
    a_hi = torch.randn((b, m, k), device=dev, dtype=torch.bfloat16, generator=gen)
    w_hi = torch.randn((b, n, k), device=dev, dtype=torch.bfloat16, generator=gen) * 0.05  # weight-like
    a, sa = _fp8_quantize(a_hi, torch)
    w, sb = _fp8_quantize(w_hi, torch)
    del a_hi, w_hi
    if amplitude > 0:  # dequantized values reach +-amplitude (used to provoke output overflow)
        sa = torch.full_like(sa, amplitude / 448.0)
        sb = torch.full_like(sb, amplitude / 448.0)
    bmat = w.transpose(-2, -1)  # (b, K, N), column-major, as bmm_fp8 wants its weight
    out = torch.empty((b, m, n), device=dev, dtype=out_dtype)
    query_ws = torch.empty(DEFAULT_WORKSPACE_SIZE, dtype=torch.uint8, device=dev)
    run_ws_bytes = spec.get("workspace_bytes")
    run_ws = query_ws if run_ws_bytes is None else torch.empty(int(run_ws_bytes), dtype=torch.uint8, device=dev)

    runner = get_gemm_module().cublas_fp8_gemm_runner()
    tactic = int(spec["tactic"])
    # the algorithm list is enumerated with the full workspace, as FlashInfer's autotuner does
    _, count = runner._get_algos([a, bmat, sa, sb, out, query_ws])
    result: Dict[str, Any] = {"algo_count": int(count), "workspace_bytes": int(run_ws.numel())}
    if not 0 <= tactic < count:
        # the runner would silently fall back to cuBLASLt's heuristic: say so instead of timing that
        result.update(ok=False, error=(
            f"tactic {tactic} out of range: cuBLASLt returned {count} algorithm(s) for this shape "
            f"(FlashInfer's runner would silently run its heuristic default instead)"))
        return result
    inputs = [a, bmat, sa, sb, out, run_ws]
    runner.forward(inputs, tactic=tactic)
    torch.cuda.synchronize()

    ref = torch.matmul(a.float() * sa, bmat.float() * sb)
    got = out.float()
    nonfinite = int((~torch.isfinite(got)).sum().item())
    denom = float(torch.linalg.vector_norm(ref))
    rel = float(torch.linalg.vector_norm(torch.nan_to_num(got - ref, nan=0.0, posinf=0.0, neginf=0.0))) / denom if denom else None
    del ref, got

    warmup, iters = int(spec.get("warmup", 3)), int(spec.get("iters", 20))
    for _ in range(warmup):
        runner.forward(inputs, tactic=tactic)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        runner.forward(inputs, tactic=tactic)
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends)]
    med = sorted(times)[len(times) // 2]
    result.update(
        ok=True,
        rel_error=rel,
        nonfinite=nonfinite,
        times_s=times,
        time_s=med,
        tflops=2.0 * b * m * n * k / med / 1e12 if med > 0 else None,
        timing_note="CUDA events around each forward(), L2 warm (same inputs every sample)",
    )
    return result


def _bf16_problem(spec: Dict[str, Any], torch):
    """Inputs as mm_bf16 passes them to its runners: a (M, K) row-major, b (K, N) column-major."""
    p = spec["problem"]
    if int(p.get("batch") or 1) != 1:
        raise ValueError("bf16_gemm attempts are 2-D mm_bf16 problems; batch > 1 (bmm_bf16) is not supported by tiletune's engine")
    m, n, k = int(p["m"]), int(p["n"]), int(p["k"])
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(int(spec.get("seed", 0)))
    a = torch.randn((m, k), device=dev, dtype=torch.bfloat16, generator=gen)
    w = torch.randn((n, k), device=dev, dtype=torch.bfloat16, generator=gen) * 0.05  # weight-like (N, K)
    amplitude = float(spec.get("input_amplitude") or 0.0)
    if amplitude > 0:  # values reach +-amplitude (used to provoke output overflow)
        a = (a / a.abs().amax() * amplitude).to(torch.bfloat16)
        w = (w / w.abs().amax() * amplitude).to(torch.bfloat16)
    b = w.transpose(0, 1)  # (K, N) view of the (N, K) weight: column-major, as mm_bf16 wants
    out = torch.empty((m, n), device=dev, dtype=_out_dtype(spec, torch))
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference must be true fp32
    ref = torch.matmul(a.float(), b.float())  # bf16 inputs are exact in float32
    return m, n, k, a, b, out, ref


def attempt_bf16_cublaslt(spec: Dict[str, Any]) -> Dict[str, Any]:
    import torch

    refusal = _not_built("bf16_gemm", "CublasltBf16GemmRunner")
    if refusal:
        return refusal
    from flashinfer.gemm.gemm_base import DEFAULT_WORKSPACE_SIZE, get_mm_bf16_cublaslt_module

    m, n, k, a, b, out, ref = _bf16_problem(spec, torch)
    query_ws = torch.empty(DEFAULT_WORKSPACE_SIZE, dtype=torch.uint8, device=a.device)
    run_ws_bytes = spec.get("workspace_bytes")
    run_ws = query_ws if run_ws_bytes is None else torch.empty(int(run_ws_bytes), dtype=torch.uint8, device=a.device)
    runner = get_mm_bf16_cublaslt_module().cublaslt_bf16_gemm_runner()
    tactic = int(spec["tactic"])
    # enumerated with the full workspace, as the autotuner does; the runner caches the list per shape
    _, count = runner._get_algos([a, b, None, False, out, query_ws])
    result: Dict[str, Any] = {"algo_count": int(count), "workspace_bytes": int(run_ws.numel())}
    inputs = [a, b, None, False, out, run_ws]
    try:
        runner.forward(inputs, tactic=tactic)
    except ValueError as e:
        if tactic >= count:  # the runner's own refusal; say which class it is
            result.update(ok=False, error=f"tactic {tactic} out of range: the runner refused it ({e})")
            return result
        raise
    torch.cuda.synchronize()
    return _measure(lambda: runner.forward(inputs, tactic=tactic), out, ref, spec, 2.0 * m * n * k, result)


def attempt_bf16_tinygemm(spec: Dict[str, Any]) -> Dict[str, Any]:
    import torch

    tactic = int(spec["tactic"])
    if tactic not in (0, -1):
        # get_valid_tactics returns [0] and forward ignores the tactic: timing it would be tactic 0
        return {"ok": False, "error": f"tactic {tactic} out of range: TinyGemmBf16GemmRunner has the single tactic 0 "
                                      "(its forward ignores the tactic, so FlashInfer would silently run tactic 0)"}
    refusal = _not_built("bf16_gemm", "TinyGemmBf16GemmRunner")
    if refusal:
        return refusal
    from flashinfer.gemm import gemm_base

    m, n, k, a, b, out, ref = _bf16_problem(spec, torch)
    try:  # FlashInfer's own check for the tinygemm backend (N multiple of 16, bf16 out, contiguity)
        gemm_base._tinygemm_mm_bf16_requirement(a, b, out=out, out_dtype=out.dtype, backend="tinygemm")
    except ValueError as e:
        return {"ok": False, "error": f"FlashInfer's TinyGEMM requirement check (can_implement) rejected the problem: {e}"}
    runner = gemm_base._tinygemm_bf16_gemm_runner()
    inputs = [a, b, None, False, out, None]
    runner.forward(inputs, tactic=tactic)
    torch.cuda.synchronize()
    return _measure(lambda: runner.forward(inputs, tactic=tactic), out, ref, spec, 2.0 * m * n * k, {})


def _bytes_numpy(t):
    """A 1-byte-element CUDA tensor (uint8, e4m3, e2m1x2, ue8m0) -> its bytes as a numpy uint8 array."""
    import torch

    return t.contiguous().view(torch.uint8).cpu().numpy()


def _blockscaled_attempt(spec: Dict[str, Any], op: str, runner_name: str) -> Dict[str, Any]:
    """fp4_gemm / mxfp8_gemm through FlashInfer's CUTLASS runner. NEVER RUN ON A GPU (see the module docstring).

    Follows FlashInfer 0.7.2.post1's mm_fp4 / mm_mxfp8 (cutlass backend) and its tests: weights
    quantized as (N, K) and handed over transposed; nvfp4 with the 128x4 scale layout, no shuffle,
    global scale 448*6/amax and alpha = 1 / (global_a * global_b); mxfp8 with swizzled scales.
    """
    import numpy as np
    import torch

    from tiletune.tuner import blockscaled

    refusal = _not_built(op, runner_name)
    if refusal:
        return refusal
    from flashinfer.gemm.gemm_base import DEFAULT_WORKSPACE_SIZE

    major, minor, _, _ = _this_gpu()
    p = spec["problem"]
    if int(p.get("batch") or 1) != 1:
        raise ValueError(f"{op} attempts are 2-D problems; batch > 1 is not supported by tiletune's engine")
    m, n, k = int(p["m"]), int(p["n"]), int(p["k"])
    shapes = blockscaled.blockscaled_shapes(op, m, n, k)  # ValueError names the rule a shape breaks
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(int(spec.get("seed", 0)))
    a_hi = torch.randn((m, k), device=dev, dtype=torch.bfloat16, generator=gen)
    w_hi = torch.randn((n, k), device=dev, dtype=torch.bfloat16, generator=gen) * 0.05
    out_dtype = _out_dtype(spec, torch)
    out = torch.empty(shapes.out, device=dev, dtype=out_dtype)
    ws = torch.empty(DEFAULT_WORKSPACE_SIZE, dtype=torch.uint8, device=dev)
    gs_a = gs_b = 1.0
    if op == "fp4_gemm":
        from flashinfer import SfLayout, nvfp4_quantize
        from flashinfer.gemm.gemm_base import get_cutlass_fp4_gemm_module

        gs_a = blockscaled.nvfp4_global_scale(float(a_hi.float().abs().max()))
        gs_b = blockscaled.nvfp4_global_scale(float(w_hi.float().abs().max()))
        a_q, a_sf = nvfp4_quantize(a_hi, torch.tensor([gs_a], device=dev), sfLayout=SfLayout.layout_128x4, do_shuffle=False)
        w_q, w_sf = nvfp4_quantize(w_hi, torch.tensor([gs_b], device=dev), sfLayout=SfLayout.layout_128x4, do_shuffle=False)
        alpha = torch.tensor([1.0 / (gs_a * gs_b)], dtype=torch.float32, device=dev)
        runner = get_cutlass_fp4_gemm_module(major, minor).cutlass_fp4_gemm_runner()
        inputs = [a_q, w_q.T, a_sf, w_sf.T, alpha, out_dtype, out, shapes.sf_vec, True, ws]
    else:
        from flashinfer.gemm.gemm_base import get_cutlass_mxfp8_gemm_module
        from flashinfer.quantization.fp8_quantization import mxfp8_quantize

        a_q, a_sf = mxfp8_quantize(a_hi, is_sf_swizzled_layout=True)
        w_q, w_sf = mxfp8_quantize(w_hi, is_sf_swizzled_layout=True)
        runner = get_cutlass_mxfp8_gemm_module(major).cutlass_mxfp8_gemm_runner()
        inputs = [a_q, w_q.T, a_sf, w_sf, out_dtype, out, ws]
    got_shapes = (tuple(a_q.shape), tuple(w_q.shape), a_sf.numel(), w_sf.numel())
    want_shapes = (shapes.a, shapes.b_quantized, shapes.a_sf_bytes, shapes.b_sf_bytes)
    if got_shapes != want_shapes:  # the layout assumptions below would be wrong: say so, do not guess
        return {"ok": False, "engine_error": True,
                "error": f"FlashInfer's quantizer returned (a, w, a_sf bytes, w_sf bytes) = {got_shapes}, tiletune expected {want_shapes}"}
    deq = {}
    for name, q, sf, rows, gs in (("a", a_q, a_sf, m, gs_a), ("w", w_q, w_sf, n, gs_b)):
        deq[name] = blockscaled.dequantize(_bytes_numpy(q), _bytes_numpy(sf), rows, k, value_format=shapes.value_format,
                                           scale_format=shapes.scale_format, sf_vec=shapes.sf_vec, global_scale=gs)
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = torch.from_numpy(np.ascontiguousarray(deq["a"])).to(dev) @ torch.from_numpy(np.ascontiguousarray(deq["w"])).to(dev).T
    del deq
    tactics = runner.get_valid_tactics(inputs, None)
    tactic = int(spec["tactic"])
    result: Dict[str, Any] = {"tactic_count": len(tactics)}
    if tactic not in tactics and tactic != -1:
        result.update(ok=False, error=f"tactic {tactic} out of range: {runner_name} lists {len(tactics)} tactic(s) on this GPU")
        return result
    runner.forward(inputs, tactic=tactic)
    torch.cuda.synchronize()
    return _measure(lambda: runner.forward(inputs, tactic=tactic), out, ref, spec, 2.0 * m * n * k, result)


def _fp8_per_tensor(x, torch):
    """e4m3 per-tensor quantization (scale = amax / 448) -> (bytes, float32 dequant scale, 0-d)."""
    q, scale = _fp8_quantize(x, torch)
    return q, scale.float()


def attempt_fused_moe(spec: Dict[str, Any]) -> Dict[str, Any]:
    """trtllm::fused_moe::gemm1/gemm2 through FlashInfer's CUTLASS fused MoE. NEVER RUN ON A GPU.

    Written against the 0.7.2.post1 wheel (flashinfer/fused_moe/core.py, csrc/fused_moe/
    cutlass_backend/flashinfer_cutlass_fused_moe_binding.cu); no GPU run was possible in the
    session that wrote it (the module takes 15-60 min to build on SM90).

    - Correctness: the whole layer through `cutlass_fused_moe(..., profile_ids=[t, -1])` (gemm1)
      or `[-1, t]` (gemm2): profile ids are absolute indices into GEMM1 ++ GEMM2 tactics and -1
      keeps the other GEMM's default, so the output is the layer with the tactic forced, checked
      against `moe_problem.reference_moe` in float32 from the dequantized inputs.
    - Time: the GEMM alone, as the autotuner profiles it: `MoERunner.forward(inputs, tactic=t,
      gemm_idx=g)` after one `forward(tactic=-1, do_preparation=True)`; the layer's time is
      reported beside it (`layer_time_s`).
    """
    import torch

    from tiletune.tuner.moe_problem import MoeProblem, reference_moe, uniform_routing

    if spec.get("moe_refusal"):
        return {"ok": False, "engine_error": True, "error": spec["moe_refusal"]}
    mp = MoeProblem.from_spec(spec["moe"])
    refusal = _not_built(spec["op"], "MoERunner")
    if refusal:
        return refusal
    from flashinfer.fused_moe.core import ActivationType, get_cutlass_fused_moe_module

    major, minor, _, _ = _this_gpu()
    module = get_cutlass_fused_moe_module(f"{major * 10 + minor}")  # built (checked above): ninja no-ops
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference must be true fp32
    gen = torch.Generator(device=dev).manual_seed(int(spec.get("seed", 0)))
    T, E, H, I, K = mp.tokens, mp.experts, mp.hidden, mp.inter, mp.top_k  # noqa: E741 - the MoE papers' names
    out_dtype = getattr(torch, mp.out_dtype)
    x_hi = torch.randn((T, H), device=dev, generator=gen)
    w1_hi = torch.randn((E, mp.fc1_rows, H), device=dev, generator=gen) / H**0.5  # GEMM1 outputs ~ N(0, 1)
    w2_hi = torch.randn((E, H, I), device=dev, generator=gen) / I**0.5
    ids = uniform_routing(T, K, E, torch).to(device=dev, dtype=torch.int32)
    weights = torch.rand((T, K), device=dev, generator=gen) + 0.5
    weights = weights / weights.sum(dim=1, keepdim=True)  # uneven per-slot weights: a wrong finalize shows
    round_fc1 = lambda h: h.to(out_dtype).float()  # GEMM1 output is stored in the output dtype
    if mp.kind == "fp8":
        fp8 = torch.float8_e4m3fn
        x, x_scale = _fp8_per_tensor(x_hi, torch)
        q1 = [_fp8_per_tensor(w1_hi[e], torch) for e in range(E)]
        q2 = [_fp8_per_tensor(w2_hi[e], torch) for e in range(E)]
        w1 = torch.stack([q for q, _ in q1])
        w2 = torch.stack([q for q, _ in q2])
        s1 = torch.stack([s for _, s in q1])
        s2 = torch.stack([s for _, s in q2])
        x_ref, w1_ref, w2_ref = x.float() * x_scale, w1.float() * s1[:, None, None], w2.float() * s2[:, None, None]
        # GEMM2's input scale is static (as servers calibrate it): 448 / max |activation| of this layer
        _, act_amax = reference_moe(x_ref, w1_ref, w2_ref, ids.long(), weights, activation=mp.activation, xp=torch,
                                    round_fc1=round_fc1)
        a2_scale = max(act_amax, 1e-12) / 448.0
        fc2_quant = torch.tensor(1.0 / a2_scale, dtype=torch.float32, device=dev)
        round_act = lambda a: (a * fc2_quant).to(fp8).float() * a2_scale
        quant_scales = [(s1 * x_scale).float(), fc2_quant, (s2 * a2_scale).float(), x_scale.reshape(())]
    else:
        dt = getattr(torch, mp.x_dtype)
        x, w1, w2 = x_hi.to(dt), w1_hi.to(dt), w2_hi.to(dt)
        x_ref, w1_ref, w2_ref = x.float(), w1.float(), w2.float()
        round_act = lambda a: a.to(dt).float()  # GEMM2's input dtype
        quant_scales = []
    del x_hi, w1_hi, w2_hi
    ref, _ = reference_moe(x_ref, w1_ref, w2_ref, ids.long(), weights, activation=mp.activation, xp=torch,
                           round_fc1=round_fc1, round_act=round_act)
    del x_ref, w1_ref, w2_ref

    activation = ActivationType(mp.activation)
    runner = module.MoERunner(
        x_dtype=x.dtype, weight_dtype=w1.dtype, output_dtype=out_dtype, top_k=K, tp_size=1, tp_rank=0, ep_size=1,
        ep_rank=0, cluster_size=1, cluster_rank=0, enable_alltoall=False, use_deepseek_fp8_block_scale=False,
        use_w4_group_scaling=False, use_mxfp8_act_scaling=False, min_latency_mode=False,
        enable_pdl=bool(mp.enable_pdl), activation_type=activation, use_packed_weights=False,
        use_fused_finalize=mp.fused_finalize, use_wfp4afp8_humming=False)
    n1 = int(runner.fused_moe_runner.get_gemm1_tactic_count())
    n2 = int(runner.fused_moe_runner.get_gemm2_tactic_count())
    tactic = int(spec["tactic"])
    lo, hi = (0, n1) if mp.gemm == 1 else (n1, n1 + n2)
    result: Dict[str, Any] = {"tactic_count": hi - lo, "gemm1_tactics": n1, "gemm2_tactics": n2,
                              "rows_per_expert": mp.rows_per_expert(), "moe": mp.to_spec()}
    if tactic != -1 and not lo <= tactic < hi:
        result.update(ok=False, error=(f"tactic {tactic} out of range: GEMM{mp.gemm} tactics are {lo}..{hi - 1} "
                                       f"(GEMM1 {n1}, GEMM2 {n2} on this GPU for {mp.x_dtype} x {mp.weight_dtype})"))
        return result
    out = torch.empty((T, H), device=dev, dtype=out_dtype)
    profile_ids = [tactic, -1] if mp.gemm == 1 else [-1, tactic]

    def layer():
        module.cutlass_fused_moe(out, x, ids, weights, w1, None, w2, None, out_dtype, quant_scales,
                                 enable_pdl=bool(mp.enable_pdl), activation_type=activation,
                                 use_fused_finalize=mp.fused_finalize, profile_ids=profile_ids,
                                 tune_max_num_tokens=T)

    layer()
    torch.cuda.synchronize()
    got = out.float()
    nonfinite = int((~torch.isfinite(got)).sum().item())
    denom = float(torch.linalg.vector_norm(ref))
    rel = float(torch.linalg.vector_norm(torch.nan_to_num(got - ref, nan=0.0, posinf=0.0, neginf=0.0))) / denom if denom else None
    del got, ref
    # the layer's time (both GEMMs, routing, finalize) with the tactic forced
    layer_times = _event_times(layer, spec, torch)
    # the GEMM alone, the way choose_one profiles it
    inputs = [x, w1, None, w2, None]
    runner.forward(inputs, tactic=-1, do_preparation=True, gemm_idx=mp.gemm)
    gemm_times = _event_times(lambda: runner.forward(inputs, tactic=tactic, gemm_idx=mp.gemm), spec, torch)
    med = sorted(gemm_times)[len(gemm_times) // 2]
    result.update(
        ok=True, rel_error=rel, nonfinite=nonfinite, times_s=gemm_times, time_s=med,
        tflops=mp.flops() / med / 1e12 if med > 0 else None,
        layer_time_s=sorted(layer_times)[len(layer_times) // 2],
        timing_note=("time_s: CUDA events around MoERunner.forward(tactic, gemm_idx) as the autotuner profiles it "
                     "(its own synthetic routing); layer_time_s: the whole cutlass_fused_moe with the tactic forced; "
                     "L2 warm"),
        reference_note=("float32 reference from the dequantized inputs; GEMM1 output rounded to the output dtype and "
                        "the activation to GEMM2's input dtype, where the kernel stores them; routing uniform"),
    )
    return result


def _event_times(run: Callable[[], Any], spec: Dict[str, Any], torch) -> List[float]:
    warmup, iters = int(spec.get("warmup", 3)), int(spec.get("iters", 20))
    for _ in range(warmup):
        run()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        run()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends)]


ATTEMPTS: Dict[Tuple[str, str], Callable[[Dict[str, Any]], Dict[str, Any]]] = {
    ("fp8_gemm", "CublasFp8GemmRunner"): attempt_fp8_gemm,
    ("bf16_gemm", "CublasltBf16GemmRunner"): attempt_bf16_cublaslt,
    ("bf16_gemm", "TinyGemmBf16GemmRunner"): attempt_bf16_tinygemm,
    ("fp4_gemm", "CutlassFp4GemmRunner"): lambda spec: _blockscaled_attempt(spec, "fp4_gemm", "CutlassFp4GemmRunner"),
    ("mxfp8_gemm", "CutlassMxfp8GemmRunner"): lambda spec: _blockscaled_attempt(spec, "mxfp8_gemm", "CutlassMxfp8GemmRunner"),
    **{(op, MOE_RUNNER): attempt_fused_moe for op in FUSED_MOE_OPS},
}


def run_attempt(spec: Dict[str, Any]) -> Dict[str, Any]:
    """Refuse what this GPU cannot run (before any JIT module is looked up), then attempt."""
    op, runner = spec["op"], spec["runner"]
    if spec.get("moe_refusal"):  # decided in the parent, before any GPU or JIT module is touched
        return {"ok": False, "engine_error": True, "error": spec["moe_refusal"]}
    fn = ATTEMPTS.get((op, runner))
    if fn is None:
        return {"ok": False, "engine_error": True, "error": arch_refusal(op, runner, 0, 0)}
    major, minor, name, _ = _this_gpu()
    reason = arch_refusal(op, runner, major, minor, name)
    if reason:
        return {"ok": False, "engine_error": True, "error": reason}
    return fn(spec)


def main(argv: List[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    result_file = spec["result_file"]
    mode = spec.get("mode", "attempt")
    result: Dict[str, Any] = {"mode": mode}
    code = 0
    try:
        if mode == "jit-status":
            result.update(jit_status(spec))
        elif mode == "jit-build":
            result.update(jit_build(spec))
        else:
            result.update(run_attempt(spec))
    except BaseException as e:  # the text is the diagnosis; the parent classifies it
        result.update(ok=False, error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-3000:])
        print(result["traceback"], file=sys.stderr)
        code = 1
    try:
        result["env"] = _device_env()
    except BaseException as e:  # a poisoned CUDA context can make even this fail
        result["env_error"] = f"{type(e).__name__}: {e}"
    _write(result_file, result)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
