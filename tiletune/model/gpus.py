"""The GPU spec table: per-SKU SM count, clock, bandwidth, L2, shared memory and tensor peaks.

Owns `data/gpus.json` (every number with its source, peaks marked dense/sparse), name matching
(FlashInfer's `_metadata.gpu` and nvidia-smi names such as "NVIDIA GeForce RTX 5090"), the named
default SKU per arch, and user files that add or override GPUs (`--gpu-file`, env
`TILETUNE_GPU_FILE`, same JSON schema). Units in `GpuSpec`: bytes, bytes/s, FLOP/s, Hz.
Efficiency elsewhere is always computed against `Peak.dense`; `sparse` is only shown, labelled.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from msgspec import Struct, field

from tiletune.core.archs import KNOWN_ARCHS, normalize_arch
from tiletune.core.errors import ModelError

PEAK_KINDS = ("fp4", "fp6", "fp8", "mxfp8", "fp16", "bf16", "tf32", "int8")

# Problem dtype -> which tensor-core peak it runs at. fp32 GEMMs on tensor cores run as tf32;
# int4 has no tensor-core path on the archs in the table (None: refused with a message).
# "mxfp8" (block-scaled FP8) has its own peak only where it differs from plain FP8: GeForce
# Blackwell runs plain FP8 with FP32 accumulate at half the block-scaled rate (RTX 5090: 419 vs
# 838, whitepaper and bench/blackwell_public); elsewhere it falls back to the "fp8" peak.
DTYPE_PEAK: Dict[str, Optional[str]] = {
    "nvfp4": "fp4", "mxfp4": "fp4", "mxfp8": "mxfp8", "fp8": "fp8", "bf16": "bf16", "fp16": "fp16",
    "fp32": "tf32", "int8": "int8", "int4": None,
}
PEAK_FALLBACK: Dict[str, str] = {"mxfp8": "fp8"}  # a peak kind a GPU may leave out -> the one it equals then
GPU_FILE_ENV = "TILETUNE_GPU_FILE"
GPU_FILE_MAX_BYTES = 16 << 20  # a GPU table is a few KiB


class Peak(Struct, frozen=True, gc=False):
    """One tensor-core peak. FLOP/s (OP/s for int8). `quoted` is the figure the vendor prints."""

    kind: str
    dense: float
    sparse: Optional[float]
    quoted: str  # "dense" | "sparse"
    basis: str  # "datasheet" (printed, or printed/2) | "derived" (SMs x clock x per-SM rate)
    source: str
    note: Optional[str] = None


class GpuSpec(Struct, frozen=True, gc=False):
    """One SKU. `None` where the sources publish nothing (e.g. B300 clock); `sources` maps field -> source."""

    key: str
    name: str
    arch: str
    sms: int
    boost_clock_hz: Optional[float]
    mem_bw_bytes_per_s: float
    mem_bytes: Optional[int]
    l2_bytes: Optional[int]
    smem_per_block_optin: int
    smem_per_sm: int
    peaks: Tuple[Tuple[str, Optional[Peak]], ...]
    names: Tuple[str, ...] = ()
    sources: Tuple[Tuple[str, str], ...] = ()
    notes: Tuple[str, ...] = ()
    origin: str = "builtin"  # "builtin" or the user file it came from
    # Clocks and power (item: sustained clocks). `boost_clock_hz` is the clock the datasheet peak is
    # quoted at; `max_clock_hz` the highest the SM reaches (nvidia-smi clocks.max.sm: short bursts,
    # what an autotuner's few timed runs see); `sustained_clock_hz` per dtype: measured under
    # back-to-back GEMMs at the power limit. None where nobody measured or published it.
    max_clock_hz: Optional[float] = None
    power_limit_w: Optional[float] = None
    # the board's power at idle in P0 (W): the floor a GEMM's dynamic power sits on (capped_clock_hz)
    idle_power_w: Optional[float] = None
    sustained_clock_hz: Tuple[Tuple[str, float], ...] = ()
    clock_source: Optional[str] = None
    # L2 read bandwidth (bytes/s) where measured or published (sources["l2_read_bw_gbps"]); None:
    # tiletune.model.l2 estimates it and says so
    l2_read_bw_bytes_per_s: Optional[float] = None

    def sustained_clock(self, dtype: str) -> Optional[float]:
        """Measured sustained SM clock (Hz) under GEMM load for `dtype` (fp16 reads bf16's), else None."""
        d = dict(self.sustained_clock_hz)
        return d.get(dtype) or d.get({"fp16": "bf16"}.get(dtype, ""))

    def peak(self, kind: str) -> Optional[Peak]:
        return dict(self.peaks).get(kind)

    def peak_for_dtype(self, dtype: str) -> Peak:
        """The peak a GEMM of `dtype` runs at; ModelError when the GPU has no such path."""
        if dtype not in DTYPE_PEAK:
            raise ModelError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_PEAK)}")
        kind = DTYPE_PEAK[dtype]
        p = self.peak(kind) if kind else None
        if p is None and kind in PEAK_FALLBACK:
            kind = PEAK_FALLBACK[kind]
            p = self.peak(kind)
        if p is None:
            what = f"{kind} tensor-core peak" if kind else "tensor-core path"
            raise ModelError(f"{self.name} ({self.arch}) has no {what} for dtype {dtype!r} in the GPU table"
                             f" (supported here: {', '.join(k for k, v in self.peaks if v)})")
        return p


