"""Rendering of the at-a-glance view (`tiletune.analysis.overview.Overview`): the compact per-bucket table,
the tile map (text, Markdown, PNG), rank disagreements and `--m` answers. Pure: data in, text
(or PNG bytes) out; nothing is computed here beyond layout.

Units: measured times in µs (from the inputs); model columns carry a `*` and are modelled.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, NamedTuple, Optional, Sequence

from tiletune.analysis.overview import at_runtime_m, choice_key
from tiletune.analysis.results import BucketLine, Group, Overview, Pick, RankDisagreement
from tiletune.analysis.source_groups import group_names

CHOSEN_WIDTH = 48  # a bucket whose sources chose differently lists them up to this width (--all shows each)
COMPACT_HEADERS = ["M bucket", "chosen", "meas us", "t us*", "eff %*", "runner-up", "margin", "failed", "never tried"]
# a group whose model values are calibrated on its input's measured times says so in its header
CALIBRATED_HEADERS = [{"t us*": "t us cal*", "eff %*": "eff % cal*"}.get(h, h) for h in COMPACT_HEADERS]
NUMERIC = {"meas us", "t us*", "eff %*", "t us cal*", "eff % cal*", "margin", "failed", "never tried"}
CALIBRATED_LEGEND = ("t us cal* / eff % cal*: the model calibrated on this input's own measured times (Notes give the "
                     "fitted constants and the held-out error); --uncalibrated shows the table model instead")


def shown_model(ae: Any, uncalibrated: bool = False) -> Any:
    """The model result a view shows for an analysed entry: the calibrated one where a fit covers
    it (analysis/calibrated.py), unless `uncalibrated`; else the table model."""
    c = ae.calibrated
    return ae.analysis if c is None or uncalibrated else c


def _us(ms: Optional[float]) -> str:
    return "-" if ms is None else f"{ms * 1000:.1f}"


def m_cell(line: BucketLine) -> str:
    if line.fallback_only:
        return f"M {line.problem.m} (no bucket)"
    r = line.problem.m_range
    if r is None:
        return str(line.problem.m)
    lo, hi = r
    return str(lo) if lo == hi else f"{lo}-{hi}"


def chosen_cell(line: BucketLine) -> str:
    if line.fallback_only:
        return "fallback tactic -1"
    if len(line.chosen) > 1:
        labels = [p.label() for p in line.chosen]
        head = f"{len(line.chosen)} winners by source: "
        shown = ", ".join(labels)
        if len(head) + len(shown) <= CHOSEN_WIDTH:
            return head + shown
        # whole labels only (never a tile cut mid-word); the rank section below names every one
        head = f"{len(line.chosen)} winners: "
        kept = labels[:1]
        for lbl in labels[1:]:
            if len(head) + len(", ".join([*kept, lbl])) + len(" +9 more") > CHOSEN_WIDTH:
                break
            kept.append(lbl)
        return head + ", ".join(kept) + (f" +{len(labels) - len(kept)} more" if len(kept) < len(labels) else "")
    return line.chosen[0].label()


def margin_cell(line: BucketLine) -> str:
    if line.margin is None:
        return "-"
    text = f"{line.margin * 100:+.1f}%"  # negative: FlashInfer's tie_tolerance kept a slower tactic
    return text + " ~" if line.won_by_noise else text


def _model_cells(line: BucketLine, analyses: "ModelByChoice", where: tuple) -> tuple[str, str]:
    if len(line.chosen) != 1:
        return "-", "-"
    a = analyses.result_of(line, where)
    if a is None or a.time_expected_s is None:
        return "-", "-"
    eff = "-" if a.efficiency_compute is None else f"{a.efficiency_compute * 100:.0f}"
    return f"{a.time_expected_s * 1e6:.1f}", eff


class ModelByChoice:
    """(source group, arch, op, problem, config or tactic identity) -> the model's result (the
    last entry of the key with one): an overview group's rows look up their own server's (its GPU
    and L2 state), never another input's with the same shape and tile (`_where` gives a group's
    first three); `result_of` answers for a line of the result's overview.

    Why shaped so: a line's one winner's own result is, unless `overridden` (a later entry of its
    key has one), the one its key finds; read so, a big cache's 50,000 lines are not looked up by
    a key that hashes a problem and a config. Given the result's overview, only the entries of its
    crowded buckets can share a key (`Overview.crowded`), so only they are keyed.
    tests/formats/test_compact_fast.py holds the rows to the lookup by key over every entry."""

    def __init__(self, result: Any, ov: Optional[Overview] = None, uncalibrated: bool = False) -> None:
        self.uncalibrated = uncalibrated
        group_of = group_names(getattr(result, "source_groups", ()))
        crowded = None if ov is None else ov.crowded
        by_key: dict[Any, Any] = {}  # key -> its last entry with a result
        keyed = []
        for ae in (result.entries if crowded is None else crowded):
            if ae.analysis is None or ae.entry.problem is None:
                continue
            rec = ae.entry.record
            by_key[(group_of.get(rec.source), rec.env.arch, rec.op, ae.entry.problem,
                    choice_key(ae.entry.config, rec.tactic))] = ae
            keyed.append(id(ae))
        self.by_key = by_key
        last = {id(ae) for ae in by_key.values()}
        self.overridden = {i for i in keyed if i not in last}  # ids of entries whose key a later entry holds

    def result_of(self, line: BucketLine, where: tuple) -> Any:
        """The result of the last entry with a result of the key of `line`'s one winner (`where`:
        its group's `_where`), or None; `line` is one of the overview's lines."""
        w = line.winner_entry
        if w is not None and w.analysis is not None and id(w) not in self.overridden:
            return shown_model(w, self.uncalibrated)
        pick = line.chosen[0]
        ae = self.by_key.get((*where, line.problem, choice_key(pick.config, pick.tactic)))
        return None if ae is None else shown_model(ae, self.uncalibrated)

    def calibrated(self, group: Group) -> bool:
        """Whether a group's rows show calibrated model values (then its header says so)."""
        if self.uncalibrated:
            return False
        where = _where(group)
        for line in group.lines:
            if len(line.chosen) != 1:
                continue
            w = line.winner_entry
            if w is None or id(w) in self.overridden:
                pick = line.chosen[0]
                w = self.by_key.get((*where, line.problem, choice_key(pick.config, pick.tactic)))
            if w is not None and w.calibrated is not None:
                return True
        return False


