"""Building kernels/ for one tile with nvcc: the build description, the nvcc command line, the build
cache, parallel builds, and `query_smem` (a type-only build that prints the kernel's exact shared
memory and stage count without a GPU)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from msgspec import Struct

from tiletune.core.errors import TunerError
from tiletune.core.records import TileConfig
from tiletune.tuner.cutlass_toolchain import CutlassHeaders, find_cutlass, kernels_dir, nvcc_path, nvcc_version

CACHE_DIR_ENV = "TILETUNE_CACHE_DIR"


# dtype spellings users and caches write -> (canonical name, TT_DTYPE value of the dense bf16/fp8 kernels)
_DENSE_DTYPES = {
    "bf16": ("bf16", 0),
    "bfloat16": ("bf16", 0),
    "torch.bfloat16": ("bf16", 0),
    "fp8": ("fp8_e4m3", 1),
    "fp8_e4m3": ("fp8_e4m3", 1),
    "e4m3": ("fp8_e4m3", 1),
    "float8_e4m3fn": ("fp8_e4m3", 1),
    "torch.float8_e4m3fn": ("fp8_e4m3", 1),
}


# block-scaled spellings -> TT_FORMAT of blockscaled_gemm.cu (0 NVFP4, 1 MXFP8)
_BLOCKSCALED_DTYPES = {"nvfp4": 0, "fp4": 0, "e2m1": 0, "float4_e2m1fn_x2": 0,
                       "mxfp8": 1, "mx_float8": 1, "mxfp8_e4m3": 1}


# The headers every reproducer may include (copied into reproducer folders, hashed into build keys).
SUPPORT_HEADERS = ("tt_common.hpp", "tt_dense.hpp")


# The output of every reproducer is bf16 (the dtype the relative-error bound is chosen for).
OUTPUT_DTYPE = "bfloat16"


class KernelBuild(Struct, frozen=True, gc=False):
    """One reproducer configuration: which .cu, for which arch, with which -D macros."""

    source: str  # file name in kernels/, e.g. "sm90_gemm.cu"
    arch: str  # nvcc arch, e.g. "sm_90a"
    defines: Tuple[Tuple[str, int], ...]
    query: bool  # type-only build (-DTILETUNE_QUERY_ONLY)

    @property
    def kernel(self) -> str:
        return self.source[:-3]

    def label(self) -> str:
        d = ",".join(f"{k[3:].lower()}={v}" for k, v in self.defines)
        return f"{self.kernel}[{self.arch}{',query' if self.query else ''},{d}]"


def _schedule_code(sched: str, arch: str, fmt: Optional[int]) -> int:
    """TT_SCHEDULE: 0 cooperative, 1 ping-pong, 2 KernelScheduleAuto (SM120 block-scaled only).

    FlashInfer's SM120 MXFP8 runner leaves the schedule to CUTLASS (KernelScheduleAuto with
    EpilogueScheduleAuto), so an SM120 MXFP8 config without a schedule gets 2, as FlashInfer builds it.
    """
    s = sched.lower()
    if "pingpong" in s:
        return 1
    if "auto" in s or (not s and arch in ("sm120", "sm121") and fmt == 1):
        return 2 if arch in ("sm120", "sm121") else 0
    return 0


def kernel_build(
    config: TileConfig,
    arch: str,
    dtype: str,
    *,
    grouped: bool = False,
    stages: Optional[int] = None,
    query: bool = False,
    schedule: Optional[str] = None,
    fast_accum: Optional[bool] = None,
) -> KernelBuild:
    """The reproducer build for a tile on an arch and dtype; TunerError if kernels/ has none.

    Everything of the config that changes the kernel is honoured: tile, cluster, stage count
    (config.stages: FlashInfer's fixed StageCount<N> where its source has one, else auto carveout),
    schedule, swap-AB (the kernel's M runs over the problem's N), stream-K (the tile scheduler),
    2-SM MMA (SM100: mma_tile twice the CTA tile's M). `fast_accum` (SM90 fp8): the FP8FastAccum
    mainloop; None = what FlashInfer's SM90 fp8 CUTLASS GEMMs use (fast accumulation), unless the
    config's mainloop schedule names one.
    """
    a = arch.lower().replace("_", "").rstrip("af")
    tile = tuple(int(v) for v in config.tile)
    if len(tile) != 3 or min(tile) <= 0:
        raise TunerError(f"tile {config.tile}: need three positive sizes (M, N, K in elements)")
    stage_count = int((stages if stages is not None else config.stages) or 0)
    sched = (schedule or config.mainloop_schedule or "").lower()
    if sched in ("auto", "kernelscheduleauto") and a == "sm90":
        sched = ""
    base: Tuple[Tuple[str, int], ...] = (("TT_TILE_M", tile[0]), ("TT_TILE_N", tile[1]), ("TT_TILE_K", tile[2]))
    d = (dtype or "").lower()
    cl = tuple(int(v) for v in config.cluster)
    swap, stream_k = int(bool(config.swap_ab)), int(bool(config.stream_k))
    # On SM100 `tile` is the per-CTA tile; an MMA tile twice as tall means 2-SM (CTA pair) MMA.
    two_sm = int(bool(config.mma_tile) and int(config.mma_tile[0]) == 2 * tile[0])  # type: ignore[index]
    if a == "sm90":
        if d not in _DENSE_DTYPES:
            raise TunerError(f"dtype {dtype!r}: the SM90 reproducer takes bf16 or fp8 (e4m3); no kernel for it")
        if grouped:
            raise TunerError("sm90: kernels/ has no grouped SM90 reproducer (dense bf16/fp8 only)")
        is_fp8 = _DENSE_DTYPES[d][1] == 1
        pingpong = _schedule_code(sched, a, None) == 1
        if stream_k and pingpong:
            raise TunerError("sm90: stream-K needs the cooperative schedule (CUTLASS has no ping-pong stream-K)")
        fast = fast_accum if fast_accum is not None else ("fastaccum" in sched.replace("_", "") or not sched or
                                                          "fp8" in sched)
        epilogue = 1 if "nosmem" in (config.epilogue_schedule or "").lower().replace("_", "") else 0
        defines = base + (
            ("TT_DTYPE", _DENSE_DTYPES[d][1]),
            ("TT_CLUSTER_M", cl[0]),
            ("TT_CLUSTER_N", cl[1]),
            ("TT_STAGES", stage_count),
            ("TT_SCHEDULE", int(pingpong)),
            ("TT_FAST_ACCUM", int(bool(fast) and is_fp8)),
            ("TT_STREAM_K", stream_k),
            ("TT_SWAP_AB", swap),
            ("TT_EPILOGUE", epilogue),
        )
        return KernelBuild("sm90_gemm.cu", "sm_90a", defines, query)
    if a == "sm100" and d in _DENSE_DTYPES:
        if grouped:
            raise TunerError("sm100: kernels/ has no grouped bf16/fp8 reproducer (dense only)")
        if stream_k:
            raise TunerError("sm100: the bf16/fp8 reproducer has no stream-K (FlashInfer's SM100 bf16/fp8 runners have none)")
        defines = base + (
            ("TT_DTYPE", _DENSE_DTYPES[d][1]),
            ("TT_2SM", two_sm),
            ("TT_CLUSTER_M", cl[0]),
            ("TT_CLUSTER_N", cl[1]),
            ("TT_STAGES", stage_count),
            ("TT_SWAP_AB", swap),
        )
        return KernelBuild("sm100_gemm.cu", "sm_100a", defines, query)
    if a in ("sm120", "sm121", "sm100"):
        if d not in _BLOCKSCALED_DTYPES:
            kinds = "NVFP4, MXFP8, bf16 or fp8" if a == "sm100" else "block-scaled NVFP4 or MXFP8"
            raise TunerError(f"dtype {dtype!r}: the {a} reproducers take {kinds}; no kernel for it")
        fmt = _BLOCKSCALED_DTYPES[d]
        if grouped and fmt != 0:
            raise TunerError(f"{a}: the grouped (MoE) reproducer is NVFP4 only")
        if grouped and (swap or stream_k):
            raise TunerError(f"{a}: the grouped (MoE) reproducer has no swap-AB or stream-K")
        if a != "sm100" and cl != (1, 1, 1):
            raise TunerError(f"cluster {config.cluster}: SM12x has no thread-block clusters (must be 1x1x1)")
        defines = base + (
            ("TT_FORMAT", fmt),
            ("TT_ARCH", 100 if a == "sm100" else 120),
            ("TT_CLUSTER_M", cl[0]),
            ("TT_CLUSTER_N", cl[1]),
            ("TT_2SM", two_sm),
            ("TT_STAGES", stage_count),
            ("TT_SCHEDULE", _schedule_code(sched, a, fmt) if a != "sm100" else 0),
            ("TT_SWAP_AB", swap),
            ("TT_STREAM_K", stream_k),
            ("TT_GROUPED", 1 if grouped else 0),
        )
        # sm_120a code also runs on SM121 (GB10); FlashInfer builds SM121 the same way.
        return KernelBuild("blockscaled_gemm.cu", "sm_100a" if a == "sm100" else "sm_120a", defines, query)
    raise TunerError(f"arch {arch!r}: kernels/ has reproducers for sm90 (bf16, fp8), sm100 (nvfp4, mxfp8, bf16, fp8) "
                     "and sm120/sm121 (nvfp4, mxfp8) only")


def nvcc_command(kb: KernelBuild, headers: CutlassHeaders, output: Path, *, kdir: Optional[Path] = None) -> List[str]:
    """The exact nvcc command line for one build (the same one a reproducer's build.sh holds)."""
    kdir = kdir or kernels_dir()
    arch_num = kb.arch[3:]  # "90a"
    cmd = [
        "nvcc",
        "-std=c++17",
        "-O1" if kb.query else "-O3",
        f"-gencode=arch=compute_{arch_num},code=sm_{arch_num}",
        "--expt-relaxed-constexpr",
        "-diag-suppress=20012",  # CUTLASS's defaulted __host__ __device__ constructors; noise
    ]
    if kb.query:
        cmd.append("-DTILETUNE_QUERY_ONLY")
    cmd += [f"-D{k}={v}" for k, v in kb.defines]
    cmd += [f"-I{headers.include}"]
    if headers.util_include:
        cmd += [f"-I{headers.util_include}"]
    cmd += [f"-I{kdir}", str(kdir / kb.source), "-o", str(output)]
    return cmd


class BuildResult(Struct, frozen=True, gc=False):
    """What one build produced. `binary` is None when it failed; `error` is then the first error line."""

    build: KernelBuild
    command: Tuple[str, ...]
    binary: Optional[Path]
    cached: bool
    seconds: float
    cutlass_version: str
    cutlass_origin: str
    error: Optional[str] = None
    log: str = ""  # compiler output (tail) when it failed

    @property
    def ok(self) -> bool:
        return self.binary is not None


def cache_dir() -> Path:
    env = os.environ.get(CACHE_DIR_ENV)
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tiletune"
    return base / "cutlass-builds"


def _build_key(kb: KernelBuild, headers: CutlassHeaders, kdir: Path, nvcc_ver: Optional[str]) -> str:
    """Hash of everything that changes the binary: sources, flags, CUTLASS tree and nvcc."""
    h = hashlib.sha256()
    for name in (kb.source, *SUPPORT_HEADERS):
        h.update((kdir / name).read_bytes())
    h.update(json.dumps([kb.source, kb.arch, kb.defines, kb.query]).encode())
    # The CUTLASS version and a digest of its version.h, not its path, so a build cache carried to
    # another machine (or checkout) is still found there.
    version_h = (headers.include / "cutlass" / "version.h").read_bytes()
    h.update(f"{headers.version}|{hashlib.sha256(version_h).hexdigest()}|{nvcc_ver}".encode())
    return h.hexdigest()[:20]


_ERROR_LINE = re.compile(r"(error[^:]*:.*|static assertion failed.*|nvcc fatal.*)", re.IGNORECASE)


def first_error_line(log: str) -> str:
    """The first compiler error, with the file and line it points at when nvcc printed them."""
    for line in log.splitlines():
        if _ERROR_LINE.search(line):
            return " ".join(line.split())[:400]
    lines = [ln for ln in log.splitlines() if ln.strip()]
    return lines[-1][:400] if lines else "build failed with no compiler output"


def build(
    kb: KernelBuild,
    *,
    headers: Optional[CutlassHeaders] = None,
    cache: Optional[Path] = None,
    timeout_s: float = 1800,
) -> BuildResult:
    """Build one config (or find it in the cache). A compile failure is data, not an exception;
    a missing nvcc or missing headers raise TunerError (nothing can be built at all)."""
    if not nvcc_path():
        raise TunerError("nvcc not found on PATH: the CUTLASS engine compiles kernels/ with nvcc (CUDA toolkit)")
    headers = headers or find_cutlass()
    kdir = kernels_dir()
    key = _build_key(kb, headers, kdir, nvcc_version())
    root = (cache or cache_dir()) / f"{kb.kernel}-{key}"
    binary = root / ("query" if kb.query else "run")
    failed = root / "failed.json"
    cmd = nvcc_command(kb, headers, binary, kdir=kdir)
    common = dict(build=kb, command=tuple(cmd), cutlass_version=headers.version, cutlass_origin=headers.origin)
    if binary.is_file():
        return BuildResult(binary=binary, cached=True, seconds=0.0, **common)  # type: ignore[arg-type]
    if failed.is_file():  # a compile error is deterministic for the same key: don't pay for it twice
        f = json.loads(failed.read_text())
        return BuildResult(binary=None, cached=True, seconds=0.0, error=f["error"], log=f["log"], **common)  # type: ignore[arg-type]
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{binary.name}.{os.getpid()}.tmp"
    tmp_cmd = nvcc_command(kb, headers, tmp, kdir=kdir)
    start = time.monotonic()
    try:
        proc = subprocess.run(tmp_cmd, capture_output=True, text=True, timeout=timeout_s)
        rc, log = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        rc, log = -1, f"nvcc timed out after {timeout_s:g} s"
    seconds = time.monotonic() - start
    if rc == 0 and tmp.is_file():
        os.replace(tmp, binary)  # atomic: a concurrent build of the same key finds a whole file
        return BuildResult(binary=binary, cached=False, seconds=seconds, **common)  # type: ignore[arg-type]
    tmp.unlink(missing_ok=True)
    err = first_error_line(log)
    tail = log[-6000:]
    if rc != -1:  # timeouts are not cached: a faster machine may finish
        ftmp = root / f".failed.{os.getpid()}.tmp"
        ftmp.write_text(json.dumps({"error": err, "log": tail, "command": cmd}))
        os.replace(ftmp, failed)
    return BuildResult(binary=None, cached=False, seconds=seconds, error=err, log=tail, **common)  # type: ignore[arg-type]


def build_many(
    builds: Sequence[KernelBuild], *, jobs: int = 1, headers: Optional[CutlassHeaders] = None, cache: Optional[Path] = None
) -> List[BuildResult]:
    """Build several configs, `jobs` nvcc processes at a time; results in the order given."""
    headers = headers or find_cutlass()
    unique = list(dict.fromkeys(builds))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = dict(zip(unique, pool.map(lambda kb: build(kb, headers=headers, cache=cache), unique)))
    return [done[kb] for kb in builds]


def _parse_json_line(text: str) -> Optional[Dict[str, Any]]:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def query_smem(
    config: TileConfig,
    arch: str,
    dtype: str,
    *,
    grouped: bool = False,
    stages: Optional[int] = None,
    schedule: Optional[str] = None,
    headers: Optional[CutlassHeaders] = None,
    cache: Optional[Path] = None,
) -> Dict[str, Any]:
    """Exact shared storage and stage count of a tile, compiled, not modelled (no GPU needed).

    Returns {"tile", "arch", "dtype", "grouped", "stage_policy", "builds": bool, "stages",
    "smem_bytes", "smem_limit", "fits", "error", "cutlass_version", "cutlass_origin",
    "source": "compiled"}. A tile the builders reject (e.g. fewer than 2 stages) has builds=False
    and the compiler's first error line; `fits` is then False. Raises TunerError when nothing
    can be compiled here (no nvcc, no CUTLASS headers, no reproducer for this arch/dtype).
    """
    kb = kernel_build(config, arch, dtype, grouped=grouped, stages=stages, query=True, schedule=schedule)
    res = build(kb, headers=headers, cache=cache)
    out: Dict[str, Any] = {
        "tile": list(config.tile),
        "arch": arch,
        "dtype": dtype,
        "grouped": grouped,
        "stage_policy": "explicit" if (stages or config.stages) else "auto_carveout",
        "builds": res.ok,
        "stages": None,
        "smem_bytes": None,
        "smem_limit": None,
        "fits": False if not res.ok else None,
        "error": res.error,
        "cutlass_version": res.cutlass_version,
        "cutlass_origin": res.cutlass_origin,
        "source": "compiled",
        "build_seconds": round(res.seconds, 1),
    }
    if not res.ok:
        return out
    assert res.binary is not None
    try:
        proc = subprocess.run([str(res.binary), "--query"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TunerError(f"{res.binary}: query binary did not run: {e}") from e
    data = _parse_json_line(proc.stdout)
    if data is None:
        raise TunerError(f"{res.binary}: query printed no JSON line (exit {proc.returncode}): {proc.stderr.strip()[:200]}")
    out.update(stages=data.get("stages"), smem_bytes=data.get("smem_bytes"), smem_limit=data.get("smem_limit"))
    if out["smem_bytes"] is not None and out["smem_limit"] is not None:
        out["fits"] = out["smem_bytes"] <= out["smem_limit"]
    return out


def run_args(problem_mnk: Tuple[int, int, int], *, warmup: int = 10, iters: int = 50,
              groups: Optional[int] = None) -> List[str]:
    m, n, k = problem_mnk
    head = [f"--groups={groups}"] if groups is not None else []
    return head + [f"--m={m}", f"--n={n}", f"--k={k}", f"--warmup={warmup}", f"--iters={iters}"]


def kernel_identity(kb: KernelBuild, problem: Tuple[int, int, int]) -> List[str]:
    """What the built kernel is beyond its tile, and the problem it runs, in words (README lines)."""
    d = dict(kb.defines)
    m, n, k = problem
    lines = []
    if d.get("TT_SWAP_AB"):
        lines.append(f"swap-AB (-DTT_SWAP_AB=1): the kernel computes D^T = B * A^T, so its M runs over the problem's "
                     f"N: it runs M={n} N={m} K={k} with the problem's B (the weights) as its A, the problem's A as its "
                     f"B, and writes D column-major (the same memory as the problem's row-major {m} x {n} D); "
                     f"the tile's M ({d['TT_TILE_M']}) covers N={n}, its N ({d['TT_TILE_N']}) covers M={m}. "
                     "run.sh passes the problem's M, N, K; the binary swaps them.")
    else:
        lines.append(f"not swapped: the kernel runs the problem as given (its M = the problem's M = {m}).")
    if d.get("TT_STREAM_K"):
        lines.append("stream-K (-DTT_STREAM_K=1): the tile scheduler is CUTLASS's StreamKScheduler (K split across "
                     "CTAs with a fix-up through the workspace), not the persistent data-parallel one.")
    else:
        lines.append("tile scheduler: the kernel's default persistent (data-parallel) scheduler, no stream-K.")
    if d.get("TT_STAGES"):
        lines.append(f"stages: fixed StageCount<{d['TT_STAGES']}> (-DTT_STAGES={d['TT_STAGES']}).")
    else:
        lines.append("stages: StageCountAutoCarveout<sizeof(epilogue shared storage)> (CUTLASS picks).")
    if kb.source == "sm90_gemm.cu" and d.get("TT_DTYPE") == 1:
        lines.append("fp8 mainloop: " + ("FP8FastAccum (as FlashInfer's SM90 fp8 CUTLASS GEMMs)" if d.get("TT_FAST_ACCUM")
                                         else "plain (separate fp32 promotion of the wgmma accumulators)") + ".")
    if d.get("TT_SCHEDULE") == 2:
        lines.append("schedule: KernelScheduleAuto with EpilogueScheduleAuto (CUTLASS picks, as FlashInfer's SM120 MXFP8 runner).")
    return lines