def _norm(name: str) -> str:
    """'NVIDIA GeForce RTX 5090' / 'rtx-5090' -> 'rtx5090': case, vendor words and punctuation dropped."""
    s = name.lower().replace("nvidia", "").replace("geforce", "")
    return re.sub(r"[^a-z0-9]", "", s)


def _non_finite(value: Any, path: str = "") -> Optional[str]:
    """The first field (dotted path) holding NaN or an infinity, or None. A GPU file's numbers feed
    every model figure and picture: NaN compares false with everything (so `bw <= 0` let it in) and
    an infinite bandwidth divided the roofline's ridge by zero."""
    stack = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return where or "a value"
        if isinstance(v, dict):
            stack.extend((f"{where}.{k}" if where else str(k), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))
    return None


def _spec_from_json(g: Dict[str, Any], origin: str) -> GpuSpec:
    where = f"{origin}: gpu {g.get('key', '?')!r}"
    bad = _non_finite(g)
    if bad is not None:
        raise ModelError(f"{where}: {bad} is not a finite number (NaN and Infinity are no GPU figures)")
    try:
        arch = normalize_arch(str(g["arch"]))
        if arch is None:
            raise ModelError(f"{where}: arch {g['arch']!r} is not one of {', '.join(KNOWN_ARCHS)}")
        peaks: list[Tuple[str, Optional[Peak]]] = []
        for kind in PEAK_KINDS:
            p = (g.get("peaks_tflops") or {}).get(kind)
            if p is None:
                peaks.append((kind, None))
                continue
            dense = float(p["dense"])
            if dense <= 0:
                raise ModelError(f"{where}: peak {kind} dense must be > 0, got {dense}")
            sparse = p.get("sparse")
            peaks.append((kind, Peak(kind, dense * 1e12, None if sparse is None else float(sparse) * 1e12,
                                     str(p.get("quoted", "dense")), str(p.get("basis", "datasheet")),
                                     str(p.get("source", origin)), p.get("note"))))
        sms, bw = int(g["sms"]), float(g["mem_bw_gbps"])
        if sms <= 0 or bw <= 0:
            raise ModelError(f"{where}: sms and mem_bw_gbps must be > 0")
        clock = g.get("boost_clock_mhz")
        mem = g.get("mem_gb")
        max_clock, power, idle = g.get("max_clock_mhz"), g.get("power_limit_w"), g.get("idle_power_w")
        sustained = g.get("sustained_clock_mhz") or {}
        if not isinstance(sustained, dict) or any(float(v) <= 0 for v in sustained.values()):
            raise ModelError(f"{where}: sustained_clock_mhz must map dtype -> MHz > 0")
        l2_bw = g.get("l2_read_bw_gbps")
        for name, v in (("max_clock_mhz", max_clock), ("power_limit_w", power), ("l2_read_bw_gbps", l2_bw),
                        ("idle_power_w", idle)):
            if v is not None and float(v) <= 0:
                raise ModelError(f"{where}: {name} must be > 0")
        return GpuSpec(
            key=str(g["key"]), name=str(g["name"]), arch=arch, sms=sms,
            boost_clock_hz=None if clock is None else float(clock) * 1e6,
            mem_bw_bytes_per_s=bw * 1e9, mem_bytes=None if mem is None else int(float(mem) * 1e9),
            l2_bytes=g.get("l2_bytes"), smem_per_block_optin=int(g["smem_per_block_optin"]),
            smem_per_sm=int(g["smem_per_sm"]), peaks=tuple(peaks),
            names=tuple([str(g["name"])] + [str(n) for n in g.get("names", [])]),
            sources=tuple(sorted((str(k), str(v)) for k, v in (g.get("sources") or {}).items())),
            notes=tuple(str(n) for n in g.get("notes", [])), origin=origin,
            max_clock_hz=None if max_clock is None else float(max_clock) * 1e6,
            power_limit_w=None if power is None else float(power),
            idle_power_w=None if idle is None else float(idle),
            sustained_clock_hz=tuple(sorted((str(k), float(v) * 1e6) for k, v in sustained.items())),
            clock_source=g.get("clock_source"),
            l2_read_bw_bytes_per_s=None if l2_bw is None else float(l2_bw) * 1e9)
    except ModelError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"{where}: bad or missing field ({type(e).__name__}: {e})") from None


