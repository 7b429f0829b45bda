"""Runs INSIDE a throwaway directory that holds the sources of tools/trtllm_writers' SECTIONS writer
(hyukn/TensorRT-LLM@5619fce's autotuner.py, NVIDIA/TensorRT-LLM@00832e8's _bootstrap.py,
HuiGao-NV/TensorRT-LLM@195839a's logger.py, byte for byte as __main__.py checked them), the
stand-ins for the imports that need TensorRT-LLM's C++ libraries or a GPU, and drive.py (the
b35ac1b writer's driver, whose synthetic clock and runners this one reuses). Standard library and
CPU torch only: never imports tiletune.

    python drive_sections.py RANK

One rank of a two-rank run; the caller runs rank 0, then rank 1, in the same directory:

- The cache path comes from TensorRT-LLM's own `_bootstrap._setup_unified_cache()` with
  TRTLLM_CACHE_DIR set to the relative root `TRTLLM_CACHE_DIR`: it sets TLLM_AUTOTUNER_CACHE_PATH
  (`<root>/autotuner/cache.json`) and FLASHINFER_WORKSPACE_BASE (`<root>/flashinfer`), printed
  here as `bootstrap: NAME=VALUE` lines on stderr for the caller.
- The rank: `AutoTuner.setup_distributed_state(Mapping(world_size=2, tp_size=2, rank=RANK),
  dist=None)` (the writer's own entry point; with no communicator each rank tunes on its own) and
  the logger's own `set_rank`, so each line carries `[RANK r]`.
- `autotune(cache_path=...)` around `choose_one` for: the b35ac1b drive's FP8 rowwise op (tactic 2
  always fails), its FP4 op with two runners, its FP8 block-scaling op (no valid tactic from M=8
  on), its single-pair FP8 swap-AB op with `exclude_from_cache=True` (as #14458 set it for
  fp8SwapABGemmRunner: tuned, never saved), and a synthetic `trtllm::broadcast_gemm::gemm` tuned
  with `DistributedTuningStrategy.BROADCAST`, which the writer saves to its `shared` section. On leaving
  the context the writer's own `save_cache(path, rank)` merges this rank's `rank_<r>` section into
  the one file (under its sibling `.lock`). Rank 1 finds rank 0's file and loads it first
  (`load_cache`), as a second process started later would.
- The log: every line the writer's logger printed (stdout; TLLM_LOG_LEVEL=verbose).

What stands in for the GPU (and only that): drive.py's synthetic clock for torch.cuda.Event /
current_stream / synchronize and the device name / capability; `torch.cuda.CUDAGraph` (constructed
by `_profile_single_kernel` even when no graph is captured) and `torch.cuda.stream` (a no-op
context). Every TuningConfig passes `use_cuda_graph=False`, a real option of the writer, since a
graph capture needs a GPU.
"""

from __future__ import annotations

import contextlib
import os
import sys

import drive as common  # type: ignore[import-not-found]  # the b35ac1b driver copied beside this file: clock, runners
import torch

CACHE_ROOT = "TRTLLM_CACHE_DIR"


class _Graph:
    """torch.cuda.CUDAGraph on a machine with no GPU: constructed, never captured (use_cuda_graph=False)."""

    def replay(self) -> None:
        raise RuntimeError("no CUDA graph on CPU")


def _install_gpu() -> None:
    common._install_clock()
    torch.cuda.CUDAGraph = _Graph
    torch.cuda.stream = lambda *a, **k: contextlib.nullcontext()


