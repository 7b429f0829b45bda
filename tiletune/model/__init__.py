"""The model stage: GPU spec table, shared-memory fit and the performance model.

Public API (others import these names): `analyze(problem, config, gpu, *, dtype, arch=None,
stage_policy=None) -> ModelResult`, `smem_fit(config, arch, dtype, *, grouped, stage_policy) ->
SmemFit`, `gpus.find(name)`, `gpus.default_for_arch(arch)`. Pure arithmetic over frozen
dataclasses: no I/O except reading the GPU table, no torch.
"""

from tiletune.model.gpus import GpuSpec, Peak, default_for_arch, find
from tiletune.model.perf import Alternative, Bytes, ModelResult, analyze
from tiletune.model.smem import SmemFit, smem_fit

__all__ = ["analyze", "ModelResult", "Bytes", "Alternative", "smem_fit", "SmemFit", "GpuSpec", "Peak", "find",
           "default_for_arch"]