def analyses_by_choice(result: Any, ov: Optional[Overview] = None, uncalibrated: bool = False) -> ModelByChoice:
    """The model's result of each chosen (group, arch, op, problem, choice): `ModelByChoice`
    (`ov`, the result's overview, when the caller has it); calibrated where a fit covers it,
    unless `uncalibrated`."""
    return ModelByChoice(result, ov, uncalibrated)


def _where(group: Group) -> tuple:
    """A group's part of the `ModelByChoice` key."""
    return (group.source_group, group.arch, group.op)


USUAL_TAIL = ("-", "-", "-", "?")  # a usual line's runner-up, margin, failed and never-tried cells


def compact_rows(group: Group, analyses: ModelByChoice, labels: Optional[dict[int, str]] = None,
                 m_texts: Optional[dict[Any, str]] = None) -> list[list[str]]:
    """One row of cells per bucket line: `usual_cells` and `USUAL_TAIL` when every line is usual,
    else each line's cells from the cell functions (`_plain_row`)."""
    cells = usual_cells(group, analyses, labels, m_texts)
    if cells is not None:
        return [[*c, *USUAL_TAIL] for c in cells]
    labels = {} if labels is None else labels
    where = _where(group)
    return [_plain_row(line, analyses, where, labels) for line in group.lines]


def usual_cells(group: Group, analyses: ModelByChoice, labels: Optional[dict[int, str]] = None,
                m_texts: Optional[dict[Any, str]] = None) -> Optional[list[tuple[str, str, str, str, str]]]:
    """The (M bucket, chosen, meas us, t us*, eff %*) cells of each line when every line of the
    group is usual (one winner, read from its own entry; no runner-up, nothing failed, attempts
    unknown: the rest of its row is `USUAL_TAIL`), else None.

    Why: a big cache's 50,000 lines are almost all usual; their cells are made here without a
    call per cell, and the table lays them out with their constant tail in its format.
    `labels` (id(Pick) -> label) and `m_texts` (M range -> cell) may be shared by the groups of one
    overview while it is alive (its Picks are shared between lines). tests/formats/test_table_fast.py
    holds this to `_plain_row`."""
    labels = {} if labels is None else labels
    m_texts = {} if m_texts is None else m_texts
    where = _where(group)
    overridden = analyses.overridden
    lines = group.lines
    if not group.one_winner_lines and not all(map(_is_usual, lines)):  # (the overview's flag says so at once)
        return None
    out = []
    uncalibrated = analyses.uncalibrated
    for line in lines:
        w = line.winner_entry
        a = w.analysis if w.calibrated is None or uncalibrated else w.calibrated
        if a is None or (overridden and id(w) in overridden):  # (see ModelByChoice)
            t, eff = _model_cells(line, analyses, where)
        elif a.time_expected_s is None:
            t = eff = "-"
        else:
            t = f"{a.time_expected_s * 1e6:.1f}"
            eff = "-" if a.efficiency_compute is None else f"{a.efficiency_compute * 100:.0f}"
        r = line.problem.m_range
        m = m_texts.get(r) if r is not None else None
        if m is None:
            m = m_cell(line)
            if r is not None:
                m_texts[r] = m
        pick = line.chosen[0]
        label = labels.get(id(pick))
        if label is None:
            label = labels[id(pick)] = pick.label()
        ms = line.chosen_time_ms
        out.append((m, label, "-" if ms is None else f"{ms * 1000:.1f}", t, eff))
    return out


