"""SGLang's FlashInfer autotune cache layouts: where the files sit, and what their path says.

SGLang (python/sglang/srt/model_executor/runner/flashinfer_autotune.py,
`flashinfer_autotune_cache_path`) writes FlashInfer v1 caches per rank:

    $SGLANG_CACHE_DIR/flashinfer/autotune/<flashinfer version>/sm<MAJ><MIN>/<sha256(model key)[:16]>/
        rank_tp{t}_pp{p}_dp{d}.json            (current; MegaMoE adds "_gpu<uuid>")
        rank{N}.json                           (first release of the feature, sgl-project/sglang#24156)
        runs/<stem>.<YYYYmmdd_HHMMSS>.<uuid hex>.json   (SGLANG_FLASHINFER_AUTOTUNE_CACHE=0: one fresh file per run)

and, after the move to FlashInfer's managed store, one v2 store per rank:

    $SGLANG_CACHE_DIR/flashinfer/autotune/managed/<hash16>/rank_tp{t}_pp{p}_dp{d}/v2/<env hash>/...

The files themselves are read by flashinfer_v1 / flashinfer_v2; this module contributes the
version, arch and rank the path names (`PathHints`), and keeps ranks apart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Optional

from tiletune.core.archs import normalize_arch
from tiletune.readers import flashinfer_v1
from tiletune.readers.interface import ReadContext
from tiletune.readers.json_common import PathHints

KIND = "sglang"

_RANK_FILE = re.compile(r"^rank_(tp\d+_pp\d+_dp\d+)(?:_gpu[\w-]+)?$|^rank(\d+)$")
_RUN_FILE = re.compile(r"^(rank_tp\d+_pp\d+_dp\d+(?:_gpu[\w-]+)?|rank\d+)\.\d{8}_\d{6}\.[0-9a-f]+$")


def rank_from_name(stem: str) -> Optional[str]:
    """'rank_tp1_pp0_dp0' -> 'tp1_pp0_dp0'; 'rank3' -> 'rank3'; anything else -> None."""
    m = _RANK_FILE.match(stem)
    if m is None:
        return None
    return m.group(1) if m.group(1) else f"rank{m.group(2)}"


def hints(path: Path) -> Optional[PathHints]:
    """PathHints when `path` sits in an SGLang autotune layout (file or managed-store directory)."""
    parts = path.parts
    for i in range(len(parts) - 2):
        if parts[i] == "flashinfer" and parts[i + 1] == "autotune":
            tail = parts[i + 2 :]
            break
    else:
        return None
    if tail and tail[0] == "managed":
        # managed/<hash16>/rank_tp.._pp.._dp../v2/<env>/...
        rank = rank_from_name(tail[2]) if len(tail) > 2 else None
        return PathHints(layout=KIND, rank=rank)
    if len(tail) < 4 or not path.name.endswith(".json"):
        return None
    version, arch_dir = tail[0], tail[1]
    stem = path.name[: -len(".json")]
    if tail[-2] == "runs":
        m = _RUN_FILE.match(stem)
        rank = rank_from_name(m.group(1)) if m else None
    else:
        rank = rank_from_name(stem)
    if rank is None:
        return None
    return PathHints(layout=KIND, flashinfer_version=version, arch=normalize_arch(arch_dir), rank=rank)


def sniff(path: Path, head: bytes) -> bool:
    """A v1 cache file whose path is an SGLang per-rank cache path."""
    return hints(path) is not None and flashinfer_v1.sniff(path, head)


def read(path: Path, ctx: ReadContext) -> Iterator[flashinfer_v1.Item]:
    """Read the v1 cache with the version, arch and rank its SGLang path names."""
    return flashinfer_v1.read_with_hints(path, ctx, hints(path))
