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


# Failure table column caps (characters); tabulate wraps longer cells so rows fit 120 columns.
_FAILURE_WIDTHS = [26, 8, 20, 6, 22, 34]


_NUMERIC = {"N", "K", "count", "smem KiB*", "FLOP/B*", "t us*", "eff %*", "meas us"}


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
    by_status: dict = {}
    for ae in result.entries:
        st = ae.entry.record.status
        by_status[st] = by_status.get(st, 0) + 1
    counts: dict[str, int] = {}
    for st, n in by_status.items():
        counts[str(st)] = counts.get(str(st), 0) + n
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


def _fit_compact(rows: list[list[str]], width: int,
                 headers_in: Optional[Sequence[str]] = None) -> tuple[list[str], list[list[str]]]:
    """The compact table's columns, dropping the least needed ones until a row fits `width`."""
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
    return headers, rows


def _compact_table(rows: list[list[str]], width: int, headers_in: Optional[Sequence[str]] = None) -> str:
    """`_fit_compact` then `_simple_table` (else `_tab`) of one group's compact rows, with the
    cells checked once per table and each column's width worked out once (a big cache has 3,500
    groups). Rows `_plain_cells` does not vouch for take that plain path;
    tests/formats/test_table_fast.py holds the two to the same text. `headers_in`: the group's
    headers when they differ from COMPACT_HEADERS (calibrated model columns)."""
    headers = list(headers_in or glance.COMPACT_HEADERS)
    blob = _plain_cells(rows, len(headers))
    if blob is None:
        kept, cut = _fit_compact(rows, width, headers)
        return _simple_table(cut, kept, ["right" if h in glance.NUMERIC else "left" for h in kept]) or _tab(cut, kept)
    widths = [max(len(h), max(map(len, col))) for h, col in zip(headers, zip(*rows))]
    keep = list(range(len(headers)))
    for drop in _COMPACT_DROPS:  # as _fit_compact: the least needed columns go until a row fits
        if drop not in headers:
            continue
        if sum(widths[i] for i in keep) + 2 * (len(keep) - 1) <= width:
            break
        keep.remove(headers.index(drop))
    rule = "  ".join("-" * widths[i] for i in keep)
    if len(keep) == len(headers) and headers[-1] in glance.NUMERIC and "\x00\x00" not in blob and blob[-1:] != "\x00":
        # every column kept and the last one right-aligned with no empty cell: no line ends in a
        # space, so the whole table is one %-format of its cells (rstrip would change nothing)
        fmt = "  ".join(("%%%ds" if h in glance.NUMERIC else "%%-%ds") % w for h, w in zip(headers, widths))
        return "\n".join([fmt % tuple(headers), rule, "\n".join([fmt] * len(rows)) % tuple(chain.from_iterable(rows))])
    fmt = "  ".join(("{%d:>%d}" if headers[i] in glance.NUMERIC else "{%d:<%d}") % (i, widths[i]) for i in keep)
    return "\n".join([fmt.format(*headers).rstrip(), rule, *(fmt.format(*row).rstrip() for row in rows)])


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
    labels: dict[int, str] = {}  # id(Pick) -> its label, while `ov` holds the Picks (they are shared)
    m_texts: dict[Any, str] = {}  # M range -> its cell (groups of one cache share their buckets)
    wraps: dict[Any, list[str]] = {}  # a group's uncovered M ranges -> their line wrapped (groups of a cache share a few)
    out: list[str] = []
    layouts: dict[tuple[int, ...], tuple[str, str]] = {}  # column widths -> a usual table's head and row format
    for g in ov.groups:
        title = f"== {glance.group_title(g)} =="
        out.append(title if len(title) <= width else f"== {glance.group_title(g, runner=False)} ==")
        if result.calibrations and analyses.calibrated(g):  # (few groups: only inputs with measured times)
            any_calibrated = True
            out.append(_compact_table(glance.compact_rows(g, analyses, labels, m_texts), width, glance.CALIBRATED_HEADERS))
        else:
            cells = glance.usual_cells(g, analyses, labels, m_texts)
            text = _usual_table(cells, width, layouts) if cells else None
            out.append(text if text is not None else _compact_table(glance.compact_rows(g, analyses, labels, m_texts), width))
        if g.uncovered:  # (its line is made from them alone: once per distinct ranges, which groups share)
            wrapped = wraps.get(g.uncovered)
            if wrapped is None:
                wrapped = wraps[g.uncovered] = _wrap(glance.uncovered_line(g) or "", indent="", width=width)
            out += wrapped
        out.append("")
    if ov.groups:
        out += _wrap(glance.COMPACT_LEGEND, indent="", width=width)
        if any_calibrated:
            out += _wrap(glance.CALIBRATED_LEGEND, indent="", width=width)
        out.append("")
    if ov.rank_disagreements:
        out.append("Rank disagreements (ranks of one server that kept different winners)")
        for d in ov.rank_disagreements:
            out += _wrap(glance.rank_line(d), width=width)
        out.append("")
    if runtime_m:
        out.append("At runtime M (FlashInfer's default bucket mapping for each release)")
        for line in glance.runtime_m_lines(ov, runtime_m):
            out += _wrap(line, width=width)
        out.append("")
    if (len(ov.groups) > 1 or any(len(g.lines) > 1 for g in ov.groups)) and glance.tile_map_width(ov, width):
        out += ["Tile map", glance.tile_map_text(ov, colour=colour)]
        out += _wrap(glance.MAP_LEGEND, indent="", width=width)
        out.append("")
    return out


