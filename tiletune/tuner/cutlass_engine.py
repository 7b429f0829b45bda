"""`CutlassEngine`: the `Engine` for `tiletune retry` over a kernels/ reproducer.

The child is the built binary itself (or, when the build failed, a child that reports the compile
error), and `interpret` turns its one JSON line into an `Attempt` using classify.py. The toolchain
(cutlass_toolchain.py), the builds (cutlass_build.py) and the reproducer a user attaches
(reproducer.py) are the three modules it stands on.

Nothing here imports torch or touches a GPU; only the binaries it builds do.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tiletune.core.errors import TunerError
from tiletune.core.vocabulary import DENSE_GEMM_OPERAND_DTYPE
from tiletune.tuner.cutlass_build import OUTPUT_DTYPE, BuildResult, KernelBuild, build, build_many, kernel_build, run_args
from tiletune.tuner.cutlass_toolchain import find_cutlass, kernels_dir, nvcc_path
from tiletune.tuner.engine import Attempt, ChildResult, ChildSpec, Diagnosis, RetryTarget


def _status_ok(v: Any) -> Optional[bool]:
    return None if v is None else v == "Success"


class CutlassEngine:
    """Retry engine that builds a kernels/ reproducer for the target's decoded tile and runs it."""

    name = "cutlass"

    def __init__(self, *, cache: Optional[Path] = None, default_problem: Tuple[int, int, int] = (4096, 4096, 4096),
                 warmup: int = 10, iters: int = 50, moe_top_k: Optional[int] = None):
        self.cache = cache
        self.moe_top_k = moe_top_k  # --top-k, for MoE keys that do not record it
        self.default_problem = default_problem
        self.warmup, self.iters = warmup, iters
        self._builds: Dict[str, BuildResult] = {}

    # -- Engine protocol

    def unavailable_reason(self) -> Optional[str]:
        if not nvcc_path():
            return "nvcc not found on PATH (the CUTLASS engine compiles kernels/ reproducers)"
        try:
            find_cutlass()
            kernels_dir()
        except TunerError as e:
            return str(e)
        return None

    def build_for(self, target: RetryTarget) -> KernelBuild:
        if target.config is None:
            raise TunerError(f"{target.key}: tactic {target.tactic!r} has no decoded tile; the CUTLASS engine needs one")
        if not target.arch:
            raise TunerError(f"{target.key}: arch unknown")
        grouped = bool(target.problem and target.problem.experts)
        return kernel_build(target.config, target.arch, operand_dtype(target), grouped=grouped)

    def prepare(self, targets: Sequence[RetryTarget], *, jobs: int) -> None:
        builds: Dict[str, KernelBuild] = {}
        for t in targets:
            try:
                builds[t.key] = self.build_for(t)
            except TunerError:
                continue  # reported per target by child_spec/interpret
        try:
            results = build_many(list(builds.values()), jobs=jobs, cache=self.cache)
        except TunerError:
            return
        for key, res in zip(builds, results):
            self._builds[key] = res

    def _problem(self, target: RetryTarget) -> Tuple[int, int, int]:
        p = target.problem
        if p is None:
            return self.default_problem
        return (max(1, int(p.m)), int(p.n), int(p.k))

    def run_args(self, target: RetryTarget) -> List[str]:
        """The reproducer's command-line arguments for this target.

        Dense: the key's M (bucket), N, K. Grouped (a fused-MoE GEMM): `--groups=<experts>` and
        each group's M = ceil(tokens x top_k / experts), tokens at the top of the M bucket, i.e.
        routing assumed uniform over the experts (the reproducer runs equal-sized groups); N and K
        are the GEMM's own (gemm1: N = fc1 rows, 2 x I when gated, K = H; gemm2: N = H, K = I),
        as decode/problems.py derives them from the key. TunerError when top_k is unknown (keys before
        FlashInfer 0.6.18rc2) and no --top-k was given.
        """
        p = target.problem
        if p is None or not p.experts:
            return run_args(self._problem(target), warmup=self.warmup, iters=self.iters)
        top_k = p.top_k or self.moe_top_k
        if not top_k:
            raise TunerError(f"{target.key}: the key does not record top_k (FlashInfer before 0.6.18rc2), so each "
                             "expert's M is unknown; pass --top-k")
        from tiletune.tuner.moe_problem import MoeRefusal, grouped_gemm_mnk

        tokens = int(p.m_range[1]) if p.m_range else int(p.m)
        try:
            mnk = grouped_gemm_mnk(tokens=tokens, top_k=int(top_k), experts=int(p.experts), n=int(p.n), k=int(p.k))
        except MoeRefusal as e:
            raise TunerError(f"{target.key}: {e}") from None
        return run_args(mnk, warmup=self.warmup, iters=self.iters, groups=int(p.experts))

    def child_spec(self, target: RetryTarget, scratch: Path) -> ChildSpec:
        """The built binary itself; when there is no binary, a child that says why (the build)."""
        try:
            res = self._builds.get(target.key) or build(self.build_for(target), cache=self.cache)
            self._builds[target.key] = res
        except TunerError as e:
            return _reporting_child({"stage": "setup", "error": str(e)}, scratch)
        if res.binary is None:
            return _reporting_child({"stage": "compile", "error": f"compile error: {res.error}",
                                     "cutlass_version": res.cutlass_version}, scratch)
        try:
            args = self.run_args(target)
        except TunerError as e:
            return _reporting_child({"stage": "setup", "error": str(e)}, scratch)
        return ChildSpec(argv=(str(res.binary), *args), cwd=scratch)

    def interpret(self, target: RetryTarget, child: ChildResult) -> Attempt:
        from tiletune.tuner import classify

        started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        r: Mapping[str, Any] = child.result or {}
        res = self._builds.get(target.key)
        env: Dict[str, Any] = {}
        if res is not None:
            env.update(cutlass=res.cutlass_version, cutlass_origin=res.cutlass_origin)
        for k in ("device", "device_cc", "sm_count", "driver_version", "runtime_version", "cutlass_version"):
            if r.get(k) is not None:
                env[k] = r[k]
        base = dict(target=target, engine=self.name, started_at=started, duration_s=child.duration_s,
                    stderr_tail=child.stderr_tail[-2000:], env=tuple(sorted(env.items())),
                    smem_bytes=r.get("smem_bytes"), smem_limit=r.get("smem_limit"),
                    error_bound=r.get("error_bound"))
        times = tuple(float(t) * 1e-3 for t in (r.get("times_ms") or []) if t is not None)
        measured = dict(time_s=(r["time_ms"] * 1e-3 if r.get("time_ms") is not None else None), times_s=times,
                        tflops=r.get("tflops"), rel_error=r.get("rel_error"))

        def done(diagnosis: Diagnosis, message: str, **kw: Any) -> Attempt:
            fields = {**base, **kw}
            return Attempt(diagnosis=diagnosis, message=message, **fields)

        if r.get("stage") == "compile":
            return done(Diagnosis.COMPILE_ERROR, str(r.get("error")))
        if r.get("stage") == "setup":
            return done(Diagnosis.ENGINE_ERROR, str(r.get("error")))
        if not r or child.timed_out or child.signal is not None:
            text = "\n".join([child.stderr_tail, child.stdout_tail, str(r.get("error") or "")])
            v = classify.classify_exit(text=text, exit_code=child.exit_code, signal=child.signal,
                                       timed_out=child.timed_out)
            return done(v.diagnosis, v.message, **({} if not r else measured))
        error = r.get("error") or ""
        cuda_error = r.get("cuda_error") or ""
        smem, limit = r.get("smem_bytes"), r.get("smem_limit")
        if r.get("device") is None and r.get("mode") == "run" and cuda_error:
            return done(Diagnosis.ENGINE_ERROR, f"no usable CUDA device: {error}")
        if r.get("can_implement") is None and error:  # stopped before CUTLASS was asked anything
            hit = classify.classify_text(f"{cuda_error}\n{error}")
            if hit is not None and hit.diagnosis in (Diagnosis.OUT_OF_MEMORY, Diagnosis.NO_KERNEL_IMAGE):
                return done(hit.diagnosis, error)
            return done(Diagnosis.ENGINE_ERROR, f"the reproducer stopped before can_implement: {error}")
        if _status_ok(r.get("can_implement")) is False:
            return done(Diagnosis.CAN_IMPLEMENT, f"can_implement rejected the problem: {error or r.get('can_implement')}")
        if _status_ok(r.get("initialize")) is False:
            if re.search(r"NoKernelImage|InvalidDeviceFunction", cuda_error):
                return done(Diagnosis.NO_KERNEL_IMAGE,
                            f"no kernel image for this GPU (binary built for {r.get('arch')}, device cc "
                            f"{r.get('device_cc')}): {error}")
            if smem is not None and limit is not None and smem > limit:
                return done(Diagnosis.SMEM_OVER_LIMIT,
                            f"kernel needs {smem:,} B of shared memory, device limit is {limit:,} B per block "
                            f"(initialize: {r.get('initialize')}; {cuda_error or 'no CUDA error name'})")
            return done(Diagnosis.INITIALIZE_FAILED, error or f"initialize: {r.get('initialize')}")
        if _status_ok(r.get("run")) is False or (error and r.get("run") is None):
            hit = classify.classify_text(f"{cuda_error}\n{error}")
            if hit is not None:
                return done(hit.diagnosis, hit.message)
            return done(Diagnosis.LAUNCH_FAILURE, error or f"run: {r.get('run')}")
        nonfinite = int(r.get("nonfinite") or 0)
        verdict = classify.judge_numerics(rel_error=r.get("rel_error"), nonfinite=nonfinite, dtype_out=OUTPUT_DTYPE)
        if verdict is not None:
            return done(verdict.diagnosis, verdict.message, **measured)
        if _status_ok(r.get("run")) and r.get("time_ms") is not None:
            msg = (f"passed: {r['time_ms']:.4g} ms median of {len(times)}, {r.get('tflops') or 0:.1f} TFLOP/s, "
                   f"rel_error {r.get('rel_error'):.2e} (bound {classify.error_bound(OUTPUT_DTYPE):.3g}, vs float64 host reference)")
            return done(Diagnosis.PASSED, msg, **{**measured, "error_bound": classify.error_bound(OUTPUT_DTYPE)})
        v = classify.classify_exit(text=f"{error}\n{child.stderr_tail}", exit_code=child.exit_code, signal=None,
                                   timed_out=False)
        return done(v.diagnosis, v.message, **measured)


def operand_dtype(target: RetryTarget) -> str:
    """The dtype of a target's GEMM operands, which the reproducer is chosen by.

    A cache key records the OUTPUT dtype (an mxfp8_gemm key says 'bfloat16'), so: a MoE target's
    weight (else activation) dtype from its problem; a dense op's own operands (DENSE_GEMM_OPERAND_DTYPE);
    else the problem's A dtype, else the target's.
    """
    p = target.problem
    if p is not None and p.experts:
        return p.dtype_b or p.dtype_a or ""
    if target.op in DENSE_GEMM_OPERAND_DTYPE:
        return DENSE_GEMM_OPERAND_DTYPE[target.op]
    return (p.dtype_a if p else None) or target.dtype or ""


def _reporting_child(payload: Mapping[str, Any], scratch: Path) -> ChildSpec:
    """A child that only prints `payload` as its JSON line and exits 1 (a failed build is the attempt)."""
    scratch.mkdir(parents=True, exist_ok=True)
    path = scratch / "engine-report.json"
    path.write_text(json.dumps(dict(payload)))
    code = "import sys; print(open(sys.argv[1]).read()); sys.exit(1)"
    return ChildSpec(argv=(sys.executable, "-c", code, str(path)), cwd=scratch)
