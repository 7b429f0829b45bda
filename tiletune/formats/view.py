"""The view model shared by the table, Markdown and report formats: sections, rows and cells.

An `InspectResult` holds numbers in base units (bytes, seconds, fractions); this module turns
them into display strings with units (KiB, us, %, FLOP/B), groups entries into one section per
arch, op, runner and FlashInfer version, and moves long explanations (why a tactic could not be
decoded) into numbered footnotes so rows stay narrow. Pure: result in, strings out; nothing is
computed that the pipeline did not already decide.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from tiletune.analysis.results import AnalyzedEntry, BucketLine, Failure, InspectResult, NotTried, Verdict, loses_data
from tiletune.analysis.run_verdicts import plain
from tiletune.analysis.source_groups import group_names
from tiletune.core.records import Decoded, Problem, Status, Undecoded
from tiletune.core.words import quote_bounded, without_advice
from tiletune.model.perf import ModelResult

SMEM_UNIT = 1024  # KiB on screen; bytes in the model (101,376 B shows as 99.0 KiB)

# Column headers (units in the header so cells stay short). "*" marks model values.
ENTRY_HEADERS = (
    "M bucket",
    "N",
    "K",
    "tac",
    "tile",
    "status",
    "smem KiB*",
    "FLOP/B*",
    "bound*",
    "t us*",
    "eff %*",
)
FAILURE_HEADERS = ("op", "tactic", "tile", "count", "error", "reason")
# model columns of a section whose model is calibrated on its input's measured times
CALIBRATED_NAMES = {"t us*": "t us cal*", "eff %*": "eff % cal*"}

_STATUS_ORDER = {s: i for i, s in enumerate(Status)}


@dataclass
class Section:
    """One arch + op + runner + release: its rows, footnotes and verdict."""

    arch: Optional[str]
    op: str
    runner: str
    flashinfer_version: Optional[str]
    gpu_line: str
    headers: tuple[str, ...]
    rows: list[list[str]] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)
    verdict: Optional[str] = None
    chosen: int = 0
    group: Optional[str] = None  # the source group (one server's inputs) of its rows
    group_label: Optional[str] = None  # set only when the inputs hold several groups

    @property
    def title(self) -> str:
        ver = f"flashinfer {self.flashinfer_version}" if self.flashinfer_version else "flashinfer version unknown"
        where = f", {self.group_label}" if self.group_label else ""  # several servers' inputs: name the group
        return f"{self.arch or 'unknown arch'} {self.op} - {self.runner} ({ver}{where})"


def gpus_named(result: InspectResult) -> dict[Optional[str], str]:
    """arch -> the one GPU the inputs name for it (as they spell it; not a default SKU the model
    chose). Archs whose inputs name several GPUs, or none, are left out."""
    named: dict[Optional[str], set[str]] = {}
    last = None
    for ae in result.entries:
        env = ae.entry.record.env
        if env is last:  # records of one input share their Environment
            continue
        last = env
        if env.gpu:
            named.setdefault(env.arch, set()).add(env.gpu)
    return {arch: next(iter(gpus)) for arch, gpus in named.items() if len(gpus) == 1}


# --- cells -------------------------------------------------------------------------------------


def fmt_int(n: Optional[int]) -> str:
    return "-" if n is None else f"{n:,}" if abs(n) >= 100_000 else str(n)


def fmt_bytes(n: Optional[int]) -> str:
    return "-" if n is None else f"{n:,} B"


def fmt_kib(n: Optional[int]) -> str:
    return "-" if n is None else f"{n / SMEM_UNIT:.1f}"


def fmt_us(seconds: Optional[float]) -> str:
    if seconds is None:
        return "-"
    us = seconds * 1e6
    return f"{us:.1f}" if us < 1000 else f"{us:,.0f}"


def fmt_pct(frac: Optional[float]) -> str:
    if frac is None:
        return "-"
    pct = frac * 100
    return f"{pct:.1f}" if pct < 10 else f"{pct:.0f}"


def fmt_float(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def fmt_tflops(flops_per_s: Optional[float]) -> str:
    return "-" if flops_per_s is None else f"{flops_per_s / 1e12:,.0f} TFLOP/s"


def m_bucket(p: Optional[Problem]) -> str:
    """'129-256' when the bucket's runtime-M range is known, else '256?' (the legend says why)."""
    if p is None:
        return "?"
    if p.m_range is not None:
        lo, hi = p.m_range
        if lo == hi:
            return str(lo)
        return f"{lo}-{hi}"
    return f"{p.m}?"


def smem_cell(a: Optional[ModelResult]) -> str:
    if a is None or a.smem.shared_storage_bytes is None and a.smem.verdict is None:
        return "-"
    size = fmt_kib(a.smem.shared_storage_bytes)
    mark = {"fits": "fits", "does_not_build": "no-build", "overflows_at_initialize": "OVER"}.get(a.smem.verdict or "", "?")
    return f"{size} {mark}"


