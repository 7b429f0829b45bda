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


# ----- --layout flashinfer-v2: FlashInfer 0.7.x's managed store ---------------------------------------------------
V2_STORE = ROOT / "tests" / "data" / "flashinfer_writers" / "0.7.4" / "v2root" / "v2" / "f620abdf1efe7fd1"  # written by
# FlashInfer 0.7.4's autotune_v2 (tools/flashinfer_writers, scenario v2tune, MeasurementPolicy(execution_mode="eager"))


def _table_of_store(store: Path) -> dict:
    """The v1 table holding what FlashInfer's own store holds: its manifest's environment fields as `_metadata`,
    each entry as [runner, tactic, profiling_policy]."""
    manifest = json.loads((store / "manifest.json").read_text())
    table = {"_metadata": {k: v for k, v in manifest.items() if k != "cache_schema" and not k.startswith("measure_")}}
    for f in sorted((store / "entries").glob("*.json")):
        e = json.loads(f.read_text())
        table[e["key"]] = [e["runner"], e["tactic"]] + ([e["profiling_policy"]] if "profiling_policy" in e else [])
    return table


def test_v2_store_is_byte_for_byte_what_flashinfer_writes(tmp_path):
    src = tmp_path / "table.json"
    src.write_text(json.dumps(_table_of_store(V2_STORE)))
    r = tiletune("deploy", str(src), "--layout", "flashinfer-v2", "-o", str(tmp_path / "root"), "--measure", "execution_mode=eager")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "root" / "v2" / V2_STORE.name  # the same environment hash FlashInfer computed
    want = sorted(p.relative_to(V2_STORE) for p in V2_STORE.rglob("*.json"))
    assert sorted(p.relative_to(out) for p in out.rglob("*.json")) == want
    for rel in want:
        assert (out / rel).read_bytes() == (V2_STORE / rel).read_bytes(), rel
    assert f"FLASHINFER_AUTOTUNE_CACHE_DIR={(tmp_path / 'root').resolve()}" in r.stdout.splitlines()
    # without the policy field the environment, and so the directory, is another one
    r = tiletune("deploy", str(src), "--layout", "flashinfer-v2", "-o", str(tmp_path / "plain"))
    assert r.returncode == 0 and not (tmp_path / "plain" / "v2" / V2_STORE.name).exists()
    # new files only
    r = tiletune("deploy", str(src), "--layout", "flashinfer-v2", "-o", str(tmp_path / "root"), "--measure", "execution_mode=eager")
    assert r.returncode == 2 and "already a store" in r.stderr and r.stderr.count("\n") == 1


def test_v2_key_fields_of_keys_with_torch_dtypes():
    from tiletune.tuner.deploy import key_fields

    # a real FlashInfer 0.7.2.post1 key (tests/data/h200_warmups, an H200): its extras are torch dtypes
    table = json.loads((ROOT / "tests" / "data" / "h200_warmups" / "a" / "autotune_config.json").read_text())
    key = next(k for k in table if "torch." in k)
    fields = key_fields(key)
    assert fields is not None and fields["__tuple__"][3] == {"__tuple__": [
        {"__dtype__": "float8_e4m3fn"}, {"__dtype__": "float8_e4m3fn"}, {"__dtype__": "bfloat16"}]}
    assert key_fields("('op', 'R', ((1, 2),), (object(),))") is None  # not literal: left to FlashInfer's lazy lookup


def test_measure_needs_the_v2_layout_and_known_fields(tmp_path):
    r = tiletune("deploy", str(TABLE), "--layout", "vllm", "-o", str(tmp_path / "v"), "--measure", "timer=cupti")
    assert r.returncode == 2 and "--measure" in r.stderr
    r = tiletune("deploy", str(TABLE), "--layout", "flashinfer-v2", "-o", str(tmp_path / "w"), "--measure", "speed=fast")
    assert r.returncode == 2 and "execution_mode" in r.stderr
