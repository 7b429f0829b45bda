"""vLLM's FlashInfer autotune cache layouts: where the files sit, and what their path says.

vLLM (vllm/model_executor/warmup/flashinfer_autotune_cache.py, `resolve_flashinfer_autotune_file`,
vllm-project/vllm#42537) writes FlashInfer v1 caches at

    $VLLM_CACHE_ROOT/flashinfer_autotune_cache/<flashinfer version>/<arch>/<sha256 of config>/autotune_configs.json

where <version>/<arch> are the last two parts of FlashInfer's JIT workspace directory (arch is
FlashInfer's CUDA-arch list, e.g. "120a", "90a", or several joined by "_"). With
VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR the root is that directory and the version/arch parts are
absent. Per-rank files (vllm-project/vllm#57635) replace `.json` with `_dp{dp}_rank{r}.json`:
`autotune_configs_dp0_rank1.json`; vllm-project/vllm#57579 mirrors FlashInfer's own file name
`autotune_config.json` beside it. Newer vLLM hands the managed v2 store the same override
directory as its root (`resolve_flashinfer_autotune_v2_root`); flashinfer_v2 reads that.

The files are FlashInfer v1 caches; this module adds the path's version, arch and rank.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Optional

from tiletune.core.archs import normalize_arch
from tiletune.readers import flashinfer_v1
from tiletune.readers.interface import ReadContext
from tiletune.readers.json_common import PathHints

KIND = "vllm"

_FILE = re.compile(r"^autotune_configs(?:_dp(\d+)_rank(\d+))?\.json$")
_RANK_SUFFIX = re.compile(r"_dp(\d+)_rank(\d+)\.json$")
_ROOT = "flashinfer_autotune_cache"


def path_arch(text: str) -> Optional[str]:
    """'120a' -> 'sm120'; '90a_100a' (several archs compiled) -> None: the GPU is ambiguous."""
    archs = {normalize_arch(a) for a in text.split("_")}
    return archs.pop() if len(archs) == 1 else None


def hints(path: Path) -> Optional[PathHints]:
    """PathHints when `path` is a vLLM autotune cache file (default layout or override root)."""
    m = _FILE.match(path.name)
    parts = path.parts
    if m is None:
        # Under the vLLM root, also FlashInfer's own name `autotune_config.json` (vLLM mirrors both
        # names, vllm-project/vllm#57579) and any other per-rank `_dp{d}_rank{r}.json` name.
        if _ROOT not in parts or not path.name.endswith(".json"):
            return None
        m = _RANK_SUFFIX.search(path.name)
        if m is None and path.name != "autotune_config.json":
            return None
    rank = f"dp{m.group(1)}_rank{m.group(2)}" if m and m.group(1) is not None else None
    if _ROOT in parts:
        i = len(parts) - 1 - parts[::-1].index(_ROOT)
        rest = parts[i + 1 : -1]  # version/arch/hash, or just hash
        if len(rest) >= 3:
            return PathHints(layout=KIND, flashinfer_version=rest[0], arch=path_arch(rest[1]), rank=rank)
    return PathHints(layout=KIND, rank=rank)


def sniff(path: Path, head: bytes) -> bool:
    """A v1 cache file named or placed the way vLLM writes them."""
    return hints(path) is not None and flashinfer_v1.sniff(path, head)


def read(path: Path, ctx: ReadContext) -> Iterator[flashinfer_v1.Item]:
    """Read the v1 cache with the version, arch and rank its vLLM path names."""
    return flashinfer_v1.read_with_hints(path, ctx, hints(path))