def _is_usual(line: BucketLine) -> bool:
    """One winner read from its own entry, no runner-up, nothing failed, attempts unknown."""
    return not (line.winner_entry is None or line.runner_up is not None or line.margin is not None or line.failed
                or line.never_tried is not None or line.fallback_only)


def _plain_row(line: BucketLine, analyses: ModelByChoice, where: tuple, labels: dict[int, str]) -> list[str]:
    """A line's cells, each from its cell function."""
    t, eff = _model_cells(line, analyses, where)
    runner_up = line.runner_up
    return [
        m_cell(line),
        chosen_cell(line) if len(line.chosen) != 1 or line.fallback_only else _label(line.chosen[0], labels),
        _us(line.chosen_time_ms),
        t,
        eff,
        _label(runner_up, labels) if runner_up is not None else "-",
        margin_cell(line),
        str(line.failed) if line.failed else "-",
        "?" if line.never_tried is None else str(line.never_tried),
    ]


def _label(pick: Pick, labels: dict[int, str]) -> str:
    """pick.label(), once per Pick object."""
    text = labels.get(id(pick))
    if text is None:
        text = labels[id(pick)] = pick.label()
    return text


def group_title(g: Group, *, runner: bool = True) -> str:
    v = f"flashinfer {g.flashinfer_version}" if g.flashinfer_version else "flashinfer version unknown"
    who = f"{g.op} - {g.runner}" if runner else g.op
    where = f", {g.label}" if g.label else ""  # several servers' inputs: name the group
    return f"{g.arch or 'unknown arch'} {who}, N {g.n}, K {g.k} ({v}{where})"


def uncovered_line(g: Group) -> Optional[str]:
    if not g.uncovered:
        return None
    parts = [f"{lo}-{hi}" if hi is not None else f"{lo} and above" for lo, hi in g.uncovered]
    return ("runtime M no tuned bucket covers (FlashInfer falls back to its default tactic there): "
            + ", ".join(parts))


COMPACT_LEGEND = (
    "chosen: the winning tile (decoded from the release's catalog); meas us: its time measured by the inputs "
    "(a DEBUG log's timings, or recorded by FlashInfer's autotuner in a 0.7.4 cache entry); "
    "t us* / eff %*: modelled time and efficiency against the dense peak; runner-up / margin: the next fastest "
    "measured tactic and how much slower it was (FlashInfer record: the cache keeps the runner-up's time, not "
    "its tactic; a negative margin: FlashInfer's tie_tolerance kept an earlier, slower tactic); ~ won by noise "
    "(margin within the samples' spread, negative, or within 5 % when the inputs hold no samples); failed / never "
    "tried: tactics of this bucket (? = no profiling log read, so attempts are unknown). --all lists every tactic."
)


def rank_line(d: RankDisagreement) -> str:
    choices = "; ".join(f"{rank}: {_pick_text(p)}" for rank, p in d.choices)
    r = d.problem.m_range
    m = (f"M {r[0]}-{r[1]}" if r and r[0] != r[1] else f"M {d.problem.m}")
    if d.beyond_noise is None:
        verdict = "times unknown, so whether it matters is unknown"
    else:
        verdict = ("the times differ beyond measurement noise" if d.beyond_noise
                   else "the times differ within measurement noise") + f" ({d.basis})"
    return (f"ranks disagree: {d.arch or 'unknown arch'} {d.op} {m}, N {d.problem.n}, K {d.problem.k}: "
            f"{choices}; {verdict}")


