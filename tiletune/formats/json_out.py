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
import math
from typing import Any, Callable, Iterator, Optional, Sequence

from msgspec import structs

from tiletune import __version__
from tiletune.analysis.results import (
    AnalyzedEntry,
    BucketLine,
    Failure,
    FailureReason,
    InspectResult,
    NotTried,
    Overview,
    Pick,
    Verdict,
    loses_data,
)
from tiletune.analysis.source_groups import group_names
from tiletune.core.records import Decoded, Entry, Problem, Status, TileConfig, Undecoded, to_jsonable
from tiletune.formats.strict_json import NOTE as STRICT_NOTE
from tiletune.formats.strict_json import finite_only
from tiletune.model.perf import ModelResult

SCHEMA = "tiletune.inspect/1"


class NoteTable:
    """Problem notes ("k = 2 x the key's packed byte count ...") repeat across thousands of
    entries: the output lists each text once in `problem_notes` and problems refer to it by
    index (`note_ids`)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}
        self._memo: dict[tuple[str, ...], list[int]] = {}

    def ids(self, notes: tuple[str, ...]) -> list[int]:
        hit = self._memo.get(notes)
        if hit is None:
            hit = []
            for t in notes:
                i = self._index.get(t)
                if i is None:
                    i = self._index[t] = len(self.texts)
                    self.texts.append(t)
                hit.append(i)
            self._memo[notes] = hit
        return hit


def problem_dict(p: Optional[Problem], notes: Optional[NoteTable] = None) -> Optional[dict[str, Any]]:
    """The problem; with a NoteTable its notes become `note_ids`, else they are inlined as `notes`."""
    if p is None:
        return None
    d: dict[str, Any] = {
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
    }
    if notes is None:
        d["notes"] = list(p.notes)
    else:
        d["note_ids"] = notes.ids(p.notes)
    return d


def config_dict(c: Optional[TileConfig], decode: Any = None) -> Optional[dict[str, Any]]:
    return None if c is None else _tile_config_dict(c, decode)


def _tile_config_dict(c: TileConfig, decode: Any = None) -> dict[str, Any]:
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
            "source_file": ref.source_file,
            "variant": {k: to_jsonable(v) for k, v in ref.variant},
            "size": ref.size,
            "index": decode.index,
        }
    return d


def decode_dict(decode: Any) -> dict[str, Any]:
    if isinstance(decode, Decoded):
        out: dict[str, Any] = {"decoded": True, "reason": None, "not_a_cutlass_tactic": False, "candidates": []}
        if decode.runs is not None:  # the binding runs another config than the one profiled
            out["runs"] = {**_tile_config_dict(decode.runs.config), "index": decode.runs.index,
                           "reason": decode.runs.reason}
        return out
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


def analysis_dict(a: Optional[ModelResult], *, notes: bool = True) -> Optional[dict[str, Any]]:
    """The model's numbers for one case. Entries leave the notes out (they repeat per case and
    would double a big cache's output); failures keep them; `tiletune model` prints them all."""
    if a is None:
        return None
    d = {
        "kind": "model",
        "gpu": a.gpu_name,
        "dtype": a.dtype,
        "m_evaluated": a.m_evaluated,
        "smem": {
            "bytes": a.smem.shared_storage_bytes,
            "limit": a.smem.limit_bytes,
            "stages": a.smem.stages,
            "fits": a.smem.fits,
            "verdict": a.smem.verdict,
        },
        "intensity_flop_per_byte": {"problem": _r(a.intensity_problem, 3), "tile": _r(a.intensity_tile, 3)},
        "bound": a.bound,
        "time_us": {
            "floor": _us(a.time_floor_s),
            "expected": _us(a.time_expected_s),
            "low": _us(a.time_low_s),
            "high": _us(a.time_high_s),
        },
        "efficiency": {"compute": _r(a.efficiency_compute), "roofline": _r(a.efficiency_roofline)},
        "l2": _l2_dict(a.l2),
        "peak_tflops": {
            "dense": None if a.peak_dense is None else round(a.peak_dense / 1e12, 2),
            "sparse": None if a.peak_sparse is None else round(a.peak_sparse / 1e12, 2),
        },
        "ctas": a.ctas,
        "sms": a.sms,
    }
    if notes:
        d["notes"] = list(a.all_notes)
    return d


def _l2_dict(fact: Any) -> dict[str, Any]:
    """Which L2 state the modelled times assume and why (tiletune.model.l2.L2Fact)."""
    if fact is None:
        return {"state": None, "how": "unknown", "basis": "no L2 state given: modelled cold, band down to the warm time"}
    return {"state": fact.state, "how": fact.how, "basis": fact.basis}


