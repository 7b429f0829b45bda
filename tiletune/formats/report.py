"""The bug-ticket report: Markdown a user pastes into a GitHub issue, or the same content as JSON.

Sections: verdict per arch and op, environment (versions, GPU, driver when known, the GPU the
model used and its dense vs sparse peak), chosen tiles with intensity and expected efficiency,
failures with the reason behind each, never-tried tiles, unusable inputs, the commands that
reproduce it, and roofline pictures (files written beside the report, linked relatively).
Long sections fold in <details>, and by default every section is capped so the whole report fits
a GitHub issue (`--full` for everything). Everything from the inputs is escaped (formats.markdown)
and, by default, redacted (formats.redact: directories, host and user names) so a report can
leave the machine. Pure: `format_report(result, ctx) -> str`; writing
files is the CLI's job.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence
from urllib.parse import quote

import msgspec
from msgspec import Struct

from tiletune import __version__
from tiletune.analysis.results import Failure, InspectResult, Verdict
from tiletune.analysis.source_groups import group_names
from tiletune.core.records import Decoded, Status
from tiletune.formats import markdown as md
from tiletune.formats import view
from tiletune.formats.json_out import analysis_dict, inspect_dict
from tiletune.model.perf import ModelResult

SCHEMA = "tiletune.report/1"

CHOSEN_HEADERS = ("M bucket", "N", "K", "tactic", "tile", "meas us", "smem KiB*", "FLOP/B*", "bound*", "t us* (range)",
                  "eff %*", "roofline %*")
# a section whose model is calibrated on its input's measured times says so in these columns
CALIBRATED_HEADERS = tuple({"t us* (range)": "t us cal* (range)", "eff %*": "eff % cal*",
                            "roofline %*": "roofline % cal*"}.get(h, h) for h in CHOSEN_HEADERS)


class ReportContext(Struct, frozen=True, gc=False):
    """What the report needs besides the result: how it was asked for, when, and its pictures."""

    paths: tuple[str, ...] = ()  # the PATH arguments as given (for the reproduce commands)
    generated_at: str = ""  # ISO timestamp (volatile; masked in golden tests)
    plots: tuple[tuple[str, str, str], ...] = ()  # (arch, op, relative PNG file name)
    plot_note: Optional[str] = None  # why there are no pictures (matplotlib missing, --no-plot, no model)
    gpu: Optional[str] = None  # --gpu as given
    output_name: str = "report.md"
    options: tuple[str, ...] = ()  # other flags that shaped the result (--arch sm120, --flashinfer-version ...)
    tile_map_png: Optional[str] = None  # relative file name of the tile-map picture, when drawn
    uncalibrated: bool = False  # --uncalibrated: the table model even where the inputs' times calibrate it
    runtime_m: tuple[int, ...] = ()  # --m: the runtime Ms whose tile the report names


# --- environment -------------------------------------------------------------------------------


@dataclass
class _EnvRow:
    label: str
    values: dict[str, list[str]] = dataclass_field(default_factory=dict)  # value -> provenance notes

    def add(self, value: Optional[str], how: Optional[str] = None) -> None:
        if value in (None, ""):
            return
        notes = self.values.setdefault(str(value), [])
        if how and how not in notes:
            notes.append(how)

    def text(self, unknown: str) -> str:
        if not self.values:
            return unknown
        return "; ".join(v + (f" ({', '.join(h)})" if h else "") for v, h in self.values.items())


def environment(result: InspectResult) -> list[tuple[str, str]]:
    """(label, value) rows: what the inputs say about where they were written, with provenance."""
    fi, arch, gpu, cuda, driver = (_EnvRow(x) for x in ("FlashInfer", "arch", "GPU", "CUDA", "driver"))
    meta: dict[str, _EnvRow] = {}
    seen: set[Any] = set()
    for ae in result.entries:
        env = ae.record.env
        if env in seen:
            continue
        seen.add(env)
        fi.add(env.flashinfer_version, f"from {env.version_source}" if env.version_source else None)
        arch.add(env.arch, f"from {env.arch_source}" if env.arch_source else None)
        gpu.add(env.gpu)
        cuda.add(env.cuda_version)
        driver.add(env.driver)
        for k, v in env.metadata:
            if k in ("flashinfer_version", "gpu", "cuda_version") or v in ("", "unknown"):
                continue
            meta.setdefault(k, _EnvRow(k)).add(v)
    servers = _EnvRow("server")
    for i in result.inputs:  # what a log or ticket states about its run: the same facts inspect shows
        if i.flashinfer_version is not None:
            fi.add(str(i.flashinfer_version.value), f"{i.flashinfer_version.how}, {i.flashinfer_version.source}")
        if i.arch is not None:
            arch.add(str(i.arch.value), f"{i.arch.how}, {i.arch.source}")
        if i.gpu is not None:
            gpu.add(str(i.gpu.value), i.gpu.source)
        for name, ver in i.servers:
            servers.add(f"{name} {ver.value}", ver.source)
    rows = [
        ("FlashInfer", fi.text("unknown")),
        ("GPU", gpu.text("not named in the inputs")),
        ("arch", arch.text("unknown (pass --arch)")),
        ("CUDA", cuda.text("unknown")),
        ("driver", driver.text("unknown (FlashInfer caches do not record it; a tiletune retry ledger does)")),
    ]
    if servers.values:
        rows.append(("server", servers.text("")))
    rows += [(k, r.text("unknown")) for k, r in sorted(meta.items())]
    for g in result.gpus:
        peak = _peak_line(result, g.arch)
        rows.append((f"modelled on ({g.arch or '?'})", f"{g.gpu} - {g.how}" + (f"; {peak}" if peak else "")))
    rows.append(("tiletune", __version__))
    return rows


def _peak_line(result: InspectResult, arch: Optional[str]) -> str:
    """Dense peaks per data type the model used for this arch; the vendor's sparse figures as an aside."""
    dense: dict[str, float] = {}
    sparse: dict[str, float] = {}
    for ae in result.entries:
        a = ae.analysis
        if a is not None and ae.arch == arch and a.peak_dense and a.dtype not in dense:
            dense[a.dtype] = a.peak_dense
            if a.peak_sparse:
                sparse[a.dtype] = a.peak_sparse
    if not dense:
        return ""
    s = "dense peak " + ", ".join(f"{d} {view.fmt_tflops(v)}" for d, v in dense.items())
    s += " (efficiency is against " + ("this" if len(dense) == 1 else "these") + ")"
    if sparse:
        s += "; vendor's 2:4-sparse figure " + ", ".join(f"{d} {view.fmt_tflops(v)}" for d, v in sparse.items()) + ", not used"
    return s