def _pick_text(p: Pick) -> str:
    return p.label() + (f" {p.time_ms * 1000:.1f} us measured" if p.time_ms is not None else "")


def runtime_m_lines(ov: Overview, ms: Sequence[int]) -> list[str]:
    """'which tile runs at my runtime M', per group and M."""
    out = []
    for g in ov.groups:
        for m in ms:
            b, line = at_runtime_m(g, m)
            head = f"M {m} -> bucket {b}: {g.arch or '?'} {g.op} N {g.n} K {g.k}{f' ({g.label})' if g.label else ''}: "
            if line is None or line.fallback_only:
                out.append(head + "no tuned bucket: FlashInfer runs its fallback tactic (-1)")
            else:
                out.append(head + chosen_cell(line))
    return out


# --- tile map ----------------------------------------------------------------------------------


def _map_cell(line: Optional[BucketLine]) -> str:
    if line is None:
        return "."
    if line.fallback_only:
        return "fallback"
    text = line.chosen[0].short() if len(line.chosen) == 1 else "disagree"
    marks = ""
    if line.failed:
        marks += f" !{line.failed}"
    if line.won_by_noise:
        marks += " ~"
    return text + marks


def tile_map(ov: Overview) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): rows op x (N, K), columns the M buckets seen (runtime-M fallbacks apart)."""
    buckets = _map_buckets(ov)
    return _map_headers(buckets), list(_map_rows(ov, buckets))


def _map_buckets(ov: Overview) -> list[int]:
    return sorted({line.problem.m for g in ov.groups for line in g.lines if not line.fallback_only})


def _map_headers(buckets: Sequence[int]) -> list[str]:
    return ["op (N x K)"] + [str(b) for b in buckets]


def _map_rows(ov: Overview, buckets: Sequence[int]) -> Iterator[list[str]]:
    for g in ov.groups:
        by_m = {line.problem.m: line for line in g.lines if not line.fallback_only}
        where = f" ({g.label})" if g.label else ""  # several servers' inputs: one row per group
        row = [f"{g.arch or '?'} {g.op} {g.n}x{g.k}{where}"] + [_map_cell(by_m.get(b)) for b in buckets]
        fallbacks = [line.problem.m for line in g.lines if line.fallback_only]
        if fallbacks:
            row[0] += " (fallback at M " + ", ".join(map(str, fallbacks)) + ")"
        yield row


def tile_map_width(ov: Overview, width: int) -> Optional[int]:
    """The tile map text's widest line, or None when it exceeds `width` or there is no map. That
    line is the rule under the headers (the column widths plus gaps; a cell that breaks lines only
    makes shorter ones).

    Why shaped so: every column's width (and the gaps, one per bucket column) only grows as rows
    and buckets are met, so the width of the groups read so far is a lower bound of the map's: a
    big cache's wide map stops after its first groups instead of collecting every line's bucket
    and laying out all its cells. tests/formats/test_table_fast.py holds it to the map text."""
    label = len(_map_headers(())[0])  # the first column: the headers' and each row's label
    columns: dict[int, int] = {}  # bucket -> its column's width so far (its header's, then its cells')
    for g in ov.groups:
        by_m = {line.problem.m: line for line in g.lines if not line.fallback_only}  # (as `_map_rows`)
        where = f" ({g.label})" if g.label else ""
        head = f"{g.arch or '?'} {g.op} {g.n}x{g.k}{where}"
        fallbacks = [line.problem.m for line in g.lines if line.fallback_only]
        if fallbacks:
            head += " (fallback at M " + ", ".join(map(str, fallbacks)) + ")"
        label = max(label, len(head))
        for m, line in by_m.items():
            columns[m] = max(columns.get(m, len(str(m))), len(_map_cell(line)))  # (a bucket's "." is never wider than its header)
        if label + sum(columns.values()) + 2 * len(columns) > width:
            return None
    return label + sum(columns.values()) + 2 * len(columns) if ov.groups else None


MAP_LEGEND = ("columns: M buckets (the bucket's upper M); cells: the winning tile (tac N: a tactic with no tile, e.g. "
              "cuBLAS); disagree: sources (ranks) chose differently; !N: N tactics failed in that bucket; "
              "~ won by noise; . no bucket held; fallback: a runtime M with no bucket ran tactic -1")


def tile_map_text(ov: Overview, colour: bool = False) -> str:
    headers, rows = tile_map(ov)
    if not rows:
        return ""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    for r in rows:
        cells = []
        for i, (c, w) in enumerate(zip(r, widths)):
            text = c.ljust(w)
            if colour and i:
                if "!" in c or c == "fallback":
                    text = f"\x1b[31m{text}\x1b[0m"
                elif c not in (".", "disagree"):
                    text = f"\x1b[32m{text}\x1b[0m"
            cells.append(text)
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


# The picture is bounded whatever the inputs hold (10,000 rows drew a 720 x 660,216 px PNG in 134 s
# and 3.7 GB): at most this many rows and bucket columns, the title saying what was left out (the
# report's table below the picture lists every row); labels cut to a readable length.
MAP_PNG_ROWS = 40
MAP_PNG_COLUMNS = 24
_MAP_PNG_LABEL = 70


def tile_map_png(ov: Overview, *, text: Callable[[str], str] = str) -> Optional[bytes]:
    """The tile map as a PNG (matplotlib, the `plot` extra); None when matplotlib is missing.
    One colour per winning tile; marks (!N failed, ~ won by noise) printed under the tile. Every
    label and title is passed through `text` (the report's redaction) and drawn as plain text (no
    math parsing: a `$` in a folder name is a dollar sign). At most MAP_PNG_ROWS rows and
    MAP_PNG_COLUMNS buckets; the title says how many were left out."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    import io

    headers, rows = tile_map(ov)
    if not rows:
        return None
    all_buckets = [int(h) for h in headers[1:]]
    buckets = all_buckets[:MAP_PNG_COLUMNS]
    shown = rows[:MAP_PNG_ROWS]
    cells: list[list[tuple[str, str]]] = []  # (tile, marks) per row and bucket
    for g in ov.groups[:len(shown)]:
        by_m = {line.problem.m: line for line in g.lines if not line.fallback_only}
        row = []
        for b in buckets:
            line = by_m.get(b)
            if line is None:
                row.append((".", ""))
                continue
            tile = text(line.chosen[0].short()) if len(line.chosen) == 1 else "ranks/sources disagree"
            marks = (f"!{line.failed} failed " if line.failed else "") + ("~ noise" if line.won_by_noise else "")
            row.append((tile, marks.strip()))
        cells.append(row)
    tiles = sorted({t for r in cells for t, _ in r if t != "."})
    palette = plt.get_cmap("tab20")
    colour_of = {t: palette(i % 20) for i, t in enumerate(tiles)}
    left_out = [f"{len(rows) - len(shown):,} more rows"] if len(rows) > len(shown) else []
    left_out += [f"{len(all_buckets) - len(buckets)} more M buckets"] if len(all_buckets) > len(buckets) else []
    title = "Winning tile per bucket (tiles decoded from the release's catalog; tac N: a tactic with no tile)"
    if left_out:
        title += f"\nfirst {len(shown)} rows and {len(buckets)} buckets shown; {' and '.join(left_out)} in the report's table"
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        fig_w = max(6.0, 1.4 * len(buckets) + 3.5)
        fig, ax = plt.subplots(figsize=(fig_w, 0.55 * len(shown) + 1.8))
        try:
            for y, r in enumerate(cells):
                for x, (tile, marks) in enumerate(r):
                    face = (0.95, 0.95, 0.95, 1) if tile == "." else colour_of[tile]
                    ax.add_patch(plt.Rectangle((x, y), 1, 1, facecolor=face, edgecolor="white"))
                    if tile != ".":
                        ax.text(x + 0.5, y + 0.5, _clipped(tile, 40).replace(" ", "\n", 1) + (f"\n{marks}" if marks else ""),
                                ha="center", va="center", fontsize=6)
            ax.set_xlim(0, len(buckets))
            ax.set_ylim(0, len(shown))
            ax.invert_yaxis()
            ax.set_xticks([i + 0.5 for i in range(len(buckets))], [str(b) for b in buckets], fontsize=7)
            ax.set_yticks([i + 0.5 for i in range(len(shown))], [_clipped(text(r[0]), _MAP_PNG_LABEL) for r in shown], fontsize=7)
            ax.set_xlabel("M bucket (upper M)", fontsize=8)
            fig.suptitle(title, fontsize=9)
            fig.tight_layout()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=120)
        finally:
            plt.close(fig)
    return buf.getvalue()