def _num(v: Any) -> str:
    """A number, bool or None as `json.dumps` writes it (allow_nan: NaN, Infinity)."""
    t = type(v)
    if t is float:
        if _isfinite(v):
            return float.__repr__(v)
        return "NaN" if v != v else "Infinity" if v > 0 else "-Infinity"
    if t is int:
        return int.__repr__(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    return json.dumps(v)


def _rounded(x: Optional[float], nd: int, scale: Optional[float] = None) -> str:
    """`_num(_r(x, nd))` (or `_num(_us(x))` with scale 1e6, nd 3) in one call: the model JSON writes
    eight of these per case."""
    if type(x) is float:
        v = round(x * scale if scale is not None else x, nd)
        if _isfinite(v):
            return float.__repr__(v)
    if x is None:
        return "null"
    return _num(round(x * scale, nd) if scale is not None else round(float(x), nd))


class _Strict:
    """Strict JSON for the fragment writer: each memoised fragment passes through `finite_only` once,
    when it is made (a fragment is whole JSON values, so this equals scanning the whole text, which
    cost a tenth of the format time at 50,000 entries); `replaced` counts the NaN / Infinity written
    as null. Text made per entry needs no pass: it holds ints, quoted strings and the model's
    range-checked floats, or goes through here."""

    __slots__ = ("replaced",)

    def __init__(self) -> None:
        self.replaced = 0

    def __call__(self, text: str) -> str:
        text, n = finite_only(text)
        self.replaced += n
        return text


# The model's rounded numbers are written as `float.__repr__(round(x, nd))` writes them, by
# `%.3f` / `%.4f` and trailing zeros dropped: both round the exact binary value to nd decimals
# (half to even), and below _FIXED_MAX a float's spacing is finer than 0.0001, so the shortest repr
# of that rounded value is exactly its fixed digits without trailing zeros (one digit kept after
# the point, as repr does: "0.0", "-0.0").
_FIXED_MAX = 1e11
_FIXED_HALF = _FIXED_MAX / 2
_hypot = math.hypot
# The seven numbers that change per case, each followed by a comma and nothing else (the tile's
# intensity is one per tile plan: it is in the shape): the text the zeros are looked for in is short
_NUMBERS = "%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,"


def _without_trailing_zeros(numbers: str) -> str:
    """`_NUMBERS` filled in, with each number's trailing zeros dropped. Every number there ends at a
    `,` and holds a point, and nothing else is in that text: one replace drops one zero from every
    number at once, and a number left ending at its point gets its `0` back."""
    while "0," in numbers:
        numbers = numbers.replace("0,", ",")
    if ".," in numbers:
        numbers = numbers.replace(".,", ".0,")
    return numbers


def _str(v: Optional[str]) -> str:
    return "null" if v is None else _encode_str(v)


class _ModelParts:
    """The model text many cases share, memoised for one output (every piece strict JSON, `strict`).

    `shapes`, for the usual case (an int M, plain floats): the head (GPU, dtype, M, shared-memory
    fit) up to the problem's intensity, the text from the tile's intensity (one per tile plan) and
    the bound up to the floor time, the tail (L2 state, peaks) up to `"ctas":`, and the SMs after
    the CTAs; keyed by the identities of the GPU, the fit and the tile's intensity (the model shares
    one of each per tile plan; the shape holds them, so their ids stay their own), the dtype, M, the
    bound, the peaks, the L2 fact and the SMs (one per GPU).
    `heads`, `bounds` and `tails`: the same pieces apart, for the general path."""

    __slots__ = ("shapes", "heads", "bounds", "middles", "tails", "strict")

    def __init__(self, strict: Optional[_Strict] = None) -> None:
        self.shapes: dict[tuple[Any, ...], tuple[str, str, str, str, tuple[Any, ...]]] = {}
        self.heads: dict[tuple[int, str, int], tuple[str, str]] = {}
        self.bounds: dict[str, str] = {}
        self.middles: dict[tuple[int, Any], tuple[str, Any]] = {}
        self.tails: dict[tuple[Optional[float], Optional[float], Any], str] = {}
        self.strict = strict or _Strict()

    def new_shape(self, a: ModelResult, key: tuple[Any, ...]) -> tuple[str, str, str, str, tuple[Any, ...]]:
        head0, head1 = self.heads.get((id(a.gpu_spec), a.dtype, id(a.smem))) or self.new_head(a)
        middle = self.middles.get((id(a.intensity_tile), a.bound)) or self.new_middle(a)
        tail = self.tails.get((a.peak_dense, a.peak_sparse, a.l2)) or self.new_tail(a)
        hit = self.shapes[key] = (f'{head0}{key[3]}{head1}"intensity_flop_per_byte":{{"problem":', middle[0], tail,
                                  f',"sms":{key[8]}}}', (a.gpu_spec, a.smem, a.intensity_tile))
        return hit

    def new_middle(self, a: ModelResult) -> tuple[str, Any]:
        """The text from the tile's intensity to the floor time's key; keyed by the intensity's identity
        (one per tile plan; held here, so its id stays its own) and the bound. (Its round and repr are
        ten times a `%` format's cost: a small cache has nearly one shape per case.)"""
        bound = self.bounds.get(a.bound) or self.new_bound(a.bound)
        tile = self.strict(_rounded(a.intensity_tile, 3))
        hit = self.middles[(id(a.intensity_tile), a.bound)] = (
            f',"tile":{tile}}},"bound":{bound},"time_us":{{"floor":', a.intensity_tile)
        return hit

    def new_head(self, a: ModelResult) -> tuple[str, str]:
        fit, n = a.smem, _num
        hit = self.heads[(id(a.gpu_spec), a.dtype, id(fit))] = (
            f'{{"kind":"model","gpu":{_str(a.gpu_name)},"dtype":{_str(a.dtype)},"m_evaluated":',
            self.strict(
                f',"smem":{{"bytes":{n(fit.shared_storage_bytes)},"limit":{n(fit.limit_bytes)},'
                f'"stages":{n(fit.stages)},"fits":{n(fit.fits)},"verdict":{_str(fit.verdict)}}},'
            ),
        )
        return hit

    def new_bound(self, bound: str) -> str:
        hit = self.bounds[bound] = _str(bound)
        return hit

    def new_tail(self, a: ModelResult) -> str:
        # (the peaks are divided by 1e12 into floats: an int peak and its float write the same text)
        dense = None if a.peak_dense is None else round(a.peak_dense / 1e12, 2)
        sparse = None if a.peak_sparse is None else round(a.peak_sparse / 1e12, 2)
        l2 = _l2_dict(a.l2)
        hit = self.tails[(a.peak_dense, a.peak_sparse, a.l2)] = self.strict(
            f'"l2":{{"state":{_str(l2["state"])},"how":{_str(l2["how"])},"basis":{_str(l2["basis"])}}},'
            f'"peak_tflops":{{"dense":{_num(dense)},"sparse":{_num(sparse)}}},"ctas":'
        )
        return hit


def _model_json(a: ModelResult, parts: _ModelParts) -> str:
    """`analysis_dict(a, notes=False)` as compact strict JSON text (NaN / Infinity written as null and
    counted in `parts.strict`), written directly: a big cache has tens of thousands of distinct
    cases and the dict + encoder round trip was a third of format time. The usual case is one
    memoised shape (`parts.shapes`) and one `%` format for the seven numbers a case does not share
    with its tile plan, into a text of their own (the trailing zeros are looked for in 50 characters,
    not 150), split and written between their keys.
    tests/formats/test_json_fast_paths.py checks the result against the encoder byte for byte."""
    # the fields read, in ModelResult's order, by one unpacking (a NamedTuple's attributes are each a
    # descriptor call, and an itemgetter of 18 indexes cost twice this) of a slice (a plain tuple,
    # unpacked without an iterator); `_` for what is not written; Any: a None number is caught below
    fields: tuple[Any, ...] = structs.astuple(a)
    (_, dtype, _, _, _, _, _, _, _, _, ip, it, _, bound, _, peak_dense, peak_sparse, _, sms, ctas,
     _, _, _, _, _, _, tf, _, _, _, te, tl, th, ec, er, _, smem, _, _, problem, _, gpu_spec,
     _, _, _, _, _, _, _, _, _, l2) = fields
    m = problem.m
    if type(m) is int and type(ctas) is int and type(sms) is int:
        try:  # (TypeError: a number is None; ints and bools write as their floats do)
            tf, te, tl, th = tf * 1e6, te * 1e6, tl * 1e6, th * 1e6
            # every number finite and below _FIXED_MAX in size (NaN and infinities fail the test), in one
            # C call: the hypotenuse is at least each one's size, and has a margin for its rounding
            fixed = _hypot(ip, tf, te, tl, th, ec, er) < _FIXED_HALF
        except (TypeError, OverflowError):
            fixed = False
        if fixed:
            key = (id(gpu_spec), dtype, id(smem), m, bound, peak_dense, peak_sparse, l2, sms, id(it))
            head, tile, tail, end, _ = parts.shapes.get(key) or parts.new_shape(a, key)
            text = _NUMBERS % (ip, tf, te, tl, th, ec, er)  # one C-level format call
            if "0," in text:  # (about half the cases: some number ends in 0)
                text = _without_trailing_zeros(text)
            ip, tf, te, tl, th, ec, er, _ = text.split(",")
            return (f'{head}{ip}{tile}{tf},"expected":{te},"low":{tl},"high":{th}}},'
                    f'"efficiency":{{"compute":{ec},"roofline":{er}}},{tail}{ctas}{end}')
    return _model_json_general(a, parts)


def _model_json_general(a: ModelResult, parts: _ModelParts) -> str:
    """`_model_json` for any case: odd types, non-finite or huge numbers."""
    head0, head1 = parts.heads.get((id(a.gpu_spec), a.dtype, id(a.smem))) or parts.new_head(a)
    tail = parts.tails.get((a.peak_dense, a.peak_sparse, a.l2)) or parts.new_tail(a)
    r = _rounded
    return head0 + parts.strict(
        f'{_num(a.problem.m)}{head1}'
        f'"intensity_flop_per_byte":{{"problem":{r(a.intensity_problem, 3)},"tile":{r(a.intensity_tile, 3)}}},'
        f'"bound":{_str(a.bound)},'
        f'"time_us":{{"floor":{r(a.time_floor_s, 3, 1e6)},"expected":{r(a.time_expected_s, 3, 1e6)},'
        f'"low":{r(a.time_low_s, 3, 1e6)},"high":{r(a.time_high_s, 3, 1e6)}}},'
        f'"efficiency":{{"compute":{r(a.efficiency_compute, 4)},"roofline":{r(a.efficiency_roofline, 4)}}},'
        f'{tail}{_num(a.ctas)},"sms":{_num(a.sms)}}}'
    )


class _Memo:
    """Per-output caches keyed by object identity: decode results and model analyses are shared
    between entries (decode and the model memoise per distinct case), so each is rendered once.
    Valid only while the result is alive, i.e. within one `inspect_dict` call."""

    def __init__(self) -> None:
        self.configs: dict[int, Any] = {}
        self.decodes: dict[int, Any] = {}
        self.analyses: dict[int, Any] = {}

    def config(self, e: Any) -> Optional[dict[str, Any]]:
        d = e.decode
        key = id(d)
        hit = self.configs.get(key, _MISS)
        if hit is _MISS:
            hit = self.configs[key] = config_dict(e.config, d)
            self.decodes[key] = decode_dict(d)
        return hit

    def analysis(self, a: Optional[ModelResult]) -> Optional[dict[str, Any]]:
        if a is None:
            return None
        hit = self.analyses.get(id(a))
        if hit is None:
            hit = self.analyses[id(a)] = analysis_dict(a, notes=False)
        return hit


_MISS = object()


def entry_dict(ae: AnalyzedEntry, memo: Optional[_Memo] = None, notes: Optional[NoteTable] = None) -> dict[str, Any]:
    memo = memo or _Memo()
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
        "problem": problem_dict(e.problem, notes),
        "problem_note": e.problem_note,
        "config": memo.config(e),
        "decode": memo.decodes[id(e.decode)],
        "status": r.status.value,
        "count": r.count,
        "error": r.error,
        "time_ms": r.time_ms,
        # the raw key shapes only where no problem could be recovered from them (unknown ops):
        # they are most of the output's size and time otherwise, and `problem` says the same
        "shapes": to_jsonable(r.shapes) if e.problem is None else None,
        "extras": to_jsonable(r.extras),
        "detail": {k: to_jsonable(v) for k, v in r.detail},
        "model": memo.analysis(ae.analysis),
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


def failure_dict(f: Failure, notes: Optional[NoteTable] = None) -> dict[str, Any]:
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
        "problems": [problem_dict(p, notes) for p in f.problems],
        "model": analysis_dict(f.analysis),
        "group": f.group,
        "diagnosis": f.diagnosis,
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
        "group": nt.group,
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
        "fatal": v.fatal,
        "source": v.source,
        "group": v.group,
        "rank_disagreements": [rank_disagreement_dict(d) for d in v.rank_disagreements],
        "evidence": [e.to_jsonable() for e in v.evidence],
    }