def bound_cell(a: Optional[ModelResult]) -> str:
    if a is None or a.bound is None:
        return "-"
    return {"memory": "mem", "compute": "comp"}.get(a.bound, a.bound)


def tactic_cell(t: object) -> str:
    if t is None:
        return "?"
    if isinstance(t, tuple):
        s = repr(list(t)) if len(repr(t)) < 24 else repr(list(t))[:21] + "…"
        return s.replace("'", "")
    return str(t)


def status_cell(ae: AnalyzedEntry) -> str:
    r = ae.entry.record  # (the property costs a call: these run once per entry)
    s = _STATUS_TEXT.get(r.status) or str(r.status)
    if r.count > 1:
        s += f" x{r.count}"
    return s


# --- sections ----------------------------------------------------------------------------------


def _gpu_line(result: InspectResult, arch: Optional[str]) -> str:
    for g in result.gpus:
        if g.arch == arch:
            return f"modelled on {g.gpu} ({g.how})"
    return "not modelled"


def note_marker(n: int) -> str:
    """Footnote n (1-based) as a letter, [a] .. [z], [aa] ..: sources are numbered [1], [2] in the
    same tables, so a marker never means both."""
    letters = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        letters = chr(ord("a") + r) + letters
    return f"[{letters}]"


class _Notes:
    """Lettered footnotes, each text once per section."""

    def __init__(self) -> None:
        self.items: "OrderedDict[str, int]" = OrderedDict()

    def ref(self, text: str) -> str:
        return note_marker(self.items.setdefault(text, len(self.items) + 1))

    def lines(self) -> list[str]:
        return [f"{note_marker(n)} {t}" for t, n in self.items.items()]


def entry_sections(result: InspectResult, *, statuses: Optional[Sequence[Status]] = None,
                   uncalibrated: bool = False, rows: bool = True) -> list[Section]:
    """Group entries into sections and render each row; `statuses` filters (e.g. chosen only). Model
    cells are the calibrated model's where a fit covers the entry (its section's header says so),
    unless `uncalibrated`. `rows=False`: the sections' heads only (their rows and footnotes left
    empty), for a view that makes rows of its own (the report's chosen tiles)."""
    multi_source = len({ae.entry.record.source for ae in result.entries}) > 1
    group_of = group_names(result.source_groups)  # one section per server too
    groups: "OrderedDict[tuple, list[AnalyzedEntry]]" = OrderedDict()
    for ae in result.entries:
        r = ae.entry.record
        if statuses is not None and r.status not in statuses:
            continue
        key = (r.env.arch or "~", r.op, r.runner, r.env.flashinfer_version or "", group_of.get(r.source) or "")
        groups.setdefault(key, []).append(ae)
    verdict_by = {(v.arch, v.op, v.group or ""): v.text for v in result.verdicts}
    sources = _source_index(result)
    cells = _Cells()
    sections = []
    for key in sorted(groups):
        items = groups[key]
        arch = items[0].arch
        # per-rank layouts write one file per rank: the src column already tells ranks apart
        # (the source legend names each file's rank), so a rank column is only needed otherwise
        has_rank = any(ae.entry.record.rank for ae in items) and not (multi_source and _one_rank_per_source(items))
        has_meas = any(ae.entry.record.time_ms is not None for ae in items)
        headers = list(ENTRY_HEADERS)
        if has_meas:
            headers.insert(headers.index("t us*") + 1, "meas us")
        if not uncalibrated and any(ae.calibrated is not None for ae in items):
            headers = [CALIBRATED_NAMES.get(h, h) for h in headers]
        if has_rank:
            headers.insert(0, "rank")
        if multi_source:
            headers.insert(0, "src")
        notes = _Notes()
        sec = Section(
            arch=arch,
            op=items[0].record.op,
            runner=items[0].record.runner,
            flashinfer_version=items[0].record.env.flashinfer_version,
            gpu_line=_gpu_line(result, arch),
            headers=tuple(headers),
            verdict=verdict_by.get((arch, items[0].record.op, key[4])),
            group=key[4] or None,
            group_label=result.group_label(key[4] or None),
        )
        if not rows:
            sections.append(sec)
            continue
        items = sorted(items, key=row_key)
        for ae in items:
            sec.rows.append(_entry_row(ae, notes, cells, has_rank=has_rank, has_meas=has_meas,
                                       src=sources if multi_source else None, uncalibrated=uncalibrated))
            if ae.entry.record.status is Status.CHOSEN:
                sec.chosen += 1
        sec.footnotes = notes.lines()
        sections.append(sec)
    return sections