def _clipped(label: str, limit: int) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "\u2026"


# --- next steps for a failure --------------------------------------------------------------------


def _quote(path: str) -> str:
    import shlex

    return shlex.quote(path)


def history_text(history: Any) -> str:
    """'listed as tactic 4 in 0.6.8.post1-0.6.10.post1, as 6 in 0.6.11-0.7.0; absent from 0.7.1 on'."""
    runs: list[list[Any]] = []  # [first release, last release, tactic]
    for release, tactic in history.listed:
        if runs and runs[-1][2] == tactic:
            runs[-1][1] = release
        else:
            runs.append([release, release, tactic])
    if not runs:
        return "no catalogued release lists this tile"
    spans = ", ".join(f"as {t} in {a}" + (f"-{b}" if b != a else "") for a, b, t in runs)
    text = "listed " + spans
    last = history.listed[-1][0]
    from tiletune import catalogs

    later = [r for r in history.absent if catalogs.releases().index(r) > catalogs.releases().index(last)]
    if later:
        all_later = len(later) == len(catalogs.releases()) - catalogs.releases().index(later[0])
        text += f"; absent from {later[0]} on" if all_later else f"; absent in {', '.join(later)}"
    return text


class NextStep(NamedTuple):
    """One suggestion: its sentence, and the command it suggests (complete: every input and the
    flags that set what the inputs did not say; shell-quoted; shown whole, never wrapped)."""

    text: str
    command: Optional[str] = None


