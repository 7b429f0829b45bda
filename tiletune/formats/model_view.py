"""Rendering of `tiletune model` and `tiletune gpus`: ModelResult / GPU table -> dict, table text, Markdown.

Pure: no analysis, no I/O. Values are stored in base units (bytes, seconds, FLOP/s) and converted
here only, each with its unit; every modelled value is marked "model", a compiled one "compiled".
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from tiletune.model.gpus import PEAK_KINDS, GpuSpec, GpuTable
from tiletune.model.perf import ModelResult

KIB = 1024.0


def _r(x: Optional[float], nd: int = 3) -> Optional[float]:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return None
    return round(float(x), nd)


def smem_dict(res: ModelResult, exact: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    f = res.smem
    d: Dict[str, Any] = {
        "kind": "model", "stages": f.stages, "bytes": f.shared_storage_bytes, "limit": f.limit_bytes, "fits": f.fits,
        "verdict": f.verdict, "stage_bytes": f.stage_bytes, "stage_policy": f.stage_policy, "grouped": f.grouped,
        "epilogue_carveout_bytes": f.epilogue_carveout_bytes, "stage_budget_bytes": f.stage_budget_bytes,
        "margin_bytes": f.margin_bytes, "error_bytes": f.error_bytes, "cutlass_version": f.cutlass_version,
        "notes": list(f.notes),
    }
    if exact is not None:
        d["model"] = {k: d[k] for k in ("stages", "bytes", "fits", "verdict")}
        d.update({"kind": "compiled", "stages": exact.get("stages"), "bytes": exact.get("smem_bytes"),
                  "limit": exact.get("smem_limit", f.limit_bytes), "fits": exact.get("fits"),
                  "verdict": None, "cutlass_version": exact.get("cutlass_version"), "compiled": exact})
        if exact.get("builds") is False:
            d["verdict"] = "does_not_build"
        elif exact.get("fits") is not None:
            d["verdict"] = "fits" if exact.get("fits") else "overflows_at_initialize"
    return d


def to_dict(res: ModelResult, exact: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The `tiletune model --format json` object (schema tiletune.model/1)."""
    b = res.bytes
    return {
        "schema": "tiletune.model/1",
        "kind": "model",
        "gpu": {"key": res.gpu_key, "name": res.gpu_name, "arch": res.arch},
        "dtype": res.dtype,
        "dtype_out": res.dtype_out,
        "problem": {"kernel_m": res.kernel_m, "kernel_n": res.kernel_n, "k": res.k, "groups": res.groups},
        "config": {"tile": list(res.tile), "cluster": list(res.cluster), "swap_ab": res.swap_ab,
                   "stream_k": res.stream_k, "split_k": res.split_k},
        "smem": smem_dict(res, exact),
        "flops": res.flops,
        "bytes": {"a": b.a, "b": b.b, "sfa": b.sfa, "sfb": b.sfb, "d": b.d, "partials": b.partials,
                  "minimum": b.minimum},
        "intensity": {"problem": _r(res.intensity_problem), "tile": _r(res.intensity_tile), "unit": "FLOP/B"},
        "ridge": _r(res.ridge),
        "bound": res.bound,
        "time_us": {"floor": _r(res.time_floor_s * 1e6), "compute": _r(res.time_compute_s * 1e6),
                    "memory": _r(res.time_memory_s * 1e6), "fixed": _r(res.time_fixed_s * 1e6),
                    "expected": _r(res.time_expected_s * 1e6), "low": _r(res.time_low_s * 1e6),
                    "high": _r(res.time_high_s * 1e6),
                    "timer": res.timer or "events (the fit's own: not stated)"},
        "efficiency": {"compute": _r(res.efficiency_compute, 4), "roofline": _r(res.efficiency_roofline, 4),
                       "compute_ceiling": _r(res.efficiency_compute_ceiling, 4), "against": "dense peak"},
        "peak_tflops": {"kind": res.peak_kind, "dense": _r(res.peak_dense / 1e12, 1),
                        "sparse": _r(res.peak_sparse / 1e12, 1) if res.peak_sparse else None,
                        "vendor_quotes": res.peak_quoted},
        "bandwidth_gbps": _r(res.bandwidth / 1e9, 1),
        "ctas": res.ctas, "sms": res.sms, "waves": res.waves,
        "wave_efficiency": _r(res.wave_efficiency, 4), "tile_efficiency": _r(res.tile_efficiency, 4),
        "k_efficiency": _r(res.k_efficiency, 4), "k_iters": res.k_iters,
        "calibration": res.calibration,
        "kernel": _kernel_dict(res),
        "clock": {"sm_mhz": _r(res.clock_hz / 1e6, 0) if res.clock_hz else None, "basis": res.clock_basis or None,
                  "power_limit_w": res.power_limit_w,
                  "time_sustained_us": _r(res.time_sustained_s * 1e6) if res.time_sustained_s else None},
        "band_widening": _r(res.band_widening, 3),
        "alternatives": [{"option": a.option, "ctas": a.ctas, "wave_efficiency": _r(a.wave_efficiency, 4),
                          "tile_efficiency": _r(a.tile_efficiency, 4), "k_iters_per_cta": a.k_iters_per_cta,
                          "time_expected_us": _r(a.time_expected_s * 1e6), "note": a.note}
                         for a in res.alternatives],
        "notes": list(res.notes),
    }


