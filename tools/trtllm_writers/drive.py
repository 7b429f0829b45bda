"""Runs INSIDE a throwaway directory that holds TensorRT-LLM's own source files (autotuner.py,
version.py, logger.py, byte for byte as tools/trtllm_writers/__main__.py checked them) and the
stand-ins for the imports that need TensorRT-LLM's C++ libraries. Drives that autotuner's writer with
synthetic runners and times, as one rank of a two-rank run. Standard library and CPU torch only:
never imports tiletune.

    python drive.py RANK CACHE_PATH WITH_CANDIDATES_LOG

- The cache: `autotune(cache_path=CACHE_PATH, rank=RANK)` around `AutoTuner.choose_one` for four
  synthetic ops (a dynamic M dimension bucketed 1..16, a tactic that always fails, an op with two
  runners, an op with a single (runner, tactic) pair, an op whose every tactic fails from M=8 on, so
  that those profiles have no valid pair and no entry); on leaving the context the release's
  own `AutoTunerProfilingCache.save_cache` writes `<stem>.rank<RANK>.json` beside CACHE_PATH.
- The log: what the release's code logs through its logger (its `logging` handler writes to stderr,
  which the caller keeps): `Generated profile`, `Profiled runner=..: Xms.`, `Failed when profiling ..`,
  `Exception captured`, `Profiling runner=.. for cache_key=..`, `No valid runner/tactic was found`,
  the tuning-error summary, and the
  cache save lines. TLLM_LOG_LEVEL=verbose, as a user asks for DEBUG.
- WITH_CANDIDATES_LOG: the same lines with NVIDIA/TensorRT-LLM#19162's `[Autotuner] Candidate: ...`
  line among them, which this autotuner.py predates. Its text is DERIVED from the PR's source (the
  review hunk of tensorrt_llm/_torch/autotuner.py:1334 at the PR head) and rendered here, through the
  release's logger, with the release's own objects for every candidate `_profile_runners` profiled:
  the runner, the tactic, the `OptimizationProfile.get_opt_shapes()` of the profile, and the time
  `_profile_single_kernel` measured (`inf` where it raised), each after that candidate's own lines as
  the PR places it. An op with a single (runner, tactic) pair is the PR's shortcut (#14458), logged
  `time=0.000ms` (its recorded-without-profiling marker), though this commit still times it. The
  derived lines never reach the release's own log (stderr).

What stands in for the GPU (and only that): `torch.cuda.Event`, `current_stream` and `synchronize`
run on a synthetic clock that each runner call advances by the time this script gives its tactic,
so the release's own `_profile_single_kernel` measures those times; `get_device_name` answers
GPU_NAME and `get_device_capability` GPU_CAPABILITY.
"""

from __future__ import annotations

import contextlib
import logging
import sys

import torch

GPU_NAME = "NVIDIA B200"
GPU_CAPABILITY = (10, 0)
CANDIDATE_MARK = "[Autotuner] Candidate: "

# --- the synthetic clock that stands in for the GPU ---------------------------------------------
_NOW = [0.0]


class _Event:
    def __init__(self, *args, **kwargs):
        self.t = 0.0

    def record(self, *args, **kwargs):
        self.t = _NOW[0]

    def elapsed_time(self, end):
        return end.t - self.t


class _Stream:
    def synchronize(self):
        pass


def _install_clock() -> None:
    cuda = torch.cuda
    cuda.Event = _Event
    cuda.current_stream = lambda *a, **k: _Stream()
    cuda.synchronize = lambda *a, **k: None
    cuda.get_device_name = lambda *a, **k: GPU_NAME
    cuda.get_device_capability = lambda *a, **k: GPU_CAPABILITY


# --- synthetic runners and times -------------------------------------------------------------------
# Class names and module of TensorRT-LLM's own runners (tensorrt_llm/_torch/custom_ops/torch_custom_ops.py),
# so that the release's log prints them as it prints its own; their behaviour is synthetic.
RUNNER_MODULE = "tensorrt_llm._torch.custom_ops.torch_custom_ops"
N, K = 1024, 512


def _time_ms(op: str, m: int, tactic: int, rank: int) -> float:
    """Synthetic time per (op, runner, M, tactic, rank); rank 1 is a little slower on tactic 0 (so its winner
    differs from rank 0's at some buckets: the ranks kept apart are not copies)."""
    base = {"fp8": 0.0231, "fp4-cublas": 0.0302, "fp4-cutlass": 0.0187, "swap": 0.0268}[op] + 0.0013 * m
    spread = (1.00 + 0.11 * rank, 0.97, 1.30, 0.90 if (rank, m) == (1, 2) else 1.05, 0.93 if m >= 8 else 1.08)[tactic]
    return round(base * spread, 6)