# --- chosen tiles ------------------------------------------------------------------------------


def _band(a: Optional[ModelResult]) -> str:
    if a is None or a.time_expected_s is None:
        return "-"
    s = view.fmt_us(a.time_expected_s)
    if a.time_low_s is not None and a.time_high_s is not None:
        s += f" ({view.fmt_us(a.time_low_s)}-{view.fmt_us(a.time_high_s)})"
    return s


def chosen_sections(result: InspectResult, uncalibrated: bool = False, keep_rows: Optional[int] = None
                    ) -> list[tuple[str, str, list[list[str]], list[str], tuple[str, ...], int]]:
    """(title, gpu line, rows, footnotes, headers, row count) per section, chosen entries only. A
    section with no decodable tile has no rows; its notes are then a summary line followed by each
    distinct reason. `keep_rows`: only the first so many rows are kept (a ticket shows 40 at most; a
    200 MB cache's rows were 350 MB), the count and the footnotes are of them all.
    Model cells are the calibrated model's where the inputs' measured times calibrate it (the
    headers then say "cal"), unless `uncalibrated`; "meas us" is the winner's time measured by the
    inputs in that bucket (its own record's, else its profiling time there).

    Linear in the entries: they are put in their section in one pass (keyed as view.entry_sections
    keys them) and a row seen already is found in a set (a rescan of every entry per section and a
    list search per row made an 18,000-entry report take 28 s). The set holds one GEMM shape's rows at
    a time: rows are made in row_key order, whose first keys are the shape (p is None, N, K), and two
    rows alike show the same N and K, so they are of one shape."""
    out: list[tuple[str, str, list[list[str]], list[str], tuple[str, ...], int]] = []
    group_of = group_names(result.source_groups)
    measured = _measured_winner_times(result)
    by_section: dict[tuple, list] = {}
    for ae in result.entries:
        r = ae.record
        if r.status is Status.CHOSEN:
            key = (r.env.arch or "~", r.op, r.runner, r.env.flashinfer_version or "", group_of.get(r.source) or "")
            by_section.setdefault(key, []).append(ae)
    for sec in view.entry_sections(result, statuses=(Status.CHOSEN,), uncalibrated=uncalibrated, rows=False):
        key = (sec.arch or "~", sec.op, sec.runner, sec.flashinfer_version or "", sec.group or "")
        items = [ae for ae in by_section.get(key, ()) if ae.arch == sec.arch]
        rows: list[list[str]] = []
        count = 0
        seen: set[tuple[str, ...]] = set()
        shape: Any = None
        notes: dict[str, int] = {}

        def ref(t: str) -> str:
            return view.note_marker(notes.setdefault(t, len(notes) + 1))  # noqa: B023 - called within this iteration

        calibrated = not uncalibrated and any(ae.calibrated is not None for ae in items)
        for ae in sorted(items, key=view.row_key):
            p, r = ae.entry.problem, ae.record
            if (p is None or (p.n, p.k)) != shape:
                shape = p is None or (p.n, p.k)
                seen.clear()
            a = ae.analysis if ae.calibrated is None or uncalibrated else ae.calibrated
            t_meas = r.time_ms if r.time_ms is not None else measured.get(
                (group_of.get(r.source), ae.arch, r.op, r.runner, p, _ident(ae)))
            if ae.config is not None:
                tile = ae.config.label()
                d = ae.entry.decode
                runs = d.runs if isinstance(d, Decoded) else None
                if runs is not None:  # the binding runs another config than the one profiled
                    tile += f" profiled, runs {runs.config.label()} " + ref(runs.reason)
                runs_if = d.runs_if if isinstance(d, Decoded) else None
                if runs_if is not None:  # another tile under a run-time condition
                    tile += f" ({runs_if.short()}) " + ref(runs_if.text())
            else:
                d = ae.entry.decode
                tile = ("n/a " if getattr(d, "not_a_cutlass_tactic", False) else "undecoded ") + ref(getattr(d, "reason", "not decoded"))
            if a is None and ae.config is not None and ae.analysis_note:
                model = [f"- {ref(ae.analysis_note)}", "-", "-", "-", "-", "-"]
            else:
                model = [
                    view.smem_cell(a),
                    view.fmt_float(a.intensity_problem) if a else "-",
                    view.bound_cell(a),
                    _band(a),
                    view.fmt_pct(a.efficiency_compute) if a else "-",
                    view.fmt_pct(a.efficiency_roofline) if a else "-",
                ]
            rank = f" ({r.rank})" if r.rank else ""
            row = [view.m_bucket(p) + rank, view.fmt_int(p.n) if p else "-", view.fmt_int(p.k) if p else "-",
                   view.tactic_cell(r.tactic), tile, "-" if t_meas is None else f"{t_meas * 1000:.1f}", *model]
            # the same winner read from two inputs of one run (the cache and its warm-up log) is one row
            if tuple(row) not in seen:
                seen.add(tuple(row))
                count += 1
                if keep_rows is None or len(rows) < keep_rows:
                    rows.append(row)
        if not any(ae.config is not None for ae in items):
            # cuBLAS / cuDNN / trtllm-gen winners: no tile to show or model, one line says so
            whys = sorted({getattr(ae.entry.decode, "reason", "not decoded") for ae in items})
            out.append((sec.title, sec.gpu_line, [], [f"{len(items)} chosen tactic(s), none a decodable CUTLASS tile", *whys],
                        CHOSEN_HEADERS, 0))
            continue
        out.append((sec.title, sec.gpu_line, rows, [f"{view.note_marker(n)} {t}" for t, n in notes.items()],
                    CALIBRATED_HEADERS if calibrated else CHOSEN_HEADERS, count))
    return out


