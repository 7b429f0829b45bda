"""The single-file writer: all ranks in one cache, `metadata` + `shared` + `rank_<r>` sections.

NVIDIA's own stored copies of tensorrt_llm/_torch/autotuner.py stop at b35ac1b (#7738's per-rank
files), so the newer writer is run from the stored copy of a fork by the autotuner's maintainer,
hyukn/TensorRT-LLM@5619fce (NVIDIA/TensorRT-LLM#10336's `save_cache(file_path, rank)` with the
`shared` section of #14441/#15626, the `.lock` sibling and the atomic rename, #14458's single-pair
shortcut and `exclude_from_cache`). The cache path is the one TensorRT-LLM's own
`tensorrt_llm/_bootstrap.py` (NVIDIA/TensorRT-LLM@00832e8, lines 64-85: `_unified_cache_defaults`,
`_setup_unified_cache`) derives from TRTLLM_CACHE_DIR; that file is run too. The logger is the
newest stored logger.py (HuiGao-NV/TensorRT-LLM@195839a), the first with the `warning_once` this
autotuner calls and the `[RANK r]` prefix; its writer commit's own logger.py is not stored.

None of these three commits is a release: the cache's `metadata.lib_version` is what the version
stand-in says ("unknown"), because no version.py of the writer's commit is stored.
"""

from __future__ import annotations

from tools.trtllm_writers.writer import HERE, Source, Writer

WRITER_COMMIT = "5619fce9f3048a40cbd1c244deafc4d7c4ca05cf"
BOOTSTRAP_COMMIT = "00832e862c7ef4ce47464053be8b7d2011d249ee"
LOGGER_COMMIT = "195839a73571888fc1236254c12fa6db7a815920"

SOURCES = (
    Source("tensorrt_llm/_torch/autotuner.py", WRITER_COMMIT,
           "0ef28a612fd65f97810a4945cd0903faa463bff5c9522e8175b07e0a79df9d24", 111159,
           "the writer: autotune(cache_path), AutoTuner.choose_one / _profile_runners / _profile_single_kernel, "
           "AutoTunerProfilingCache.save_cache(file_path, rank) / _partition_cache_by_strategy / "
           "_serialize_cache_data / load_cache: one file, `metadata` + `shared` + `rank_<r>` sections, "
           "merged under a sibling `.lock`",
           repository="hyukn/TensorRT-LLM"),
    Source("tensorrt_llm/_bootstrap.py", BOOTSTRAP_COMMIT,
           "e1d331c79cb46524adaa6c56194e9dabf141e1ae6301a44cc36591838183a31c", 8373,
           "the unified cache root: _setup_unified_cache() (lines 80-85) sets, from TRTLLM_CACHE_DIR, "
           "TLLM_AUTOTUNER_CACHE_PATH=<root>/autotuner/cache.json (line 68) and "
           "FLASHINFER_WORKSPACE_BASE=<root>/flashinfer (line 72) via _unified_cache_defaults (line 64)"),
    Source("tensorrt_llm/logger.py", LOGGER_COMMIT,
           "f339b9bf6d86a847f7ddd8dbcd10ea8453bc557593a1c36e8575d7b2ef016643", 6244,
           "the logger: `[%(asctime)s] [TRT-LLM] [RANK r] [V] <message>` on stdout, with the warning_once this "
           "autotuner calls; the newest stored logger.py (the writer commit's own is not stored)",
           repository="HuiGao-NV/TensorRT-LLM"),
)