def _kernel_dict(res: ModelResult) -> Optional[Dict[str, Any]]:
    """The kernel the tile-aware model timed, with its per-k-block cycles (None on the generic path)."""
    k, c = res.kernel, res.cycles
    if k is None or c is None:
        return None
    return {"kind": "model", "schedule": k.schedule, "cluster": list(k.cluster), "stages": k.stages,
            "fast_accum": k.fast_accum, "epilogue": k.epilogue, "inferred": list(k.basis),
            "cycles_per_kblock": _r(c.kblock, 1), "mma_cycles_per_kblock": _r(c.mma, 1),
            "smem_cycles_per_kblock": _r(c.smem, 1), "epilogue_cycles_per_tile": _r(c.epilogue, 1),
            "bottleneck": c.bottleneck, "accumulators_spill": c.spills, "accumulator_registers": c.acc_regs or None}


def _clock_rows(res: ModelResult) -> List[List[str]]:
    rows = []
    if res.kernel is not None and res.cycles is not None:
        c = res.cycles
        rows.append(["kernel", f"{res.kernel.label()}: {c.kblock:,.0f} cycles per k-block, bound by {c.bottleneck}",
                     "model"])
    if res.clock_hz:
        power = f"; power limit {res.power_limit_w:,.0f} W" if res.power_limit_w else ""
        rows.append(["SM clock", f"{res.clock_hz / 1e6:,.0f} MHz ({res.clock_basis}){power}", "table"])
    if res.time_sustained_s:
        rows.append(["time at sustained clock", f"{res.time_sustained_s * 1e6:,.2f} us (back-to-back load at the "
                     f"power limit: measured clock, modelled time)", "model"])
    return rows


def _rows(res: ModelResult, exact: Optional[Dict[str, Any]]) -> List[List[str]]:
    s = smem_dict(res, exact)
    src = s["kind"]

    def kib(x: Optional[int]) -> str:
        return "unknown" if x is None else f"{x / KIB:.1f} KiB ({x:,} B)"

    sparse = (f"; vendor quotes {res.peak_sparse / 1e12:,.0f} TFLOP/s 2:4-sparse"
              if res.peak_sparse and res.peak_quoted == "sparse" else "")
    bw = res.bytes
    rows = [
        ["GPU", f"{res.gpu_name} ({res.arch}, {res.sms} SMs, {res.bandwidth / 1e9:,.0f} GB/s)", "table"],
        ["problem (kernel view)", f"M={res.kernel_m} N={res.kernel_n} K={res.k}" + (f" x {res.groups} groups" if res.groups > 1 else "")
         + (" (swap-AB: kernel M = problem N)" if res.swap_ab else ""), "input"],
        ["tile", "x".join(map(str, res.tile)) + f" cluster {'x'.join(map(str, res.cluster))}"
         + (" stream-K" if res.stream_k else "") + (f" split-K {res.split_k}" if res.split_k > 1 else ""), "input"],
        ["smem verdict", f"{s['verdict'] or 'not modelled'}", src],
        ["smem stages", "unknown" if s["stages"] is None else str(s["stages"]) + f" ({res.smem.stage_policy})", src],
        ["smem per stage", kib(res.smem.stage_bytes), "model"],
        ["smem kernel / limit", f"{kib(s['bytes'])} / {kib(s['limit'])}", src],
        ["FLOPs", f"{res.flops / 1e9:,.3f} GFLOP", "model"],
        ["bytes (minimum)", f"{bw.minimum / 1e6:,.2f} MB (A {bw.a / 1e6:,.2f}, B {bw.b / 1e6:,.2f}, SF {(bw.sfa + bw.sfb) / 1e6:,.2f}, "
         f"D {bw.d / 1e6:,.2f})" + (f" + {bw.partials / 1e6:,.2f} MB partials" if bw.partials else ""), "model"],
        ["intensity problem / tile", f"{res.intensity_problem:,.1f} / {res.intensity_tile:,.1f} FLOP/B (ridge {res.ridge:,.0f} FLOP/B)", "model"],
        ["bound", res.bound, "model"],
        ["peak (dense)", f"{res.peak_dense / 1e12:,.1f} TFLOP/s {res.peak_kind}{sparse}", "table"],
        ["CTAs / SMs", f"{res.ctas} / {res.sms} ({res.waves} wave(s), last-wave use {res.wave_efficiency:.0%})", "model"],
        ["tile / K quantisation", f"{res.tile_efficiency:.1%} / {res.k_efficiency:.1%} of issued MMA work is real", "model"],
        ["time floor (roofline)", f"{res.time_floor_s * 1e6:,.2f} us", "model"],
        ["time compute / memory / fixed", f"{res.time_compute_s * 1e6:,.2f} / {res.time_memory_s * 1e6:,.2f} / "
         f"{res.time_fixed_s * 1e6:,.2f} us (fixed term for a timing taken with "
         f"{res.timer or 'events, the fit default'})", "model"],
        ["time expected", f"{res.time_expected_s * 1e6:,.2f} us (band {res.time_low_s * 1e6:,.2f} - {res.time_high_s * 1e6:,.2f} us)", "model"],
        ["efficiency vs dense compute", f"{res.efficiency_compute:.1%} (ceiling at this intensity {res.efficiency_compute_ceiling:.1%})", "model"],
        ["efficiency vs roofline", f"{res.efficiency_roofline:.1%}", "model"],
        ["calibration", res.calibration, "model"],
    ]
    return rows[:3] + _clock_rows(res) + rows[3:]


