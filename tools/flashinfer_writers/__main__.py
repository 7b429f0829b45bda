"""python3 -m tools.flashinfer_writers: what FlashInfer releases' own autotuner writers write.

For each release: a throwaway venv (CPU torch shared from one base venv through a .pth file, the
release installed with `pip install --no-deps` plus the light requirements its import needs, none
of its GPU packages), in which tools/flashinfer_writers/drive.py drives the release's
`AutoTuner.choose_one` / `save_configs` / `load_configs`, its managed v2 store (`autotune_v2`)
and its logger with synthetic profiling results (see drive.py for what stands in for the GPU).
What the release wrote is copied, byte for byte, to OUT/<version>/:

    cache.json               save_configs (scenario tune); absent before 0.6.7 (no JSON cache)
    flashinfer_jit.log       the logger's file handler, every scenario in order (DEBUG)
    sticky.stderr.txt        the traceback a lost CUDA context ends the process with (0.7.4+)
    group.rank<r>.stderr.txt each rank's traceback when the ranks of one tuning group disagree (0.7.4+)
    v2root/v2/<env>/...      the managed store (manifest.json, entries/); releases with autotune_v2
    PROVENANCE.json          release, wheel sha256, torch, the exact command, what was substituted

With --timed, the timed scenarios instead (drive_timed.py: drive.py's runners, each call also taking wall
time, so the log's timestamps show where a start-up's time went), each with its own log, into
OUT/<version>/timed/:

    slow.log                 a cold start: 4 fp4_gemm buckets, two tactics failing late, fp8_gemm
    warm.log                 the same start with the cache slow.log saved: every profile a hit
    hang.log                 a start whose tactic never returns, killed once its log was quiet for
                             drive_timed.HANG_KILL_S seconds (a watchdog's SIGKILL)
    slow.json                the cache the cold start saved
    PROVENANCE.json

Two substitutions, both recorded in PROVENANCE.json: in sticky.stderr.txt the throwaway venv's
site-packages path becomes `<site-packages>` (tracked files name no path of this machine), and
the foreign cache the `foreign` scenario loads is cache_samples/real's 0.7.2.post1 H200 cache,
copied in as foreign.json. Everything else is the release's bytes.

    python3 -m tools.flashinfer_writers --out tests/data/flashinfer_writers 0.7.4 0.6.7
    python3 -m tools.flashinfer_writers --out DIR --newest      # the newest release on PyPI
"""

from __future__ import annotations

import argparse
import datetime
import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement

from tools.machine_paths import refuse_machine_paths

ROOT = Path(__file__).resolve().parents[2]
DRIVE = Path(__file__).with_name("drive.py")
DRIVE_TIMED = Path(__file__).with_name("drive_timed.py")  # the timed scenarios (imports drive.py beside it)
FOREIGN = ROOT / "cache_samples" / "real" / "flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json"
SCENARIOS = ("tune", "reload", "foreign", "sticky", "v2tune", "v2replay", "group")
TIMED = ("slow", "warm", "hang")
# requirements a release declares that its autotuner never imports on CPU (GPU stacks, big
# compilers, NCCL): not installed, so that a release's venv costs seconds, not gigabytes
SKIPPED_REQUIREMENTS = re.compile(r"^(torch|nvidia-(?!ml-py$).*|cuda-.*|nccl.*|triton|cupti.*)$", re.I)
# the torch the committed fixtures were written with; pip takes this image's local CPU build
# (2.13.0+cpu sorts above PyPI's 2.13.0). Plain `torch` resolves to PyPI's newest CUDA build:
# 5.5 GB with its nvidia-* wheels (measured), and another torch changes what the release records
# (0.7.4 hashes torch into cutlass_dsl_version and the v2 store's directory name)
TORCH = "torch==2.13.0"
DEFAULT_WHEELS = Path(os.environ.get("TILETUNE_WHEEL_CACHE") or Path.home() / ".cache" / "tiletune" / "flashinfer-wheels")


def run(cmd: Sequence[object], **kw: Any) -> subprocess.CompletedProcess:
    r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return r


def site_packages(venv: Path) -> Path:
    rel = Path(sysconfig.get_path("purelib")).relative_to(sysconfig.get_path("data"))
    return venv / rel


def base_venv(path: Path, torch_spec: str) -> Path:
    """One venv holding CPU torch (and numpy), shared by every release's venv."""
    py = path / "bin" / "python"
    if not (py.exists() and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0):
        run([sys.executable, "-m", "venv", path])
        run([py, "-m", "pip", "install", "--quiet", torch_spec, "numpy", "filelock"])
    return path