def _ident(ae: Any) -> Any:
    from tiletune.analysis.overview import choice_key

    return choice_key(ae.entry.config, ae.entry.record.tactic)


def _measured_winner_times(result: InspectResult) -> dict[tuple[Any, ...], float]:
    """(source group, arch, op, runner, problem, choice) -> the winner's measured time (ms) in that
    bucket, from the overview (a cache's winner is timed by the log of the same run)."""
    out: dict[tuple[Any, ...], float] = {}
    from tiletune.analysis.overview import choice_key

    for g in result.overview.groups:
        for line in g.lines:
            if line.chosen_time_ms is None or len(line.chosen) != 1:
                continue
            pick = line.chosen[0]
            out[(g.source_group, g.arch, g.op, g.runner, line.problem, choice_key(pick.config, pick.tactic))] = line.chosen_time_ms
    return out


# --- reproduce ---------------------------------------------------------------------------------


def _q(s: str) -> str:
    return shlex.quote(s)


def model_command(f: Failure, gpu: Optional[str]) -> Optional[str]:
    """`tiletune model ...` for a failed tile, at the top of the first bucket it failed for."""
    if f.config is None or not f.problems:
        return None
    p = f.problems[0]
    dtype = p.dtype_a or p.dtype_b
    if dtype is None:
        return None
    gpu_name = gpu or (f.analysis.gpu_name if f.analysis is not None else None)
    if not gpu_name:
        return None
    m = f.analysis.m_evaluated if f.analysis is not None else p.m
    c = f.config
    parts = ["tiletune model", "--gpu", _q(gpu_name), "--dtype", dtype, "--m", str(m), "--n", str(p.n), "--k", str(p.k),
             "--tile", "x".join(map(str, c.tile))]
    if c.cluster != (1, 1, 1):
        parts += ["--cluster", "x".join(map(str, c.cluster))]
    if c.swap_ab:
        parts.append("--swap-ab")
    if c.stream_k:
        parts.append("--stream-k")
    if c.stages is not None:  # the runner pins its stage count (e.g. StageCount<2>)
        parts += ["--stage-policy", f"fixed:{c.stages}"]
    if p.experts:
        parts += ["--grouped", "--experts", str(p.experts)]
        if p.top_k:
            parts += ["--top-k", str(p.top_k)]
    return " ".join(parts)


def _command(*parts: str) -> str:
    """Words already shell-quoted, joined by one space (empty ones dropped): a command is built, never
    patched afterwards (a replace of double spaces would also change a quoted path holding two)."""
    return " ".join(p for p in parts if p)


def commands(result: InspectResult, ctx: ReportContext) -> list[str]:
    """The commands that reproduce this report and re-test its failures: each complete, shell-quoted,
    on one line (a Markdown code block never wraps), each failed tactic named once."""
    paths = " ".join(_q(p) for p in ctx.paths)
    opts = " ".join(_q(o) for o in ctx.options)
    gpu = f"--gpu {_q(ctx.gpu)}" if ctx.gpu else ""
    lines = [
        "python3 -m pip install -e .  # in a clone of tiletune",
        _command("tiletune inspect", paths, gpu, opts),
        _command("tiletune report", paths, gpu, opts, "-o", _q(ctx.output_name)),
    ]
    seen: set[str] = set()
    for f in sorted(result.failures, key=lambda f: -f.count)[:8]:
        cmd = model_command(f, ctx.gpu)
        if cmd and cmd not in seen:
            seen.add(cmd)
            lines.append(cmd)
    # one retry per (arch, op): a tactic that failed in several ways is several failures, and is
    # retried once; a compound (JSON) tactic is a word of its own
    tactics: dict[tuple[str, str], list[str]] = {}
    for f in result.failures:
        if f.tactic is None or (f.autotuner == "TensorRT-LLM" and f.config is None):
            continue  # TensorRT-LLM's own runners: retry drives FlashInfer's (glance.next_steps says so)
        t = str(f.tactic) if isinstance(f.tactic, int) else json.dumps(f.tactic, separators=(",", ":"))
        listed = tactics.setdefault((f.arch or "", f.op), [])
        if t not in listed:
            listed.append(t)
    for (arch, op), ts in list(tactics.items())[:8]:
        plain = [t for t in ts if t.lstrip("-").isdigit()]
        words = ([",".join(plain)] if plain else []) + [t for t in ts if not t.lstrip("-").isdigit()]
        for w in words:
            lines.append(_command("tiletune retry", paths, opts, "--op", _q(op), "--tactic", _q(w),
                                  f" # run on an {arch or 'matching'} GPU"))
    return lines


