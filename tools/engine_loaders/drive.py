"""Runs INSIDE a throwaway venv holding one FlashInfer release and CPU torch (see __main__.py): ranks
that tune and save per-rank caches with that release's AutoTuner, and the loaders of FlashInfer, vLLM
and SGLang deciding on such files. Standard library, torch and flashinfer only: never imports tiletune.

    python drive.py tune OUT WORLD MODE [--no-save R] [--extra-key R]
    python drive.py load DIR WORLD OUT_JSON

tune: WORLD ranks (processes in one gloo group on 127.0.0.1) each tune fp4_gemm over M buckets 1..32
  with tools/flashinfer_writers/drive.py's synthetic runner and clock; each rank's clock runs a little
  differently (a per-rank, per-bucket, per-tactic factor within 4 %, as timing noise does), so with MODE
  `independent` ranks can pick different tactics for one key, and with MODE `synced` FlashInfer's own
  `set_autotune_process_group` averages the timings over the group and every rank picks the same.
  Each rank saves with `save_configs` under the names vLLM and SGLang give a rank's file:
  OUT/vllm/autotune_configs_dp0_rank{r}.json (vLLM's own `flashinfer_autotune_filename`) and
  OUT/sglang/rank_tp{r}_pp0_dp0.json (SGLang's rank key). `--no-save R`: rank R ends before saving
  (a rank killed during start-up); `--extra-key R`: rank R then also tunes fp8_gemm on its own (one key more).
load: for every *.json under DIR, this release's `AutoTuner.load_configs` (returned value and the
  warning it logs); then, in WORLD ranks, vLLM's `_load_shared_autotune_cache` on DIR/vllm and
  SGLang's `_drop_diverged_autotune_cache` (+ `load_configs` of what is left) on a copy of
  DIR/sglang, both run as the functions' own source (read from the wheels: vllm_kernel_warmup.py,
  sglang_flashinfer_autotune.py beside this script) with a gloo group standing in for the engines'
  CPU groups. Everything is written to OUT_JSON.
"""

from __future__ import annotations
import __future__

import ast
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import writers_drive as wd  # type: ignore[import-not-found]  # noqa: E402  tools/flashinfer_writers/drive.py, copied beside this script

NOISE = 0.04  # per-rank timing factor spread (within 4 %, as close tactics are apart)


def _rank_factor(rank: int, m: int, tactic: int) -> float:
    h = hashlib.sha256(f"{rank}:{m}:{tactic}".encode()).digest()
    return 1.0 + NOISE * (h[0] / 255.0 - 0.5) * 2


def _functions(path: Path, names: list) -> dict:
    """The named functions of a source file, compiled from that file's own text (its imports are not run)."""
    tree = ast.parse(path.read_text())
    found = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in names}
    missing = set(names) - set(found)
    if missing:
        raise SystemExit(f"{path.name}: no {', '.join(sorted(missing))}")
    return {n: found[n] for n in names}


def _exec_functions(path: Path, names: list, namespace: dict) -> dict:
    mod = ast.Module(body=list(_functions(path, names).values()), type_ignores=[])
    code = compile(mod, str(path.name), "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, namespace)
    return namespace


def _init(rank: int, world: int, rendezvous: str):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
    return dist.new_group(list(range(world)), backend="gloo")


# --- tune ------------------------------------------------------------------------------------------

def _tune_rank(rank: int, world: int, rendezvous: str, out: str, mode: str, no_save: int, extra: int) -> None:
    import torch

    wd._install_clock(torch)
    import flashinfer  # noqa: F401
    import flashinfer.autotuner as fa

    group = _init(rank, world, rendezvous)
    base_time = wd._fp4_time_ms
    wd._fp4_time_ms = lambda m, tactic: base_time(m, tactic) * _rank_factor(rank, m, tactic)
    Fp4, _ = wd._runner_classes(fa)
    tuner = wd._tuner(fa)
    if mode == "synced":
        fa.set_autotune_process_group(group)
    with fa.autotune(True):
        config, inputs = wd._fp4_call(torch, fa, 32)
        tuner.choose_one("fp4_gemm", [Fp4()], config, inputs)
    fa.set_autotune_process_group(None)
    if rank == extra:  # alone: a synced group refuses a profile only one rank reaches
        _, Fp8 = wd._runner_classes(fa)
        with fa.autotune(True):
            config, inputs = wd._fp8_call(torch, fa)
            tuner.choose_one("fp8_gemm", [Fp8()], config, inputs)
    if rank == no_save:
        return
    ns = _exec_functions(HERE / "vllm_flashinfer_autotune_cache.py", ["flashinfer_autotune_filename"], {})
    vllm_dir, sglang_dir = Path(out) / "vllm", Path(out) / "sglang"
    vllm_dir.mkdir(parents=True, exist_ok=True)
    sglang_dir.mkdir(parents=True, exist_ok=True)
    tuner.save_configs(str(vllm_dir / ns["flashinfer_autotune_filename"](0, rank)))
    tuner.save_configs(str(sglang_dir / f"rank_tp{rank}_pp0_dp0.json"))


def tune(argv: list) -> None:
    import torch.multiprocessing as mp

    out, world, mode = argv[0], int(argv[1]), argv[2]
    no_save = int(argv[argv.index("--no-save") + 1]) if "--no-save" in argv else -1
    extra = int(argv[argv.index("--extra-key") + 1]) if "--extra-key" in argv else -1
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_tune_rank, args=(world, os.path.join(tmp, "rdv"), out, mode, no_save, extra), nprocs=world)


