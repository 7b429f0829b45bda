"""The CUTLASS reproducer engine: find CUTLASS headers, build kernels/ with nvcc, run, read the JSON.

What this module owns:
- `find_cutlass()`: which CUTLASS headers to compile against, and their version. FlashInfer's
  bundled copy comes first when installed (it is the CUTLASS the kernels under test were built
  with), then the nvidia-cutlass wheel's (older, 4.2). Every result names the version.
- `kernel_build(...)` / `build()` / `build_many()`: the exact nvcc command for one config of a
  kernels/ reproducer, and a build cache keyed by a hash of (sources, command, CUTLASS, nvcc), so
  a config is compiled once. `--jobs` builds run in parallel threads (nvcc does the work).
- `query_smem(...)`: the exact `GemmKernel::SharedStorageSize` and mainloop stage count for a
  tile, from a type-only build (`-DTILETUNE_QUERY_ONLY`; no device code, no GPU needed).
- `CutlassEngine`: the `Engine` for `tiletune retry`: the child is the built binary itself (or,
  when the build failed, a child that reports the compile error), and `interpret` turns its one
  JSON line into an `Attempt` using classify.py.
- `write_reproducer(...)`: a folder with the .cu, the header it needs, and the exact build and
  run lines, for a bug ticket.

Nothing here imports torch or touches a GPU; only the binaries it builds do.
"""

from __future__ import annotations

import concurrent.futures
import datetime as _dt
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tiletune.core.errors import TunerError
from tiletune.core.records import TileConfig
from tiletune.core.vocabulary import DENSE_GEMM_OPERAND_DTYPE
from tiletune.tuner.engine import Attempt, ChildResult, ChildSpec, Diagnosis, RetryTarget

# ----------------------------------------------------------------------------- kernels and dtypes

KERNELS_DIR_ENV = "TILETUNE_KERNELS_DIR"
CUTLASS_DIR_ENV = "TILETUNE_CUTLASS_DIR"
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


def kernels_dir() -> Path:
    """Where the kernels/ sources are: $TILETUNE_KERNELS_DIR when set; else the checkout's kernels/
    (a source tree or an editable install: developers edit them there, so it comes first); else the
    copy a built wheel carries as tiletune/_kernels (setup.py puts it there)."""
    env = os.environ.get(KERNELS_DIR_ENV)
    package = Path(__file__).resolve().parents[1]
    candidates = [Path(env)] if env else [package.parent / "kernels", package / "_kernels"]
    for d in candidates:
        if (d / "tt_common.hpp").is_file():
            return d
    raise TunerError(
        f"{' or '.join(map(str, candidates))}: kernels/ reproducer sources not found "
        f"(set {KERNELS_DIR_ENV} to the folder holding tt_common.hpp)"
    )


@dataclass(frozen=True)
class KernelBuild:
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


# ----------------------------------------------------------------------------- CUTLASS headers


@dataclass(frozen=True)
class CutlassHeaders:
    """A CUTLASS include tree and where it came from."""

    include: Path  # holds cutlass/ and cute/
    util_include: Optional[Path]  # tools/util/include (cutlass/util/packed_stride.hpp)
    version: str  # from cutlass/version.h, e.g. "4.5.0"
    origin: str  # "TILETUNE_CUTLASS_DIR", "checkout .cutlass/", "flashinfer <ver>", "nvidia-cutlass"