# --- redaction: tiletune.formats.redact (Redactor, local_identity, redact re-exported) --------------


# --- Markdown ----------------------------------------------------------------------------------


def _title(result: InspectResult) -> str:
    """What a ticket's reader should see first: what ended a run when something did (the verdicts
    lead with it too), else the failing ops, else the ops tuned."""

    def name(v: Verdict) -> str:
        return " ".join(x for x in (v.arch, v.op) if x) or "see the verdict"

    fatal = [v for v in result.verdicts if v.fatal]
    fails, _skips = view.split_skips(result.failures)  # INFO skip counts are skips, not failing tactics
    failing = [v for v in result.verdicts if v.failed and not v.fatal
               and any(f.op == v.op and f.arch == v.arch for f in fails)]
    if fatal:
        what, subject = "run ended", fatal
    elif failing:
        what, subject = "failing tactics", failing
    else:
        what, subject = "autotuned tiles", [v for v in result.verdicts if v.op]
    names = list(dict.fromkeys(name(v) for v in subject))
    head = ", ".join(names[:3]) + (f" (+{len(names) - 3} more)" if len(names) > 3 else "")
    return f"tiletune report: {what} - {head}" if head else "tiletune report"


def _summary_line(result: InspectResult) -> str:
    chosen = sum(1 for ae in result.entries if ae.record.status is Status.CHOSEN)
    fails, skips = view.split_skips(result.failures)
    failed = sum(f.count for f in fails)
    n_fail = len(fails)
    s = f"{len(result.sources)} input(s) read, {chosen:,} chosen tactic(s)"
    if n_fail:
        s += f", {n_fail} failing tactic(s) ({failed:,} failed attempts)"
    if skips:
        s += f", {sum(f.count for f in skips):,} tactic skip(s) as unsupported (INFO counts, not failures)"
    dis = sum(1 for f in result.failures if f.reason.model_disagrees and f.reason.kind != "smem")
    if dis:
        s += f", {dis} not explained by shared memory"
    under = sum(1 for f in result.failures if f.reason.model_disagrees and f.reason.kind == "smem")
    if under:
        s += f", {under} where the error's shared-memory figure beats the model's"
    losses, notes = view.split_problems(result)
    if losses:
        s += f", {len(losses)} input problem(s)"
    if notes:
        s += f", {len(notes)} note(s) on the inputs"
    return s + "."


# --- fitting a ticket ---------------------------------------------------------------------------

# GitHub refuses issue and comment bodies over 65,536 characters; keep a margin for what the user
# types around the report.
TICKET_CHARS = 60_000
MAX_LINE = 1_000  # a ticket line longer than this is unreadable; long texts are cut well before it


class Limits(Struct, frozen=True, gc=False):
    """How much of each section a report shows; None: everything (--full)."""

    rows: Optional[int]  # chosen-tile rows per section
    items: Optional[int]  # verdicts, failures, problems, notes, never-tried lines, inputs
    details: Optional[int]  # failures with error texts and model numbers
    text: Optional[int]  # characters of one text from the inputs (an error, a message, a reason)


FULL = Limits(None, None, None, None)
# Tried in order until the report fits TICKET_CHARS; each step shows less of every section. The
# first cuts no text: a note or an error is cut only when the ticket would not fit otherwise.
TICKET_STEPS = (Limits(40, 40, 12, None), Limits(40, 40, 12, 300), Limits(16, 20, 6, 200), Limits(6, 10, 3, 160), Limits(2, 5, 1, 120),
                Limits(0, 2, 0, 100))


def _capped(items: Sequence[Any], limit: Optional[int]) -> tuple[Sequence[Any], int]:
    """(the items shown, how many were left out)."""
    if limit is None or len(items) <= limit:
        return items, 0
    return items[:limit], len(items) - limit


# A left-out note quotes the whole command that writes the full report up to this length; past it
# (a report over a hundred inputs) the note says what to add to the command under Reproduce.
_FULL_COMMAND_CHARS = 400


def _left_out(n: int, what: str, ctx: ReportContext) -> str:
    full = _full_command(ctx)
    if len(full) <= _FULL_COMMAND_CHARS:
        return f"_{n:,} more {what} left out to fit a GitHub issue; the full report (attach it as a file): {md.code(full)}_"
    stem = Path(ctx.output_name).stem or "report"
    return (f"_{n:,} more {what} left out to fit a GitHub issue; the full report (attach it as a file): the "
            f"`tiletune report` command under Reproduce with {md.code('--full -o ' + _q(stem + '-full.md'))}_")


def _full_command(ctx: ReportContext) -> str:
    stem = Path(ctx.output_name).stem or "report"
    return _command("tiletune report", " ".join(_q(p) for p in ctx.paths), f"--gpu {_q(ctx.gpu)}" if ctx.gpu else "",
                    " ".join(_q(o) for o in ctx.options), "--full", "-o", _q(stem + "-full.md"))


def format_report(result: InspectResult, ctx: ReportContext, *, full: bool = False,
                  redact: Optional[Callable[[str], str]] = None) -> str:
    """The Markdown report. By default it fits a GitHub issue (TICKET_CHARS, lines under MAX_LINE):
    long sections are capped, with a count of what was left out and the command that writes the
    full report; `full=True` shows everything. `redact` (formats.redact.Redactor) is applied to every
    text from the inputs before it is escaped (markdown.redacting)."""
    with md.redacting(redact):
        return _format_report(result, ctx, full)


