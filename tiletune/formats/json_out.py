"""`--format json` for inspect: the "tiletune.inspect/1" object of DESIGN.md, built as explicit dicts.

Contract fields keep their names and meanings (`entries[].source/op/runner/tactic/arch/
flashinfer_version/problem/config/status`, `failures[].source/op/runner/tactic/config/error/
count`); everything else is an extra. Renaming an internal field cannot change the output
because nothing here uses `asdict()`. The JSON Schema is tiletune/schemas/inspect.schema.json.
Units: `model` values are in base units with the unit in the key (`_bytes`, `_us`, `_flop_per_byte`)
and `"kind": "model"`; `time_ms` is the source's own measurement.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from tiletune import __version__
from tiletune.pipeline import Analysis, AnalyzedEntry, Failure, FailureReason, InspectResult, NotTried, Verdict
from tiletune.records import Decoded, Problem, TileConfig, Undecoded, to_jsonable

SCHEMA = "tiletune.inspect/1"


def problem_dict(p: Optional[Problem]) -> Optional[dict[str, Any]]:
    if p is None:
        return None
    return {
        "m": p.m,
        "n": p.n,
        "k": p.k,
        "batch": p.batch,
        "m_range": list(p.m_range) if p.m_range is not None else None,
        "experts": p.experts,
        "top_k": p.top_k,
        "dtype_a": p.dtype_a,
        "dtype_b": p.dtype_b,
        "dtype_out": p.dtype_out,
        "notes": list(p.notes),
    }


def config_dict(c: Optional[TileConfig], decode: Any = None) -> Optional[dict[str, Any]]:
    if c is None:
        return None
    d: dict[str, Any] = {
        "tile": list(c.tile),
        "cluster": list(c.cluster),
        "swap_ab": c.swap_ab,
        "stream_k": c.stream_k,
        "name": c.name,
        "label": c.label(),
        "mainloop_schedule": c.mainloop_schedule,
        "epilogue_schedule": c.epilogue_schedule,
        "epilogue_fusion": c.epilogue_fusion,
        "stages": c.stages,
        "style": c.style,
        "mma_tile": list(c.mma_tile) if c.mma_tile is not None else None,
    }
    if isinstance(decode, Decoded):
        ref = decode.catalog
        d["catalog"] = {
            "flashinfer_version": ref.flashinfer_version,
            "arch": ref.arch,
            "op": ref.op,
            "runner": ref.runner,
            "source_file": ref.source_file,
            "variant": {k: to_jsonable(v) for k, v in ref.variant},
            "size": ref.size,
            "index": decode.index,
        }
    return d


def decode_dict(decode: Any) -> dict[str, Any]:
    if isinstance(decode, Decoded):
        return {"decoded": True, "reason": None, "not_a_cutlass_tactic": False, "candidates": []}
    assert isinstance(decode, Undecoded)
    return {
        "decoded": False,
        "reason": decode.reason,
        "not_a_cutlass_tactic": decode.not_a_cutlass_tactic,
        "candidates": [config_dict(c) for c in decode.candidates],
    }


def _us(s: Optional[float]) -> Optional[float]:
    return None if s is None else round(s * 1e6, 3)


def _r(x: Optional[float], nd: int = 4) -> Optional[float]:
    return None if x is None else round(float(x), nd)


def analysis_dict(a: Optional[Analysis]) -> Optional[dict[str, Any]]:
    if a is None:
        return None
    return {
        "kind": "model",
        "gpu": a.gpu,
        "dtype": a.dtype,
        "m_evaluated": a.m_evaluated,
        "smem": {
            "bytes": a.smem_bytes,
            "limit": a.smem_limit,
            "stages": a.smem_stages,
            "fits": a.fits,
            "verdict": a.smem_verdict,
        },
        "intensity_flop_per_byte": {"problem": _r(a.intensity_problem, 3), "tile": _r(a.intensity_tile, 3)},
        "bound": a.bound,
        "time_us": {
            "floor": _us(a.time_floor_s),
            "expected": _us(a.time_expected_s),
            "low": _us(a.time_low_s),
            "high": _us(a.time_high_s),
        },
        "efficiency": {"compute": _r(a.eff_compute), "roofline": _r(a.eff_roofline)},
        "peak_tflops": {
            "dense": None if a.peak_dense_flops is None else round(a.peak_dense_flops / 1e12, 2),
            "sparse": None if a.peak_sparse_flops is None else round(a.peak_sparse_flops / 1e12, 2),
        },
        "ctas": a.ctas,
        "sms": a.sms,
        "notes": list(a.notes),
    }


def entry_dict(ae: AnalyzedEntry) -> dict[str, Any]:
    r = ae.record
    e = ae.entry
    env = r.env
    return {
        "source": r.source,
        "source_kind": r.source_kind,
        "op": r.op,
        "runner": r.runner,
        "tactic": to_jsonable(r.tactic),
        "arch": env.arch,
        "arch_source": env.arch_source,
        "flashinfer_version": env.flashinfer_version,
        "version_source": env.version_source,
        "gpu": env.gpu,
        "rank": r.rank,
        "line": r.line,
        "problem": problem_dict(e.problem),
        "problem_note": e.problem_note,
        "config": config_dict(e.config, e.decode),
        "decode": decode_dict(e.decode),
        "status": r.status.value,
        "count": r.count,
        "error": r.error,
        "time_ms": r.time_ms,
        "shapes": to_jsonable(r.shapes),
        "extras": to_jsonable(r.extras),
        "detail": {k: to_jsonable(v) for k, v in r.detail},
        "model": analysis_dict(ae.analysis),
        "model_note": ae.analysis_note,
    }


def reason_dict(r: FailureReason) -> dict[str, Any]:
    return {
        "kind": r.kind,
        "summary": r.summary,
        "basis": r.basis,
        "need_bytes": r.need_bytes,
        "limit_bytes": r.limit_bytes,
        "model_disagrees": r.model_disagrees,
    }


def failure_dict(f: Failure) -> dict[str, Any]:
    return {
        "source": f.sources[0] if f.sources else "",
        "sources": list(f.sources),
        "op": f.op,
        "runner": f.runner,
        "tactic": to_jsonable(f.tactic),
        "arch": f.arch,
        "flashinfer_version": f.flashinfer_version,
        "config": config_dict(f.config),
        "decode_note": f.decode_note,
        "error": f.error,
        "errors": [{"text": t, "count": n} for t, n in f.errors],
        "count": f.count,
        "reason": reason_dict(f.reason),
        "passed_later": f.passed_later,
        "problems": [problem_dict(p) for p in f.problems],
        "model": analysis_dict(f.analysis),
    }


def not_tried_dict(nt: NotTried) -> dict[str, Any]:
    return {
        "arch": nt.arch,
        "flashinfer_version": nt.flashinfer_version,
        "op": nt.op,
        "runner": nt.runner,
        "variant": {k: to_jsonable(v) for k, v in nt.catalog.variant},
        "status": "not_tried",
        "evidence": nt.evidence,
        "tried": nt.tried,
        "tactics": [{"tactic": i, "config": config_dict(c)} for i, c in nt.tactics],
    }


def verdict_dict(v: Verdict) -> dict[str, Any]:
    return {
        "arch": v.arch,
        "op": v.op,
        "text": v.text,
        "winners": [{"tile": t, "buckets": n} for t, n in v.winners],
        "failed": v.failed,
        "not_tried": v.not_tried,
        "undecoded": v.undecoded,
        "disagreements": v.disagreements,
    }


def inspect_dict(result: InspectResult) -> dict[str, Any]:
    """The full "tiletune.inspect/1" object."""
    return {
        "schema": SCHEMA,
        "tiletune_version": __version__,
        "entries": [entry_dict(ae) for ae in result.entries],
        "failures": [failure_dict(f) for f in result.failures],
        "not_tried": [not_tried_dict(nt) for nt in result.not_tried],
        "verdicts": [verdict_dict(v) for v in result.verdicts],
        "problems": [{"source": p.source, "message": p.message, "fatal": p.fatal} for p in result.problems],
        "sources": [{"path": p, "kind": k} for p, k in result.sources],
        "searched": list(result.searched),
        "discovered": result.discovered,
        "gpus": [{"arch": g.arch, "gpu": g.gpu, "how": g.how} for g in result.gpus],
        "notes": list(result.notes),
        "exit_status": result.exit_code,
    }


def format_inspect(result: InspectResult) -> str:
    """Compact JSON (one object) followed by a newline; compact keeps 50k-entry output fast."""
    return json.dumps(inspect_dict(result), separators=(",", ":"), ensure_ascii=False) + "\n"