def _one_rank_per_source(items: Sequence[AnalyzedEntry]) -> bool:
    ranks: dict[str, Optional[str]] = {}
    for ae in items:
        r = ae.entry.record
        if ranks.setdefault(r.source, r.rank) != r.rank:
            return False
    return True


def row_key(ae: AnalyzedEntry) -> tuple:
    p = ae.entry.problem
    r = ae.entry.record
    # one GEMM shape after another, its M buckets in order
    return (
        p is None,
        p.n if p else 0,
        p.k if p else 0,
        p.m if p else 0,
        r.rank or "",
        _STATUS_ORDER.get(r.status, 99),
        (0, r.tactic, "") if type(r.tactic) is int else (1, 0, tactic_cell(r.tactic)),
    )


def _source_index(result: InspectResult) -> dict[str, int]:
    idx: dict[str, int] = {}
    for path, _kind in result.sources:
        idx.setdefault(path, len(idx) + 1)
    for ae in result.entries:
        src = ae.entry.record.source
        if src not in idx:
            idx[src] = len(idx) + 1
    return idx


def source_legend(result: InspectResult) -> list[str]:
    """'[1] path (kind)' for each input, numbered as the src column refers to them."""
    kinds = dict(result.sources)
    ranks: dict[str, set[str]] = {}
    for ae in result.entries:
        if ae.record.rank:
            ranks.setdefault(ae.record.source, set()).add(ae.record.rank)
    out = []
    for p, i in _source_index(result).items():
        what = [kinds[p]] if p in kinds else []
        if p in ranks:
            what.append("rank " + ", ".join(sorted(ranks[p])))
        out.append(f"[{i}] {p}" + (f" ({'; '.join(what)})" if what else ""))
    return out


_MEASURE_KEYS = ("measure_execution_mode", "measure_cold_l2", "measure_timer", "measure_graph_timing")


@dataclass
class _Recorded:
    """What one FlashInfer cache or store recorded beside its winners (`flashinfer_records`)."""

    generation: Optional[str]
    measure: list[str]
    entries: int = 0
    selection: int = 0
    extras: int = 0
    policies: dict[str, int] = field(default_factory=dict)


def flashinfer_records(result: InspectResult) -> list[str]:
    """Per input, what FlashInfer itself recorded beside its winners: 0.7.4's selection records
    (the times the table shows as measured), the cache's `_generation`, a v2 store's measurement
    policy, the entries' profiling policies, and parts a newer writer added (kept, not read)."""
    per: dict[str, _Recorded] = {}
    seen: dict[int, tuple[bool, bool, Optional[str]]] = {}  # per detail tuple (shared by many entries)
    for ae in result.entries:
        r = ae.entry.record
        if r.source_kind not in ("flashinfer-v1", "flashinfer-v2"):
            continue
        s = per.get(r.source)
        if s is None:
            meta = dict(r.env.metadata)
            s = per[r.source] = _Recorded(meta.get("_generation"), [f"{k}={meta[k]}" for k in _MEASURE_KEYS if k in meta])
        facts = seen.get(id(r.detail))
        if facts is None:
            d = dict(r.detail)
            pol = d.get("profiling_policy")
            policy = None if pol is None else (", ".join(f"{k}={v}" for k, v in pol) if isinstance(pol, tuple) and all(
                isinstance(x, tuple) and len(x) == 2 for x in pol) else str(pol))
            facts = seen[id(r.detail)] = ("selection" in d, "extras" in d, policy)
        s.entries += 1
        s.selection += facts[0]
        s.extras += facts[1]
        if facts[2] is not None:
            s.policies[facts[2]] = s.policies.get(facts[2], 0) + 1
    out = []
    for src, s in per.items():
        parts = []
        if s.selection:
            parts.append(f"{s.selection} of {s.entries} entries carry FlashInfer's selection record (winner time, "
                         "runner-up time, margin, candidates timed: recorded by FlashInfer's autotuner, shown as "
                         "meas us / runner-up / margin)")
        if s.measure:
            parts.append("measurement policy (store manifest): " + ", ".join(s.measure))
        for pol, n in sorted(s.policies.items()):
            parts.append(f"profiling policy {pol} ({n} entr{'y' if n == 1 else 'ies'})")
        if s.generation:
            parts.append(f"_generation {s.generation}")
        if s.extras:
            parts.append(f"{s.extras} entries hold parts tiletune does not know (kept in detail.extras)")
        if parts:
            out.append(f"{src}: " + "; ".join(parts))
    out += _recorded_races(result)
    return out


_RACES_SHOWN = 8  # buckets per group the line names; the rest are counted (the compact table has them all)