def _alt_rows(res: ModelResult) -> List[List[str]]:
    return [[a.option, str(a.ctas), f"{a.wave_efficiency:.0%}", f"{a.tile_efficiency:.1%}", str(a.k_iters_per_cta),
             "n/a" if math.isnan(a.time_expected_s) else f"{a.time_expected_s * 1e6:,.2f} us", a.note]
            for a in res.alternatives]


_ALT_HEAD = ["option", "CTAs", "wave use", "real MMA work", "k-iters/CTA", "expected (model)", "note"]


def to_table(res: ModelResult, exact: Optional[Dict[str, Any]] = None, width: Optional[int] = None) -> str:
    """The what-if as text; `width`: the terminal columns it fits (values and notes wrap at spaces,
    the least needed lever columns are left out with a note); None: as wide as it is."""
    from tiletune.formats.fit import fit_table, prose

    def fitted(line: str) -> str:  # prose (not a table) wrapped at spaces
        return line if width is None else prose(line, width)

    out = [fitted(f"tiletune model: every value marked 'model' is computed, not measured ({res.dtype} GEMM)"), ""]
    text, _ = fit_table(["quantity", "value", "source"], _rows(res, exact), width, wrap=("value", "quantity"),
                        disable_numparse=True)
    out.append(text)
    left_out = ""
    if res.alternatives:
        text, left_out = fit_table(_ALT_HEAD, _alt_rows(res), width, wrap=("note", "option"),
                                   drops=("k-iters/CTA", "real MMA work", "wave use"),
                                   see="a wider COLUMNS, -f markdown or -f json", disable_numparse=True)
        out += ["", "what the levers would change (model):", text]
    notes = list(res.smem.notes) + list(res.notes)
    if notes:
        out += ["", "notes:"] + [fitted(f"  - {n}") for n in notes]
    if left_out:
        out += ["", fitted(left_out)]
    return "\n".join(out)


def to_markdown(res: ModelResult, exact: Optional[Dict[str, Any]] = None) -> str:
    import tabulate

    out = [f"### tiletune model: {res.dtype} {res.kernel_m}x{res.kernel_n}x{res.k} on {res.gpu_name}", "",
           "Values marked *model* are computed, not measured.", ""]
    out.append(tabulate.tabulate(_rows(res, exact), headers=["quantity", "value", "source"], tablefmt="github",
                                 disable_numparse=True))
    if res.alternatives:
        out += ["", "**What the levers would change (model)**", "",
                tabulate.tabulate(_alt_rows(res), headers=_ALT_HEAD, tablefmt="github", disable_numparse=True)]
    notes = list(res.smem.notes) + list(res.notes)
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out)


# --- tiletune gpus ---------------------------------------------------------------------------


