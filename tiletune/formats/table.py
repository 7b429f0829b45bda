"""Terminal rendering of an InspectResult: verdicts, one table per arch/op section, failures,
never-tried tiles, unreadable inputs and a unit legend. Readable at 120 columns.

The only module that imports tabulate (lazily, so `tiletune --help` stays fast). Pure:
`format_inspect(result) -> str`.
"""

from __future__ import annotations

import textwrap
from itertools import chain
from typing import Any, Optional, Sequence

from tiletune.analysis.overview import tile_history
from tiletune.analysis.results import InspectResult
from tiletune.formats import glance, view

WIDTH = 120  # terminal width the report is laid out for


def _wrap(text: str, indent: str = "  ", width: int = WIDTH) -> list[str]:
    """Prose lines wrapped to `width` with a hanging indent (tables are sized separately)."""
    if len(indent) + len(text) <= width and text and not text[-1].isspace() and _fits_as_is(text):
        # what textwrap gives for a line that already fits (a big cache's report wraps thousands)
        return [indent + text]
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ", break_on_hyphens=False) or [indent]


def _fits_as_is(text: str) -> bool:
    """No tab or line break, which textwrap would turn into spaces (tests/formats/test_table_fast.py)."""
    return "\t" not in text and "\n" not in text and "\r" not in text and "\x0b" not in text and "\x0c" not in text


# Failure table column caps (characters) at 120 columns; tabulate wraps longer cells (at spaces)
# so rows fit. Narrower, `_fit_failures` drops the error column (the reason repeats it) and shrinks
# the wide ones, never below what holds a tile label or a word.
_FAILURE_WIDTHS = [26, 8, 20, 6, 22, 34]
_FAILURE_MIN = [14, 6, 12, 5, 12, 16]


def _fit_failures(rows: list[list[str]], width: int) -> tuple[list[str], list[int], list[list[str]], list[str]]:
    """(headers, caps, rows, dropped column names) of the failure table for `width` columns."""
    headers = list(view.FAILURE_HEADERS)
    # each column as wide as its widest cell, up to its cap (tabulate wraps a longer one at spaces)
    caps = [max(len(h), min(cap, max((len(r[i]) for r in rows), default=0)))
            for i, (h, cap) in enumerate(zip(headers, _FAILURE_WIDTHS))]
    mins = [min(m, c) for m, c in zip(_FAILURE_MIN, caps)]
    dropped: list[str] = []

    def total() -> int:
        return sum(caps) + 2 * (len(caps) - 1)

    if total() > width:
        i = headers.index("error")
        dropped.append("the error column")
        for seq in (headers, caps, mins):
            seq.pop(i)
        rows = [r[:i] + r[i + 1:] for r in rows]
    while total() > width and any(c > m for c, m in zip(caps, mins)):
        j = max(range(len(caps)), key=lambda k: caps[k] - mins[k])  # the column with the most room to give
        caps[j] -= 1
    return headers, caps, rows, dropped


_NUMERIC = {"N", "K", "count", "smem KiB*", "FLOP/B*", "t us*", "eff %*", "meas us", "t us cal*", "eff % cal*", "margin",
            "failed", "never tried"}


def _tab(rows, headers, maxcolwidths=None) -> str:
    aligns = ["right" if h in _NUMERIC else "left" for h in headers]
    if maxcolwidths is None:
        fast = _simple_table(rows, headers, aligns)
        if fast is not None:
            return fast
    from tabulate import tabulate

    # Given headers, tabulate widens every column to its header plus MIN_PADDING (2), a module
    # global every tabulate user shares; the two-space column gap is enough. So the header goes in
    # as the first row (rows are not padded) and its rule is moved under it: without headers,
    # "simple" draws that rule above and below the rows. Caps never wrap a header (none is longer).
    caps = None if maxcolwidths is None else [max(w, len(h)) for w, h in zip(maxcolwidths, headers)]
    lines = tabulate([list(headers), *rows], tablefmt="simple", disable_numparse=True, maxcolwidths=caps,
                     colalign=aligns).split("\n")
    return "\n".join([lines[1], lines[0], *lines[2:-1]])