def next_steps(failures: Sequence[Any], history_of: Any, flags: Sequence[str] = (),
               gpu_named: Optional[dict] = None) -> list[NextStep]:
    """Per (arch, op, inputs): one retry-and-blocklist command for its failed tactics, then each
    failed tile across releases. `history_of(config, tactic, arch, op, runner)` gives a TileHistory;
    `flags` are the reading flags the command was given (--arch sm120, --flashinfer-version V),
    which a retry of the same inputs needs to read them the same way; `gpu_named` (arch -> the
    GPU the inputs name) names the blocklist file as FlashInfer does."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for f in failures:
        groups.setdefault((f.arch, f.op, f.sources), []).append(f)
    steps = []
    given = "".join(f" {_quote(x)}" for x in flags)
    for (arch, op, sources), fs in groups.items():
        # each tactic once (a tactic that failed in several ways is several failures)
        tactics = list(dict.fromkeys(str(f.tactic) for f in fs if isinstance(f.tactic, int) and not isinstance(f.tactic, bool)))
        head = f"next for {arch or '?'} {op}"
        if tactics and all(getattr(f, "autotuner", None) == "TensorRT-LLM" and f.config is None for f in fs):
            # no tile to build and no FlashInfer runner of that name (tuner/worker.RUNNERS): a retry could not start
            steps.append(NextStep(f"{head}: TensorRT-LLM's own autotuner timed tactic(s) {', '.join(tactics)} as failed and "
                                  "went on without them; `tiletune retry` drives FlashInfer's runners and decoded CUTLASS "
                                  "tiles, not TensorRT-LLM's runners, so it cannot re-run these (their errors are in the "
                                  "failure rows above)"))
        elif tactics:
            inputs = " ".join(_quote(s) for s in sources)
            name = blocklist_name((gpu_named or {}).get(arch))
            where = "" if name.endswith(".json") else " (in this folder, named tactics_<this GPU>.json as FlashInfer names it)"
            steps.append(NextStep(f"{head}: retry on this GPU, then write a FlashInfer blocklist of what still fails{where}:",
                                  f"tiletune retry {inputs}{given} --op {_quote(op)} --tactic {','.join(tactics)} "
                                  f"--blocklist {_quote(name)}"))
        tiles = []
        for f in fs:
            if f.config is None or not f.arch:
                continue
            tiles.append(f"{f.config.label()} (tactic {f.tactic}) {history_text(history_of(f.config, f.tactic, f.arch, f.op, f.runner))}")
        if tiles:
            steps.append(NextStep(f"{head}: across releases (decoded from each release's catalog): " + "; ".join(tiles)))
    return steps


def blocklist_name(gpu: Optional[str]) -> str:
    """FlashInfer's own name for a GPU's blocklist (core.vocabulary.blocklist_file_name); "." (a
    folder: retry names the file after the GPU it ran on) when the inputs name no GPU."""
    from tiletune.core.vocabulary import blocklist_file_name

    return blocklist_file_name(gpu) if gpu else "."