def format_inspect(result: InspectResult, *, all_rows: bool = False, runtime_m: Sequence[int] = (), width: int = WIDTH,
                   colour: bool = False, uncalibrated: bool = False) -> str:
    """The whole terminal report: compact per-bucket lines by default, every tactic with `all_rows`;
    `colour` marks the tile map's cells (green won, red failed or fallback) with ANSI colours."""
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
    if all_rows:
        for sec in view.entry_sections(result, uncalibrated=uncalibrated):
            out.append(f"== {sec.title} ==")
            out += _wrap(sec.gpu_line, indent="", width=width)
            out.append(_tab(sec.rows, sec.headers))
            for note in sec.footnotes:
                out += _wrap(note, indent="", width=width)
            out.append("")
    else:
        out += _compact_sections(result, runtime_m, width, colour, uncalibrated)
    if result.failures:
        out.append("Failures (per op/runner/tactic and kind of failure, counted across inputs)")
        out.append(_tab(view.failure_rows(result.failures, labels=result.group_labels()), view.FAILURE_HEADERS, _FAILURE_WIDTHS))
        for step in glance.next_steps(result.failures, tile_history, result.read_flags, view.gpus_named(result)):
            out += _wrap(step.text, width=width)
            if step.command:
                out.append("      " + step.command)  # whole, never wrapped: pasted, it must run as shown
        out.append("")
    if result.not_tried:
        out.append("Never tried")
        for nt in result.not_tried:
            out += _wrap(view.not_tried_line(nt))
        out += _wrap(f"({view.NOT_TRIED_NOTE})")
        out.append("")
    events = view.event_lines(result)
    if events:
        out.append("Events (per input and kind: how many, the first one's line)")
        for line in events:
            out += _wrap(line, width=width)
        out.append("")
    losses, notes = view.split_problems(result)
    if losses:
        out.append("Inputs that could not be used (exit status 2)")
        for p in losses:
            out += _wrap(p.message)
        out.append("")
    if notes:
        out.append("Notes on the inputs (nothing lost)")
        for p in notes:
            out += _wrap(p.message)
        out.append("")
    if len(result.sources) > 1 or any(ae.record.source not in dict(result.sources) for ae in result.entries[:1]):
        out.append("Sources")
        for line in view.source_legend(result):
            out += _wrap(line)
        out.append("")
    recorded = view.flashinfer_records(result)
    if recorded:
        out.append("Recorded by FlashInfer (beside its winners)")
        for line in recorded:
            out += _wrap(line)
        out.append("")
    if result.notes:
        out.append("Notes")
        for n in result.notes:
            out += _wrap(n)
        out.append("")
    out.append("Legend")
    for line in view.legend(result, compact=not all_rows):
        out += _wrap(line)
    return "\n".join(out) + "\n"