def _simple_table(rows, headers, aligns) -> "str | None":
    """The text `_tab`'s tabulate path writes (tabulate's "simple" table without header padding),
    for one-line cells of printable ASCII (and the one-column ellipsis that cut cells end with);
    None for anything else (tabulate then handles it). Why: tabulate inspects every cell's type (about 50 us per row), which made a
    50,000-entry table take seconds. tests/formats/test_table_fast.py holds it to tabulate's text.
    """
    headers = list(headers)
    ncols = len(headers)
    clean = []
    try:
        for row in rows:
            if len(row) != ncols:
                return None
            joined = "\x00".join(row)  # (a TypeError for a non-str cell)
            plain = joined.replace("\u2026", ".")  # the ellipsis cut cells end with: one column wide
            if not (plain.isascii() and plain.replace("\x00", "").isprintable()):
                return None  # tabs, newlines, escapes, wide characters: tabulate's rules apply
            if " \x00" in joined or "\x00 " in joined or joined[:1] == " " or joined[-1:] == " ":
                row = [c.strip() for c in row]  # tabulate strips cells (PRESERVE_WHITESPACE is off)
            clean.append(row)
    except TypeError:  # a non-str cell: tabulate formats it its own way
        return None
    if not ("".join(headers).isascii() and "".join(headers).isprintable()):
        return None
    cols = list(zip(*clean)) if clean else [() for _ in headers]
    widths = [max(len(h), max(map(len, c), default=0)) for h, c in zip(headers, cols)]
    fmt = "  ".join(("{:>%d}" if a == "right" else "{:<%d}") % w for a, w in zip(aligns, widths))
    lines = [fmt.format(*headers).rstrip(), "  ".join("-" * w for w in widths).rstrip()]
    lines += [fmt.format(*row).rstrip() for row in clean]
    return "\n".join(lines)


def _summary(result: InspectResult) -> str:
    counts = view.status_counts(result)
    parts = ", ".join(f"{n:,} {s}" for s, n in sorted(counts.items(), key=lambda x: -x[1]))
    n_in = len(result.sources)
    return f"tiletune inspect: {n_in} input{'s' if n_in != 1 else ''}, {len(result.entries):,} entries" + (
        f" ({parts})" if parts else ""
    )


def nothing_found(result: InspectResult) -> str:
    """The message when discovery found no inputs (not an error: exit 0)."""
    lines = ["tiletune inspect: no autotune caches, logs, blocklists or JIT workspaces found.", "Searched:"]
    lines += [f"  {s}" for s in result.searched] or ["  (nothing)"]
    lines.append("Pass files or directories as arguments: tiletune inspect PATH...")
    return "\n".join(lines) + "\n"


# the least needed first (a group's header names its model columns calibrated or not)
_COMPACT_DROPS = ("never tried", "eff %*", "eff % cal*", "t us*", "t us cal*", "margin", "runner-up")


def _fit_compact(rows: list[list[str]], width: int, headers_in: Optional[Sequence[str]] = None,
                 dropped: Optional[dict[str, None]] = None) -> tuple[list[str], list[list[str]]]:
    """The compact table's columns, dropping the least needed ones until a row fits `width` (their
    names added to `dropped`, for the note that says so)."""
    headers = list(headers_in or glance.COMPACT_HEADERS)
    for drop in _COMPACT_DROPS:
        if drop not in headers:
            continue
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        if sum(widths) + 2 * (len(widths) - 1) <= width:
            break
        i = headers.index(drop)
        headers.pop(i)
        rows = [r[:i] + r[i + 1:] for r in rows]
        if dropped is not None:
            dropped[drop] = None
    return headers, rows