def _recorded_races(result: InspectResult) -> list[str]:
    """Per overview group, the buckets whose runner-up only FlashInfer's selection record names:
    its time, the margin and the candidates timed (the report's per-entry table has no such column)."""
    out = []
    for g in result.overview.groups:
        races = [ln for ln in g.lines if ln.runner_up is not None and ln.runner_up.recorded_of is not None]
        if not races:
            continue
        shown = "; ".join(
            f"M {_m_text(ln)} {_us_text(ln.chosen_time_ms)} vs {_us_text(ln.runner_up.time_ms)} "
            f"({(ln.margin or 0) * 100:+.1f}%{' ~' if ln.won_by_noise else ''}, {ln.runner_up.recorded_of} timed)"
            for ln in races[:_RACES_SHOWN] if ln.runner_up is not None)
        more = f"; {len(races) - _RACES_SHOWN} more bucket(s)" if len(races) > _RACES_SHOWN else ""
        out.append(f"{g.arch or '?'} {g.op} N {g.n} K {g.k}: FlashInfer's recorded races, winner vs runner-up us "
                   f"measured by its autotuner (~ won by noise): {shown}{more}")
    return out


def _m_text(line: BucketLine) -> str:
    p = line.problem
    r = p.m_range
    return str(p.m) if r is None else (str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}")


def _us_text(ms: Optional[float]) -> str:
    return "-" if ms is None else f"{ms * 1000:.1f}"


_STATUS_TEXT = {st: str(st) for st in Status}  # an Enum's __str__ is Python code: one text per status
_NO_NK = ("-", "-")


class _Cells:
    """Cells many rows share, made once per rendering: a config's label by identity (the configs
    outlive the rendering, so ids stay theirs) and the N and K cells per (N, K)."""

    def __init__(self) -> None:
        self.labels: dict[int, str] = {}
        self.nk: dict[tuple[object, object], tuple[str, str]] = {}


def _entry_row(
    ae: AnalyzedEntry, notes: _Notes, cells: _Cells, *, has_rank: bool, has_meas: bool, src: Optional[dict[str, int]],
    uncalibrated: bool = False,
) -> list[str]:
    r = ae.entry.record
    p = ae.entry.problem
    a = ae.analysis if ae.calibrated is None or uncalibrated else ae.calibrated
    d0 = ae.entry.decode
    config = d0.config if type(d0) is Decoded else None
    if config is not None:
        tile = cells.labels.get(id(config))
        if tile is None:
            tile = cells.labels[id(config)] = config.label()
        assert isinstance(d0, Decoded)  # (config is set only for one)
        runs = d0.runs
        if runs is not None:  # profiled one config, the binding runs another: show both
            tile = f"{tile} profiled, runs {runs.config.label()} {notes.ref(runs.reason)}"
        runs_if = d0.runs_if
        if runs_if is not None:  # the dispatch runs another tile under a run-time condition: a labelled note
            tile = f"{tile} ({runs_if.short()}) {notes.ref(runs_if.text())}"
    elif r.status in (Status.COMPILED, Status.NOT_BUILT) and r.detail_dict().get("tile"):
        tile = "x".join(str(v) for v in r.detail_dict()["tile"]) + " (JIT)"
    elif isinstance(ae.entry.decode, Undecoded):
        d = ae.entry.decode
        word = "n/a" if d.not_a_cutlass_tactic else "undecoded"
        partial = d.candidates_label()  # ambiguous: show what every candidate shares, never pick one
        tile = f"{partial} {notes.ref(d.reason)}" if partial else f"{word} {notes.ref(d.reason)}"
    else:
        tile = "?"
    if p is None and ae.entry.problem_note:
        m = f"? {notes.ref(ae.entry.problem_note)}"
    else:
        m = m_bucket(p)
    if a is None and config is not None and ae.analysis_note:
        model_cells = [f"- {notes.ref(ae.analysis_note)}", "-", "-", "-", "-"]
    elif a is None:
        model_cells = ["-", "-", "-", "-", "-"]
    else:
        model_cells = [smem_cell(a), fmt_float(a.intensity_problem), bound_cell(a), fmt_us(a.time_expected_s),
                       fmt_pct(a.efficiency_compute)]
    status = status_cell(ae)
    if r.status in (Status.FAILED, Status.NOT_RUN) and r.error:
        status += f" {notes.ref(r.error.strip())}"
    if p is None:
        n_k = _NO_NK
    else:
        hit = cells.nk.get((p.n, p.k))  # a GEMM's N and K repeat over its buckets
        if hit is None:
            hit = cells.nk[(p.n, p.k)] = (fmt_int(p.n), fmt_int(p.k))
        n_k = hit
    row = [m, *n_k, tactic_cell(r.tactic), tile, status, *model_cells]
    if has_meas:
        row.insert(ENTRY_HEADERS.index("t us*") + 1, "-" if r.time_ms is None else f"{r.time_ms * 1000:.1f}")
    if has_rank:
        row.insert(0, r.rank or "-")
    if src is not None:
        row.insert(0, f"[{src.get(r.source, 0)}]")
    return row


