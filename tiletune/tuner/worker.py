"""The FlashInfer engine's child process: `python -m tiletune.tuner.worker SPEC.json`.

The only module in tiletune that imports torch and flashinfer. It runs in a fresh process per
attempt (see isolation.py), does one thing, writes one JSON result file atomically, and exits:

- mode "attempt": build realistic inputs for the recorded problem, force the tactic on
  FlashInfer's own runner (`runner.forward(inputs, tactic=t)`), check the output against a
  float32 reference computed from the dequantized inputs, time it with CUDA events;
- mode "jit-status": say whether each named JIT module's .so exists (FlashInfer's own
  `JitSpec.is_compiled`), so the parent never triggers a build silently;
- mode "jit-build": build the named modules (only when the user allowed it) and time them.

An exception is written into the result as text (`error`), then the process exits 1; a sticky
CUDA error or a crash kills the process and the parent diagnoses from stderr.

Supported runners: fp8_gemm / CublasFp8GemmRunner (bmm_fp8's cuBLASLt path: tactic = index into
the cuBLASLt algorithms the heuristic returns for that exact shape).
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List

# op/runner -> JIT module names it needs (the engine asks for these in jit-status / jit-build)
JIT_MODULES = {("fp8_gemm", "CublasFp8GemmRunner"): ("gemm",)}


def _write(path: str, result: Dict[str, Any]) -> None:
    from tiletune.fileio import write_atomic

    write_atomic(path, json.dumps(result, default=str))


def _device_env() -> Dict[str, Any]:
    """What only a CUDA context knows; merged into the attempt's fingerprint."""
    import torch

    env: Dict[str, Any] = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda}
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


def _jit_specs(names: List[str]) -> Dict[str, Any]:
    from flashinfer.jit import gemm as jit_gemm

    makers: Dict[str, Callable[[], Any]] = {"gemm": jit_gemm.gen_gemm_module}
    return {n: makers[n]() for n in names}


def jit_status(spec: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for name, js in _jit_specs(spec["modules"]).items():
        out[name] = {"compiled": bool(js.is_compiled), "path": str(js.get_library_path())}
    return {"ok": True, "modules": out}


def jit_build(spec: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for name, js in _jit_specs(spec["modules"]).items():
        t0 = time.monotonic()
        js.build_and_load()
        out[name] = {"built_s": round(time.monotonic() - t0, 1), "path": str(js.get_library_path())}
    return {"ok": True, "modules": out}


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
    aliases = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
    name = (spec.get("dtype_out") or "bfloat16").replace("torch.", "")
    out_dtype = getattr(torch, aliases.get(name, name))
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


ATTEMPTS = {("fp8_gemm", "CublasFp8GemmRunner"): attempt_fp8_gemm}


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
            fn = ATTEMPTS.get((spec["op"], spec["runner"]))
            if fn is None:
                result.update(ok=False, engine_error=True, error=f"the FlashInfer engine cannot run {spec['op']} / {spec['runner']}")
            else:
                result.update(fn(spec))
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