def _compact_table(rows: list[list[str]], width: int, headers_in: Optional[Sequence[str]] = None,
                   dropped: Optional[dict[str, None]] = None) -> str:
    """`_fit_compact` then `_simple_table` (else `_tab`) of one group's compact rows, with the
    cells checked once per table and each column's width worked out once (a big cache has 3,500
    groups). Rows `_plain_cells` does not vouch for take that plain path;
    tests/formats/test_table_fast.py holds the two to the same text. `headers_in`: the group's
    headers when they differ from COMPACT_HEADERS (calibrated model columns)."""
    headers = list(headers_in or glance.COMPACT_HEADERS)
    blob = _plain_cells(rows, len(headers))
    widths = [max(len(h), max(map(len, col))) for h, col in zip(headers, zip(*rows))] if rows else []
    if blob is None or (rows and _too_wide_after_drops(headers, widths, width)):
        return compact_table_plain(rows, width, headers, dropped)
    keep = list(range(len(headers)))
    for drop in _COMPACT_DROPS:  # as _fit_compact: the least needed columns go until a row fits
        if drop not in headers:
            continue
        if sum(widths[i] for i in keep) + 2 * (len(keep) - 1) <= width:
            break
        keep.remove(headers.index(drop))
        if dropped is not None:
            dropped[drop] = None
    rule = "  ".join("-" * widths[i] for i in keep)
    if len(keep) == len(headers) and headers[-1] in glance.NUMERIC and "\x00\x00" not in blob and blob[-1:] != "\x00":
        # every column kept and the last one right-aligned with no empty cell: no line ends in a
        # space, so the whole table is one %-format of its cells (rstrip would change nothing)
        fmt = "  ".join(("%%%ds" if h in glance.NUMERIC else "%%-%ds") % w for h, w in zip(headers, widths))
        return "\n".join([fmt % tuple(headers), rule, "\n".join([fmt] * len(rows)) % tuple(chain.from_iterable(rows))])
    fmt = "  ".join(("{%d:>%d}" if headers[i] in glance.NUMERIC else "{%d:<%d}") % (i, widths[i]) for i in keep)
    return "\n".join([fmt.format(*headers).rstrip(), rule, *(fmt.format(*row).rstrip() for row in rows)])


# --all's columns the least needed first (the model's derived numbers, then the model's time)
_ALL_DROPS = ("FLOP/B*", "bound*", "eff %*", "eff % cal*", "smem KiB*", "rank", "t us*", "t us cal*")


def _fit_columns(headers: list[str], rows: list[list[str]], width: int,
                 drops: Sequence[str]) -> tuple[list[str], list[list[str]], list[str]]:
    """Columns left out, least needed first (`drops`), until the widest row fits `width`:
    (headers, rows, the names left out)."""
    gone: list[str] = []
    for drop in drops:
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
        if sum(widths) + 2 * (len(widths) - 1) <= width:
            break
        if drop not in headers:
            continue
        i = headers.index(drop)
        headers = headers[:i] + headers[i + 1:]
        rows = [r[:i] + r[i + 1:] for r in rows]
        gone.append(drop)
    return headers, rows, gone