def status_counts(result: InspectResult) -> dict[str, int]:
    """The header's count of entries per status; an INFO 'Skipped N unsupported tactic(s)' count is an
    'INFO skip count', not 'failed' (the verdicts and the Skipped section call those skips)."""
    from tiletune.analysis.failures import is_skip_record

    counts: dict[str, int] = {}
    for ae in result.entries:
        r = ae.entry.record
        name = SKIP_COUNT if is_skip_record(r) else str(r.status)
        counts[name] = counts.get(name, 0) + 1
    return counts


SKIP_COUNT = "INFO skip count(s)"
SKIPPED_TITLE = ("Skipped as unsupported (INFO 'Skipped N unsupported tactic(s)' counts: the autotuner skipped tactics "
                 "it cannot run here and went on; skips, not failures; which tactics is logged at DEBUG)")
SKIPPED_HEADERS = ("op", "skipped", "per profile")


def split_skips(failures: Sequence[Failure]) -> tuple[list[Failure], list[Failure]]:
    """(failures, INFO skip counts): the views show the second apart, as skips."""
    from tiletune.analysis.failures import is_info_skip

    fails: list[Failure] = []
    skips: list[Failure] = []
    for f in failures:
        (skips if is_info_skip(f) else fails).append(f)
    return fails, skips


def skipped_rows(skips: Sequence[Failure], result: InspectResult,
                 labels: Optional[Mapping[str, str]] = None) -> list[list[str]]:
    """One row per op of INFO skip counts: op, how many tactic skips in all, the per-profile distribution."""
    from tiletune.analysis.failures import is_skip_record

    per: dict[tuple[Optional[str], str], dict[int, int]] = {}
    for ae in result.entries:
        r = ae.entry.record
        if is_skip_record(r):
            d = per.setdefault((r.env.arch, r.op), {})
            for n, k in dict(r.detail_dict().get("skipped_per_profile") or ()).items():
                d[int(n)] = d.get(int(n), 0) + int(k)
    rows = []
    for f in sorted(skips, key=lambda f: (f.arch or "~", f.op, f.group or "")):
        where = f" ({labels[f.group]})" if labels and f.group is not None and f.group in labels else ""
        dist = per.get((f.arch, f.op), {})
        said = ", ".join(f"{n} in {k} profile{'s' if k != 1 else ''}" for n, k in sorted(dist.items(), reverse=True))
        rows.append([f"{f.arch or '?'} {f.op}{where}", str(f.count), said or "-"])
    return rows


def failure_rows(failures: Sequence[Failure], *, error_width: int = 40,
                 labels: Optional[Mapping[str, str]] = None) -> list[list[str]]:
    """One row per aggregated failure: op, tactic, tile, count, short error, reason. `labels`
    (source group -> short name; given when the inputs hold several groups) names each row's group."""
    from tiletune.core.error_text import short_error

    rows = []
    for f in sorted(failures, key=lambda f: (f.arch or "~", f.op, f.group or "", -f.count)):
        tile = failure_tile(f)
        where = f" ({labels[f.group]})" if labels and f.group is not None and f.group in labels else ""
        reason = f.reason.summary + (" - passed on a later retry" if f.passed_later else "")
        rows.append(
            [
                f"{f.arch or '?'} {f.op}{where}",
                tactic_cell(f.tactic),
                tile,
                str(f.count),
                short_error(f.error, error_width) if f.error else "-",
                reason,
            ]
        )
    return rows


def failure_tile(f: Failure) -> str:
    """The failed tile's label, or what stands in for it."""
    if f.config is not None:
        return f.config.label()
    if f.not_cutlass:
        return "n/a (not CUTLASS)"
    return "undecoded" if f.tactic is not None else "unidentified"


def not_tried_line(nt: NotTried, limit: int = 8) -> str:
    """'sm120 fp4_gemm CutlassFp4GemmRunner 0.6.14: 20 of 32 never tried: 128x64x256 (t3), ...'"""
    labels = [f"{cfg.label()} (t{i})" for i, cfg in nt.tactics]
    shown = ", ".join(labels[:limit]) + (f", +{len(labels) - limit} more" if len(labels) > limit else "")
    total = nt.tried + len(nt.tactics)
    return f"{nt.arch} {nt.op} {nt.runner} (flashinfer {nt.flashinfer_version}): {len(nt.tactics)} of {total} never tried: {shown}"