class GpuTable(Struct, frozen=True, gc=False):
    """All known GPUs (built-in plus an optional user file), and the per-arch defaults."""

    gpus: Tuple[GpuSpec, ...]
    defaults: Tuple[Tuple[str, str], ...]
    index: Dict[str, GpuSpec] = field(default_factory=dict)

    def find(self, name: str) -> GpuSpec:
        key = _norm(name)
        if not key:
            raise ModelError(f"GPU name {name!r} is empty")
        if key in self.index:
            return self.index[key]
        raise ModelError(f"unknown GPU {name!r}; {self._close(name)}; add it with --gpu-file or ${GPU_FILE_ENV}")

    def _close(self, name: str) -> str:
        key = _norm(name)
        hits = [g for g in self.gpus if any(key in _norm(n) or _norm(n) in key for n in g.names)]
        if not hits:
            by_alias = {_norm(n): g for g in self.gpus for n in g.names}
            near = difflib.get_close_matches(key, list(by_alias), n=4, cutoff=0.5)
            hits = list(dict.fromkeys(by_alias[n] for n in near))
        if not hits:
            return "known: " + ", ".join(g.key for g in self.gpus)
        return "close entries: " + ", ".join(f"{g.name} ({g.key})" for g in hits[:5])

    def default_for_arch(self, arch: str) -> GpuSpec:
        a = normalize_arch(arch) or arch
        key = dict(self.defaults).get(a)
        if key is None:
            raise ModelError(f"no default GPU for arch {arch!r}; pass --gpu (archs with a default: "
                             f"{', '.join(k for k, _ in self.defaults)})")
        return self.find(key)


def _build(docs: Tuple[Tuple[Dict[str, Any], str], ...]) -> GpuTable:
    by_key: Dict[str, GpuSpec] = {}
    defaults: Dict[str, str] = {}
    for doc, origin in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("gpus"), list):
            raise ModelError(f"{origin}: expected a JSON object with a 'gpus' list (schema tiletune.gpus/1)")
        for g in doc["gpus"]:
            if not isinstance(g, dict):
                raise ModelError(f"{origin}: every entry of 'gpus' must be an object")
            spec = _spec_from_json(g, origin)
            by_key[spec.key] = spec  # a user entry with a built-in key overrides it
        for arch, key in (doc.get("defaults") or {}).items():
            defaults[normalize_arch(arch) or arch] = str(key)
    index: Dict[str, GpuSpec] = {}
    for spec in by_key.values():
        for n in spec.names + (spec.key,):
            index[_norm(n)] = spec
    return GpuTable(tuple(by_key.values()), tuple(sorted(defaults.items())), index)