def rank_disagreement_dict(d: Any) -> dict[str, Any]:
    """One bucket whose ranks (files of one server's layout directory) kept different winners."""
    return {
        "problem": problem_dict(d.problem),
        "runner": d.runner,
        "server": d.server,
        "choices": [{"rank": rank, "tactic": to_jsonable(p.tactic), "config": config_dict(p.config),
                     "time_us": None if p.time_ms is None else p.time_ms * 1000.0} for rank, p in d.choices],
        "beyond_noise": d.beyond_noise,
        "basis": d.basis,
    }


def pick_dict(p: Pick) -> dict[str, Any]:
    """One tactic of a bucket: its decoded tile (null when none), its measured time and sample spread."""
    d = {"tactic": to_jsonable(p.tactic), "tile": p.config.label() if p.config is not None else None,
         "label": p.label(), "time_ms": p.time_ms, "spread": p.spread}
    if p.recorded_of is not None:  # known from FlashInfer's selection record: its time, not its tactic
        d["recorded_by"] = "FlashInfer's autotuner (selection record)"
        d["candidates_timed"] = p.recorded_of
    return d


def _says_more(line: BucketLine) -> bool:
    """A bucket line holds something its entries alone do not: a runner-up, a margin, a noise
    verdict, failed or never-tried counts, a fallback, or several winners. (A cache's plain bucket,
    one untimed winner, says nothing more: leaving it out keeps a 50,000-entry output its size.)"""
    return (line.runner_up is not None or line.margin is not None or line.won_by_noise is not None or bool(line.failed)
            or line.never_tried is not None or line.fallback_only or len(line.chosen) > 1 or line.chosen_time_ms is not None)


