"""Runs INSIDE a throwaway venv holding one FlashInfer release (and CPU torch): drives that release's
own autotuner writers with synthetic profiling results and leaves what they wrote in the current
directory. Standard library, torch and flashinfer only: never imports tiletune.

    python drive.py SCENARIO [ARGS]

Scenarios (each one process, so every log starts from a fresh AutoTuner):
  tune       `autotune(True, cache="cache.json")` around `AutoTuner.choose_one` for two synthetic
             ops, with tactics that fail while profiling, then `save_configs` writes cache.json;
             from 0.7.4 on also `tie_tolerance` (a near tie kept, a contender failing its re-timing).
  reload     `autotune(False, cache="cache.json")` with a runner whose `validate_tactic` rejects
             one cached tactic (the revalidation warning, where the release has it) and a shape
             outside the tuned buckets (the fallback warning); `load_configs` logs what it loaded.
  foreign    `autotune(False, cache="foreign.json")` on a cache another environment wrote (the
             caller copies it here): the release's metadata verdict.
  sticky     a failing tactic after which the CUDA context is reported unusable (the release's
             `_sticky_cuda_error` answers as it would after an illegal memory access); the
             exception ends the process as it would end a user's.
  v2tune     `autotune_v2(cache_root="v2root", measurement_policy=eager)` around choose_one: the
             managed store's manifest and entry files.
  v2replay   `autotune_v2(mode="replay", ...)` on that store: attach and preload lines.
  group      two processes, ranks of one autotune process group (torch.distributed gloo on CPU),
             enter different operations: the group's startup gate raises `_TuningGroupError` on
             both (each rank's stderr; `group-rank` is what each runs).

What cannot run without a GPU is replaced, and only that: the CUDA timing primitives
(`torch.cuda.Event`, streams, graphs, synchronize) run on a synthetic clock that each runner call
advances by the time this script assigns to its tactic, so the release's own `_profile_single_kernel`
measures and logs those times; `torch.cuda.get_device_name` answers `GPU_NAME`; the delay kernel
(a GPU spin before each timing, `delay_kernel`, a JIT module) does nothing and the tuner's delays
are 0. Everything else
(bucketing, keys, selection, tie settling, logging, file writing) is the release's code.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys

GPU_NAME = "NVIDIA B200"  # what torch.cuda.get_device_name answers (sm100: the fp4 catalog decodes it)

# --- the synthetic clock that stands in for the GPU ---------------------------------------------
_NOW = [0.0]


class _Event:
    def __init__(self, *args, **kwargs):
        self.t = 0.0

    def record(self, *args, **kwargs):
        self.t = _NOW[0]

    def elapsed_time(self, end):
        return end.t - self.t

    def synchronize(self):
        pass

    def query(self):
        return True


class _Stream:
    def synchronize(self):
        pass

    def wait_stream(self, *args):
        pass

    def wait_event(self, *args):
        pass

    def record_event(self, event=None):
        event = event or _Event()
        event.record()
        return event


class _Graph:
    def __init__(self, *args, **kwargs):
        self._calls = []

    def replay(self):
        pass

    def reset(self):
        pass


def _install_clock(torch) -> None:
    cuda = torch.cuda
    cuda.Event = _Event
    cuda.current_stream = lambda *a, **k: _Stream()
    cuda.default_stream = lambda *a, **k: _Stream()
    cuda.Stream = lambda *a, **k: _Stream()
    cuda.stream = lambda *a, **k: contextlib.nullcontext()
    cuda.synchronize = lambda *a, **k: None
    cuda.is_current_stream_capturing = lambda: False
    cuda.get_device_name = lambda *a, **k: GPU_NAME
    cuda.current_device = lambda: 0
    cuda.CUDAGraph = _Graph
    cuda.graph = lambda *a, **k: contextlib.nullcontext()
    cuda.empty_cache = lambda: None


_CALLS: dict = {}  # (runner id, M, tactic) -> calls so far: the first measurement's, then re-timings

# --- synthetic ops -------------------------------------------------------------------------------
# fp4_gemm as mm_fp4 calls choose_one (flashinfer/gemm/gemm_base.py): 10 inputs, M bucketed on input 0,
# a_descale/out/workspace rows constrained; N=256, K=512 (256 packed bytes).
N, K = 256, 512
FAIL_TEXT = ("[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm100. Error: Error Internal "
             "(synthetic: raised by tools/flashinfer_writers/drive.py's runner)")


def _fp4_time_ms(m: int, tactic: int) -> float:
    """Synthetic time per (M bucket, tactic): tactic 4 is fastest, tactic 1 within 3% of it."""
    base = 0.004 + 0.00002 * m
    spread = {0: 1.30, 1: 1.03, 2: 1.02, 3: 1.25, 4: 1.00, 5: 1.40, 6: 1.10, 7: 1.60}
    return base * spread.get(tactic, 2.0)


def _runner_classes(fa):
    TunableRunner = fa.TunableRunner

    class CutlassFp4GemmRunner(TunableRunner):
        """Tactics 0..7; 5 and 7 always fail; in `retime_fails` a tactic fails when re-timed."""

        fail_always = (5, 7)
        retime_fails: tuple = ()
        reject = ()  # tactics validate_tactic rejects (reload scenario)

        def __init__(self):
            self.first_pass = 0  # (plain values only: releases before 0.7 hash a runner by its __dict__)

        def get_valid_tactics(self, inputs, profile):
            return list(range(8))

        def forward(self, inputs, tactic=-1, do_preparation=False, **kwargs):
            if do_preparation:
                return None
            m = inputs[0].shape[0]
            key = (id(self), m, tactic)
            n_calls = _CALLS[key] = _CALLS.get(key, 0) + 1
            if tactic in self.fail_always:
                raise RuntimeError(FAIL_TEXT)
            if tactic in self.retime_fails and self.first_pass and n_calls > self.first_pass:
                raise RuntimeError(FAIL_TEXT.replace("Error Internal", "Error Internal on re-timing"))
            _NOW[0] += _fp4_time_ms(m, tactic if tactic >= 0 else 4)
            return None

        def validate_tactic(self, inputs, tactic):
            return tactic not in self.reject

    class CublasFp8GemmRunner(TunableRunner):
        """A second op with a single bucket and no failures (a cache of two ops)."""

        def get_valid_tactics(self, inputs, profile):
            return [0, 1, 2]

        def forward(self, inputs, tactic=-1, do_preparation=False, **kwargs):
            if not do_preparation:
                _NOW[0] += {0: 0.012, 1: 0.010, 2: 0.011}.get(tactic, 0.02)

    CutlassFp4GemmRunner.__module__ = "flashinfer.gemm.gemm_base"  # as FlashInfer's runners print
    CublasFp8GemmRunner.__module__ = "flashinfer.gemm.gemm_base"
    return CutlassFp4GemmRunner, CublasFp8GemmRunner


def _spec(cls, **kwargs):
    """Build a dataclass spec with the fields this release's class takes."""
    params = inspect.signature(cls).parameters
    return cls(**{k: v for k, v in kwargs.items() if k in params})