_WHY_CXX = "a compiled extension of TensorRT-LLM (not on PyPI for CPU)"
STANDINS: dict[str, tuple[str, str]] = {
    "tensorrt_llm/__init__.py": (
        '__version__ = "unknown"  # no version.py of the writer commit is stored\n',
        "the real package __init__ runs _bootstrap._prepare_environment, loads the C++ libraries and imports the "
        "whole package; the writer needs only `tensorrt_llm.__version__` (metadata.lib_version), and no "
        "version.py of hyukn/TensorRT-LLM@5619fce is stored, so it says \"unknown\""),
    "tensorrt_llm/_torch/__init__.py": (
        "",
        "the real one imports the models and custom ops, which need the C++ op library"),
    "tensorrt_llm/_torch/distributed.py": (
        "class Distributed:\n    @classmethod\n    def get(cls, mapping):\n"
        "        raise RuntimeError('no communicator in this run')\n",
        "the real package wraps MPI/NCCL communicators; the drive passes dist=None to setup_distributed_state, "
        "so the writer never calls it (each rank tunes on its own)"),
    "tensorrt_llm/_utils.py": (
        "import contextlib\n\n\ndef confidential_compute_enabled():\n    return False\n\n\n"
        "def nvtx_range(msg):\n    return contextlib.nullcontext()\n",
        "the real _utils imports the C++ bindings and TensorRT; the writer uses confidential_compute_enabled "
        "(asks the GPU driver; False: time with CUDA events) and nvtx_range (an NVTX profiler range; nothing "
        "here records one)"),
    "tensorrt_llm/bindings/__init__.py": ("", f"the C++ bindings package, {_WHY_CXX}; see runtime.py"),
    "tensorrt_llm/bindings/internal/__init__.py": ("", f"the C++ bindings package, {_WHY_CXX}; see runtime.py"),
    "tensorrt_llm/bindings/internal/runtime.py": (
        "def delay_kernel(delay_micro_secs, stream):\n    return None\n\n\n"
        "def record_global_timer(ptr, stream):\n    return None\n",
        f"{_WHY_CXX}: `delay_kernel` spins the GPU before each timing (a GPU's events would not count it, nor does "
        "the synthetic clock); `record_global_timer` is used only with the globaltimer backend, which this run "
        "does not take"),
    "tensorrt_llm/mapping.py": (
        "class Mapping:\n"
        "    def __init__(self, world_size=1, rank=0, tp_size=1, pp_size=1):\n"
        "        self.world_size, self.rank, self.tp_size, self.pp_size = world_size, rank, tp_size, pp_size\n"
        "        self.tp_rank = rank % tp_size\n\n"
        "    def has_pp(self):\n        return self.pp_size > 1\n",
        "the real Mapping (parallelism layout) imports torch distributed helpers and the C++ bindings; the writer "
        "reads rank, tp_size, tp_rank and has_pp() of it, which this one holds"),
    "tensorrt_llm/env_utils.py": (
        "import os\n\nTRTLLMENV = os.environ\n",
        "the logger reads TRTLLMENV.get('TLLM_LOG_LEVEL') only; the real env_utils (HuiGao-NV/TensorRT-LLM@195839a, "
        "a registry of known variables) answers a registered key with os.environ.get(key, default), as this does"),
    "tensorrt.py": (
        "class ILogger:\n    pass\n\n\n"
        "class Logger(ILogger):\n"
        "    INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = 0, 1, 2, 3, 4\n\n"
        "    def __init__(self, min_severity=WARNING):\n        self.min_severity = min_severity\n",
        "logger.py imports TensorRT's Python bindings (a compiled extension, not on PyPI for CPU) for `trt.Logger` "
        "and its five severities only; polygraphy is absent, which logger.py itself allows"),
    "cuda/__init__.py": ("", "see cuda/bindings/driver.py"),
    "cuda/bindings/__init__.py": ("", "see cuda/bindings/driver.py"),
    "cuda/bindings/driver.py": (
        "",
        "the CUDA driver's Python bindings; the writer calls them only in _get_l2_cache_size_in_bytes "
        "(use_cold_l2_cache=True), which this run does not set"),
}

WRITER = Writer(
    name=WRITER_COMMIT[:12],
    sources=SOURCES,
    standins=STANDINS,
    drive=HERE / "drive_sections.py",
    helpers=(HERE / "drive.py",),
    log_stream="stdout",
    written_by="the sources' own code (hyukn/TensorRT-LLM@5619fce's autotuner.py, NVIDIA/TensorRT-LLM@00832e8's "
               "_bootstrap.py, HuiGao-NV/TensorRT-LLM@195839a's logger.py), driven by "
               "tools/trtllm_writers/drive_sections.py once per rank (rank 0, then rank 1) in one directory",
    substituted={
        "gpu": "torch.cuda.Event / current_stream / synchronize run on drive.py's synthetic clock advanced by each "
               "runner call; get_device_name answers \"NVIDIA B200\", get_device_capability (10, 0); "
               "torch.cuda.CUDAGraph is constructed, never captured, and torch.cuda.stream is a no-op context "
               "(drive_sections.py)",
        "use_cuda_graph": "every TuningConfig passes use_cuda_graph=False (a real option of the writer; its default, "
                          "True, captures a CUDA graph, which needs a GPU)",
        "runners": "synthetic TunableRunner subclasses named and placed (module) as TensorRT-LLM's own runners, "
                   "with synthetic per-tactic times and failure texts (drive.py, drive_sections.py); trtllm::broadcast_gemm::gemm "
                   "(BroadcastGemmRunner) is synthetic whole, tuned with the BROADCAST strategy to fill the `shared` section",
        "ranks": "rank 0 runs, then rank 1 in the same directory: rank 1 loads rank 0's file first (load_cache) and "
                 "merges its own rank_1 section into it, as a later process does; with dist=None no rank waits "
                 "for another",
    },
    not_driven={
        "multiprocess tactic profiling": "no runner sets tactic_compile_dominates, so no tactic is profiled in a "
                                         "subprocess pool",
        "globaltimer timing": "confidential_compute_enabled() is False (stand-in), so CUDA events time each tactic",
    },
)