def bucket_line_dict(line: BucketLine, notes: Optional[NoteTable] = None) -> dict[str, Any]:
    return {
        "problem": problem_dict(line.problem, notes),
        "chosen": [pick_dict(p) for p in line.chosen],
        "chosen_time_ms": line.chosen_time_ms,  # measured: the winner's own record, else its profile time here
        "chosen_spread": line.chosen_spread,
        "runner_up": pick_dict(line.runner_up) if line.runner_up is not None else None,
        "margin": line.margin,  # (runner-up time - winner time) / winner time, measured (a fraction, not %)
        "won_by_noise": line.won_by_noise,
        "noise_basis": line.noise_basis,
        "failed": line.failed,
        "never_tried": line.never_tried,
        "fallback_only": line.fallback_only,
    }


def overview_dict(ov: Overview, notes: Optional[NoteTable] = None) -> dict[str, Any]:
    """The at-a-glance facts the table shows (analysis/overview.py): per (arch, op, runner, N, K,
    source group) the runtime M ranges no bucket covers and the buckets that say more than their
    entries (margins, won by noise, failed / never-tried counts, fallbacks); rank disagreements."""
    return {
        "groups": [{"arch": g.arch, "op": g.op, "runner": g.runner, "n": g.n, "k": g.k,
                    "flashinfer_version": g.flashinfer_version, "source_group": g.source_group, "label": g.label,
                    "buckets": len(g.lines),
                    "uncovered_m": [[lo, hi] for lo, hi in g.uncovered],
                    "lines": [bucket_line_dict(line, notes) for line in g.lines if _says_more(line)]}
                   for g in ov.groups],
        "rank_disagreements": [rank_disagreement_dict(d) for d in ov.rank_disagreements],
    }