def counts_line(result: InspectResult) -> str:
    """-q's one line of counts after the verdicts: what the full view holds, counted."""
    losses, _ = split_problems(result)
    attempts = sum(f.count for f in result.failures)
    never = sum(len(nt.tactics) for nt in result.not_tried)
    parts = [f"{len(result.failures)} failure row(s) ({attempts} failed attempt(s))",
             f"{never} never-tried catalog tile(s)", f"{len(result.events)} event(s)",
             f"{len(losses)} input problem(s) that lose data"]
    return "Counts: " + ", ".join(parts) + " (-q; without it every section is shown)"


NOT_TRIED_NOTE = (
    "'never tried' means no record in these inputs mentions the tactic. A cache stores only the winner per "
    "bucket, so without the warm-up log these tiles may have been profiled and lost."
)


def split_problems(result: InspectResult) -> tuple[list, list]:
    """(losses, notes): problems that make the exit status 2, and notes that lose nothing."""
    losses = [p for p in result.problems if loses_data(p)]
    return losses, [p for p in result.problems if not loses_data(p)]


def legend(result: InspectResult, *, compact: bool = False) -> list[str]:
    """Units and which numbers are model estimates vs measurements (`compact`: the per-bucket view's columns)."""
    lines = ["* model values (analytic estimate, not a measurement), evaluated at the top of each M bucket on the GPU named in the section."]
    if compact:
        lines.append("t us*: expected kernel time in microseconds; eff %*: expected throughput over the GPU's DENSE tensor peak.")
    else:
        lines += [
            "smem KiB*: kernel shared storage (1 KiB = 1024 B) and its fit against the per-block opt-in limit "
            "(fits / OVER = overflows at initialize / no-build = fewer than 2 pipeline stages).",
            "FLOP/B*: whole-problem arithmetic intensity; bound*: memory or compute bound on the roofline; "
            "t us*: expected kernel time in microseconds; eff %*: expected throughput over the GPU's DENSE tensor peak.",
        ]
    if any(ae.record.time_ms is not None for ae in result.entries):
        lines.append("meas us: time measured by the source (autotuner avg_time / a FlashInfer 0.7.4 cache entry's selection "
                     "record, recorded by FlashInfer's autotuner / TRT-LLM min_time / retry ledger).")
    if any(f.calibration is not None for f in result.calibrations):
        lines.append("t us cal* / eff % cal*: the model calibrated on the input's own measured times, where the input "
                     "measured some (Notes give the fitted constants and the held-out error); --uncalibrated shows "
                     "the table model instead.")
    lines.append("M bucket: the runtime M range FlashInfer's default bucket mapping sends to the key's M ('256?': range unknown); tac: the tactic as stored.")
    return lines


# --- evidence and events -------------------------------------------------------------------------

EVIDENCE_SHOWN = 2  # evidence lines under a verdict (the JSON holds all)
WORDS_WIDTH = 240  # characters of an evidence line's words: whole up to a quarter more, else cut at a sentence or clause


def clip_words(text: str, limit: int = WORDS_WIDTH) -> str:
    """`text` with runs of space folded, quoted whole when it nearly fits, else cut at a sentence's or a clause's end
    (never mid-word), saying how many words were left out (`tiletune.core.words.quote_bounded`)."""
    return quote_bounded(text, limit)


def evidence_lines(v: Verdict, limit: int = EVIDENCE_SHOWN) -> list[str]:
    """'evidence server.log:12 (stated): RuntimeError: ...' for the first `limit` evidence lines of a verdict."""
    out = []
    for e in v.evidence[:limit]:
        how = e.how + (f": {e.basis}" if e.how == "inferred" and e.basis else "")
        out.append(f"evidence {e.where()} ({how}): {clip_words(plain(e.words))}")
    return out


STATED_TITLE = "Stated in the text (its own words, as written; each with the first line that says it)"
_STATED_LABEL = {"error": "error", "op": "ops, kernels and runners", "caveat": "the author's caveat", "table": "a table",
                 "test": "tests named and their results", "config": "the engine's configuration line",
                 "elision": "the author's elisions (lines left out of the paste)", "box": "TMA boxDim",
                 "milestone": "start-up lines", "flag": "flags named", "none_failed": "where it says no failure",
                 "finding": "what it reports (its findings, in its words)", "stops_at": "where the paste stops",
                 "warning": "warnings it logged (the run went on)", "named_line": "log lines naming FlashInfer",
                 "before_stop": "the line before it", "command": "commands it runs", "about": "what it says it is",
                 "frame": "traceback frames, outermost first",
                 "file": "files", "tile": "tiles", "smem": "shared memory", "gpu": "GPUs named", "arch": "arch tokens named",
                 "version": "versions"}
_CUT = {"after_last_frame": "the paste is cut after the last frame: no exception line follows",
        "before_traceback": "the paste starts inside the traceback: its first frames are not in the text"}


_PASSING = ("in a contrast", "in a quote")