def _format_report(result: InspectResult, ctx: ReportContext, full: bool) -> str:
    # what every try below shares, made once: the tries differ in caps only (so rows past the
    # largest cap of a ticket are counted, not kept)
    parts = _Parts(result, ctx.uncalibrated, None if full else max(lim.rows or 0 for lim in TICKET_STEPS))
    if full:
        return _render(result, ctx, FULL, parts)
    for limits in TICKET_STEPS:
        text = _render(result, ctx, limits, parts)
        if len(text) <= TICKET_CHARS and (limits.text is not None or _longest_line(text) <= MAX_LINE):
            return text
    cut = text[: TICKET_CHARS - 400]
    cut = cut[: cut.rfind("\n") + 1]
    return cut + "\n" + _left_out(1, "part of this report", ctx) + "\n"


def _longest_line(text: str) -> int:
    return max(map(len, text.splitlines()), default=0)


class _Parts:
    """The parts of a report that take a pass over every entry, made once per report (up to five
    renders try smaller caps until the report fits a ticket)."""

    def __init__(self, result: InspectResult, uncalibrated: bool = False, keep_rows: Optional[int] = None) -> None:
        self.result = result
        self.uncalibrated = uncalibrated
        self.keep_rows = keep_rows
        self._sections: Optional[list] = None
        self._env: Optional[list[tuple[str, str]]] = None
        self._summary: Optional[str] = None
        self._tile_map: Optional[tuple[list[str], list[list[str]]]] = None

    @property
    def sections(self) -> list[tuple[str, str, list[list[str]], list[str], tuple[str, ...], int]]:
        if self._sections is None:
            self._sections = chosen_sections(self.result, self.uncalibrated, self.keep_rows)
        return self._sections

    @property
    def environment(self) -> list[tuple[str, str]]:
        if self._env is None:
            self._env = environment(self.result)
        return self._env

    @property
    def summary(self) -> str:
        if self._summary is None:
            self._summary = _summary_line(self.result)
        return self._summary

    @property
    def tile_map(self) -> tuple[list[str], list[list[str]]]:
        if self._tile_map is None:
            from tiletune.formats import glance

            self._tile_map = glance.tile_map(self.result.overview)
        return self._tile_map