def calibration_dict(fit: Any, result: InspectResult) -> dict[str, Any]:
    """One fit of the model on an input's measured times (analysis/calibrated.py) and the calibrated
    model of the chosen entries it covers (what the table's "t us cal*" column shows)."""
    cal = fit.calibration
    chosen = []
    if cal is not None:
        group_of = group_names(result.source_groups)
        for ae in result.entries:
            c = ae.calibrated
            r = ae.entry.record
            if c is None or r.status is not Status.CHOSEN or r.op != fit.op or group_of.get(r.source) != fit.group:
                continue
            if r.env.flashinfer_version != fit.flashinfer_version or r.env.arch != fit.arch or c.gpu_name != fit.gpu:
                continue
            p = ae.entry.problem
            chosen.append({"source": ae.entry.record.source, "m": p.m if p else None, "n": p.n if p else None,
                           "k": p.k if p else None, "tactic": to_jsonable(ae.entry.record.tactic),
                           "tile": ae.config.label() if ae.config else None, "time_us": c.time_expected_s * 1e6,
                           "time_low_us": c.time_low_s * 1e6, "time_high_us": c.time_high_s * 1e6,
                           "efficiency_compute": c.efficiency_compute, "basis": "modelled, calibrated on this input"})
    return {
        "arch": fit.arch, "gpu": fit.gpu, "dtype": fit.dtype, "op": fit.op, "flashinfer_version": fit.flashinfer_version,
        "group": fit.group, "samples": len(fit.timed), "calibrated": cal is not None,
        "summary": cal.summary("this input") if cal is not None else "too few measured times (or not modelled) to fit",
        "compute_scale": cal.compute_scale if cal is not None else None,
        "eta_bw": cal.eta_bw if cal is not None else None,
        "fixed_us": cal.fixed_s * 1e6 if cal is not None else None,
        "heldout_median": cal.heldout_median if cal is not None else None,
        "heldout_max": cal.heldout_max if cal is not None else None,
        "uncalibrated_median": cal.uncalibrated_median if cal is not None else None,
        "chosen": chosen,
    }


def inspect_dict(result: InspectResult, *, entries: bool = True, notes: Optional[NoteTable] = None) -> dict[str, Any]:
    """The full "tiletune.inspect/1" object (`entries=False`: everything but the entries; pass the
    NoteTable the entries were rendered with so `problem_notes` covers them)."""
    memo = _Memo()
    notes = notes if notes is not None else NoteTable()
    doc = {
        "schema": SCHEMA,
        "tiletune_version": __version__,
        "entries": [entry_dict(ae, memo, notes) for ae in result.entries] if entries else [],
        "failures": [failure_dict(f, notes) for f in result.failures],
        "not_tried": [not_tried_dict(nt) for nt in result.not_tried],
        "verdicts": [verdict_dict(v) for v in result.verdicts],
        "events": [e.to_jsonable() for e in result.events],
        "inputs": [i.to_jsonable() for i in result.inputs],
        "fatal": result.run_ended,
        "problems": [
            {"source": p.source, "message": p.message, "fatal": p.fatal, "loses_data": loses_data(p)} for p in result.problems
        ],
        "sources": [{"path": p, "kind": k} for p, k in result.sources],
        "source_groups": [{"name": g.name, "label": g.label, "sources": list(g.sources), "basis": g.basis}
                          for g in result.source_groups],
        "overview": overview_dict(result.overview, notes),
        "searched": list(result.searched),
        "discovered": result.discovered,
        "gpus": [{"arch": g.arch, "gpu": g.gpu, "how": g.how} for g in result.gpus],
        "calibrations": [calibration_dict(f, result) for f in result.calibrations],
        "notes": list(result.notes),
        "exit_status": result.exit_code,
    }
    doc["problem_notes"] = notes.texts
    return doc


