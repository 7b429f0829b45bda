"""The stand-alone CUTLASS reproducer a user attaches to a ticket: the kernels/ source for one tile,
its one-line build and run commands, and what the kernel is (identity lines, Blackwell notes)."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from tiletune.core.records import TileConfig
from tiletune.tuner.cutlass_build import SUPPORT_HEADERS, KernelBuild, kernel_build, kernel_identity, nvcc_command, run_args
from tiletune.tuner.cutlass_toolchain import CutlassHeaders, find_cutlass, kernels_dir


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
    run_line = " ".join([f"./{binary}"] + run_args(problem, groups=groups if grouped else None))
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
