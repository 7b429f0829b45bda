"""Shared fixtures: the bundled samples, the CLI runner, a clean server environment, and skips for GPU / nvcc tests on machines without them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Text views wrap to the terminal's width (COLUMNS). Tests that care set it themselves; the rest
# must see the same width in CI as in any shell that exports COLUMNS (three helpers' suites failed
# on a wrapped caveat that passed alone), so the suite and every command it starts begin without it.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "cache_samples"


@pytest.fixture
def sample():
    """sample("name") -> Path of a file or directory under cache_samples/ (fails if absent)."""

    def _get(name: str) -> Path:
        p = SAMPLES / name
        assert p.exists(), f"missing sample {p}"
        return p

    return _get


@pytest.fixture(scope="session")
def big_caches():
    """tests/readers/big_caches.py, the speed bench's workload generators (`make_cache`,
    `make_fp4_distinct`), loaded by path: tests/ is not a package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("big_caches", ROOT / "tests" / "readers" / "big_caches.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def run():
    """run(*args) -> the CliRunner result of `tiletune ARGS` (arguments turned into strings)."""
    from typer.testing import CliRunner

    from tiletune.cli.typer_app import app

    runner = CliRunner()

    def _run(*args):
        return runner.invoke(app, [str(a) for a in args])

    return _run


@pytest.fixture
def no_server_env(monkeypatch, tmp_path):
    """No server cache variables, and an empty HOME: discovery finds only what a test puts there."""
    for var in ("FLASHINFER_AUTOTUNE_CACHE_DIR", "FLASHINFER_WORKSPACE_BASE", "FLASHINFER_TACTICS_BLOCKLIST", "VLLM_CACHE_ROOT",
                "VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR", "SGLANG_CACHE_DIR", "TLLM_AUTOTUNER_CACHE_PATH", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _have_gpu() -> bool:
    try:
        import torch  # noqa: F401  (imported lazily: CPU-only CI must not need torch)
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config, items):
    gpu = None
    for item in items:
        if "gpu" in item.keywords:
            gpu = _have_gpu() if gpu is None else gpu
            if not gpu:
                item.add_marker(pytest.mark.skip(reason="no CUDA GPU visible"))
        if "nvcc" in item.keywords and shutil.which("nvcc") is None:
            item.add_marker(pytest.mark.skip(reason="nvcc not on PATH"))