def gpu_dict(g: GpuSpec) -> Dict[str, Any]:
    return {
        "key": g.key, "name": g.name, "arch": g.arch, "sms": g.sms,
        "boost_clock_mhz": None if g.boost_clock_hz is None else round(g.boost_clock_hz / 1e6),
        "max_clock_mhz": None if g.max_clock_hz is None else round(g.max_clock_hz / 1e6),
        "sustained_clock_mhz": {d: round(hz / 1e6) for d, hz in g.sustained_clock_hz} or None,
        "power_limit_w": g.power_limit_w, "clock_source": g.clock_source,
        "mem_bw_gbps": round(g.mem_bw_bytes_per_s / 1e9, 1), "l2_bytes": g.l2_bytes,
        "smem_per_block_optin": g.smem_per_block_optin, "smem_per_sm": g.smem_per_sm,
        "peaks_tflops": {k: (None if p is None else {"dense": round(p.dense / 1e12, 2),
                                                     "sparse": None if p.sparse is None else round(p.sparse / 1e12, 2),
                                                     "quoted": p.quoted, "basis": p.basis, "source": p.source,
                                                     "note": p.note})
                         for k, p in g.peaks},
        "names": list(g.names), "sources": dict(g.sources), "notes": list(g.notes), "origin": g.origin,
    }


def gpus_json(gpus: Sequence[GpuSpec], defaults: Dict[str, str]) -> Dict[str, Any]:
    return {"schema": "tiletune.gpus/1", "peaks_unit": "TFLOP/s (int8: TOPS), dense unless 'sparse'",
            "defaults": defaults, "gpus": [gpu_dict(g) for g in gpus]}


# the `tiletune gpus` columns left out first when the terminal is too narrow (the key, arch and the
# most used peaks stay longest)
_GPU_DROPS = ("fp6 TF", "tf32 TF", "int8 TF", "mxfp8 TF", "fp16 TF", "smem/blk KiB", "L2 MiB", "boost MHz", "SMs",
              "fp4 TF", "DRAM GB/s")


def gpus_table(gpus: Sequence[GpuSpec], defaults: Dict[str, str], width: Optional[int] = None) -> str:
    from tiletune.formats.fit import fit_table, prose

    rows = []
    for g in gpus:
        row = [g.key, g.arch, str(g.sms), "n/p" if g.boost_clock_hz is None else f"{g.boost_clock_hz / 1e6:,.0f}",
               f"{g.mem_bw_bytes_per_s / 1e9:,.0f}", "n/f" if g.l2_bytes is None else f"{g.l2_bytes / 2**20:,.0f}",
               f"{g.smem_per_block_optin / KIB:,.0f}"]
        for kind in PEAK_KINDS:
            p = g.peak(kind)
            row.append("-" if p is None else f"{p.dense / 1e12:,.0f}" + ("s" if p.quoted == "sparse" else ""))
        rows.append(row)
    head = ["key", "arch", "SMs", "boost MHz", "DRAM GB/s", "L2 MiB", "smem/blk KiB"] + [f"{k} TF" for k in PEAK_KINDS]
    legend = ("Peaks are DENSE TFLOP/s (int8: TOPS); 's' = the vendor prints the 2:4-sparse figure (2x, except B300/GB300 "
              "FP4), efficiency always uses the dense value. '-' = no such tensor-core path or not published; n/p = not "
              "published, n/f = not found. Sources per number: tiletune gpus --format json. Defaults per arch: "
              + ", ".join(f"{a} -> {k}" for a, k in defaults.items()))
    text, note = fit_table(head, rows, width, drops=_GPU_DROPS, see="a wider COLUMNS or tiletune gpus -f json",
                           disable_numparse=True)
    if width is None:
        return text + "\n\n" + legend
    return text + "\n\n" + prose(legend, width) + ("\n" + prose(note, width) if note else "")


# --- the formatter interface's entry points (tiletune.formats.FORMATTERS) ------------------------


class ModelAnswer(NamedTuple):
    """What `tiletune model` shows: the model's result and, with --exact, the compiled kernel's numbers."""

    result: ModelResult
    exact: Optional[Dict[str, Any]] = None


def answer_table(answer: ModelAnswer, width: Optional[int] = None) -> str:
    return to_table(answer.result, answer.exact, width)


def answer_markdown(answer: ModelAnswer, width: Optional[int] = None) -> str:
    return to_markdown(answer.result, answer.exact)


def answer_json(answer: ModelAnswer, width: Optional[int] = None) -> str:
    from tiletune.formats.strict_json import dumps

    return dumps(to_dict(answer.result, answer.exact), indent=2)


def gpu_table_text(table: GpuTable, width: Optional[int] = None) -> str:
    return gpus_table(table.gpus, dict(table.defaults), width)


def gpu_table_json(table: GpuTable, width: Optional[int] = None) -> str:
    return json.dumps(gpus_json(table.gpus, dict(table.defaults)), indent=2)
