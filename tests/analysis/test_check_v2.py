"""`tiletune check` on FlashInfer managed (v2) stores (analysis/check.py store_verdict).

- tests/data/flashinfer_writers/0.7.4/v2root: a store FlashInfer 0.7.4's own autotune_v2 wrote (one venv);
- tests/data/engine_loaders/target_env.json: `tiletune doctor -f json` in another venv (FlashInfer 0.7.4's own
  _collect_metadata() there), where tests/data/engine_loaders/independent/vllm's tables were tuned;
- a store `tiletune deploy --layout flashinfer-v2` writes from such a table (tests/tuner/test_deploy.py shows
  deploy's bytes are FlashInfer's own; bench/v2_export shows FlashInfer 0.7.4 serving them).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE_ROOT = ROOT / "tests" / "data" / "flashinfer_writers" / "0.7.4" / "v2root"
TARGET = ROOT / "tests" / "data" / "engine_loaders" / "target_env.json"
TABLE = ROOT / "tests" / "data" / "engine_loaders" / "independent" / "vllm" / "autotune_configs_dp0_rank0.json"


def tiletune(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tiletune", *args], capture_output=True, text=True, cwd=ROOT)


def _check(path: Path) -> dict:
    r = tiletune("check", str(path), "--env", str(TARGET), "-f", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_store_from_another_venv_is_ignored_and_the_field_is_named():
    (f,) = _check(STORE_ROOT)["files"]
    assert f["layout"] == "flashinfer-v2" and f["verdict"] == "ignored" and f["deciding"] == ["cutlass_dsl_version"]
    assert "measure_execution_mode=eager" in f["reason"]  # the policy field is part of the identity, and said so
    r = tiletune("check", str(STORE_ROOT), "--env", str(TARGET), "--fail-on", "miss")
    assert r.returncode == 1 and "IGNORED" in r.stdout


def test_a_store_deployed_from_the_targets_own_table_is_used(tmp_path):
    r = tiletune("deploy", str(TABLE), "--layout", "flashinfer-v2", "-o", str(tmp_path / "root"), "--env", str(TARGET))
    assert r.returncode == 0, r.stderr
    assert "tiletune check on what was written: 0 of 1 cache file will be ignored" in r.stdout
    (f,) = _check(tmp_path / "root")["files"]
    assert f["verdict"] == "used" and f["entries"] == len([k for k in json.loads(TABLE.read_text()) if k.startswith("(")])


def test_a_renamed_store_or_entry_is_never_read(tmp_path):
    src = next((STORE_ROOT / "v2").iterdir())
    moved = tmp_path / "v2" / "0123456789abcdef"
    shutil.copytree(src, moved)
    (f,) = _check(moved)["files"]
    assert f["verdict"] == "ignored" and f["deciding"] == ["manifest"] and src.name in f["reason"]
    fixed = tmp_path / "ok" / "v2" / src.name
    shutil.copytree(src, fixed)
    first = sorted((fixed / "entries").iterdir())[0]
    first.rename(first.with_name("0" * 24 + ".json"))
    (f,) = _check(fixed)["files"]
    assert "1 of its 5 entry files are not named by their key's hash" in f["reason"]
