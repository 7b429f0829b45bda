"""`tiletune deploy`: one tuned table under every rank's file name, the settings to paste.

What vLLM 0.34.0's and SGLang 0.5.23's own loaders do with deploy's output is in
tests/data/engine_loaders/seeded (tools/engine_loaders runs `tiletune deploy` on the `independent`
set's rank-0 table, then the engines' loaders) and checked by tests/test_check_engines.py; here:
the names, the bytes, the refusals and the settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "engine_loaders"
TABLE = DATA / "independent" / "vllm" / "autotune_configs_dp0_rank0.json"  # written by FlashInfer 0.7.4's AutoTuner


def tiletune(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tiletune", *args], capture_output=True, text=True, cwd=ROOT)


def test_vllm_and_sglang_rank_files_hold_the_same_bytes(tmp_path):
    r = tiletune("deploy", str(TABLE), "--layout", "vllm", "--ranks", "4", "--dp", "2", "-o", str(tmp_path / "v"),
                 "--skip-op", "fp8_gemm", "--skip-op", "fp4_gemm")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "v").iterdir())
    assert names == sorted(f"autotune_configs_dp{d}_rank{k}.json" for d in range(2) for k in range(4))
    assert {(tmp_path / "v" / n).read_bytes() for n in names} == {TABLE.read_bytes()}
    assert "VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS=fp8_gemm,fp4_gemm" in r.stdout.splitlines()
    r = tiletune("deploy", str(TABLE), "--layout", "sglang", "--ranks", "2", "--pp", "2", "-o", str(tmp_path / "s"),
                 "--skip-op", "fp8_gemm", "--env", str(DATA / "target_env.json"), "-f", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sorted(out["files"]) == sorted(f"rank_tp{t}_pp{p}_dp0.json" for t in range(2) for p in range(2))
    assert "--flashinfer-autotune-skip-ops fp8_gemm" in out["settings"]
    assert "/0.7.4/sm<XY>/" in out["settings"][0]  # the release the table's _metadata names
    # check, run on what was written against the environment that loaded the fixtures: kept
    assert out["check_headline"].startswith("0 of 4 cache files will be ignored") and "0 of 2 rank groups will be discarded" in out["check_headline"]


def test_new_files_only_and_one_line_errors(tmp_path):
    assert tiletune("deploy", str(TABLE), "--layout", "vllm", "--ranks", "2", "-o", str(tmp_path)).returncode == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    r = tiletune("deploy", str(TABLE), "--layout", "vllm", "--ranks", "2", "-o", str(tmp_path))
    assert r.returncode == 2 and "deploy writes new files only" in r.stderr and r.stderr.count("\n") == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    r = tiletune("deploy", str(DATA / "target_env.json"), "--layout", "sglang", "--ranks", "2", "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "not a FlashInfer v1 cache" in r.stderr
    r = tiletune("deploy", str(TABLE), "--layout", "vllm", "--ranks", "2", "--pp", "2", "-o", str(tmp_path / "y"))
    assert r.returncode == 2 and "--pp is SGLang's" in r.stderr


def test_trtllm_cache_is_named_in_place():
    r = tiletune("deploy", str(ROOT / "cache_samples" / "trtllm" / "autotuner_cache.rank1.json"), "--layout", "trtllm")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == (
        f"TLLM_AUTOTUNER_CACHE_PATH={ROOT / 'cache_samples' / 'trtllm' / 'autotuner_cache.json'}")
    r = tiletune("deploy", str(TABLE), "--layout", "trtllm")
    assert r.returncode == 2 and "not a TensorRT-LLM autotuner cache" in r.stderr