# --- load --------------------------------------------------------------------------------------------

class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _flashinfer_loads(directory: Path) -> dict:
    import torch

    wd._install_clock(torch)
    import flashinfer  # noqa: F401
    import flashinfer.autotuner as fa

    cap = _Capture()
    sys.modules[fa.AutoTuner.__module__].logger.addHandler(cap)  # the release's own logger (it may not propagate)
    out = {}
    os.chdir(directory)  # files named relative to the set, in the verdicts as in FlashInfer's messages
    for path in sorted(Path(".").rglob("*.json")):
        if path.name == "verdicts.json":
            continue
        tuner = fa.AutoTuner.get()
        tuner.clear_cache()
        if hasattr(tuner, "_warned_cache_mismatch"):
            tuner._warned_cache_mismatch.clear()  # warn for every file, not once per severity
        cap.lines.clear()
        loaded = tuner.load_configs(str(path))
        out[str(path)] = {
            "loaded": bool(loaded),
            "log": [x for x in cap.lines if "Cache file" in x or "Loaded" in x],
        }
    return out


def _engine_rank(rank: int, world: int, rendezvous: str, directory: str, result_dir: str) -> None:
    import torch

    wd._install_clock(torch)
    import flashinfer  # noqa: F401
    import flashinfer.autotuner as fa
    from flashinfer.autotuner import _collect_metadata

    pg = _init(rank, world, rendezvous)
    group = types.SimpleNamespace(world_size=world, rank_in_group=rank, cpu_group=pg)
    tuner = fa.AutoTuner.get()
    result: dict = {"rank": rank}
    # vLLM 0.34.0: the engine's own group-wide load decision, on this rank's per-rank file
    ns = _exec_functions(HERE / "vllm_kernel_warmup.py",
                         ["_autotune_cache_fingerprint", "_all_ranks_have_matching_cache", "_load_shared_autotune_cache"],
                         {"json": json, "torch": torch, "Path": Path})
    vllm_file = Path(directory) / "vllm" / f"autotune_configs_dp0_rank{rank}.json"
    tuner.clear_cache()
    result["vllm_loaded"] = bool(ns["_load_shared_autotune_cache"](vllm_file, tuner, group))
    # SGLang 0.5.23: drop diverged caches over the TP group, then load_configs what is left
    logger = logging.getLogger("sglang")
    sg = _exec_functions(HERE / "sglang_flashinfer_autotune.py", ["_autotune_cache_digest", "_drop_diverged_autotune_cache"],
                         {"json": json, "torch": torch, "hashlib": hashlib, "Path": Path, "logger": logger,
                          "log_info_on_rank0": lambda lg, msg: lg.info(msg) if rank == 0 else None})
    sglang_file = Path(directory) / "sglang_copy" / f"rank_tp{rank}_pp0_dp0.json"
    existed = sglang_file.is_file()
    torch.distributed.barrier()
    sg["_drop_diverged_autotune_cache"](sglang_file, pg, _collect_metadata())
    result["sglang_existed"] = existed
    result["sglang_kept"] = sglang_file.is_file()
    tuner.clear_cache()
    result["sglang_loaded"] = bool(tuner.load_configs(str(sglang_file))) if sglang_file.is_file() else False
    Path(result_dir, f"rank{rank}.json").write_text(json.dumps(result))


def load(argv: list) -> None:
    import torch.multiprocessing as mp

    directory, world, out_json = Path(argv[0]).resolve(), int(argv[1]), Path(argv[2]).resolve()
    report = {"flashinfer": _flashinfer_loads(directory)}
    copy = directory / "sglang_copy"
    if copy.exists():
        shutil.rmtree(copy)
    if (directory / "sglang").is_dir():
        shutil.copytree(directory / "sglang", copy)
    else:
        copy.mkdir()
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_engine_rank, args=(world, os.path.join(tmp, "rdv"), str(directory), tmp), nprocs=world)
        ranks = [json.loads(Path(tmp, f"rank{r}.json").read_text()) for r in range(world)]
    shutil.rmtree(copy)
    report["vllm"] = {"loaded_by_rank": [r["vllm_loaded"] for r in ranks]}
    report["sglang"] = {"existed_by_rank": [r["sglang_existed"] for r in ranks],
                        "kept_by_rank": [r["sglang_kept"] for r in ranks],
                        "loaded_by_rank": [r["sglang_loaded"] for r in ranks]}
    out_json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    {"tune": tune, "load": load}[sys.argv[1]](sys.argv[2:])