def _read_version(include: Path) -> Optional[str]:
    try:
        text = (include / "cutlass" / "version.h").read_text(errors="replace")
    except OSError:
        return None
    parts = [re.search(rf"#define\s+CUTLASS_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        return None
    return ".".join(p.group(1) for p in parts if p)


def _headers_at(root: Path, origin: str) -> Optional[CutlassHeaders]:
    """CUTLASS tree rooted at `root` (holding include/ and maybe tools/util/include)."""
    include = root / "include"
    version = _read_version(include)
    if version is None:
        return None
    util = root / "tools" / "util" / "include"
    return CutlassHeaders(include, util if util.is_dir() else None, version, origin)


def _package_dir(name: str) -> Optional[Path]:
    """Folder of an installed package, found without importing it (flashinfer imports torch)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def cutlass_candidates() -> List[CutlassHeaders]:
    """Every CUTLASS tree found, in the order they are preferred."""
    found: List[CutlassHeaders] = []
    env = os.environ.get(CUTLASS_DIR_ENV)
    if env:
        h = _headers_at(Path(env), CUTLASS_DIR_ENV)
        if h is None:
            raise TunerError(f"{env}: ${CUTLASS_DIR_ENV} has no include/cutlass/version.h")
        found.append(h)
    checkout = Path(__file__).resolve().parents[2] / ".cutlass"
    h = _headers_at(checkout, "checkout .cutlass/")
    if h:
        found.append(h)
    fi = _package_dir("flashinfer")
    if fi:
        h = _headers_at(fi / "data" / "cutlass", "flashinfer package (flashinfer/data/cutlass)")
        if h:
            found.append(h)
    cl = _package_dir("cutlass_library")
    if cl:
        h = _headers_at(cl / "source", "nvidia-cutlass wheel (cutlass_library/source)")
        if h:
            found.append(h)
    return found


def find_cutlass() -> CutlassHeaders:
    """The CUTLASS headers to build with; TunerError naming what was looked for if none."""
    found = cutlass_candidates()
    if not found:
        raise TunerError(
            "no CUTLASS headers found: install flashinfer-python (its flashinfer/data/cutlass) or nvidia-cutlass, "
            f"or set {CUTLASS_DIR_ENV} to a CUTLASS tree (see kernels/README.md: kernels/get_cutlass.sh)"
        )
    return found[0]


# ----------------------------------------------------------------------------- building


def nvcc_path() -> Optional[str]:
    return shutil.which("nvcc")


def nvcc_version() -> Optional[str]:
    exe = nvcc_path()
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release\s+([\d.]+),\s*V([\d.]+)", out)
    return m.group(2) if m else None


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


@dataclass(frozen=True)
class BuildResult:
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


# ----------------------------------------------------------------------------- exact shared memory


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


# ----------------------------------------------------------------------------- reproducers


def _run_args(problem_mnk: Tuple[int, int, int], *, warmup: int = 10, iters: int = 50,
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


def _blackwell_note(kb: KernelBuild) -> List[str]:
    if kb.arch in ("sm_100a", "sm_120a"):
        return [f"This is a Blackwell ({kb.arch}) kernel: it compiles on any machine with nvcc 12.8+, and runs only on "
                f"{'an SM100 (B200/GB200)' if kb.arch == 'sm_100a' else 'an SM120/SM121 (RTX 50xx, RTX PRO 6000, DGX Spark)'} "
                "GPU; elsewhere the binary reports no_kernel_image. tiletune has never run it: compiled only."]
    return []


def write_reproducer(
    config: TileConfig,
    arch: str,
    dtype: str,
    out_dir: Path,
    *,
    problem: Tuple[int, int, int] = (4096, 4096, 4096),
    grouped: bool = False,
    groups: Optional[int] = None,
    stages: Optional[int] = None,
    headers: Optional[CutlassHeaders] = None,
) -> Dict[str, Path]:
    """Write a stand-alone reproducer folder: the .cu, its support headers, build.sh, run.sh, README.txt.

    The build line is the exact nvcc command the engine uses, with the CUTLASS path as a variable
    (`CUTLASS_DIR`, defaulting to the tree found here) so the folder works on another machine.
    """
    kb = kernel_build(config, arch, dtype, grouped=grouped, stages=stages)
    headers = headers or find_cutlass()
    kdir = kernels_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (kb.source, *SUPPORT_HEADERS):
        shutil.copyfile(kdir / name, out_dir / name)
    binary = kb.kernel
    cmd = nvcc_command(kb, headers, Path(binary), kdir=Path("."))
    root = headers.include.parent
    line = " ".join(
        '-I"$CUTLASS_DIR/include"' if a == f"-I{headers.include}"
        else '-I"$CUTLASS_DIR/tools/util/include"' if headers.util_include and a == f"-I{headers.util_include}"
        else "-I." if a == "-I." else shlex.quote(a)
        for a in cmd
    )
    build_sh = (
        "#!/usr/bin/env bash\n"
        f"# Builds the tiletune reproducer {kb.label()} against CUTLASS {headers.version}\n"
        f"# (found here: {headers.origin}). Point CUTLASS_DIR at a CUTLASS tree with include/.\n"
        "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n"
        f"CUTLASS_DIR=${{CUTLASS_DIR:-{shlex.quote(str(root))}}}\n"
        f"{line}\n"
        + "".join(f"echo {shlex.quote(n)}\n" for n in _blackwell_note(kb))
    )
    run_line = " ".join([f"./{binary}"] + _run_args(problem, groups=groups if grouped else None))
    run_sh = ("#!/usr/bin/env bash\n# Prints one JSON line (see README.txt).\nset -uo pipefail\ncd \"$(dirname \"$0\")\"\n"
              + "".join(f"echo {shlex.quote(n)} >&2\n" for n in _blackwell_note(kb)) + run_line + "\n")
    readme = (
        f"tiletune CUTLASS reproducer: {kb.label()}\n"
        f"tile {config.label()} on {arch}, dtype {dtype}{', grouped' if grouped else ''}, "
        f"problem M={problem[0]} N={problem[1]} K={problem[2]}"
        + (f" per group, {groups} groups (MoE experts; M assumes uniform routing)" if grouped and groups else "")
        + f", CUTLASS {headers.version}\n"
        + "".join(f"{line}\n" for line in kernel_identity(kb, problem))
        + "\n"
        "Build:  ./build.sh      (nvcc; set CUTLASS_DIR to the CUTLASS tree to build against)\n"
        "Run:    ./run.sh        (or ./" + binary + " --query for shared memory and stages only)\n"
        + ("".join(f"{line}\n" for line in _blackwell_note(kb)))
        + "\nExact build line:\n  " + line + "\nExact run line:\n  " + run_line + "\n\n"
        "The binary prints one JSON line: smem_bytes (GemmKernel::SharedStorageSize), smem_limit (the device's\n"
        "opt-in per-block limit), swap_ab, tile_scheduler, problem and kernel_problem (the M, N, K the kernel\n"
        "itself runs), can_implement / initialize / run (CUTLASS status strings), time_ms (median of\n"
        "CUDA-event timed runs), tflops, rel_error (vs a float64 host reference at sampled outputs), cuda_error,\n"
        "error (one line) and cutlass_version.\n"
    )
    paths = {"build": out_dir / "build.sh", "run": out_dir / "run.sh", "readme": out_dir / "README.txt",
             "source": out_dir / kb.source}
    for key, text in (("build", build_sh), ("run", run_sh), ("readme", readme)):
        tmp = paths[key].with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, paths[key])
    for key in ("build", "run"):
        paths[key].chmod(0o755)
    return paths


# ----------------------------------------------------------------------------- the engine


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
        as ops.py derives them from the key. TunerError when top_k is unknown (keys before
        FlashInfer 0.6.18rc2) and no --top-k was given.
        """
        p = target.problem
        if p is None or not p.experts:
            return _run_args(self._problem(target), warmup=self.warmup, iters=self.iters)
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
        return _run_args(mnk, warmup=self.warmup, iters=self.iters, groups=int(p.experts))

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
