"""Where servers leave autotune caches, logs and blocklists: the default places `inspect` looks.

Each place comes from the writer's own code (see the reader modules for the layouts):
- FlashInfer: FLASHINFER_WORKSPACE_BASE (default ~) / .cache/flashinfer, holding the JIT
  workspaces <version>/<arch>/ (flashinfer/jit/env.py) and the managed store root
  autotune/ (FLASHINFER_AUTOTUNE_CACHE_DIR overrides it); FLASHINFER_TACTICS_BLOCKLIST names a file.
- vLLM: VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR, else VLLM_CACHE_ROOT (default
  $XDG_CACHE_HOME/vllm or ~/.cache/vllm) / flashinfer_autotune_cache.
- SGLang: SGLANG_CACHE_DIR (default ~/.cache/sglang) / flashinfer/autotune.
- TensorRT-LLM: TLLM_AUTOTUNER_CACHE_PATH (a file; older releases wrote <stem>.rank<N>.json beside it);
  the unified root TRTLLM_CACHE_DIR (NVIDIA/TensorRT-LLM#18897, tensorrt_llm/_bootstrap.py:64-85 at
  NVIDIA/TensorRT-LLM@00832e8): <root>/autotuner (cache.json, or cache.rank<r>.json per rank as the #7738
  writer names them) and FlashInfer's workspace base <root>/flashinfer, whose JIT workspaces are read like
  FlashInfer's own; <root>/flashinfer/rank-<r> is looked in too, though no TensorRT-LLM source read creates it.
Nothing here reads a file; `searched` lists every place with what was found, so an empty
result can say where it looked.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Mapping, Optional

from msgspec import Struct

_VERSION_DIR = re.compile(r"^\d+\.\d+")


class Discovery(Struct, frozen=True, gc=False):
    """Existing places to read, and a line per place looked at ("LABEL: PATH (found|absent)")."""

    paths: tuple[Path, ...]
    searched: tuple[str, ...]


def _expand(value: str, home: Path) -> Path:
    return Path(home / value[2:]) if value.startswith("~/") else Path(value)


def discover(env: Optional[Mapping[str, str]] = None, home: Optional[Path] = None) -> Discovery:
    """The default cache/log/blocklist locations that exist under `env` and `home` (default: this
    process's environment and home, read at the call)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    found: list[Path] = []
    searched: list[str] = []

    def look(label: str, path: Path) -> None:
        try:
            exists = path.exists()
            state = "found" if exists else "absent"
        except OSError as e:  # e.g. a parent directory without search permission
            exists, state = False, f"not accessible: {e.strerror or e}"
        searched.append(f"{label}: {path} ({state})")
        if exists and path not in found:
            found.append(path)

    fi_base = _expand(env["FLASHINFER_WORKSPACE_BASE"], home) if env.get("FLASHINFER_WORKSPACE_BASE") else home
    _trtllm_root(env, home, look, searched)
    fi_cache = fi_base / ".cache" / "flashinfer"
    if env.get("FLASHINFER_AUTOTUNE_CACHE_DIR"):
        look("FLASHINFER_AUTOTUNE_CACHE_DIR", _expand(env["FLASHINFER_AUTOTUNE_CACHE_DIR"], home))
    else:
        look("FlashInfer managed store (default)", fi_cache / "autotune")
    # JIT workspaces (<version>/<arch>/: flashinfer_jit.log, cached_ops/) for the jit/log readers
    workspaces = jit_workspaces(fi_cache)
    label = "FLASHINFER_WORKSPACE_BASE JIT workspaces" if env.get("FLASHINFER_WORKSPACE_BASE") else "FlashInfer JIT workspaces"
    if workspaces:
        for w in workspaces:
            look(label, w)
    else:
        searched.append(f"{label}: {fi_cache}/<version>/<arch> (absent)")
    if env.get("FLASHINFER_TACTICS_BLOCKLIST"):
        look("FLASHINFER_TACTICS_BLOCKLIST", _expand(env["FLASHINFER_TACTICS_BLOCKLIST"], home))

    if env.get("VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR"):
        look("VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR", _expand(env["VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR"], home))
    if env.get("VLLM_CACHE_ROOT"):
        vllm_root, vlabel = _expand(env["VLLM_CACHE_ROOT"], home), "VLLM_CACHE_ROOT"
    elif env.get("XDG_CACHE_HOME"):
        vllm_root, vlabel = _expand(env["XDG_CACHE_HOME"], home) / "vllm", "vLLM cache (XDG_CACHE_HOME)"
    else:
        vllm_root, vlabel = home / ".cache" / "vllm", "vLLM cache (default)"
    look(vlabel, vllm_root / "flashinfer_autotune_cache")

    if env.get("SGLANG_CACHE_DIR"):
        look("SGLANG_CACHE_DIR", _expand(env["SGLANG_CACHE_DIR"], home) / "flashinfer" / "autotune")
    else:
        look("SGLang cache (default)", home / ".cache" / "sglang" / "flashinfer" / "autotune")

    if env.get("TLLM_AUTOTUNER_CACHE_PATH"):
        p = _expand(env["TLLM_AUTOTUNER_CACHE_PATH"], home)
        look("TLLM_AUTOTUNER_CACHE_PATH", p)
        try:  # per-rank files of TensorRT-LLM releases before #10336
            ranks = sorted(p.parent.glob(f"{p.stem}.rank*.json")) if p.parent.is_dir() else []
        except OSError:
            ranks = []
        for r in ranks:
            look("TLLM_AUTOTUNER_CACHE_PATH per-rank", r)
    else:
        searched.append("TLLM_AUTOTUNER_CACHE_PATH: (unset; TensorRT-LLM has no default cache file)")
    return Discovery(paths=tuple(found), searched=tuple(searched))


def jit_workspaces(fi_cache: Path) -> list[Path]:
    """`<fi_cache>/<version>/<arch>/` directories (FlashInfer's JIT workspaces), sorted."""
    workspaces: list[Path] = []
    try:
        if fi_cache.is_dir():
            for vdir in sorted(fi_cache.iterdir()):
                if _VERSION_DIR.match(vdir.name) and vdir.is_dir():
                    workspaces += [a for a in sorted(vdir.iterdir()) if a.is_dir()]
    except OSError:  # unreadable: read_inputs reports it if the user points at it
        pass
    return workspaces


def _trtllm_root(env: Mapping[str, str], home: Path, look: Callable[[str, Path], None], searched: list[str]) -> None:
    """TRTLLM_CACHE_DIR's autotuner caches and FlashInfer workspaces, each rank slot apart."""
    if not env.get("TRTLLM_CACHE_DIR"):
        return
    root = _expand(env["TRTLLM_CACHE_DIR"], home)
    look("TRTLLM_CACHE_DIR autotuner caches", root / "autotuner")
    fi_root = root / "flashinfer"
    bases = [fi_root]
    try:
        bases += sorted(p for p in fi_root.glob("rank-*") if p.is_dir())
    except OSError:
        pass
    found = False
    for base in bases:
        for w in jit_workspaces(base / ".cache" / "flashinfer"):
            look("TRTLLM_CACHE_DIR FlashInfer JIT workspace" + (f" ({base.name})" if base is not fi_root else ""), w)
            found = True
    if not found:
        searched.append(f"TRTLLM_CACHE_DIR FlashInfer JIT workspaces: {fi_root}[/rank-<r>]/.cache/flashinfer/<version>/<arch> (absent)")
