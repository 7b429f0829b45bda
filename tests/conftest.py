"""Shared fixtures: the bundled samples, and skips for GPU / nvcc tests on machines without them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