def newest_release() -> str:
    """The newest flashinfer-python version PyPI lists (pip's own index client)."""
    r = run([sys.executable, "-m", "pip", "index", "versions", "flashinfer-python"])
    m = re.search(r"flashinfer-python \(([^)]+)\)", r.stdout)
    if not m:
        raise SystemExit(f"pip index versions flashinfer-python: no version in {r.stdout[:200]!r}")
    return m.group(1)


def wheel_of(version: str, wheels: Path) -> Path:
    sys.path.insert(0, str(ROOT))
    from tools.catalogs.sources import download_wheel

    return download_wheel(version, wheels).path


def light_requirements(wheel: Path) -> list[str]:
    """The release's own requirements minus the GPU ones (SKIPPED_REQUIREMENTS) and extras."""
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(z.read(meta_name).decode())
    keep = []
    for line in meta.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue
        if not SKIPPED_REQUIREMENTS.match(req.name):
            keep.append(str(req).split(";")[0].strip())
    return keep


def release_venv(work: Path, base: Path, wheel: Path) -> tuple[Path, list[str]]:
    venv = work / "venv"
    if venv.exists():
        shutil.rmtree(venv)
    # no pip inside (ensurepip costs a minute on a loaded machine): this Python's pip installs into it
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    (site_packages(venv) / "_tiletune_base_torch.pth").write_text(str(site_packages(base)) + "\n")
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", py, "install", "--quiet"]
    run([*pip, "--no-deps", wheel])
    reqs = light_requirements(wheel)
    if reqs:
        run([*pip, *reqs])
    return venv, reqs


def drive(venv: Path, rundir: Path, scenario: str, home: str = "home", script: str = "drive.py") -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLASHINFER_", "CUDA_VISIBLE"))}
    env.update(FLASHINFER_LOGGING_LEVEL="debug", FLASHINFER_WORKSPACE_BASE=str(rundir / home),
               PYTHONDONTWRITEBYTECODE="1", TQDM_DISABLE="1")
    if scenario == "hang":
        return _drive_until_quiet(venv, rundir, env, rundir / home)
    r = subprocess.run([venv / "bin" / "python", script, scenario], cwd=rundir, env=env, capture_output=True, text=True)
    if r.returncode != 0 and scenario != "sticky":  # only the sticky scenario ends in an exception
        raise SystemExit(f"{script} {scenario} (in {rundir}): exit {r.returncode}\n{r.stderr[-3000:]}")
    return {"scenario": scenario, "exit_status": r.returncode, "stderr": r.stderr}


def drive_sha256() -> str:
    """The driver's hash, recorded in PROVENANCE.json: a derived directory with another was made by other code."""
    return hashlib.sha256(DRIVE.read_bytes()).hexdigest()


