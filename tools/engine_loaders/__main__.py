"""python3 -m tools.engine_loaders: per-rank caches written by a FlashInfer release's own AutoTuner, and
what FlashInfer's, vLLM's and SGLang's own loaders decide on them, as fixtures for `tiletune check`.

Environments (throwaway venvs built by tools/flashinfer_writers: CPU torch shared from one base venv,
the release installed with `pip install --no-deps` plus its light requirements):
  target         FlashInfer TARGET (default 0.7.4): writes most sets, and loads every set
  other_env      the same release, plus nvidia-cudnn-frontend (which pulls nvidia-cutlass-dsl): what
                 an environment one package bump away writes
  other_release  FlashInfer OTHER (default 0.7.2.post1)
Sets, each OUT/<set>/ with vllm/ and sglang/ per-rank files and verdicts.json (tools/engine_loaders/drive.py
says how each is made):
  synced          2 ranks, timings averaged by FlashInfer's set_autotune_process_group
  independent     2 ranks tuning alone (their choices may differ key by key)
  extra_key       2 ranks synced, rank 1 then also tunes fp8_gemm alone
  missing_rank    3 ranks synced, rank 2 ends before saving
  other_env       2 ranks synced, written in other_env
  other_release   2 ranks synced, written by FlashInfer OTHER
  seeded          the independent set's rank-0 table seeded into both ranks by `tiletune deploy` (vLLM and
                  SGLang layouts): what the engines do with one table deployed to every rank
and OUT/target_env.json: `tiletune doctor`'s flashinfer_metadata block as doctor computes it with the
target venv's interpreter (`doctor.flashinfer_metadata(..., python=...)`, the code `tiletune doctor
--python` runs), the report `tiletune check --env` reads.

The vLLM and SGLang functions run are their wheels' own source (vllm==VLLM, sglang==SGLANG, fetched with
`pip download --no-deps`; sha256 in PROVENANCE.json), compiled from the module files without running the
modules' imports (their import chains need CUDA builds); torch.distributed gloo groups on 127.0.0.1 stand in
for the engines' CPU process groups. In every process torch.cuda.get_device_name answers "NVIDIA B200"
(tools/flashinfer_writers/drive.py's substitution), doctor's child included.

    python3 -m tools.engine_loaders --out tests/data/engine_loaders [--sets seeded,...]
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
import zipfile
from pathlib import Path
from typing import Any, Optional, Sequence

from msgspec import to_builtins as asdict

from tools.flashinfer_writers.__main__ import DEFAULT_WHEELS, ROOT, base_venv, release_venv, wheel_of
from tools.machine_paths import refuse_machine_paths

HERE = Path(__file__).resolve().parent
WRITERS_DRIVE = ROOT / "tools" / "flashinfer_writers" / "drive.py"
VLLM_FILES = {"vllm/model_executor/warmup/kernel_warmup.py": "vllm_kernel_warmup.py",
              "vllm/model_executor/warmup/flashinfer_autotune_cache.py": "vllm_flashinfer_autotune_cache.py"}
SGLANG_FILES = {"sglang/srt/model_executor/runner/flashinfer_autotune.py": "sglang_flashinfer_autotune.py"}
# name, environment that writes it, world size, drive.py tune arguments
SETS: tuple[tuple[str, str, int, list[str]], ...] = (
    ("synced", "target", 2, ["synced"]),
    ("independent", "target", 2, ["independent"]),
    ("extra_key", "target", 2, ["synced", "--extra-key", "1"]),
    ("missing_rank", "target", 3, ["synced", "--no-save", "2"]),
    ("other_env", "other_env", 2, ["synced"]),
    ("other_release", "other_release", 2, ["synced"]),
    ("seeded", "deploy", 2, []),
)
ALL_SETS = tuple(name for name, _, _, _ in SETS)
# the GPU every process of these venvs names (drive.py's substitution), for doctor's child too
GPU_PATCH = "import torch\ntorch.cuda.get_device_name = lambda *a, **k: 'NVIDIA B200'\ntorch.cuda.current_device = lambda: 0\n"


def run(cmd: list, **kw: Any) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def engine_wheel(spec: str, pattern: str, wheels: Path) -> Path:
    found = sorted(wheels.glob(pattern))
    if not found:
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", spec, "-d", wheels])
        found = sorted(wheels.glob(pattern))
    return found[-1]


def extract(wheel: Path, files: dict, rundir: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        for member, name in files.items():
            (rundir / name).write_bytes(z.read(member))
    return {"wheel": wheel.name, "sha256": sha256(wheel), "files": sorted(files)}


def venv_for(name: str, version: str, work: Path, base: Path, wheels: Path, extra: list) -> Path:
    venv, _ = release_venv(work / name, base, wheel_of(version, wheels))
    if extra:
        run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", *extra])
    return venv


def drive(venv: Path, rundir: Path, *args: Any) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLASHINFER_", "CUDA_VISIBLE"))}
    env.update(FLASHINFER_WORKSPACE_BASE=str(rundir / "home"), PYTHONDONTWRITEBYTECODE="1", TQDM_DISABLE="1")
    run([venv / "bin" / "python", "drive.py", *args], cwd=rundir, env=env)


def target_env(venv: Path) -> dict:
    """The doctor report `check --env` reads, with doctor's own code asking the target venv's FlashInfer."""
    sys.path.insert(0, str(ROOT))
    from tiletune.cli.commands import doctor
    from tiletune.formats.doctor import SCHEMA

    def run_python(cmd: Sequence[str]) -> Optional[str]:
        r = subprocess.run([cmd[0], "-c", GPU_PATCH + cmd[-1]], capture_output=True, text=True, timeout=300)
        return r.stdout if r.returncode == 0 else None

    fm = doctor.flashinfer_metadata((), {}, run_python, python=str(venv / "bin" / "python"))
    assert fm is not None and fm.source == "flashinfer", fm
    got = asdict(fm)
    got["basis"] = [[k, v.replace(str(venv / "bin" / "python"), "<target venv>/bin/python")] for k, v in got["basis"]]
    return {"schema": SCHEMA, "host": None, "flashinfer_metadata": got}


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.engine_loaders")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sets", default=",".join(ALL_SETS), help="which sets to (re)build; the others in --out are kept")
    ap.add_argument("--target", default="0.7.4")
    ap.add_argument("--other", default="0.7.2.post1")
    ap.add_argument("--vllm", default="0.34.0")
    ap.add_argument("--sglang", default="0.5.23")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "tiletune" / "engine-loaders")
    ap.add_argument("--wheels", type=Path, default=DEFAULT_WHEELS)
    ap.add_argument("--torch", default="torch==2.13.0")
    args = ap.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)
    for i, a in enumerate(given[:-1]):  # the scratch and wheel directories are this machine's: not recorded
        if a in ("--work", "--wheels"):
            given[i + 1] = a[2:].upper()
    command = "python3 -m tools.engine_loaders " + " ".join(given)
    chosen = [s for s in args.sets.split(",") if s]
    unknown = set(chosen) - set(ALL_SETS)
    if unknown:
        raise SystemExit(f"--sets: no set {', '.join(sorted(unknown))} (sets: {', '.join(ALL_SETS)})")
    needed = {writer for name, writer, _, _ in SETS if name in chosen and writer != "deploy"} | {"target"}
    base = base_venv(args.work / "base", args.torch)
    versions_of = {"target": args.target, "other_env": args.target, "other_release": args.other}
    extras = {"other_env": ["nvidia-cudnn-frontend"]}
    venvs = {k: venv_for(k, versions_of[k], args.work, base, args.wheels, extras.get(k, [])) for k in sorted(needed)}
    rundir = args.work / "run"
    if rundir.exists():
        shutil.rmtree(rundir)
    rundir.mkdir(parents=True)
    shutil.copyfile(WRITERS_DRIVE, rundir / "writers_drive.py")
    shutil.copyfile(HERE / "drive.py", rundir / "drive.py")
    sources = {
        "vllm": extract(engine_wheel(f"vllm=={args.vllm}", f"vllm-{args.vllm}-*.whl", args.wheels), VLLM_FILES, rundir),
        "sglang": extract(engine_wheel(f"sglang=={args.sglang}", f"sglang-{args.sglang}-*.whl", args.wheels), SGLANG_FILES, rundir),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for name, writer, world, tune_args in SETS:
        if name not in chosen:
            continue
        sdir = rundir / "sets" / name
        if writer == "deploy":
            # `tiletune deploy` (this checkout) seeds the independent set's rank-0 table into every rank
            source = (rundir / "sets" / "independent") if "independent" in chosen else (args.out / "independent")
            for layout in ("vllm", "sglang"):
                run([sys.executable, "-m", "tiletune", "deploy", source / "vllm" / "autotune_configs_dp0_rank0.json",
                     "--layout", layout, "--ranks", world, "-o", sdir / layout], cwd=ROOT)
        else:
            drive(venvs[writer], rundir, "tune", sdir, world, *tune_args)
        drive(venvs["target"], rundir, "load", sdir, world, sdir / "verdicts.json")
        if (args.out / name).exists():
            shutil.rmtree(args.out / name)
        shutil.copytree(sdir, args.out / name)
    (args.out / "target_env.json").write_text(json.dumps(target_env(venvs["target"]), indent=1) + "\n")
    versions = {k: run([v / "bin" / "python", "-c", "import flashinfer, torch; print(flashinfer.__version__, torch.__version__)"]).stdout.split()
                for k, v in venvs.items()}
    prov_path = args.out / "PROVENANCE.json"
    provenance = json.loads(prov_path.read_text()) if prov_path.exists() else {}
    provenance.setdefault("commands", {})
    if "command" in provenance:  # one command built every set before
        for name in provenance.get("sets", {}):
            provenance["commands"].setdefault(name, provenance["command"])
    for name in chosen:
        provenance["commands"][name] = command
    provenance.pop("command", None)
    provenance["date"] = datetime.date.today().isoformat()
    envs = provenance.setdefault("environments", {})
    for k, v in versions.items():
        envs[k] = {"flashinfer": v[0], "torch": v[1], "extra": extras.get(k, [])}
    sets = provenance.setdefault("sets", {})
    for name, writer, world, tune_args in SETS:
        if name in chosen:
            sets[name] = {"written_in": writer, "ranks": world, "tune": tune_args, "loaded_in": "target"}
    provenance["engine_sources"] = sources
    provenance["substituted"] = {
        "gpu": "torch.cuda timing primitives on drive.py's synthetic clock; torch.cuda.get_device_name answers 'NVIDIA B200' "
               "in every process (writers, loaders, doctor's child)",
        "engines": "vLLM's and SGLang's functions compiled from their wheels' module files without the modules' imports; "
                   "gloo groups on 127.0.0.1 for their CPU process groups",
    }
    prov_path.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    refuse_machine_paths(args.out, [str(args.work), str(Path.home()), str(ROOT)])
    print(f"{args.out}: sets {', '.join(chosen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