def _at(lit: Any) -> str:
    return f" (line {lit.line})" if lit.line is not None else ""


def stated_lines(result: InspectResult) -> list[str]:
    """The literal facts each text input states (`InputFacts.literals`), one line per kind in the reader's order
    of importance (errors first, one line each); a GPU or arch named only in passing is said to be mentioned,
    never this machine's; a cut traceback says where it is cut."""
    out: list[str] = []
    inputs = [i for i in result.inputs if i.literals]
    several = len(inputs) > 1
    for inp in inputs:
        head = f"{inp.source}: " if several else ""
        kinds: "OrderedDict[str, list]" = OrderedDict()
        stop_lines = {lit.line for lit in inp.literals if lit.kind == "stops_at"}
        for lit in inp.literals:
            if lit.kind == "warning" and lit.line in stop_lines:
                continue  # (a log that stops on a warning says it once, where it stops)
            kinds.setdefault(lit.kind, []).append(lit)
        for kind, lits in kinds.items():
            label = _STATED_LABEL.get(kind, kind)
            if kind == "table":
                out += [f"{head}{label} (line {lit.line}): {plain(lit.value)}" for lit in lits]
                continue
            if kind in ("error", "caveat", "none_failed", "finding", "warning", "named_line", "before_stop", "command", "about"):
                out += [f"{head}{label}: '{plain(lit.value)}'{_at(lit)}" for lit in lits]
                continue
            if kind == "stops_at":
                out += [f"{head}{label}: {lit.mark}, at '{plain(lit.value)}'{_at(lit)}" for lit in lits]
                continue
            if kind == "frame":
                cut = inp.run_end.cut if inp.run_end is not None else None
                chain = " -> ".join(plain(lit.value) for lit in lits)
                out.append(f"{head}{label}" + (f" ({_CUT[cut]})" if cut in _CUT else "")
                           + f": {chain} (lines {lits[0].line}-{lits[-1].line})")
                continue
            # a GPU or arch the text names in a contrast or a quote is mentioned, not this machine's; one in a title,
            # a list of machines or a kernel's name is said where it stands, nothing more
            here = [lit for lit in lits if lit.mark not in _PASSING]
            passing = [lit for lit in lits if lit.mark in _PASSING]
            text = "; ".join(f"{plain(lit.value)}" + (f" ({lit.mark}, line {lit.line})" if lit.mark and lit.line is not None
                                                       else f" ({lit.mark})" if lit.mark else _at(lit)) for lit in here)
            if passing:
                text += ("; " if text else "") + "mentioned, not as this machine: " + "; ".join(
                    f"{plain(lit.value)} ({lit.mark}{', line ' + str(lit.line) if lit.line is not None else ''})"
                    for lit in passing)
            out.append(f"{head}{label}: {text}")
    return out


_EVENT_ORDER = ("runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded", "exception", "oom_fallback",
                "tactics_skipped", "tactic_failed", "tactic_profiled", "tuning_progress", "config_cache_hit",
                "configs_loaded", "configs_saved", "autotune_cache_path", "cache_fragment", "version_banner")


def event_lines(result: InspectResult) -> list[str]:
    """One line per (input, event kind): how many, and the first one's evidence line."""
    groups: "OrderedDict[tuple[str, str], list]" = OrderedDict()
    for e in result.events:
        groups.setdefault((e.source, e.kind), []).append(e)
    order = {k: i for i, k in enumerate(_EVENT_ORDER)}
    several = len({src for src, _ in groups}) > 1
    examples = {(i.source, f.line) for i in result.inputs for f in i.examples}  # errors quoted as examples
    out = []
    for (src, kind), evs in sorted(groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 99), kv[0][1])):
        first = min(evs, key=lambda e: e.line or 0)
        n = sum(e.count for e in evs)
        where = f"{src}:{first.line}" if first.line else src
        words = without_advice(plain(first.text)) if first.text else first.summary
        quoted = all((e.source, e.line) in examples for e in evs)
        fatal = " quoted as an example" if quoted else " fatal" if any(e.is_fatal for e in evs) else ""
        out.append(f"{kind}{fatal} x{n}" + (f" in {src}" if several else "") + f": first at {where}: {clip_words(words)}")
    return out


WARMUP_TITLE = ("Warm-up cost (estimated from these timestamps: wall time between printed lines, never a kernel's "
                "measured time)")


