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
tensorrt_llm/_bootstrap.py:64, NVIDIA/TensorRT-LLM@00832e8) sets TLLM_AUTOTUNER_CACHE_PATH to
`<root>/autotuner/cache.json`; the 5619fce9f304 writer runs that bootstrap, this one uses its path. This autotuner.py (#7738's writer) turns it into one
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

A second writer, `--writer 5619fce9f304` (sections.py, drive_sections.py): the single-file cache with
`shared` and `rank_<r>` sections (#10336 on) from hyukn/TensorRT-LLM@5619fce's autotuner.py, its path
from NVIDIA/TensorRT-LLM@00832e8's own _bootstrap.py, HuiGao-NV/TensorRT-LLM@195839a's logger.py;
its stand-ins and reasons are in sections.py. Every writer runs unless --writer names some.

Getting the sources: from a clone of github.com/NVIDIA/TensorRT-LLM (or the fork a source names),
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
from pathlib import Path
from typing import Any, Optional, Sequence

from tools.machine_paths import refuse_machine_paths
from tools.trtllm_writers.writer import Source, Writer

ROOT = Path(__file__).resolve().parents[2]
DRIVE = Path(__file__).with_name("drive.py")
REPO = "NVIDIA/TensorRT-LLM"
WRITER_COMMIT = "b35ac1b64368513d215c57d2ed01d62d910df8da"
LOGGER_COMMIT = "14e801da3632eb71367b847e335c4f2b09098651"
RANKS = (0, 1)
CACHE_ROOT = "TRTLLM_CACHE_DIR"  # the run directory's cache root; relative, so no log line names a path of this machine


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


B35AC1B = Writer(
    name=WRITER_COMMIT[:12],
    sources=SOURCES,
    standins=STANDINS,
    drive=DRIVE,
    candidates_log=True,
    written_by=f"{REPO}'s own code (SOURCES), driven by tools/trtllm_writers/drive.py, once per rank",
    substituted={
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
                      "derives TLLM_AUTOTUNER_CACHE_PATH from TRTLLM_CACHE_DIR (tensorrt_llm/_bootstrap.py:68 at "
                      "NVIDIA/TensorRT-LLM@00832e8, run by the 5619fce9f304 writer); relative to the run directory, "
                      "so no line names a path of this machine",
    },
    not_driven={
        "logger.warning_once": "this autotuner.py calls it on an inference-time cache miss; the stored logger.py "
                               "has no warning_once, so that path is not taken",
    },
)


def writers() -> dict[str, Writer]:
    from tools.trtllm_writers.sections import WRITER as SECTIONS

    return {w.name: w for w in (B35AC1B, SECTIONS)}


def run(cmd: Sequence[object], **kw: Any) -> subprocess.CompletedProcess:
    r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r


def checked_sources(sources: Path, writer: Writer = B35AC1B) -> list[Path]:
    """Each source file under sources/<commit>/<path>, refused unless its bytes have the recorded sha256."""
    found = []
    for s in writer.sources:
        p = sources / s.commit / s.path
        if not p.is_file():
            raise SystemExit(f"{p}: missing; get it with `git show {s.commit}:{s.path}` in a clone of {s.repository}")
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest != s.sha256:
            raise SystemExit(f"{p}: sha256 {digest}, expected {s.sha256} ({s.repository}@{s.commit}:{s.path}); refused")
        found.append(p)
    return found


def lay_out(work: Path, files: list[Path], writer: Writer = B35AC1B) -> Path:
    """The throwaway package: the sources byte for byte, the stand-ins, the driver (and its helpers)."""
    pkg = work / "pkg"
    for s, p in zip(writer.sources, files):
        dest = pkg / s.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    for rel, (text, _why) in writer.standins.items():
        dest = pkg / rel
        if dest.exists():
            raise SystemExit(f"stand-in {rel} would replace a source file")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    for script in (writer.drive, *writer.helpers):
        shutil.copyfile(script, work / script.name)
    return pkg


def drive(python: Path, work: Path, pkg: Path, rank: int, writer: Writer = B35AC1B) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TLLM_", "TRTLLM_", "CUDA_VISIBLE", "FLASHINFER_"))}
    env.update(PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", TLLM_LOG_LEVEL="verbose")
    argv = [str(python), writer.drive.name, str(rank)]
    cache_path = f"{CACHE_ROOT}/autotuner/cache.json"
    if writer.candidates_log:
        argv += [cache_path, f"autotuner+candidates.rank{rank}.log"]
    r = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{writer.drive.name} {rank} (in {work}): exit {r.returncode}\n{r.stderr[-3000:]}")
    (work / f"autotuner.rank{rank}.log").write_text(r.stdout if writer.log_stream == "stdout" else r.stderr)
    out: dict[str, Any] = {"rank": rank, "exit_status": r.returncode}
    if writer.candidates_log:
        out["cache_path"] = cache_path
    else:  # the driver names what TensorRT-LLM's own bootstrap set
        out["bootstrap"] = dict(line.removeprefix("bootstrap: ").split("=", 1) for line in r.stderr.splitlines()
                                if line.startswith("bootstrap: "))
    return out


def derive(python: Path, sources: Path, out: Path, command: str, writer: Writer = B35AC1B) -> dict[str, Any]:
    files = checked_sources(sources, writer)
    with tempfile.TemporaryDirectory(prefix="trtllm-writers-") as tmp:
        work = Path(tmp)
        pkg = lay_out(work, files, writer)
        runs = [drive(python, work, pkg, r, writer) for r in RANKS]
        dest = out / writer.name
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        written = []
        for p in sorted((work / CACHE_ROOT).rglob("*")):
            if p.is_file():  # the caches and whatever else the writer left there (a .lock)
                rel = p.relative_to(work)
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dest / rel)
                written.append(str(rel))
        for r in RANKS:
            names = [f"autotuner.rank{r}.log"] + ([f"autotuner+candidates.rank{r}.log"] if writer.candidates_log else [])
            for name in names:
                shutil.copyfile(work / name, dest / name)
                written.append(name)
        torch_version = run([python, "-c", "import torch; print(torch.__version__)"]).stdout.strip()
        provenance = {
            "written_by": writer.written_by,
            "sources": [{"repository": s.repository, "commit": s.commit, "path": s.path, "sha256": s.sha256,
                         "bytes": s.size, "url": s.url, "role": s.role} for s in writer.sources],
            "stand_ins": {rel: why for rel, (_text, why) in writer.standins.items()},
            "substituted": writer.substituted,
            "not_driven": writer.not_driven,
            "ranks": runs,
            "installed": {"torch": torch_version, "python": run([python, "-c", "import sys; print(sys.version.split()[0])"])
                          .stdout.strip()},
            "drive_sha256": hashlib.sha256(writer.drive.read_bytes()).hexdigest(),
            "files": written,
            "command": command,
            "date": datetime.date.today().isoformat(),
        }
        if writer.helpers:
            provenance["helpers_sha256"] = {h.name: hashlib.sha256(h.read_bytes()).hexdigest() for h in writer.helpers}
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
    ap.add_argument("--writer", action="append", choices=sorted(writers()),
                    help="which writer to run (repeatable; default: every one)")
    args = ap.parse_args(argv)
    chosen = [writers()[w] for w in (args.writer or sorted(writers()))]
    command = f"python3 -m tools.trtllm_writers --sources SOURCES --out {_shown(args.out)}" + "".join(
        f" --writer {w}" for w in (args.writer or []))
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
        for w in chosen:
            p = derive(base / "bin" / "python", args.sources, args.out, command, w)
            print(f"{w.name}: {', '.join(p['files'])}", flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