def _runner_classes(at):
    TunableRunner = at.TunableRunner

    class FP8RowwiseGemmRunner(TunableRunner):
        """Tactics 0..4; tactic 2 always fails (its error text is synthetic)."""

        def __init__(self, output_dtype, rank):
            self.output_dtype = output_dtype
            self.rank = rank

        def get_valid_tactics(self, inputs, profile, **kwargs):
            return [0, 1, 2, 3, 4]

        def forward(self, inputs, *, tactic=-1, do_preparation=False, **kwargs):
            if tactic == 2:
                raise RuntimeError("[TensorRT-LLM][ERROR] Assertion failed: Failed to initialize cutlass gemm. "
                                   "Error: Error Internal")
            _NOW[0] += _time_ms("fp8", inputs[0].shape[0], max(tactic, 0), self.rank)
            return inputs[0]

    class CublasLtFP4GemmRunner(TunableRunner):
        def __init__(self, output_dtype, rank):
            self.output_dtype = output_dtype
            self.rank = rank

        def get_valid_tactics(self, inputs, profile, **kwargs):
            return [0, 1]

        def forward(self, inputs, *, tactic=-1, do_preparation=False, **kwargs):
            _NOW[0] += _time_ms("fp4-cublas", inputs[0].shape[0], max(tactic, 0), self.rank)
            return inputs[0]

    class CutlassFP4GemmRunner(TunableRunner):
        """Tactics 0..4 (4 wins from M=8 on); tactic 2 fails."""

        def __init__(self, output_dtype, rank):
            self.output_dtype = output_dtype
            self.rank = rank

        def get_valid_tactics(self, inputs, profile, **kwargs):
            return [0, 1, 2, 3, 4]

        def forward(self, inputs, *, tactic=-1, do_preparation=False, **kwargs):
            if tactic == 2:
                raise RuntimeError("[TensorRT-LLM][ERROR] Assertion failed: CUTLASS FP4 GEMM tactic 2 "
                                   "cannot implement this problem")
            _NOW[0] += _time_ms("fp4-cutlass", inputs[0].shape[0], max(tactic, 0), self.rank)
            return inputs[0]

    class fp8SwapABGemmRunner(TunableRunner):
        """A single (runner, tactic) pair: what #14458's shortcut records without timing."""

        def __init__(self, output_dtype, rank):
            self.output_dtype = output_dtype
            self.rank = rank

        def get_valid_tactics(self, inputs, profile, **kwargs):
            return [0]

        def forward(self, inputs, *, tactic=-1, do_preparation=False, **kwargs):
            _NOW[0] += _time_ms("swap", inputs[0].shape[0], 0, self.rank)
            return inputs[0]

    class FP8BlockScalingGemmRunner(TunableRunner):
        """Tactics 0, 1; both fail from M=8 on: those profiles have no valid (runner, tactic) at all."""

        def __init__(self, output_dtype, rank):
            self.output_dtype = output_dtype
            self.rank = rank

        def get_valid_tactics(self, inputs, profile, **kwargs):
            return [0, 1]

        def forward(self, inputs, *, tactic=-1, do_preparation=False, **kwargs):
            if tactic >= 0 and inputs[0].shape[0] >= 8:
                raise RuntimeError(f"[TensorRT-LLM][ERROR] Assertion failed: FP8 block scaling GEMM tactic {tactic} "
                                   "needs M < 8")
            _NOW[0] += _time_ms("fp8", inputs[0].shape[0], max(tactic, 0), self.rank)
            return inputs[0]

    classes = (FP8RowwiseGemmRunner, CublasLtFP4GemmRunner, CutlassFP4GemmRunner, fp8SwapABGemmRunner,
               FP8BlockScalingGemmRunner)
    for c in classes:  # module-level classes there: the default repr is <module.Class object at 0x..>
        c.__module__, c.__qualname__ = RUNNER_MODULE, c.__name__
    return classes


def _last_positive_power_of_2(x: int) -> int:
    n = 1
    while n * 2 <= x:
        n *= 2
    return n