def _broadcast_runner(at):
    class BroadcastGemmRunner(at.TunableRunner):
        """Synthetic (op and runner named for what the drive does with them): tactics 0, 1, 3, 4, the same times on
        every rank (what a broadcast shares is one rank's winner)."""

        def __init__(self, output_dtype):
            self.output_dtype = output_dtype

        def get_valid_tactics(self, inputs, profile, **kwargs):
            return [0, 1, 3, 4]

        def forward(self, inputs, *, tactic=-1, do_preparation=False, **kwargs):
            common._NOW[0] += common._time_ms("fp4-cutlass", inputs[0].shape[0], max(tactic, 0), 0)
            return inputs[0]

    BroadcastGemmRunner.__module__ = "tensorrt_llm._torch.custom_ops.torch_custom_ops"
    return BroadcastGemmRunner


def main(argv: list[str]) -> int:
    rank = int(argv[0])
    os.environ["TRTLLM_CACHE_DIR"] = CACHE_ROOT
    from tensorrt_llm import _bootstrap

    _bootstrap._setup_unified_cache()  # TensorRT-LLM's own: the unified cache root's defaults
    for name in ("TLLM_AUTOTUNER_CACHE_PATH", "FLASHINFER_WORKSPACE_BASE"):
        print(f"bootstrap: {name}={os.environ[name]}", file=sys.stderr)
    cache_path = os.environ["TLLM_AUTOTUNER_CACHE_PATH"]
    _install_gpu()
    from tensorrt_llm._torch import autotuner as at
    from tensorrt_llm.logger import logger
    from tensorrt_llm.mapping import Mapping

    logger.set_rank(rank)
    tuner = at.AutoTuner.get()
    tuner.setup_distributed_state(Mapping(world_size=2, tp_size=2, rank=rank), dist=None)
    FP8, CublasFP4, CutlassFP4, SwapAB, BlockFP8 = common._runner_classes(at)
    Broadcast = _broadcast_runner(at)
    spec = at.DynamicTensorSpec(input_idx=0, dim_idx=0, gen_tuning_buckets=(1, 2, 4, 8, 16),
                                map_to_tuning_buckets=common._last_positive_power_of_2)
    fp8_cfg = at.TuningConfig(dynamic_tensor_specs=(spec,), use_cuda_graph=False)
    fp4_cfg = at.TuningConfig(dynamic_tensor_specs=(spec,), use_cuda_graph=False,
                              constraint_specs=(at.ConstraintSpec(input_idx=2, dim_idx=0,
                                                                  infer_shape=lambda shapes: shapes[0][0]),))
    swap_cfg = at.TuningConfig(use_cuda_graph=False, exclude_from_cache=True)
    broadcast_cfg = at.TuningConfig(dynamic_tensor_specs=(spec,), use_cuda_graph=False,
                              distributed_tuning_strategy=at.DistributedTuningStrategy.BROADCAST)
    m, n, k = 16, common.N, common.K
    act = torch.zeros((m, k), dtype=torch.bfloat16)
    weight = torch.zeros((n, k), dtype=torch.bfloat16)
    act4 = torch.zeros((m, k // 2), dtype=torch.uint8)
    weight4 = torch.zeros((n, k // 2), dtype=torch.uint8)
    act_sf = torch.zeros((m, k // 16), dtype=torch.uint8)
    with at.autotune(cache_path=cache_path):
        tuner.choose_one("trtllm::fp8_rowwise_gemm::gemm", [FP8(torch.bfloat16, rank)], fp8_cfg, [act, weight])
        tuner.choose_one("trtllm::fp4_gemm::gemm", [CublasFP4(torch.bfloat16, rank), CutlassFP4(torch.bfloat16, rank)],
                         fp4_cfg, [act4, weight4, act_sf])
        tuner.choose_one("trtllm::fp8_swap_ab_gemm::gemm", [SwapAB(torch.bfloat16, rank)], swap_cfg, [act, weight])
        tuner.choose_one("trtllm::fp8_block_scaling_gemm::gemm", [BlockFP8(torch.bfloat16, rank)], fp8_cfg, [act, weight])
        tuner.choose_one("trtllm::broadcast_gemm::gemm", [Broadcast(torch.bfloat16)], broadcast_cfg, [act4, weight4])
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