_PLACEHOLDER = "\u0000entries\u0000"
_encode_str = json.encoder.encode_basestring  # C-accelerated, quotes included; non-ASCII kept
_isfinite = math.isfinite


def format_inspect(result: InspectResult) -> str:
    """Compact JSON (one object) and a newline: the same content as `inspect_dict`, built faster."""
    return "".join(iter_inspect(result))


# entries per chunk `iter_inspect` yields: big enough that writes are few, small enough that
# a 50,000-entry output (~80 MB) never exists as one string
_CHUNK_ENTRIES = 2000


def runtime_m_dicts(result: InspectResult, ms: Sequence[int]) -> list[dict[str, Any]]:
    """--m in JSON: per (arch, op, runner, N, K) group and runtime M, the bucket FlashInfer's
    mapping sends it to and what runs there (the table's "At runtime M" lines as data)."""
    from tiletune.analysis.overview import at_runtime_m

    out = []
    for g in result.overview.groups:
        for m in ms:
            bucket, line = at_runtime_m(g, m)
            fallback = line is None or line.fallback_only
            chosen = [] if fallback or line is None else [
                {"tactic": to_jsonable(p.tactic), "config": config_dict(p.config), "label": p.label()} for p in line.chosen]
            t = None if fallback or line is None else line.chosen_time_ms
            out.append({"m": m, "bucket": bucket, "arch": g.arch, "op": g.op, "runner": g.runner, "n": g.n, "k": g.k,
                        "flashinfer_version": g.flashinfer_version, "group": g.source_group,
                        "runs": "fallback tactic -1 (no tuned bucket)" if fallback else "chosen", "chosen": chosen,
                        "measured_time_us": None if t is None else t * 1000.0})
    return out


def iter_inspect(result: InspectResult, **view: Any) -> Iterator[str]:
    """`format_inspect`'s text in chunks, for writing as it is made. JSON holds every entry, so the
    table's layout options (all_rows, width, colour) change nothing here; `runtime_m` (--m) adds
    `at_runtime_m`, which tile runs at each runtime M asked about (every flag acts in every format).

    A 50,000-entry cache yields 50,000 entries whose parts repeat (the environment per input,
    the decoded config, the model numbers per distinct case): each repeated part is encoded once
    and spliced in as text, so the cost per entry is a few string joins. The entries are written
    before the rest of the object because rendering them numbers the problem notes the tail lists.
    """
    enc = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    notes = NoteTable()
    strict = _Strict()  # NaN / Infinity written as null (strict JSON); the notes say so
    head = {"schema": SCHEMA, "tiletune_version": __version__, "entries": _PLACEHOLDER}
    pre = enc(head).split(enc(_PLACEHOLDER), 1)[0]
    yield pre + "["
    yield from _entry_chunks(result, enc, notes, strict)
    doc = inspect_dict(result, entries=False, notes=notes)
    if list(doc)[: len(head)] != list(head):  # the chunk above wrote these keys first
        raise AssertionError("inspect_dict must start with the keys of `head`")
    if view.get("runtime_m"):
        doc["at_runtime_m"] = runtime_m_dicts(result, view["runtime_m"])
    doc["entries"] = _PLACEHOLDER
    tail, n = finite_only(enc(doc).split(enc(_PLACEHOLDER), 1)[1])
    if strict.replaced or n:
        doc["notes"] = [*doc["notes"], STRICT_NOTE]
        tail, _ = finite_only(enc(doc).split(enc(_PLACEHOLDER), 1)[1])
    yield "]" + tail + "\n"


def _exact(v: Any) -> Optional[str]:
    """A by-value memo key that tells apart what JSON writes apart: 1, 1.0 and True are equal and
    hash alike (so a plain value key once printed one key's `false` for another's `0`), their
    reprs differ; None where the repr cannot serve (encode without the memo)."""
    try:
        key = repr(v)
    except Exception:  # noqa: BLE001 - an odd object's repr: no memo for it
        return None
    return key if " at 0x" not in key else None  # (a default repr names an address, not a value)


def _js(v: Any, enc: Callable[[Any], str]) -> str:
    """One scalar as JSON text, without a trip through the encoder for the common types."""
    if v is None:
        return "null"
    t = type(v)
    if t is int:
        return str(v)
    if t is str:
        return _encode_str(v)
    if t is bool:
        return "true" if v else "false"
    return enc(v)