def _render(result: InspectResult, ctx: ReportContext, lim: Limits, parts: Optional[_Parts] = None) -> str:
    parts = parts if parts is not None else _Parts(result, ctx.uncalibrated)
    c = lambda text: md.cell(text, lim.text)  # noqa: E731 - every text from the inputs goes through this
    out: list[str] = [f"# {md.cell(_title(result), 200)}", "", c(parts.summary), ""]

    out += ["## Verdict", ""]
    if result.verdicts:
        shown, more = _capped(result.verdicts, lim.items)
        for v in shown:
            head, sep, rest = v.text.partition(": ")
            out.append(f"- **{c(head)}**: {c(rest)}" if sep else f"- {c(v.text)}")
            out += [f"  - {c(line)}" for line in view.evidence_lines(v)]
        if more:
            out += ["", _left_out(more, "verdict(s)", ctx)]
    elif result.events:
        out.append("- no verdict: the inputs hold only the events below")
    else:
        out.append("- nothing to judge: no tuning records, events or errors were found")
    out.append("")
    warmup = view.warmup_lines(result, lim.items)
    if warmup:
        out += ["## Warm-up cost", "", f"_{md.cell(view.WARMUP_TITLE)}_", ""]
        out += [("- " if level == 0 else "  - ") + c(line) for level, line in warmup]
        out.append("")
    stated = view.stated_lines(result)
    if stated:
        shown, more = _capped(stated, lim.items)
        out += ["## Stated in the text", "", f"_{md.cell(view.STATED_TITLE)}_", ""] + [f"- {c(line)}" for line in shown]
        if more:
            out += ["", _left_out(more, "stated line(s)", ctx)]
        out.append("")
    events = view.event_lines(result)
    if events:
        shown, more = _capped(events, lim.items)
        out += ["## Events", ""] + [f"- {c(line)}" for line in shown]
        if more:
            out += ["", _left_out(more, "event line(s)", ctx)]
        out.append("")

    env_rows = [(k, clip_text(v, lim.text)) for k, v in parts.environment]
    out += ["## Environment", "", md.table(("component", "version / value (where it came from)"), env_rows), ""]

    out += ["## Chosen tiles", ""]
    out.append(
        "Model estimates (\\*) at the top of each M bucket: shared memory against the per-block limit, whole-problem "
        "arithmetic intensity, roofline bound, expected time with its uncertainty range, and efficiency against the "
        "GPU's **dense** peak and against the roofline."
    )
    out.append("")
    sections = parts.sections
    if not sections:
        out += ["_No chosen tactics in the inputs._", ""]
    if any(h is CALIBRATED_HEADERS for *_, h, _count in sections):
        out += ["Columns marked \"cal\" show the model calibrated on the inputs' own measured times (the Notes give the "
                "fitted constants and the held-out error); `--uncalibrated` shows the table model. meas us: the "
                "winner's time measured by the inputs.", ""]
    for title, gpu_line, rows, notes, headers, n_rows in sections:
        out += [f"### {c(title)}", ""]
        if not rows:
            # cuBLAS / cuDNN / trtllm-gen winners, or tactics several catalogs decode differently: the
            # reasons (the fused-MoE 'ambiguous' ones run to thousands of characters) fold
            count, reasons = notes[0], notes[1:]
            shown, more = _capped(reasons, lim.items)
            body = "\n".join(f"- {c(w)}" for w in shown) + (f"\n\n{_left_out(more, 'reason(s)', ctx)}" if more else "")
            if len(reasons) == 1:
                out += [f"_{c(count)}: {c(reasons[0])}_", ""]
                continue
            out += [f"_{c(count)}_", ""]
            if reasons:
                out += [md.details(f"{len(reasons)} reason(s)", body), ""]
            continue
        out += [f"_{c(gpu_line)}_", ""]
        shown, more = _capped(rows, lim.rows)
        more += n_rows - len(rows)  # (rows past the kept ones: counted, not kept)
        if not shown:
            out += [_left_out(more, "row(s) of this section", ctx), ""]
            continue
        body = md.table(headers, [[clip_text(x, lim.text) for x in r] for r in shown],
                        align_right=[1, 2, 5, 6, 7, 9, 10, 11])
        if notes:
            body += "\n\n" + "\n".join(f"- {c(n)}" for n in notes)
        if more:
            body += "\n\n" + _left_out(more, "row(s) of this section", ctx)
        out.append(md.maybe_fold(f"{n_rows} buckets (click to expand)", body, len(shown)))
        out.append("")

    if ctx.runtime_m:
        from tiletune.formats.glance import runtime_m_lines

        out += ["## At runtime M", "", "FlashInfer's default bucket mapping for each release, from the runtime M asked "
                "about (`--m`) to the bucket and the tile that runs there.", ""]
        out += [f"- {c(line)}" for line in runtime_m_lines(result.overview, ctx.runtime_m)]
        out.append("")

    fails, skips = view.split_skips(result.failures)
    if skips:
        out += ["## Skipped as unsupported", "", c(view.SKIPPED_TITLE), ""]
        out.append(md.table(view.SKIPPED_HEADERS, view.skipped_rows(skips, result, result.group_labels()), align_right=[1]))
        out.append("")
    out += ["## Failures", ""]
    if fails:
        ordered = sorted(fails, key=lambda f: (f.arch or "~", f.op, f.group or "", -f.count))
        shown, more = _capped(ordered, lim.items)
        labels = result.group_labels()
        out.append(md.table(("tile", "tactic", "count", "reason"),
                            [[clip_text(x, lim.text) for x in _failure_summary_row(f, labels)] for f in shown], align_right=[2]))
        if more:
            out += ["", _left_out(more, "failure(s)", ctx)]
        out.append("")
        by_count = sorted(fails, key=lambda f: -f.count)
        detailed, more = _capped(by_count, lim.details)
        if detailed:
            body = _failure_details(detailed, lim.text, labels)
            if more:
                body += "\n\n" + _left_out(more, "failure detail(s)", ctx)
            out.append(md.details("Error texts and model numbers per failure" + (" (the most frequent)" if more else ""), body))
    else:
        out.append("_No failed tactics in the inputs. A cache stores only winners; add the warm-up log "
                   "(FLASHINFER_LOGGING_LEVEL=debug) to see which tactics failed._")
    out.append("")

    if result.not_tried:
        shown, more = _capped(result.not_tried, lim.items)
        body = "\n".join(f"- {c(view.not_tried_line(nt, limit=12))}" for nt in shown)
        if more:
            body += "\n\n" + _left_out(more, "line(s)", ctx)
        body += f"\n\n_{c(view.NOT_TRIED_NOTE)}_"
        total = sum(len(nt.tactics) for nt in result.not_tried)
        out += ["## Never tried", "", md.details(f"{total} catalog tile(s) with no record in the inputs", body), ""]

    losses, notes = view.split_problems(result)
    if losses:
        out += ["## Inputs that could not be used", ""]
        shown, more = _capped(losses, lim.items)
        body = "\n".join(f"- {c(p.message)}" for p in shown)
        if more:
            body += "\n\n" + _left_out(more, "problem(s)", ctx)
        out.append(body if len(shown) <= md.FOLD_ROWS else md.details(f"{len(losses)} input problem(s)", body))
        out.append("")
    if notes:
        shown, more = _capped(notes, lim.items)
        body = "\n".join(f"- {c(p.message)}" for p in shown) + (f"\n\n{_left_out(more, 'note(s)', ctx)}" if more else "")
        out += [md.details(f"Notes on the inputs ({len(notes)})", body), ""]

    out += ["## Reproduce", "", md.code_block([md.clip(md.redacted(x), MAX_LINE - 10) for x in commands(result, ctx)], "bash"), ""]

    pictures = ([ctx.tile_map_png] if ctx.tile_map_png else []) + [rel for _arch, _op, rel in ctx.plots]
    if pictures:
        out += ["## Pictures to upload", "",
                "Written beside the report. GitHub does not read local files: drag these into the issue to show them.", ""]
        out += [f"- {md.code(p)}" for p in pictures]
        out.append("")
    out += _tile_map_section(result, ctx, lim, parts)
    if ctx.plots:
        out += ["## Roofline", ""]
        for arch, op, rel in ctx.plots:
            out.append(f"![{md.cell(arch)} {md.cell(op)} roofline (model)]({quote(rel)})")
            out.append("")
        if ctx.plot_note:  # some (arch, op) could not be drawn: say which and why
            out += [f"_{c(ctx.plot_note)}_", ""]
    elif ctx.plot_note:
        out += ["## Roofline", "", f"_{c(ctx.plot_note)}_", ""]

    legend = view.source_legend(result)
    shown, more = _capped(legend, lim.items)
    srcs = "\n".join(f"- {c(line)}" for line in shown) or "- none"
    if more:
        srcs += "\n\n" + _left_out(more, "input(s)", ctx)
    out += [md.details(f"Inputs ({len(result.sources)})", srcs), ""]
    recorded = view.flashinfer_records(result)
    if recorded:
        shown, more = _capped(recorded, lim.items)
        body = "\n".join(f"- {c(line)}" for line in shown) + (f"\n\n{_left_out(more, 'input(s)', ctx)}" if more else "")
        out += [md.details("Recorded by FlashInfer", body), ""]
    if result.notes:
        shown, more = _capped(result.notes, lim.items)
        body = "\n".join(f"- {c(n)}" for n in shown) + (f"\n\n{_left_out(more, 'note(s)', ctx)}" if more else "")
        out += [md.details("Notes", body), ""]
    out.append(
        f"<sub>Generated by tiletune {__version__}{' on ' + md.cell(ctx.generated_at) if ctx.generated_at else ''}. "
        "Values marked \\* are model estimates, not measurements; efficiency is against the dense tensor peak.</sub>"
    )
    return "\n".join(out) + "\n"