@lru_cache(maxsize=8)
def _load(user_file: Optional[str]) -> GpuTable:
    builtin = json.loads(resources.files("tiletune.model").joinpath("data/gpus.json").read_text())
    docs = [(builtin, "built-in gpus.json")]
    if user_file:
        p = Path(user_file)
        from tiletune.core import bounded_input
        from tiletune.core.errors import ReaderError

        try:  # a regular file (a FIFO would block, /dev/zero never end), bounded JSON
            docs.append((bounded_input.load_file(p, limit=GPU_FILE_MAX_BYTES, what="GPU file"), str(p)))
        except ReaderError as e:
            raise ModelError(f"{e} (as a GPU file)") from None
    return _build(tuple(docs))


def table(gpu_file: Optional[str] = None) -> GpuTable:
    """The table: built-in, plus `gpu_file` (or $TILETUNE_GPU_FILE) adding or overriding entries."""
    return _load(gpu_file or os.environ.get(GPU_FILE_ENV) or None)


def find(name: str, gpu_file: Optional[str] = None) -> GpuSpec:
    """GPU by name: FlashInfer `_metadata.gpu`, nvidia-smi names, table keys ("h200-sxm"); ModelError lists close entries."""
    return table(gpu_file).find(name)


def default_for_arch(arch: str, gpu_file: Optional[str] = None) -> GpuSpec:
    """The named default SKU for an arch (sm120 -> RTX PRO 6000 Blackwell Server Edition); callers must say it was assumed."""
    return table(gpu_file).default_for_arch(arch)


# The clock a board sustains under a power cap (issue 26 round four). A GEMM's power above the idle floor is
# switching power, C x V^2 x f, and over the DVFS range the supply voltage rises about in proportion to the
# clock, so it grows as f^3 (the usual DVFS rule: dynamic power ~ C V^2 f with V ~ f). The model's constants
# for a SKU are fitted or measured at its rated power (`power_limit_w`: the nvidia-smi power cap), so under a
# cap P the clock the constants assume scales by ((P - idle) / (rated - idle))^(1/3), `idle_power_w` being the
# board's P0 idle power (gpus.json cites both per SKU). Checked (bench/blackwell_public, round four) on the B200
# timings of Meta's 750 W boards (tlxbaseline-b200, tlx220-b200) against the 1,000 W boards of the fit.
DVFS_POWER_EXPONENT = 3.0


def capped_clock_hz(gpu: GpuSpec, clock_hz: float, power_w: float) -> Optional[Tuple[float, str]]:
    """(the SM clock a GEMM sustains under a board power cap of `power_w` watts, its basis), `clock_hz` being
    the clock the model assumes at the SKU's rated power; None where the table lacks the SKU's rated or idle
    power, or the cap is at or above the rating (the clock does not rise above what the constants assume)."""
    if power_w <= 0:
        raise ModelError(f"power limit {power_w:g} W: must be > 0")
    rated, idle = gpu.power_limit_w, gpu.idle_power_w
    if not rated or idle is None or power_w >= rated:
        return None
    if power_w <= idle:
        raise ModelError(f"power limit {power_w:g} W: at or below {gpu.name}'s idle power ({idle:g} W)")
    scale = ((power_w - idle) / (rated - idle)) ** (1.0 / DVFS_POWER_EXPONENT)
    return clock_hz * scale, (f"{scale:.3f} x the clock at the rated {rated:,.0f} W under a {power_w:,.0f} W cap "
                              f"(power above the {idle:,.0f} W idle floor ~ clock cubed: gpus.capped_clock_hz)")