def _entry_chunks(result: InspectResult, enc: Callable[[Any], str], note_table: NoteTable,
                  strict: _Strict) -> Iterator[str]:
    """The entries' JSON text (strict: `strict` counts what it wrote as null), comma-separated, in
    chunks of _CHUNK_ENTRIES entries (each chunk after the first starts with the comma).

    What an entry shares with others is looked up once per entry, by identity where the readers,
    decode and the model share one object per distinct value (all alive while `result` is, i.e.
    during this call): the environment, source, op, runner, status, decoded config, extras and
    detail of a file's entries as three memoised pieces; the problem's tail (dtypes, note ids);
    the model text per analysis. What varies is spliced in: tactic, M / N / K, the model numbers.
    """
    memo = _Memo()
    shared: dict[tuple[Any, ...], dict[int, tuple[str, str, str, str]]] = {}
    models: dict[int, str] = {}
    model_parts = _ModelParts(strict)
    note_ids_by_value: dict[tuple[str, ...], str] = {}
    problem_tails: dict[tuple[Any, ...], str] = {}
    # extras / shapes / tactic tuples / detail pairs repeat: memoised by identity (readers share one
    # object per distinct text; the memo holds it, so its id stays its own), then by `_exact`
    values: dict[Any, str] = {}
    by_id: dict[int, tuple[Any, str]] = {}

    def memoised(v: Any, encode: Callable[[Any], str]) -> str:
        hit = by_id.get(id(v))
        if hit is not None:
            return hit[1]
        key = _exact(v)
        text = None if key is None else values.get(key)
        if text is None:
            text = strict(encode(v))
            if key is not None:
                values[key] = text
        by_id[id(v)] = (v, text)
        return text

    def value_text(v: Any) -> str:
        return enc(to_jsonable(v))

    def pairs_text(pairs: tuple[tuple[str, Any], ...]) -> str:
        return enc({k2: to_jsonable(v) for k2, v in pairs})

    def frozen(v: Any) -> str:
        return "null" if v is None else memoised(v, value_text)

    def detail_json(pairs: tuple[tuple[str, Any], ...]) -> str:
        return "{}" if not pairs else memoised(pairs, pairs_text)

    def shared_pieces(e: Entry) -> tuple[str, str, str, str]:
        """The text around the tactic, problem and model: `{` + environment and record ids up to
        `"tactic":`; config and decode up to `"model":`; extras and detail up to `"model_note":`;
        and the last one again after what a cache entry's record leaves null (`_PLAIN_TAIL`) and
        its `"shapes":null`."""
        r = e.record
        env = r.env
        start = strict(enc(
            {
                "source": r.source,
                "source_kind": r.source_kind,
                "arch": env.arch,
                "arch_source": env.arch_source,
                "flashinfer_version": env.flashinfer_version,
                "version_source": env.version_source,
                "gpu": env.gpu,
                "op": r.op,
                "runner": r.runner,
                "status": r.status.value,
            }
        )[:-1])
        d_id = id(e.decode)
        middle = strict(f',"config":{enc(memo.config(e))},"decode":{enc(memo.decodes[d_id])}')
        fx = frozen(r.extras)
        end = f',"extras":{fx},"detail":{detail_json(r.detail)},"model_note":'
        return f',{start},"tactic":', f'{middle},"model":', end, f"{_PLAIN_TAIL},{_NO_SHAPES}{end}"

    def new_problem_tail(p: Problem, key: tuple[Any, ...]) -> str:
        """The problem's text after `"m_range":`: the M range, experts, top_k, dtypes, note ids and its `}`."""
        pn, mr = p.notes, p.m_range
        ids = note_ids_by_value.get(pn)
        if ids is None:
            ids = note_ids_by_value[pn] = enc(note_table.ids(pn))
        held.append((pn, mr))  # (the key holds their ids: keep the tuples, so each id stays its own)
        hit = problem_tails[key] = strict(
            f'{enc(to_jsonable(mr))},"experts":{_js(p.experts, enc)},"top_k":{_js(p.top_k, enc)},"dtype_a":{_str(p.dtype_a)},'
            f'"dtype_b":{_str(p.dtype_b)},"dtype_out":{_str(p.dtype_out)},"note_ids":{ids}}}'
        )
        return hit

    held: list[Any] = []
    note_texts: dict[str, str] = {}
    tactic_m: dict[tuple[int, int], str] = {}
    n_k_batch: dict[tuple[int, int, int], str] = {}
    # an entry's pieces go into the chunk as they are, joined once per chunk (no string per entry);
    # each entry's first piece starts with the comma that separates it from the one before
    chunk: list[str] = []
    extend = chunk.extend
    env0 = source0 = op0 = runner0 = extras0 = detail0 = status0 = kind0 = decode0 = _MISS
    by_decode: dict[int, tuple[str, str, str, str]] = {}
    entries = result.entries
    for lo in range(0, len(entries), _CHUNK_ENTRIES):
        if len(models) + _CHUNK_ENTRIES > _MODELS_HELD:  # (bounded, chunk included: most analyses are one entry's)
            models.clear()
        for ae in entries[lo:lo + _CHUNK_ENTRIES]:
            e = ae.entry
            r = e.record
            # The parts a file's entries share: a record's context (environment, source, op, runner,
            # status, extras, detail) is nearly always the entry before's, the same objects, and runs of
            # entries share a decode; each is compared by identity, and looked up by it (the status too:
            # enum members are singletons, and an Enum's __hash__ is Python code) only when it changes.
            d = e.decode
            if (r.env is not env0 or r.source is not source0 or r.op is not op0 or r.runner is not runner0
                    or r.extras is not extras0 or r.detail is not detail0 or r.status is not status0
                    or r.source_kind is not kind0):
                env0, source0, op0, runner0, extras0, detail0, status0, kind0 = (
                    r.env, r.source, r.op, r.runner, r.extras, r.detail, r.status, r.source_kind)
                ck = (id(env0), source0, kind0, op0, runner0, id(status0), id(extras0), id(detail0))
                found = shared.get(ck)
                if found is None:
                    found = shared[ck] = {}
                by_decode = found
                decode0 = _MISS
            if d is not decode0:
                pieces = by_decode.get(id(d))
                if pieces is None:
                    pieces = by_decode[id(d)] = shared_pieces(e)
                start, middle, end, plain_end = pieces
                decode0 = d
            t = r.tactic
            a = ae.analysis
            if a is None:
                fm = "null"
            else:
                ia = id(a)
                hit = models.get(ia)
                if hit is None:
                    hit = models[ia] = _model_json(a, model_parts)
                fm = hit
            note = ae.analysis_note
            if note is None:
                fn = "null}"
            elif type(note) is str:
                fn = note_texts.get(note) or note_texts.setdefault(note, strict(_encode_str(note)) + "}")
            else:
                fn = strict(_js(note, enc)) + "}"
            p = e.problem
            if r.rank is None and r.line is None and e.problem_note is None and r.count is _ONE \
                    and r.error is None and r.time_ms is None:
                rest = None  # a cache entry: none of these apply
            else:
                rest = strict(
                    f',"rank":{_js(r.rank, enc)},"line":{_js(r.line, enc)},"problem_note":{_js(e.problem_note, enc)}'
                    f',"count":{_js(r.count, enc)},"error":{_js(r.error, enc)},"time_ms":{_js(r.time_ms, enc)}'
                )
            if p is None:
                ft = t if type(t) is int else frozen(t)  # (an int formats as str() writes it)
                extend((start, f'{ft},"problem":null', middle, fm, _PLAIN_TAIL if rest is None else rest,
                        f',"shapes":{frozen(r.shapes)}', end, fn))
            else:
                # (problems are one per record: no memo; their tail is shared, looked up by the identity
                # of the M range and notes tuples, which the readers share per bucket (by identity: a
                # range of 1 and True, or 16.0, is equal but written apart), and the values the text shows)
                experts, top_k = p.experts, p.top_k
                key = (id(p.notes), id(p.m_range), p.dtype_a, p.dtype_b, p.dtype_out) if experts is None and top_k is None \
                    else (id(p.notes), id(p.m_range), p.dtype_a, p.dtype_b, p.dtype_out, experts, top_k, type(experts),
                          type(top_k))
                # The tactic and M, and N, K and the batch, repeat across entries (fp4-distinct-50k: 224
                # pairs and 3,572 triples in 50,000 entries; mixed-50k: 1,484 and 1,583): their text is
                # looked up by value, five int formats fewer per entry; exact ints only, so 1 and True
                # (or 1.0) never share a text.
                m, n, k, batch = p.m, p.n, p.k, p.batch
                if type(t) is int and type(m) is int and type(n) is int and type(k) is int and type(batch) is int:
                    head = tactic_m.get((t, m)) or tactic_m.setdefault((t, m), f'{t},"problem":{{"m":{m},"n":')
                    sizes = n_k_batch.get((n, k, batch)) or n_k_batch.setdefault(
                        (n, k, batch), f'{n},"k":{k},"batch":{batch},"m_range":')
                else:  # (a bool, a float, NaN, a string: as the encoder writes it, strict)
                    head = f'{t if type(t) is int else frozen(t)},"problem":{{"m":{strict(_js(m, enc))},"n":'
                    sizes = strict(f'{_js(n, enc)},"k":{_js(k, enc)},"batch":{_js(batch, enc)},"m_range":')
                extend((start, head, sizes, problem_tails.get(key) or new_problem_tail(p, key),
                        middle, fm, plain_end if rest is None else f"{rest},{_NO_SHAPES}{end}", fn))
        if not lo:
            chunk[0] = chunk[0][1:]  # (the first entry of all: no comma before it)
        yield "".join(chunk)
        chunk.clear()


_MODELS_HELD = 4096
# (a count that is this object is the int 1: CPython keeps one object per small int; any other count,
# 1.0 or True, takes the long way and writes itself)
_ONE = 1
_PLAIN_TAIL = ',"rank":null,"line":null,"problem_note":null,"count":1,"error":null,"time_ms":null'
_NO_SHAPES = '"shapes":null'