def _fp4_call(torch, fa, m: int):
    buckets = tuple(b for b in (1, 2, 4, 8, 16, 32) if b <= max(m, 1))

    def to_bucket(x: int) -> int:
        for b in buckets:
            if x <= b:
                return b
        return buckets[-1] * 2

    dyn = _spec(fa.DynamicTensorSpec, input_idx=(0,), dim_idx=(0,), gen_tuning_buckets=buckets,
                map_to_tuning_buckets=to_bucket, tensor_initializers=None)
    cons = tuple(_spec(fa.ConstraintSpec, input_idx=i, dim_idx=0, infer_shape=lambda shapes: shapes[0][0])
                 for i in (2, 6))
    ws = _spec(fa.ConstraintSpec, input_idx=9, dim_idx=0, infer_shape=lambda shapes: 1 << 20)
    config = _spec(fa.TuningConfig, dynamic_tensor_specs=(dyn,), constraint_specs=cons + (ws,))
    inputs = [
        torch.empty(m, K // 2, dtype=torch.uint8), torch.empty(K // 2, N, dtype=torch.uint8),
        torch.empty(m, K // 16, dtype=torch.uint8), torch.empty(K // 16, N, dtype=torch.uint8),
        torch.empty((), dtype=torch.float32), torch.bfloat16,
        torch.empty(m, N, dtype=torch.bfloat16), 16, True, torch.empty(1 << 20, dtype=torch.uint8),
    ]
    return config, inputs


def _fp8_call(torch, fa):
    config = _spec(fa.TuningConfig)
    inputs = [torch.empty(1, 64, 128, dtype=torch.float8_e4m3fn), torch.empty(1, 128, 256, dtype=torch.float8_e4m3fn)]
    return config, inputs


def _tuner(fa):
    mod = sys.modules[fa.AutoTuner.__module__]
    if hasattr(mod, "delay_kernel"):  # a GPU spin before each timing (a JIT module): nothing to wait for here
        mod.delay_kernel = lambda *args, **kwargs: None
    tuner = fa.AutoTuner.get()
    for attr in ("stream_delay_micro_secs", "_CUDA_GRAPH_DELAY_MICRO_SECS"):  # no delay kernel (a JIT module)
        if hasattr(tuner, attr):
            setattr(tuner, attr, 0)
    return tuner


def _autotune_kwargs(fa, **wanted):
    params = inspect.signature(fa.autotune).parameters
    return {k: v for k, v in wanted.items() if k in params}


def scenario_tune(torch, fa, notes):
    Fp4, Fp8 = _runner_classes(fa)
    tuner = _tuner(fa)
    fp4 = Fp4()
    fp4.first_pass = getattr(tuner, "warmup", 0) + getattr(tuner, "repeat", 0)
    kw = _autotune_kwargs(fa, tie_tolerance=0.05)
    if "tie_tolerance" in kw:
        fp4.retime_fails = (1,)  # tactic 1 (3% slower than 4) fails its re-timing; tactic 2 (2%) is kept
        notes["tie_tolerance"] = 0.05
    else:
        notes["tie_tolerance"] = "autotune() takes no tie_tolerance in this release"
    if "cache" in inspect.signature(fa.autotune).parameters:
        kw["cache"] = "cache.json"
    else:
        notes["cache"] = "autotune() takes no cache= in this release (no JSON cache before 0.6.7): log only"
    with fa.autotune(True, **kw):
        config, inputs = _fp4_call(torch, fa, 8)
        tuner.choose_one("fp4_gemm", [fp4], config, inputs)
        config, inputs = _fp8_call(torch, fa)
        tuner.choose_one("fp8_gemm", [Fp8()], config, inputs)


def scenario_reload(torch, fa, notes):
    Fp4, _ = _runner_classes(fa)
    tuner = _tuner(fa)
    fp4 = Fp4()
    fp4.reject = (1, 2, 4)  # the cached winner (4 before tie_tolerance, 2 with it) fails revalidation
    notes["revalidation"] = hasattr(tuner, "_tactic_still_valid")
    if "cache" not in inspect.signature(fa.autotune).parameters:
        notes["cache"] = "autotune() takes no cache= in this release: nothing to reload"
        return
    with fa.autotune(False, cache="cache.json"):
        for m in (8, 500):  # 500 is outside the tuned buckets (1..8): the fallback warning
            config, inputs = _fp4_call(torch, fa, m)
            tuner.choose_one("fp4_gemm", [fp4], config, inputs)


def scenario_foreign(torch, fa, notes):
    Fp4, _ = _runner_classes(fa)
    tuner = _tuner(fa)
    if "cache" not in inspect.signature(fa.autotune).parameters:
        notes["cache"] = "autotune() takes no cache= in this release: nothing to load"
        return
    with fa.autotune(False, cache="foreign.json"):
        config, inputs = _fp4_call(torch, fa, 16)
        tuner.choose_one("fp4_gemm", [Fp4()], config, inputs)


def scenario_sticky(torch, fa, notes):
    mod = sys.modules[fa.AutoTuner.__module__]
    if not hasattr(mod, "_sticky_cuda_error"):
        notes["sticky"] = "this release has no _sticky_cuda_error (it does not stop on a lost CUDA context)"
        return
    mod._sticky_cuda_error = lambda: RuntimeError(
        "CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call")
    Fp4, _ = _runner_classes(fa)
    tuner = _tuner(fa)
    with fa.autotune(True):
        config, inputs = _fp4_call(torch, fa, 4)
        tuner.choose_one("fp4_gemm", [Fp4()], config, inputs)


def _v2(fa):
    try:
        import flashinfer.autotune_cache as ac
    except ImportError:
        return None
    return ac if hasattr(ac, "autotune_v2") else None


def scenario_v2tune(torch, fa, notes):
    ac = _v2(fa)
    if ac is None:
        notes["v2"] = "no flashinfer.autotune_cache.autotune_v2 in this release"
        return
    Fp4, Fp8 = _runner_classes(fa)
    tuner = _tuner(fa)
    kw = {}
    if hasattr(ac, "MeasurementPolicy"):
        kw["measurement_policy"] = ac.MeasurementPolicy(execution_mode="eager")
    with ac.autotune_v2(cache_root="v2root", **kw):
        config, inputs = _fp4_call(torch, fa, 8)
        tuner.choose_one("fp4_gemm", [Fp4()], config, inputs)
        config, inputs = _fp8_call(torch, fa)
        tuner.choose_one("fp8_gemm", [Fp8()], config, inputs)


def scenario_v2replay(torch, fa, notes):
    ac = _v2(fa)
    if ac is None:
        notes["v2"] = "no flashinfer.autotune_cache.autotune_v2 in this release"
        return
    Fp4, _ = _runner_classes(fa)
    tuner = _tuner(fa)
    kw = {}
    if hasattr(ac, "MeasurementPolicy"):
        kw["measurement_policy"] = ac.MeasurementPolicy(execution_mode="eager")
    with ac.autotune_v2(mode="replay", cache_root="v2root", **kw):
        config, inputs = _fp4_call(torch, fa, 4)
        tuner.choose_one("fp4_gemm", [Fp4()], config, inputs)


def scenario_group(torch, fa, notes):
    """Two ranks of one autotune process group (gloo, CPU) enter different operations: the group's
    startup gate raises `_TuningGroupError` on both (what a rank prints is its stderr)."""
    if not hasattr(fa, "set_autotune_process_group"):
        notes["group"] = "no set_autotune_process_group in this release"
        return
    import subprocess

    port = str(29500 + os.getpid() % 2000)
    procs = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, __file__, "group-rank"], env=env, stderr=subprocess.PIPE, text=True))
    for rank, p in enumerate(procs):
        _out, err = p.communicate(timeout=300)
        with open(f"group.rank{rank}.stderr.txt", "w") as f:
            f.write(err)
        notes[f"rank{rank}_exit_status"] = p.returncode