def clip_text(text: str, limit: Optional[int]) -> str:
    """A table value cut to `limit` characters (md.table escapes it)."""
    return md.clip(" ".join(md.redacted(text).split()), limit)


def _failure_summary_row(f: Failure, labels: Optional[dict[str, str]] = None) -> list[str]:
    tile = view.failure_tile(f)
    reason = f.reason.summary + (" - passed on a later retry" if f.passed_later else "")
    where = f" ({labels[f.group]})" if labels and f.group is not None and f.group in labels else ""  # several servers: name the group
    return [f"{f.arch or '?'} {f.op}{where}: {tile}", view.tactic_cell(f.tactic), str(f.count), reason]


def _failure_details(failures: Iterable[Failure], limit: Optional[int] = None, labels: Optional[dict[str, str]] = None) -> str:
    c = lambda text: md.cell(text, limit)  # noqa: E731
    parts = []
    for f in failures:
        tile = f.config.label() if f.config is not None else "(tile unknown)"
        where = f" ({labels[f.group]})" if labels and f.group is not None and f.group in labels else ""
        head = f"{f.arch or '?'} {f.op}{where} {f.runner} tactic {view.tactic_cell(f.tactic)}"
        parts.append(f"**{c(head)}** - {c(tile)}, failed {f.count} time(s)")
        parts.append("")
        if f.decode_note:
            parts.append(f"- not decoded: {c(f.decode_note)}")
        a = f.analysis
        if a is not None and a.smem.shared_storage_bytes is not None:
            parts.append(
                f"- model ({c(a.gpu_name)}): shared storage {view.fmt_bytes(a.smem.shared_storage_bytes)} in {a.smem.stages or '?'} stage(s) "
                f"against a limit of {view.fmt_bytes(a.smem.limit_bytes)}: {c((a.smem.verdict or 'no verdict').replace('_', ' '))}"
            )
        parts.append(f"- reason ({c(f.reason.basis)}): {c(f.reason.summary)}")
        for text, n in f.errors[:5]:
            parts.append(f"- error x{n}: {md.code(text, min(limit or 400, 400))}")
        parts.append(f"- seen in: {c(', '.join(f.sources[:5]))}{' ...' if len(f.sources) > 5 else ''}")
        parts.append("")
    return "\n".join(parts).rstrip()


# --- JSON --------------------------------------------------------------------------------------


def report_dict(result: InspectResult, ctx: ReportContext) -> dict[str, Any]:
    """The report as one JSON object; `inspect` holds the full tiletune.inspect/1 object (whose notes
    say when a non-finite number was written as null: the report's own notes then say it too)."""
    from tiletune.formats.strict_json import NOTE as STRICT_NOTE

    inspected = inspect_dict(result)
    doc = _report_head(result, ctx)
    doc["inspect"] = inspected
    if STRICT_NOTE in inspected["notes"]:
        doc["notes"] = [STRICT_NOTE]
    return doc


def _report_head(result: InspectResult, ctx: ReportContext) -> dict[str, Any]:
    """The report's members before `inspect` (small: verdicts, environment, failures, commands, plots)."""
    return {
        "schema": SCHEMA,
        "tiletune_version": __version__,
        "generated_at": ctx.generated_at,
        "title": _title(result),
        "summary": _summary_line(result),
        "verdicts": [v.text for v in result.verdicts],
        "environment": [{"name": k, "value": v} for k, v in environment(result)],
        "failures": [
            {
                "arch": f.arch,
                "op": f.op,
                "runner": f.runner,
                "tactic": f.tactic if isinstance(f.tactic, (int, str)) or f.tactic is None else json.loads(json.dumps(list(f.tactic), default=str)),
                "tile": f.config.label() if f.config is not None else None,
                "count": f.count,
                "reason": f.reason.summary,
                "reason_kind": f.reason.kind,
                "model_disagrees": f.reason.model_disagrees,
                "model": analysis_dict(f.analysis),
            }
            for f in result.failures
        ],
        "commands": commands(result, ctx),
        "plots": [{"arch": a, "op": o, "file": rel} for a, o, rel in ctx.plots],
        "plot_note": ctx.plot_note,
        "tile_map_png": ctx.tile_map_png,
    }


def format_report_json(result: InspectResult, ctx: ReportContext, *, redact: Optional[Callable[[str], str]] = None) -> str:
    """The report as JSON; `redact` applied to every string of it (keys too) before it is encoded."""
    return "".join(iter_report_json(result, ctx, redact=redact))


# Entries redacted and encoded together (as plain values an entry takes ~35 KB: 250 of them ~9 MB)
_REPORT_CHUNK = 250
# A member's value stands in for what is written piece by piece around it (a string JSON escapes,
# so it cannot be confused with one from the inputs).
_HOLE = "\x00hole\x00"
_HOLE_TEXT = json.dumps(_HOLE)