def _drive_until_quiet(venv: Path, rundir: Path, env: dict, home: Path) -> dict[str, Any]:
    """The hang scenario: SIGKILL once the release's log has not grown for drive_timed.HANG_KILL_S seconds
    (after it started), as a watchdog that watches the log would; 10 minutes at most."""
    import signal
    import time

    quiet = float(re.search(r"^HANG_KILL_S = ([\d.]+)", DRIVE_TIMED.read_text(), re.M).group(1))  # type: ignore[union-attr]
    p = subprocess.Popen([venv / "bin" / "python", "drive_timed.py", "hang"], cwd=rundir, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    size, since, start = -1, time.monotonic(), time.monotonic()
    while p.poll() is None and time.monotonic() - start < 600:
        time.sleep(0.2)
        logs = list(home.rglob("flashinfer_jit.log"))
        now = logs[0].stat().st_size if logs else -1
        if now != size:
            size, since = now, time.monotonic()
        elif size > 0 and time.monotonic() - since >= quiet:
            p.send_signal(signal.SIGKILL)
            break
    _out, err = p.communicate(timeout=60)
    if p.returncode != -signal.SIGKILL:
        raise SystemExit(f"drive_timed.py hang (in {rundir}): ended by itself (exit {p.returncode})\n{err[-3000:]}")
    return {"scenario": "hang", "exit_status": p.returncode, "stderr": err,
            "killed": f"SIGKILL after the log was quiet for {quiet:g} s"}


def _fresh_dir(path: Path) -> None:
    """`path` as an empty folder: what a derivation writes there replaces the last one whole."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)


def derive(version: str, out: Path, work: Path, base: Path, wheels: Path, command: str) -> dict[str, Any]:
    """Everything one release writes, into out/<version>/ (replaced whole)."""
    wheel = wheel_of(version, wheels)
    rel_work = work / version
    _fresh_dir(rel_work)
    venv, reqs = release_venv(rel_work, base, wheel)
    rundir = rel_work / "run"
    rundir.mkdir()
    shutil.copyfile(FOREIGN, rundir / "foreign.json")
    shutil.copyfile(DRIVE, rundir / "drive.py")
    runs = [drive(venv, rundir, s) for s in SCENARIOS]
    dest = out / version
    _fresh_dir(dest)
    written = []
    if (rundir / "cache.json").exists():
        shutil.copyfile(rundir / "cache.json", dest / "cache.json")
        written.append("cache.json")
    logs = sorted((rundir / "home").rglob("flashinfer_jit.log"))
    if logs:
        shutil.copyfile(logs[0], dest / "flashinfer_jit.log")
        written.append("flashinfer_jit.log")
    if (rundir / "v2root").is_dir():
        shutil.copytree(rundir / "v2root", dest / "v2root")
        written += [str(p.relative_to(dest)) for p in sorted((dest / "v2root").rglob("*.json"))]
    sticky = next(r for r in runs if r["scenario"] == "sticky")
    if sticky["exit_status"] != 0:
        text = sticky["stderr"].replace(str(site_packages(venv)), "<site-packages>").replace(str(rundir), ".")
        (dest / "sticky.stderr.txt").write_text(text)
        written.append("sticky.stderr.txt")
    for rank in (0, 1):
        err = rundir / f"group.rank{rank}.stderr.txt"
        if err.exists() and err.read_text():
            text = err.read_text().replace(str(site_packages(venv)), "<site-packages>").replace(str(rundir), ".")
            (dest / err.name).write_text(text)
            written.append(err.name)
    notes = {}
    for s in SCENARIOS:
        p = rundir / f"notes-{s}.json"
        if p.exists():
            notes[s] = json.loads(p.read_text())
    torch_version = run([venv / "bin" / "python", "-c", "import torch; print(torch.__version__)"]).stdout.strip()
    provenance = {
        "release": version,
        "wheel": {"file": wheel.name, "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
                  "pip": f"flashinfer-python=={version}"},
        "installed": {"flashinfer": "pip install --no-deps <wheel>", "requirements": reqs,
                      "torch": torch_version, "python": sys.version.split()[0]},
        "written_by": "the release's own code, driven by tools/flashinfer_writers/drive.py (scenarios: "
                      + ", ".join(SCENARIOS) + ")",
        "drive_sha256": drive_sha256(),
        "substituted": {
            "gpu": "torch.cuda timing primitives run on a synthetic clock advanced by each runner call "
                   "(drive.py _install_clock); torch.cuda.get_device_name answers " + json.dumps("NVIDIA B200"),
            "runners": "synthetic TunableRunner subclasses (CutlassFp4GemmRunner, CublasFp8GemmRunner) with "
                       "synthetic per-tactic times and failure texts (drive.py)",
            "sticky.stderr.txt, group.rank<r>.stderr.txt": "the throwaway venv's site-packages path replaced by "
                                                            "<site-packages>, the run directory's by .",
            "foreign.json": "cache_samples/real/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json (real, H200)",
        },
        "scenarios": {r["scenario"]: {"exit_status": r["exit_status"], **notes.get(r["scenario"], {})} for r in runs},
        "files": written,
        "command": command,
        "date": datetime.date.today().isoformat(),
    }
    (dest / "PROVENANCE.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    refuse_machine_paths(dest, [str(rel_work), str(ROOT), str(Path.home())])
    shutil.rmtree(rel_work, ignore_errors=True)  # the release's venv is throwaway; the base venv is what is worth keeping
    return provenance


def _shown(out: Path) -> str:
    """--out as the recorded command names it: relative to the checkout, never a path of this machine."""
    if not out.is_absolute():
        return str(out)
    try:
        return str(out.resolve().relative_to(ROOT))
    except ValueError:
        return "OUT"


def derive_timed(version: str, out: Path, work: Path, base: Path, wheels: Path, command: str) -> dict[str, Any]:
    """The timed scenarios of one release, into out/<version>/timed/ (replaced whole)."""
    wheel = wheel_of(version, wheels)
    rel_work = work / f"{version}-timed"
    _fresh_dir(rel_work)
    venv, reqs = release_venv(rel_work, base, wheel)
    rundir = rel_work / "run"
    rundir.mkdir()
    shutil.copyfile(DRIVE, rundir / "drive.py")
    shutil.copyfile(DRIVE_TIMED, rundir / "drive_timed.py")
    runs = [drive(venv, rundir, s, home=f"home-{s}", script="drive_timed.py") for s in TIMED]
    dest = out / version / "timed"
    _fresh_dir(dest)
    written = []
    for s in TIMED:
        logs = sorted((rundir / f"home-{s}").rglob("flashinfer_jit.log"))
        if logs:
            shutil.copyfile(logs[0], dest / f"{s}.log")
            written.append(f"{s}.log")
    if (rundir / "slow.json").exists():
        shutil.copyfile(rundir / "slow.json", dest / "slow.json")
        written.append("slow.json")
    notes = {s: json.loads((rundir / f"notes-{s}.json").read_text())
             for s in TIMED if (rundir / f"notes-{s}.json").exists()}
    torch_version = run([venv / "bin" / "python", "-c", "import torch; print(torch.__version__)"]).stdout.strip()
    provenance = {
        "release": version,
        "wheel": {"file": wheel.name, "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
                  "pip": f"flashinfer-python=={version}"},
        "installed": {"flashinfer": "pip install --no-deps <wheel>", "requirements": reqs,
                      "torch": torch_version, "python": sys.version.split()[0]},
        "written_by": "the release's own code and logger, driven by tools/flashinfer_writers/drive_timed.py (timed "
                      "scenarios: " + ", ".join(TIMED) + ", over drive.py's runners); the timestamps are this machine's "
                      "wall clock",
        "drive_sha256": drive_sha256(),
        "drive_timed_sha256": hashlib.sha256(DRIVE_TIMED.read_bytes()).hexdigest(),
        "substituted": {
            "gpu": "torch.cuda timing primitives run on a synthetic clock advanced by each runner call "
                   "(drive.py _install_clock); torch.cuda.get_device_name answers " + json.dumps("NVIDIA B200"),
            "runners": "synthetic TunableRunner subclasses with synthetic per-tactic times and failure texts; every "
                       "call also sleeps (drive_timed.py WALL_CALL_S x (1 + M/4), WALL_FAIL_S for a failing tactic) so that "
                       "the wall clock the log stamps advances as a GPU start-up's would",
        },
        "scenarios": {r["scenario"]: {"exit_status": r["exit_status"], **({"killed": r["killed"]} if "killed" in r else {}),
                                      **notes.get(r["scenario"], {})} for r in runs},
        "files": written,
        "command": command,
        "date": datetime.date.today().isoformat(),
    }
    (dest / "PROVENANCE.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    refuse_machine_paths(dest, [str(rel_work), str(ROOT), str(Path.home())])
    shutil.rmtree(rel_work, ignore_errors=True)  # the release's venv is throwaway
    return provenance


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.flashinfer_writers", description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="*", help="releases to derive (e.g. 0.7.4 0.6.7)")
    ap.add_argument("--newest", action="store_true", help="also the newest flashinfer-python on PyPI")
    ap.add_argument("--timed", action="store_true", help="the timed scenarios (slow, warm, hang) into <version>/timed/ instead")
    ap.add_argument("--out", type=Path, required=True, help="where <version>/ directories are written")
    ap.add_argument("--work", type=Path, help="scratch for venvs and runs (default: a temporary directory)")
    ap.add_argument("--base", type=Path, help="the shared CPU-torch venv (default: WORK/base; reused when it imports torch)")
    ap.add_argument("--torch", default=TORCH, help=f"pip requirement for torch in the base venv (default: {TORCH})")
    ap.add_argument("--wheel-dir", type=Path, default=DEFAULT_WHEELS, help="flashinfer wheels (pip download cache)")
    args = ap.parse_args(argv)
    versions = list(args.versions)
    if args.newest:
        versions.append(newest_release())
    if not versions:
        ap.error("name releases or pass --newest")
    command = "python3 -m tools.flashinfer_writers " + " ".join(
        ["--out", _shown(args.out)] + (["--timed"] if args.timed else []) + (["--newest"] if args.newest else [])
        + list(args.versions))
    tmp = None
    work = args.work
    if work is None:
        tmp = tempfile.TemporaryDirectory(prefix="fi-writers-")
        work = Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    try:
        for v in versions:  # every wheel first: a release pip cannot get fails before the base venv's minutes
            wheel_of(v, args.wheel_dir)
        base = base_venv(args.base or work / "base", args.torch)
        for v in versions:
            p = (derive_timed if args.timed else derive)(v, args.out, work, base, args.wheel_dir, command)
            status = ", ".join(f"{s} {d['exit_status']}" for s, d in p["scenarios"].items())
            print(f"{v}: {', '.join(p['files']) or 'nothing written'} ({status})", flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
