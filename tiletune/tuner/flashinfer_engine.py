"""The FlashInfer engine: re-run a tactic through FlashInfer's own runner in a child process.

The child is `python -m tiletune.tuner.worker SPEC.json` (worker.py), the only place torch and
flashinfer are imported. This module, in the parent, only writes specs and reads results.

JIT modules: before any attempt, `prepare` asks a child which modules the targets' runners need
on this GPU and whether they are already built in the JIT workspace (FlashInfer's own
`JitSpec.is_compiled`). If one is missing it stops with a message naming the module, where
FlashInfer would put it and how long a build takes, unless the engine was created with
`allow_jit_build=True` (`--allow-jit-build`); then it builds once, in its own child with a long
time limit, before the first attempt. Runners this GPU cannot run at all (the Blackwell-only
CUTLASS fp4_gemm / mxfp8_gemm on an SM90 H200) are left out of the build: each of their attempts
ends as an engine_error with a one-line reason (worker.arch_refusal), and nothing is built.

Which runners the engine drives, and which of them have really run on a GPU: worker.RUNNERS.

Fused MoE (`trtllm::fused_moe::gemm1/gemm2`, MoERunner): the parent turns each target into the
MoE layer it stands for (moe_problem.py) and hands it to the worker; a target it cannot run
(dtype or top_k not in the key and not given with --dtype / --top-k, nvfp4, an unmodelled
activation) ends as an engine_error with the reason, and needs no JIT module. The module the
others need (`fused_moe_90` on SM90: 15-60 minutes of nvcc) is never built without
--allow-jit-build. NEVER RUN ON A GPU: written against the 0.7.2.post1 wheel's source only.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from msgspec import structs

from tiletune.core.errors import TunerError
from tiletune.core.vocabulary import FUSED_MOE_OPS
from tiletune.tuner import classify
from tiletune.tuner.engine import Attempt, ChildResult, ChildSpec, Diagnosis, RetryTarget
from tiletune.tuner.isolation import run_child
from tiletune.tuner.moe_problem import MoeRefusal, key_extras, moe_problem
from tiletune.tuner.worker import RUNNERS

# `gemm` measured on the H200 machine (16 cores, wheel 0.7.2.post1): research/flashinfer-autotuner.md 8.1;
# mm_bf16_cublaslt / tinygemm2 measured in bench/retry_h200_x2; the CUTLASS ones only estimated.
BUILD_ESTIMATES = {
    "gemm": "about 45 s on a 16-core H200 machine (measured); several minutes on 2-4 cores",
    "mm_bf16_cublaslt": "about 8 s on a 32-core 2x H200 machine (measured, bench/retry_h200_x2)",
    "tinygemm2": "about 11 s on a 32-core 2x H200 machine (measured, bench/retry_h200_x2)",
    "fp4_gemm_cutlass": "9 CUTLASS .cu files (4 tiles x 2 dtypes); several minutes (not measured)",
    "fp4_gemm_cutlass_sm120": "17 CUTLASS .cu files (8 tiles x 2 dtypes); several minutes (not measured)",
    "mxfp8_gemm_cutlass": "9 CUTLASS .cu files; several minutes (not measured)",
    # research/flashinfer-autotuner.md 8.1: 8 of 248 objects done after 120 s with -j 16 on the H200
    "fused_moe_90": "~248 objects, ~1,700 CUTLASS kernels: 15-60 minutes on a 16-core H200 machine (lower bound measured)",
    "fused_moe_100": "~238 generated CUTLASS files, ~1,900 kernels: tens of minutes (not measured)",
    "fused_moe_103": "~250 generated CUTLASS files, ~2,000 kernels: tens of minutes (not measured)",
    "fused_moe_120": "~68 generated CUTLASS files, ~530 kernels plus the fixed sources: tens of minutes (not measured)",
    "fused_moe_89": "the SM89 fused-MoE module: tens of minutes (not measured)",
}
JIT_BUILD_TIMEOUT_S = 1800.0
MOE_JIT_BUILD_TIMEOUT_S = 3600.0  # one fused-MoE module can take an hour on SM90
JIT_STATUS_TIMEOUT_S = 180.0


class FlashInferEngine:
    """Engine 'flashinfer': FlashInfer's runner `forward(inputs, tactic=t)` in a fresh process.

    `workspace_bytes` and `input_amplitude` change what the attempt runs (a smaller cuBLASLt
    workspace than the algorithms were enumerated with; inputs scaled so the output overflows):
    they exist to provoke real failures on purpose and are recorded in the target key.
    """

    name = "flashinfer"

    def __init__(
        self,
        *,
        allow_jit_build: bool = False,
        python: Optional[str] = None,
        warmup: int = 3,
        iters: int = 20,
        workspace_bytes: Optional[int] = None,
        input_amplitude: Optional[float] = None,
        moe_dtype: Optional[str] = None,
        moe_top_k: Optional[int] = None,
        progress=None,
    ):
        self.allow_jit_build = allow_jit_build
        self.python = python or sys.executable
        self.warmup = warmup
        self.iters = iters
        self.workspace_bytes = workspace_bytes
        self.input_amplitude = input_amplitude
        self.moe_dtype = moe_dtype  # --dtype: for MoE keys without extras (before 0.6.18rc2)
        self.moe_top_k = moe_top_k  # --top-k: likewise
        self.progress = progress
        self.jit_report: Dict[str, Any] = {}

    # -- Engine protocol -------------------------------------------------------------------

    def unavailable_reason(self) -> Optional[str]:
        missing = [m for m in ("torch", "flashinfer") if importlib.util.find_spec(m) is None]
        if missing:
            return f"the flashinfer engine needs {' and '.join(missing)}: install tiletune[gpu]"
        return None

    def key_suffix(self) -> str:
        """Appended to target keys when the attempt is run under non-default conditions."""
        parts = []
        if self.workspace_bytes is not None:
            parts.append(f"ws={self.workspace_bytes}")
        if self.input_amplitude is not None:
            parts.append(f"amp={self.input_amplitude:g}")
        return ("|" + ",".join(parts)) if parts else ""

    def prepare(self, targets: Sequence[RetryTarget], *, jobs: int) -> None:
        reason = self.unavailable_reason()
        if reason:
            raise TunerError(reason)
        # a fused-MoE target tiletune cannot run (dtype unknown, unsupported variant) needs no module
        pairs = sorted({(t.op, t.runner) for t in targets if (t.op, t.runner) in RUNNERS
                        and not (t.op in FUSED_MOE_OPS and isinstance(self.moe_spec(t), str))})
        if not pairs:
            return  # every attempt will say the engine cannot run its runner
        status = self._run_mode("jit-status", {"pairs": [list(p) for p in pairs]}, JIT_STATUS_TIMEOUT_S)
        modules = dict(status.get("modules") or {})
        self.jit_report = {"status": modules, "refused": dict(status.get("refused") or {})}
        if self.progress is not None:
            for why in self.jit_report["refused"].values():
                self.progress.write(f"tiletune retry: {why}\n")
            self.progress.flush()
        missing = {n: s["path"] for n, s in modules.items() if not s.get("compiled")}
        if not missing:
            return
        if not self.allow_jit_build:
            detail = "; ".join(f"'{n}' (would be {p}; build takes {BUILD_ESTIMATES.get(n, 'an unknown time')})" for n, p in missing.items())
            raise TunerError(
                f"FlashInfer JIT module(s) not built here: {detail}. "
                "tiletune does not build them silently: pass --allow-jit-build to build them once before the attempts"
            )
        if self.progress is not None:
            estimates = "; ".join(BUILD_ESTIMATES.get(n, "?") for n in missing)
            self.progress.write(f"tiletune retry: building FlashInfer JIT module(s) {', '.join(missing)} ({estimates})\n")
            self.progress.flush()
        timeout = MOE_JIT_BUILD_TIMEOUT_S if any(n.startswith("fused_moe_") for n in missing) else JIT_BUILD_TIMEOUT_S
        built = self._run_mode("jit-build", {"modules": sorted(missing)}, timeout)
        self.jit_report["built"] = built.get("modules")

    def child_spec(self, target: RetryTarget, scratch: Path) -> ChildSpec:
        scratch.mkdir(parents=True, exist_ok=True)
        result_file = scratch / "result.json"
        p = target.problem
        spec: Dict[str, Any] = {
            "mode": "attempt",
            "result_file": str(result_file),
            "op": target.op,
            "runner": target.runner,
            "tactic": target.tactic,
            "problem": None if p is None else {"batch": p.batch, "m": p.m, "n": p.n, "k": p.k},
            "dtype_out": target.dtype,
            "warmup": self.warmup,
            "iters": self.iters,
            "workspace_bytes": self.workspace_bytes,
            "input_amplitude": self.input_amplitude,
        }
        if target.op in FUSED_MOE_OPS:
            moe = self.moe_spec(target)
            spec["moe" if isinstance(moe, dict) else "moe_refusal"] = moe
        (scratch / "spec.json").write_text(json.dumps(spec, default=str))
        return ChildSpec(
            argv=(self.python, "-m", "tiletune.tuner.worker", str(scratch / "spec.json")),
            env=(("PYTHONPATH", _pythonpath()),),
            cwd=None,
            result_file=result_file,
        )

    def interpret(self, target: RetryTarget, child: ChildResult) -> Attempt:
        moe = (child.result or {}).get("moe")
        if target.dtype is None and isinstance(moe, dict) and moe.get("out_dtype"):
            # a MoE key without extras: the bound is the one of the output dtype the attempt ran with
            target = structs.replace(target, dtype=str(moe["out_dtype"]))
        return interpret_worker_result(self.name, target, child)

    # -- helpers ---------------------------------------------------------------------------

    def moe_spec(self, target: RetryTarget) -> Any:
        """The MoE layer the worker runs for a fused-MoE target (dict), or why it cannot (str)."""
        p = target.problem
        extras = key_extras(target.raw_key)
        try:
            mp = moe_problem(op=target.op, shapes=target.shapes, extras=extras,
                             m_range=p.m_range if p is not None else None, dtype=self.moe_dtype,
                             dtype_out=target.dtype if extras is None else None, top_k=self.moe_top_k)
        except MoeRefusal as e:
            return f"{target.op} tactic {target.tactic}: {e}"
        return mp.to_spec()

    def _run_mode(self, mode: str, fields: Dict[str, Any], timeout_s: float) -> Dict[str, Any]:
        """One worker run outside the attempts (jit-status, jit-build), in a scratch dir removed after."""
        root = Path(_tmpdir())
        try:
            scratch = root / mode
            scratch.mkdir(parents=True, exist_ok=True)
            spec = {"mode": mode, "result_file": str(scratch / "result.json"), **fields}
            (scratch / "spec.json").write_text(json.dumps(spec))
            child = run_child(
                ChildSpec(
                    argv=(self.python, "-m", "tiletune.tuner.worker", str(scratch / "spec.json")),
                    env=(("PYTHONPATH", _pythonpath()),),
                    result_file=scratch / "result.json",
                ),
                timeout_s=timeout_s,
                scratch=scratch,
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)
        r = child.result or {}
        if not r.get("ok"):
            v = classify.classify_exit(
                text=f"{r.get('error') or ''}\n{child.stderr_tail}",
                exit_code=child.exit_code,
                signal=child.signal,
                timed_out=child.timed_out,
                timeout_s=timeout_s,
            )
            what = ", ".join(str(x) for x in fields.get("modules") or fields.get("pairs") or [])
            raise TunerError(f"FlashInfer JIT {mode} for {what} failed ({v.diagnosis}): {v.message}")
        return dict(r)


def interpret_worker_result(engine: str, target: RetryTarget, child: ChildResult, *, timeout_s: Optional[float] = None) -> Attempt:
    """Turn a worker child's outcome into an Attempt (shared with tests' fake engines)."""
    r: Dict[str, Any] = dict(child.result or {})
    env = tuple(sorted((str(k), v) for k, v in (r.get("env") or {}).items()))
    base: Dict[str, Any] = dict(
        target=target,
        engine=engine,
        started_at="",
        duration_s=child.duration_s,
        stderr_tail=child.stderr_tail[-2000:],
        env=env,
        error_bound=classify.error_bound(target.dtype),
    )
    if r.get("ok") and not child.timed_out:
        times = tuple(float(t) for t in r.get("times_s") or ())
        numeric = classify.judge_numerics(rel_error=r.get("rel_error"), nonfinite=int(r.get("nonfinite") or 0), dtype_out=target.dtype)
        diag, msg = (numeric.diagnosis, numeric.message) if numeric else (Diagnosis.PASSED, _pass_message(r, target))
        return Attempt(
            diagnosis=diag,
            message=msg,
            time_s=r.get("time_s"),
            times_s=times,
            tflops=r.get("tflops"),
            rel_error=r.get("rel_error"),
            **base,
        )
    if r.get("engine_error"):
        return Attempt(diagnosis=Diagnosis.ENGINE_ERROR, message=str(r.get("error")), **base)
    text = "\n".join(x for x in (str(r.get("error") or ""), child.stderr_tail, child.stdout_tail) if x)
    v = classify.classify_exit(text=text, exit_code=child.exit_code, signal=child.signal, timed_out=child.timed_out, timeout_s=timeout_s)
    message = v.message
    if v.diagnosis is Diagnosis.CRASHED and child.result_error:
        message = f"{message} ({child.result_error})"
    return Attempt(diagnosis=v.diagnosis, message=message, smem_bytes=v.smem_bytes, smem_limit=v.smem_limit, **base)


def _pass_message(r: Dict[str, Any], target: RetryTarget) -> str:
    t = r.get("time_s")
    parts = [f"{t * 1e6:.1f} us median" if t else "ran"]
    if r.get("tflops"):
        parts.append(f"{r['tflops']:.1f} TFLOP/s")
    if r.get("rel_error") is not None:
        bound = classify.error_bound(target.dtype)
        parts.append(f"rel. error {r['rel_error']:.2e}" + (f" (bound {bound:.2e})" if bound else ""))
    if r.get("algo_count") is not None:
        parts.append(f"tactic {target.tactic} of {r['algo_count']} cuBLASLt algos")
    elif r.get("tactic_count") is not None:
        parts.append(f"tactic {target.tactic} of {r['tactic_count']}")
    if r.get("layer_time_s"):
        parts.append(f"whole MoE layer {r['layer_time_s'] * 1e6:.1f} us")
    return ", ".join(parts)


def _pythonpath() -> str:
    """Make the child import this same tiletune (also when run from a source tree)."""
    import os

    here = str(Path(__file__).resolve().parents[2])
    old = os.environ.get("PYTHONPATH", "")
    return here + (os.pathsep + old if old else "")


def _tmpdir() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="tiletune-jit-")