# --- the #19162 Candidate lines, from the release's own objects -------------------------------------
class _Candidates:
    """Wraps `_profile_runners` / `_profile_single_kernel` to see each candidate's outcome (the wrapped functions
    run unchanged: the time returned, the exception re-raised into the release's own handler) and logs the
    candidate's #19162 line where the PR puts it: after that candidate's own lines (for a failure, after the
    handler's warning and `Exception captured`, i.e. when the next candidate starts or the profile ends)."""

    def __init__(self, at, logger):
        self.at, self.logger = at, logger
        self.profile = None
        self.custom_op = ""
        self.seen: list = []
        self.failed = None  # a failed candidate whose line waits until its handler has logged

    def line(self, runner, tac, t) -> None:
        # NVIDIA/TensorRT-LLM#19162, tensorrt_llm/_torch/autotuner.py:1334 at the PR head (the shortcut's
        # line; the timed path logs the same fields with the measured time, inf for a failure)
        self.logger.debug(
            f"[Autotuner] Candidate: custom_op={self.custom_op}, "
            f"runner={runner}, tactic={tac}, "
            f"shapes={self.profile.get_opt_shapes()}, "
            f"time={t:.3f}ms")

    def flush_failed(self) -> None:
        if self.failed is not None:
            self.line(*self.failed)
            self.failed = None

    def install(self) -> None:
        tuner_cls = self.at.AutoTuner
        profile_runners, single_kernel = tuner_cls._profile_runners, tuner_cls._profile_single_kernel
        cand = self

        def _profile_single_kernel(tuner, runner, inputs, tactic, **kwargs):
            cand.flush_failed()
            try:
                t = single_kernel(tuner, runner, inputs, tactic, **kwargs)
            except Exception:
                cand.seen.append((runner, tactic, float("inf")))
                cand.failed = (runner, tactic, float("inf"))
                raise
            cand.seen.append((runner, tactic, t))
            if not cand.single:
                cand.line(runner, tactic, t)
            return t

        def _profile_runners(tuner, custom_op, runners, input_tensors, profile, tuning_config, **kwargs):
            cand.custom_op, cand.profile, cand.seen, cand.failed = custom_op, profile, [], None
            cand.single = sum(len(r.get_valid_tactics(input_tensors, profile)) for r in runners) == 1
            out = profile_runners(tuner, custom_op, runners, input_tensors, profile, tuning_config, **kwargs)
            cand.flush_failed()
            if cand.single:  # #14458's shortcut (this commit still times it): recorded, 0.000 = not measured
                runner, tac, _t = cand.seen[0]
                cand.line(runner, tac, 0.0 if out[0] is not None else float("inf"))
            return out

        tuner_cls._profile_runners = _profile_runners
        tuner_cls._profile_single_kernel = _profile_single_kernel


def _route_candidates(path: str) -> None:
    """Every line, Candidate lines among them, also to PATH (the release logger's own format); stderr, which
    the caller keeps as the release's own log, gets every line but those."""
    root = logging.getLogger()
    for h in root.handlers:
        h.addFilter(lambda rec: CANDIDATE_MARK not in rec.getMessage())
    fh = logging.FileHandler(path, mode="w")
    fh.setFormatter(root.handlers[0].formatter if root.handlers else None)
    logging.getLogger("TRT-LLM").addHandler(fh)


def main(argv: list[str]) -> int:
    rank, cache_path, with_candidates = int(argv[0]), argv[1], argv[2]
    _install_clock()
    from tensorrt_llm._torch import autotuner as at
    from tensorrt_llm.logger import logger

    _route_candidates(with_candidates)
    _Candidates(at, logger).install()
    FP8, CublasFP4, CutlassFP4, SwapAB, BlockFP8 = _runner_classes(at)
    spec = at.DynamicTensorSpec(input_idx=0, dim_idx=0, gen_tuning_buckets=(1, 2, 4, 8, 16),
                                map_to_tuning_buckets=_last_positive_power_of_2)
    fp8_cfg = at.TuningConfig(dynamic_tensor_specs=(spec,))
    # FP4: input 2 (the activation's scale factors) has M rows, constrained to input 0's
    fp4_cfg = at.TuningConfig(dynamic_tensor_specs=(spec,),
                              constraint_specs=(at.ConstraintSpec(input_idx=2, dim_idx=0,
                                                                  infer_shape=lambda shapes: shapes[0][0]),))
    m = 16
    act = torch.zeros((m, K), dtype=torch.bfloat16)
    weight = torch.zeros((N, K), dtype=torch.bfloat16)
    act4 = torch.zeros((m, K // 2), dtype=torch.uint8)
    weight4 = torch.zeros((N, K // 2), dtype=torch.uint8)
    act_sf = torch.zeros((m, K // 16), dtype=torch.uint8)
    tuner = at.AutoTuner.get()
    with at.autotune(cache_path=cache_path, rank=rank):
        tuner.choose_one("trtllm::fp8_rowwise_gemm::gemm", [FP8(torch.bfloat16, rank)], fp8_cfg, [act, weight])
        tuner.choose_one("trtllm::fp4_gemm::gemm", [CublasFP4(torch.bfloat16, rank), CutlassFP4(torch.bfloat16, rank)],
                         fp4_cfg, [act4, weight4, act_sf])
        tuner.choose_one("trtllm::fp8_swap_ab_gemm::gemm", [SwapAB(torch.bfloat16, rank)], at.TuningConfig(), [act, weight])
        tuner.choose_one("trtllm::fp8_block_scaling_gemm::gemm", [BlockFP8(torch.bfloat16, rank)], fp8_cfg, [act, weight])
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