def _around_hole(doc: dict[str, Any]) -> tuple[str, str, int]:
    """(text before the hole, text after it, non-finite numbers written as null) of `doc` as the
    report writes it: indent 1, no ASCII escapes, NaN / Infinity as null (formats.strict_json)."""
    from tiletune.formats.strict_json import finite_only

    text, n = finite_only(json.dumps(doc, indent=1, ensure_ascii=False))
    before, after = text.split(_HOLE_TEXT)
    return before, after, n


def _nested(text: str, depth: int) -> str:
    """A value dumped at indent 1 on its own, as it reads `depth` levels down (JSON text holds no raw
    newline but the encoder's own)."""
    return text.replace("\n", "\n" + " " * depth)


def iter_report_json(result: InspectResult, ctx: ReportContext, *,
                     redact: Optional[Callable[[str], str]] = None) -> Iterator[str]:
    """`format_report_json`'s text in pieces, written as they are made: the inspect document's
    entries a chunk at a time (redacted and encoded as they come, json_out.iter_inspect_values), so
    the report of a big cache never holds its whole JSON tree (~35 KB of Python objects an entry,
    several GB for a 200 MB cache). The text is what one `json.dumps(report_dict(...), indent=1,
    ensure_ascii=False)` with NaN / Infinity as null writes, but for the spelling of an entry's
    floats with an exponent (tests/formats/test_report_json_stream.py)."""
    from tiletune.formats.json_out import iter_inspect_values
    from tiletune.formats.redact import redact_json_strings
    from tiletune.formats.strict_json import NOTE

    def plain(v: Any) -> Any:
        return v if redact is None else _redacted_tree(v, redact)

    head = plain(_report_head(result, ctx))
    head_before, _, non_finite = _around_hole({**head, "inspect": _HOLE})
    yield head_before
    from tiletune import __version__ as version

    # the inspect document's own members before its entries (schema, version): the same as the rest's
    doc_before, _, _ = _around_hole(plain({"schema": "tiletune.inspect/1", "tiletune_version": version, "entries": _HOLE}))
    yield _nested(doc_before, 1)
    written = 0
    rest: dict[str, Any] = {}
    close = "\n  ]"  # (the entries' list closes at depth 2: report -> inspect -> entries)
    for kind, values in iter_inspect_values(result, _REPORT_CHUNK):
        if kind == "rest":
            rest = values
            continue
        # The entries come as JSON text: their strings are redacted in that text (each string as
        # `redact` would redact it as a value, formats.redact.redact_json_strings), and msgspec lays
        # them out as json.dumps(indent=1) does, 10x faster; the strict writer wrote no NaN or
        # Infinity into them (its notes, in `rest`, say when it replaced one). Floats with an
        # exponent are spelled as inspect -f json spells them (1e16, not 1e+16).
        if redact is not None:
            values = redact_json_strings(values, redact)
        if values == b"[]":
            continue
        text = _nested(msgspec.json.format(values, indent=1).decode(), 2)
        yield ("[" if not written else ",") + text[1:-len(close)]
        written += 1
    yield close if written else "[]"
    rest = plain(rest)
    before, after, n = _around_hole({**rest, "entries": _HOLE})
    if _nested(before, 1) != _nested(doc_before, 1):  # (the document's members before entries changed)
        raise AssertionError("inspect document: members before 'entries' are not schema and tiletune_version")
    non_finite += n
    yield _nested(after, 1)
    notes = [NOTE] if NOTE in (rest.get("notes") or ()) or non_finite else None
    _, head_after, _ = _around_hole({**head, "inspect": _HOLE, **({"notes": notes} if notes else {})})
    yield head_after + "\n"


def _redacted_tree(value: Any, redact: Callable[[str], str]) -> Any:
    """`value` (a JSON tree) with `redact` applied to every string, iteratively (no recursion limit)."""
    root: list = [value]
    stack: list = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        v = holder[key]
        if isinstance(v, str):
            holder[key] = redact(v)
        elif isinstance(v, dict):
            new = {redact(k) if isinstance(k, str) else k: x for k, x in v.items()}
            holder[key] = new
            stack.extend((new, k) for k in new)
        elif isinstance(v, (list, tuple)):
            items = list(v)
            holder[key] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]


def _tile_map_section(result: InspectResult, ctx: ReportContext, lim: Limits = FULL, parts: Optional[_Parts] = None) -> list[str]:
    """The winning tile per (op, N x K) and M bucket: a picture when drawn, the table folded (capped
    to `lim.items` rows in a ticket)."""
    from tiletune.formats import glance

    headers, rows = parts.tile_map if parts is not None else glance.tile_map(result.overview)
    if not rows:
        return []
    out = ["## Tile map", ""]
    if ctx.tile_map_png:
        out += [f"![tile map: winning tile per bucket (decoded)]({quote(ctx.tile_map_png)})", ""]
        if len(rows) > glance.MAP_PNG_ROWS or len(headers) - 1 > glance.MAP_PNG_COLUMNS:
            out += [f"_The picture shows the first {min(len(rows), glance.MAP_PNG_ROWS):,} of {len(rows):,} rows and "
                    f"{min(len(headers) - 1, glance.MAP_PNG_COLUMNS)} of {len(headers) - 1} M buckets; "
                    "the rest are left out of it (the table lists them)._", ""]
    shown, more = _capped(rows, lim.items)
    body = md.table(headers, [[clip_text(x, lim.text) for x in r] for r in shown]) + "\n\n_" + md.cell(glance.MAP_LEGEND) + "_"
    if more:
        body += "\n\n" + _left_out(more, "row(s) of the tile map", ctx)
    out += [md.details(f"Tile map as a table ({len(rows)} rows)", body), ""]
    return out


# --- files -------------------------------------------------------------------------------------
