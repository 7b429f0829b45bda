"""python3 -m tools.trtllm_writers: what TensorRT-LLM's own autotuner writes, from its source files.

PyPI carries no TensorRT-LLM wheel (its `tensorrt-llm` is a stub sdist that downloads from NVIDIA's
own index, which neither this tool nor CI reaches), so the writer is run from its source files:
SOURCES below names each by repository, commit and path, with the sha256 of its bytes. The tool
copies them, byte for byte, into a throwaway directory laid out as the `tensorrt_llm` package,
adds the stand-ins (STANDINS: one per import that needs TensorRT-LLM's C++ libraries, nothing of
the writer's logic), and runs tools/trtllm_writers/drive.py there once per rank with CPU torch.
What the release's code wrote is copied to OUT/<commit>/:

    TRTLLM_CACHE_DIR/autotuner/cache.rank<r>.json   autotune(cache_path=<root>/autotuner/cache.json, rank=r)
                                                    -> AutoTunerProfilingCache.save_cache (ranks 0, 1)
    autotuner.rank<r>.log    every line the release logged (its logger.py, TLLM_LOG_LEVEL=verbose)
    autotuner+candidates.rank<r>.log  the same lines with NVIDIA/TensorRT-LLM#19162's `[Autotuner]
                             Candidate:` line after each candidate's own, DERIVED from the PR's source
                             (this autotuner.py predates it), rendered with the release's own runner,
                             profile and measured time of every candidate
    PROVENANCE.json          sources with sha256, stand-ins with reasons, torch, the exact command

The cache path is TRTLLM_CACHE_DIR's: NVIDIA/TensorRT-LLM#18897 (`_unified_cache_defaults` in
tensorrt_llm/_bootstrap.py) sets TLLM_AUTOTUNER_CACHE_PATH to `<root>/autotuner/cache.json`, which
model_engine passes to `autotune(cache_path=...)`; #18897 is not in any stored NVIDIA commit, so
that one path is taken from the PR, not run. This autotuner.py (#7738's writer) turns it into one
file per rank, `<root>/autotuner/cache.rank<r>.json`.

Stand-ins (STANDINS has each one's text and reason; PROVENANCE.json repeats them):
    tensorrt_llm/__init__.py          only `from .version import __version__`: the real one loads the
                                      C++ libraries and imports the whole package
    tensorrt_llm/_torch/__init__.py   empty: the real one imports models and custom ops (C++ op library)
    tensorrt_llm/bindings/...runtime  `delay_kernel` does nothing: a C++ binding that spins the GPU
    tensorrt.py                       `Logger` (five severities) and `ILogger`: TensorRT's compiled
                                      Python bindings, all that logger.py uses of them
    the GPU (drive.py)                torch.cuda events/streams on a synthetic clock, device name/capability
Not driven: `logger.warning_once` (an inference-time cache miss): the stored logger.py has none.

Getting the sources: from a clone of github.com/NVIDIA/TensorRT-LLM,
    git show <commit>:<path> > SOURCES/<commit>/<path>
for each row of SOURCES; a file whose sha256 differs is refused.

    python3 -m tools.trtllm_writers --sources SOURCES --out tests/data/trtllm_writers
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from tools.machine_paths import refuse_machine_paths

ROOT = Path(__file__).resolve().parents[2]
DRIVE = Path(__file__).with_name("drive.py")
REPO = "NVIDIA/TensorRT-LLM"
WRITER_COMMIT = "b35ac1b64368513d215c57d2ed01d62d910df8da"
LOGGER_COMMIT = "14e801da3632eb71367b847e335c4f2b09098651"
RANKS = (0, 1)
CACHE_ROOT = "TRTLLM_CACHE_DIR"  # the run directory's cache root; relative, so no log line names a path of this machine


@dataclass(frozen=True)
class Source:
    path: str
    commit: str
    sha256: str
    size: int
    role: str


SOURCES = (
    Source("tensorrt_llm/_torch/autotuner.py", WRITER_COMMIT,
           "4eb9da3b02b73bf7e9f319b645058e3848dce1aad3a8d56ceb04821df1642308", 39686,
           "the writer: autotune(cache_path, rank), AutoTuner.choose_one / _profile_runners / _profile_single_kernel, "
           "AutoTunerProfilingCache.save_cache / _serialize_cache_to_json (NVIDIA/TensorRT-LLM#7738's per-rank files)"),
    Source("tensorrt_llm/version.py", WRITER_COMMIT,
           "8731342964d53075b49355ad70094832914d16adc99e3c227f0ed4c2d6f10228", 709,
           "__version__, which the cache records as metadata.lib_version"),
    Source("tensorrt_llm/logger.py", LOGGER_COMMIT,
           "bdb31f575370b35afe1472fd705571e74b7e8e270bec4bd7abd379c551c479da", 4722,
           "the logger: `[%(asctime)s] [TRT-LLM] [V] <message>` on stderr. The newer of the two stored copies whose "
           "commit can be named (the other is 027cd518); the writer commit's own logger.py is not stored, so the line prefix is this "
           "commit's (the messages are the writer's)"),
)

# path in the throwaway package -> (its text, why it stands in). Each replaces an import only.
STANDINS: dict[str, tuple[str, str]] = {
    "tensorrt_llm/__init__.py": (
        "from .version import __version__  # noqa: F401\n",
        "the real package __init__ loads TensorRT-LLM's C++ libraries (libth_common.so, the bindings) and imports "
        "the whole package; the writer needs only `tensorrt_llm.__version__`, which comes from the real version.py"),
    "tensorrt_llm/_torch/__init__.py": (
        "",
        "the real tensorrt_llm/_torch/__init__.py imports the models and custom ops, which need the C++ op library; "
        "autotuner.py imports nothing from it"),
    "tensorrt_llm/bindings/__init__.py": ("", "the C++ bindings package (a compiled extension); see runtime.py"),
    "tensorrt_llm/bindings/internal/__init__.py": ("", "the C++ bindings package (a compiled extension); see runtime.py"),
    "tensorrt_llm/bindings/internal/runtime.py": (
        "def delay_kernel(delay_micro_secs, stream):\n    return None\n",
        "`delay_kernel` is a C++ binding that spins the GPU before each timing; with no GPU it does nothing "
        "(the synthetic clock is not advanced by it, as a GPU's events would not count it either)"),
    "tensorrt.py": (
        "class ILogger:\n    pass\n\n\n"
        "class Logger(ILogger):\n"
        "    INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = 0, 1, 2, 3, 4\n\n"
        "    def __init__(self, min_severity=WARNING):\n        self.min_severity = min_severity\n",
        "logger.py imports TensorRT's Python bindings (a compiled extension, not on PyPI for CPU) for `trt.Logger` "
        "and its five severities only; polygraphy is absent, which logger.py itself allows"),
}


def run(cmd: Sequence[object], **kw: Any) -> subprocess.CompletedProcess:
    r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r


def checked_sources(sources: Path) -> list[Path]:
    """Each SOURCES file under sources/<commit>/<path>, refused unless its bytes have the recorded sha256."""
    found = []
    for s in SOURCES:
        p = sources / s.commit / s.path
        if not p.is_file():
            raise SystemExit(f"{p}: missing; get it with `git show {s.commit}:{s.path}` in a clone of {REPO}")
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest != s.sha256:
            raise SystemExit(f"{p}: sha256 {digest}, expected {s.sha256} ({REPO}@{s.commit}:{s.path}); refused")
        found.append(p)
    return found


def lay_out(work: Path, files: list[Path]) -> Path:
    """The throwaway package: the sources byte for byte, the stand-ins, drive.py."""
    pkg = work / "pkg"
    for s, p in zip(SOURCES, files):
        dest = pkg / s.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    for rel, (text, _why) in STANDINS.items():
        dest = pkg / rel
        if dest.exists():
            raise SystemExit(f"stand-in {rel} would replace a source file")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    shutil.copyfile(DRIVE, work / "drive.py")
    return pkg


def drive(python: Path, work: Path, pkg: Path, rank: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TLLM_", "TRTLLM_", "CUDA_VISIBLE"))}
    env.update(PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", TLLM_LOG_LEVEL="verbose")
    cache_path = f"{CACHE_ROOT}/autotuner/cache.json"
    r = subprocess.run([python, "drive.py", str(rank), cache_path, f"autotuner+candidates.rank{rank}.log"], cwd=work, env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"drive.py {rank} (in {work}): exit {r.returncode}\n{r.stderr[-3000:]}")
    (work / f"autotuner.rank{rank}.log").write_text(r.stderr)
    return {"rank": rank, "exit_status": r.returncode, "cache_path": cache_path}


def derive(python: Path, sources: Path, out: Path, command: str) -> dict[str, Any]:
    files = checked_sources(sources)
    with tempfile.TemporaryDirectory(prefix="trtllm-writers-") as tmp:
        work = Path(tmp)
        pkg = lay_out(work, files)
        runs = [drive(python, work, pkg, r) for r in RANKS]
        dest = out / WRITER_COMMIT[:12]
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        written = []
        for p in sorted((work / CACHE_ROOT).rglob("*.json")):
            rel = p.relative_to(work)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest / rel)
            written.append(str(rel))
        for r in RANKS:
            for name in (f"autotuner.rank{r}.log", f"autotuner+candidates.rank{r}.log"):
                shutil.copyfile(work / name, dest / name)
                written.append(name)
        torch_version = run([python, "-c", "import torch; print(torch.__version__)"]).stdout.strip()
        provenance = {
            "written_by": f"{REPO}'s own code (SOURCES), driven by tools/trtllm_writers/drive.py, once per rank",
            "sources": [{"repository": REPO, "commit": s.commit, "path": s.path, "sha256": s.sha256, "bytes": s.size,
                         "url": f"https://github.com/{REPO}/blob/{s.commit}/{s.path}", "role": s.role} for s in SOURCES],
            "stand_ins": {rel: why for rel, (_text, why) in STANDINS.items()},
            "substituted": {
                "gpu": "torch.cuda.Event / current_stream / synchronize run on a synthetic clock advanced by each runner "
                       "call; get_device_name answers \"NVIDIA B200\", get_device_capability (10, 0) (drive.py)",
                "runners": "synthetic TunableRunner subclasses named and placed (module) as TensorRT-LLM's own runners, "
                           "with synthetic per-tactic times and failure texts (drive.py)",
                "autotuner+candidates.rank<r>.log": "autotuner.rank<r>.log's lines with DERIVED ones among them, not "
                                                    "written by this commit: NVIDIA/TensorRT-LLM#19162's `[Autotuner] "
                                                    "Candidate:` f-string (review hunk of tensorrt_llm/_torch/autotuner.py:1334 "
                                                    "at the PR head), rendered through this logger with the release's own "
                                                    "runner, opt shapes and measured time of each candidate, after that "
                                                    "candidate's own lines; a single-pair op is the PR's shortcut "
                                                    "(time=0.000ms; this commit still times it, so its Profiled line is there too)",
                "cache path": f"{CACHE_ROOT}/autotuner/cache.json, as NVIDIA/TensorRT-LLM#18897's _unified_cache_defaults "
                              "derives TLLM_AUTOTUNER_CACHE_PATH from TRTLLM_CACHE_DIR (from the PR, not run: no stored "
                              "NVIDIA commit has it); relative to the run directory, so no line names a path of this machine",
            },
            "not_driven": {
                "logger.warning_once": "this autotuner.py calls it on an inference-time cache miss; the stored logger.py "
                                       "has no warning_once, so that path is not taken",
            },
            "ranks": runs,
            "installed": {"torch": torch_version, "python": run([python, "-c", "import sys; print(sys.version.split()[0])"])
                          .stdout.strip()},
            "drive_sha256": hashlib.sha256(DRIVE.read_bytes()).hexdigest(),
            "files": written,
            "command": command,
            "date": datetime.date.today().isoformat(),
        }
        (dest / "PROVENANCE.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
        refuse_machine_paths(dest, [str(work), str(ROOT), str(Path.home())])
    return provenance


def _shown(out: Path) -> str:
    if not out.is_absolute():
        return str(out)
    try:
        return str(out.resolve().relative_to(ROOT))
    except ValueError:
        return "OUT"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.trtllm_writers", description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=Path, required=True, help="SOURCES/<commit>/<path> for each source file")
    ap.add_argument("--out", type=Path, required=True, help="where <commit>/ is written (replaced whole)")
    ap.add_argument("--base", type=Path, help="a venv with CPU torch (default: WORK/base, made like tools.flashinfer_writers')")
    ap.add_argument("--work", type=Path, help="scratch for the base venv (default: a temporary directory)")
    args = ap.parse_args(argv)
    command = f"python3 -m tools.trtllm_writers --sources SOURCES --out {_shown(args.out)}"
    tmp = None
    base = args.base
    if base is None:
        work = args.work
        if work is None:
            tmp = tempfile.TemporaryDirectory(prefix="trtllm-base-")
            work = Path(tmp.name)
        sys.path.insert(0, str(ROOT))
        from tools.flashinfer_writers.__main__ import TORCH, base_venv

        base = base_venv(work / "base", TORCH)
    try:
        p = derive(base / "bin" / "python", args.sources, args.out, command)
        print(f"{WRITER_COMMIT[:12]}: {', '.join(p['files'])}", flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