def scenario_group_rank(torch, fa, notes):
    import torch.distributed as dist

    dist.init_process_group("gloo")
    fa.set_autotune_process_group(dist.group.WORLD)
    rank = dist.get_rank()
    Fp4, _ = _runner_classes(fa)
    tuner = _tuner(fa)
    try:
        with fa.autotune(True):
            config, inputs = _fp4_call(torch, fa, 4)
            # rank 1 enters another operation than rank 0: the group's plans disagree
            tuner.choose_one("fp4_gemm" if rank == 0 else "fp4_gemm_other", [Fp4()], config, inputs)
    finally:
        try:  # both ranks reach here (tuned or raised): leave together, or gloo may abort the one left behind
            dist.barrier()
        finally:
            dist.destroy_process_group()


SCENARIOS = {name[len("scenario_"):].replace("_", "-"): fn for name, fn in globals().items() if name.startswith("scenario_")}


def main() -> int:
    name = sys.argv[1]
    import torch

    _install_clock(torch)
    import flashinfer  # noqa: F401  (the package as users import it)
    import flashinfer.autotuner as fa

    notes: dict = {"scenario": name}
    try:
        SCENARIOS[name](torch, fa, notes)
    finally:
        with open(f"notes-{name}.json", "w") as f:
            json.dump(notes, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