def _wrap_caps(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int,
               wrappable: Sequence[str]) -> Optional[list[int]]:
    """Column caps that make the table fit `width` by wrapping the `wrappable` columns (at spaces),
    or None when it fits as it is (or cannot: then it is left as it is)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    over = sum(widths) + 2 * (len(widths) - 1) - width
    if over <= 0:
        return None
    caps = list(widths)
    for name in wrappable:
        if name not in headers or over <= 0:
            continue
        i = headers.index(name)
        give = min(over, caps[i] - max(12, len(name)))
        if give > 0:
            caps[i] -= give
            over -= give
    return caps if caps != widths else None


def compact_table_plain(rows: list[list[str]], width: int, headers_in: Optional[Sequence[str]] = None,
                        dropped: Optional[dict[str, None]] = None) -> str:
    """The compact table the plain way: columns dropped to fit (`_fit_compact`), the chosen cells
    wrapped at spaces when even that is too wide, then the simple table (else tabulate)."""
    kept, cut = _fit_compact(rows, width, headers_in, dropped)
    if cut and "chosen" in kept and len(cut[0]) == len(kept):
        kept_widths = [max(len(h), *(len(str(r[i])) for r in cut)) for i, h in enumerate(kept)]
        if sum(kept_widths) + 2 * (len(kept) - 1) > width:
            # still too wide with every optional column gone: the chosen cells wrap (at spaces) in
            # the room left, rather than run past the edge
            i = kept.index("chosen")
            room = max(16, width - (sum(kept_widths) - kept_widths[i]) - 2 * (len(kept) - 1))
            return _tab(cut, kept, [room if j == i else w for j, w in enumerate(kept_widths)])
    return _simple_table(cut, kept, ["right" if h in glance.NUMERIC else "left" for h in kept]) or _tab(cut, kept)


def _too_wide_after_drops(headers: Sequence[str], widths: Sequence[int], width: int) -> bool:
    """Whether the compact table overflows `width` even with every droppable column left out."""
    keep = [w for h, w in zip(headers, widths) if h not in _COMPACT_DROPS]
    return sum(keep) + 2 * (len(keep) - 1) > width


def _usual_table(cells: Sequence[tuple[str, ...]], width: int, layouts: dict[tuple[int, ...], tuple[str, str]]) -> Optional[str]:
    """`_compact_table` of the rows `cells` + `glance.USUAL_TAIL` make (`glance.usual_cells`), for
    one-line printable ASCII cells without edge spaces whose rows fit `width`; else None.

    Why: most groups of a big cache hold only usual lines: the constant tail goes into the format
    once, and the head, rule and format are made once per set of column widths (`layouts`, shared
    by the groups of one table) instead of once per group. tests/formats/test_table_fast.py holds
    it to `_compact_table`."""
    blob = "\x00".join(chain.from_iterable(cells))
    if (not blob.isascii() or not blob.replace("\x00", "").isprintable() or "\x00\x00" in blob
            or " \x00" in blob or "\x00 " in blob or blob[:1] == " " or blob[-1:] == " "):
        return None
    widths = tuple([max(len(h), max(map(len, col))) for h, col in zip(glance.COMPACT_HEADERS, zip(*cells))])
    layout = layouts.get(widths)
    if layout is None:
        headers = glance.COMPACT_HEADERS
        tail = [len(h) for h in headers[len(widths):]]  # the tail's cells are narrower than their headers
        every = [*widths, *tail]
        if sum(every) + 2 * (len(every) - 1) > width:
            return None  # columns would be dropped: `_compact_table` does that
        parts = [("%%%ds" if h in glance.NUMERIC else "%%-%ds") % w for h, w in zip(headers, every)]
        tail_text = "  ".join(parts[len(widths):]) % glance.USUAL_TAIL
        head = "  ".join(parts) % tuple(headers) + "\n" + "  ".join("-" * w for w in every)
        layout = layouts[widths] = (head, "  ".join(parts[:len(widths)]) + "  " + tail_text.replace("%", "%%"))
    head, fmt = layout
    return head + "\n" + "\n".join([fmt] * len(cells)) % tuple(chain.from_iterable(cells))


def _plain_cells(rows: list[list[str]], ncols: int) -> Optional[str]:
    """The cells joined by NULs when the rows hold `ncols` one-line printable ASCII cells each (the
    ellipsis allowed) with no edge spaces, the cells `_simple_table` writes as they are (it strips
    edge spaces; tabulate takes the rest); else None."""
    if not rows or any(len(r) != ncols for r in rows):
        return None
    try:
        blob = "\x00".join(map("\x00".join, rows))
    except TypeError:  # a non-str cell
        return None
    plain = blob.replace("\u2026", ".").replace("\x00", "")
    if (plain.isascii() and plain.isprintable()
            and not (" \x00" in blob or "\x00 " in blob or blob[:1] == " " or blob[-1:] == " ")):
        return blob
    return None


def _compact_sections(result: InspectResult, runtime_m: Sequence[int], width: int, colour: bool = False,
                      uncalibrated: bool = False) -> list[str]:
    """Per (arch, op, runner, N, K): one line per M bucket (the default view; --all lists tactics)."""
    ov = result.overview
    analyses = glance.analyses_by_choice(result, ov, uncalibrated)
    any_calibrated = False
    dropped: dict[str, None] = {}  # columns left out to fit `width`, in the order they went
    labels: dict[int, str] = {}  # id(Pick) -> its label, while `ov` holds the Picks (they are shared)
    m_texts: dict[Any, str] = {}  # M range -> its cell (groups of one cache share their buckets)
    wraps: dict[Any, list[str]] = {}  # a group's uncovered M ranges -> their line wrapped (groups of a cache share a few)
    out: list[str] = []
    layouts: dict[tuple[int, ...], tuple[str, str]] = {}  # column widths -> a usual table's head and row format
    for g in ov.groups:
        title = f"== {glance.group_title(g)} =="
        if len(title) > width:
            title = f"== {glance.group_title(g, runner=False)} =="
        out += [title] if len(title) <= width else _wrap(title, indent="", width=width)
        if result.calibrations and analyses.calibrated(g):  # (few groups: only inputs with measured times)
            any_calibrated = True
            out.append(_compact_table(glance.compact_rows(g, analyses, labels, m_texts), width, glance.CALIBRATED_HEADERS,
                                      dropped))
        else:
            cells = glance.usual_cells(g, analyses, labels, m_texts)
            text = _usual_table(cells, width, layouts) if cells else None
            out.append(text if text is not None else _compact_table(glance.compact_rows(g, analyses, labels, m_texts), width,
                                                                   dropped=dropped))
        if g.uncovered:  # (its line is made from them alone: once per distinct ranges, which groups share)
            wrapped = wraps.get(g.uncovered)
            if wrapped is None:
                wrapped = wraps[g.uncovered] = _wrap(glance.uncovered_line(g) or "", indent="", width=width)
            out += wrapped
        out.append("")
    if dropped:  # said, not silently left out
        out += _wrap(f"(columns left out to fit {width} columns: {', '.join(dropped)}; widen the terminal, set "
                     "COLUMNS, or use -f markdown, which keeps them)", indent="", width=width)
    if ov.groups:
        out += _wrap(glance.COMPACT_LEGEND, indent="", width=width)
        if any_calibrated:
            out += _wrap(glance.CALIBRATED_LEGEND, indent="", width=width)
        out.append("")
    if ov.rank_disagreements:
        out += _wrap("Rank disagreements (ranks of one server that kept different winners)", indent="", width=width)
        for d in ov.rank_disagreements:
            out += _wrap(glance.rank_line(d), width=width)
        out.append("")
    if runtime_m:
        out += _wrap("At runtime M (FlashInfer's default bucket mapping for each release)", indent="", width=width)
        for line in glance.runtime_m_lines(ov, runtime_m):
            out += _wrap(line, width=width)
        out.append("")
    if len(ov.groups) > 1 or any(len(g.lines) > 1 for g in ov.groups):
        if glance.tile_map_width(ov, width):
            out += ["Tile map", glance.tile_map_text(ov, colour=colour)]
            out += _wrap(glance.MAP_LEGEND, indent="", width=width)
        elif any(not line.fallback_only for g in ov.groups for line in g.lines):  # a map exists: said, not silently left out
            out += _wrap(f"Tile map left out: it does not fit {width} columns (widen the terminal, set COLUMNS, or "
                         "use -f markdown, which holds it)", indent="", width=width)
        out.append("")
    return out


def format_inspect(result: InspectResult, *, all_rows: bool = False, runtime_m: Sequence[int] = (), width: int = WIDTH,
                   colour: bool = False, uncalibrated: bool = False, summary: bool = False, verbose: bool = False) -> str:
    """The whole terminal report: compact per-bucket lines by default, every tactic with `all_rows`;
    `colour` marks the tile map's cells (green won, red failed or fallback) with ANSI colours;
    `summary` (-q): the verdicts and the counts only; `verbose` (-v): every list in full."""
    if result.discovered and not result.sources and not result.entries and not result.problems:
        return nothing_found(result)
    out: list[str] = [*_wrap(_summary(result), indent="", width=width), ""]
    if result.verdicts:
        out.append("Verdicts")
        for v in result.verdicts:
            out += _wrap(v.text, width=width)
            for line in view.evidence_lines(v):
                out += _wrap(line, indent="      ", width=width)
        out.append("")
    if summary:
        out += _wrap(view.counts_line(result), indent="", width=width)
        return "\n".join(out) + "\n"
    if all_rows:
        all_dropped: dict[str, None] = {}
        for sec in view.entry_sections(result, uncalibrated=uncalibrated):
            out += _wrap(f"== {sec.title} ==", indent="", width=width)
            out += _wrap(sec.gpu_line, indent="", width=width)
            headers, rows, gone = _fit_columns(list(sec.headers), sec.rows, width, _ALL_DROPS)
            out.append(_tab(rows, headers, _wrap_caps(headers, rows, width, ("status", "tile"))))
            for name in gone:
                all_dropped[name] = None
            for note in sec.footnotes:
                out += _wrap(note, indent="", width=width)
            out.append("")
        if all_dropped:  # said, not silently left out
            out += _wrap(f"(columns left out to fit {width} columns: {', '.join(all_dropped)}; widen the terminal, set "
                         "COLUMNS, or use -f markdown, which keeps them)", indent="", width=width)
            out.append("")
    else:
        out += _compact_sections(result, runtime_m, width, colour, uncalibrated)
    failures, skips = view.split_skips(result.failures)
    if skips:
        out += _wrap(view.SKIPPED_TITLE, indent="", width=width)
        out.append(_tab(view.skipped_rows(skips, result, result.group_labels()), list(view.SKIPPED_HEADERS)))
        out.append("")
    if failures:
        out += _wrap("Failures (per op/runner/tactic and kind of failure, counted across inputs)", indent="", width=width)
        rows = view.failure_rows(failures, labels=result.group_labels())
        headers, caps, rows, dropped = _fit_failures(rows, width)
        out.append(_tab(rows, headers, caps))
        if dropped:
            out += _wrap(f"({' and '.join(dropped)} left out to fit {width} columns: the reason repeats the error; "
                         "widen the terminal, set COLUMNS, or use -f markdown)", indent="", width=width)
        for step in glance.next_steps(result.failures, tile_history, result.read_flags, view.gpus_named(result)):
            out += _wrap(step.text, width=width)
            if step.command:
                out.append("      " + step.command)  # whole, never wrapped: pasted, it must run as shown
        out.append("")
    if result.not_tried:
        out.append("Never tried")
        for nt in result.not_tried:
            out += _wrap(view.not_tried_line(nt, limit=len(nt.tactics) if verbose else 8), width=width)
        out += _wrap(f"({view.NOT_TRIED_NOTE})", width=width)
        out.append("")
    warmup = view.warmup_lines(result, None if verbose else 8, brief=not verbose)
    if warmup:
        out += _wrap(view.WARMUP_TITLE, indent="", width=width)
        for level, line in warmup:
            out += _wrap(line, indent="  " if level == 0 else "      ", width=width)
        out.append("")
    stated = view.stated_lines(result)
    if stated:
        out += _wrap(view.STATED_TITLE, indent="", width=width)
        for line in stated:
            out += _wrap(line, width=width)
        out.append("")
    events = view.event_lines(result)
    if events:
        out.append("Events (per input and kind: how many, the first one's line)")
        for line in events:
            out += _wrap(line, width=width)
        out.append("")
    losses, notes = view.split_problems(result)
    if losses:
        out += _wrap("Inputs that could not be used (exit status 2)", indent="", width=width)
        for p in losses:
            out += _wrap(p.message, width=width)
        out.append("")
    if notes:
        out.append("Notes on the inputs (nothing lost)")
        for p in notes:
            out += _wrap(p.message, width=width)
        out.append("")
    if len(result.sources) > 1 or any(ae.record.source not in dict(result.sources) for ae in result.entries[:1]):
        out.append("Sources")
        for line in view.source_legend(result):
            out += _wrap(line, width=width)
        out.append("")
    recorded = view.flashinfer_records(result)
    if recorded:
        out.append("Recorded by FlashInfer (beside its winners)")
        for line in recorded:
            out += _wrap(line, width=width)
        out.append("")
    if result.notes:
        out.append("Notes")
        for n in result.notes:
            out += _wrap(n, width=width)
        out.append("")
    out.append("Legend")
    for line in view.legend(result, compact=not all_rows):
        out += _wrap(line, width=width)
    return "\n".join(out) + "\n"