def _op_cost_text(o: Any) -> str:
    from tiletune.analysis.warmup_cost import seconds_text

    text = o.op + ": "
    if o.profiles:
        text += f"{seconds_text(o.seconds)} over {o.profiles} profile{'s' if o.profiles != 1 else ''}"
        if o.timed or o.failed:
            text += f" ({o.timed} timing line{'s' if o.timed != 1 else ''}, {o.failed} failure line{'s' if o.failed != 1 else ''})"
    if o.bar_passes:
        bar = (f"{o.bar_passes} pass{'es' if o.bar_passes != 1 else ''}, "
               + ("none finished in this text" if o.bar_seconds is None else
                  "each under 1 s" if o.bar_seconds == 0 else f"{seconds_text(o.bar_seconds)} in all"))
        text += ("; " if o.profiles else "") + f"tqdm: {bar}"
    return text


def _brief_warmup(w: Any) -> list[tuple[int, str]]:
    from tiletune.analysis.warmup_cost import seconds_text

    out: list[tuple[int, str]] = []
    if w.ops:
        out.append((1, "per op: " + "; ".join(_op_cost_text(o) for o in w.ops)))
    if w.slowest:
        out.append((1, "slowest profiles: " + "; ".join(
            f"{p.op}{' ' + p.bucket if p.bucket else ''} {seconds_text(p.seconds)}" for p in w.slowest)))
    for j in w.jit:
        if j.seconds is not None:
            out.append((1, f"JIT build {j.module}: {seconds_text(j.seconds)} (line {j.line} to the next line)"))
    if w.stall is not None and w.stopped is None:
        out.append((1, w.stall.text))
    if w.blocklist is not None and w.blocklist.items:
        shown = w.blocklist.items[:4]
        more = len(w.blocklist.items) - len(shown)
        out.append((1, "always-failing tactics: " + "; ".join(shown) + (f"; {more} more" if more > 0 else "")))
    out.append((1, "(-v: how each figure was taken)"))
    return out


def warmup_lines(result: InspectResult, limit: Optional[int] = None, brief: bool = False) -> list[tuple[int, str]]:
    """Per input with stamped tuning lines: its headline (level 0), then each figure with its basis (level 1).
    `brief` (the terminal table without -v): the headline, per op, the slowest profiles, JIT builds, a stall
    and the always-failing tactics, without the bases."""
    from tiletune.analysis.warmup_cost import seconds_text

    out: list[tuple[int, str]] = []
    shown = result.warmup if limit is None else result.warmup[:limit]
    for w in shown:
        out.append((0, f"{w.source}: {w.headline}"))
        if brief:
            out += _brief_warmup(w)
            continue
        out.append((1, f"stamps: {w.clock}"))
        if w.ops:
            out.append((1, "per op: " + "; ".join(_op_cost_text(o) for o in w.ops)))
        if w.slowest:
            out.append((1, "slowest profiles: " + "; ".join(
                f"{p.op}{' ' + p.bucket if p.bucket else ''} {seconds_text(p.seconds)} (lines {p.start_line}-{p.end_line})"
                for p in w.slowest)))
        if w.profile_basis:
            out.append((1, f"profiles: {w.profile_basis}"))
        for j in w.jit:
            out.append((1, f"JIT build {j.module}: " + (
                f"{seconds_text(j.seconds)} (line {j.line} to the next line of that process, {j.next_line}; the build's "
                "end is not logged)" if j.seconds is not None else f"line {j.line}, no later line of that process")))
        if w.stall is not None:
            out.append((1, w.stall.text))
        if w.longest_silence is not None and (w.stall is None or w.stall.before_line != w.longest_silence.before_line):
            out.append((1, w.longest_silence.text))
        for name, saving in (("skipping the always-failing tactics", w.blocklist), ("a warm cache", w.warm_cache)):
            if saving is None:
                continue
            if saving.seconds is None:
                out.append((1, f"{name} would have saved: unknown: {saving.basis}"))
                continue
            if not saving.seconds:
                out.append((1, f"{name}: {saving.basis}"))
                continue
            share = f" ({saving.share:.0%} of {saving.share_of})" if saving.share is not None else ""
            items = (": " + "; ".join(saving.items)) if saving.items else ""
            out.append((1, f"{name} would have saved about {seconds_text(saving.seconds)}{share}{items} ({saving.basis})"))
        for n in w.notes:
            out.append((1, n))
    if limit is not None and len(result.warmup) > limit:
        out.append((0, f"{len(result.warmup) - limit} more input(s) with warm-up figures: -v or -f json lists them all"))
    return out


__all__ = [
    "WARMUP_TITLE",
    "warmup_lines",
    "ENTRY_HEADERS",
    "clip_words",
    "event_lines",
    "evidence_lines",
    "FAILURE_HEADERS",
    "NOT_TRIED_NOTE",
    "Section",
    "entry_sections",
    "failure_rows",
    "fmt_bytes",
    "fmt_float",
    "fmt_kib",
    "fmt_pct",
    "fmt_tflops",
    "fmt_us",
    "legend",
    "m_bucket",
    "not_tried_line",
    "source_legend",
]
