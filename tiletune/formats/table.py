"""Terminal rendering of an InspectResult: verdicts, one table per arch/op section, failures,
never-tried tiles, unreadable inputs and a unit legend. Readable at 120 columns.

The only module that imports tabulate (lazily, so `tiletune --help` stays fast). Pure:
`format_inspect(result) -> str`.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

from tiletune.formats import glance, view
from tiletune.overview import overview, tile_history
from tiletune.results import InspectResult

WIDTH = 120  # terminal width the report is laid out for


def _wrap(text: str, indent: str = "  ", width: int = WIDTH) -> list[str]:
    """Prose lines wrapped to `width` with a hanging indent (tables are sized separately)."""
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ", break_on_hyphens=False) or [indent]


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


def _fit_compact(rows: list[list[str]], width: int) -> tuple[list[str], list[list[str]]]:
    """The compact table's columns, dropping the least needed ones until a row fits `width`."""
    headers = list(glance.COMPACT_HEADERS)
    for drop in ("never tried", "eff %*", "t us*", "margin", "runner-up"):
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        if sum(widths) + 2 * (len(widths) - 1) <= width:
            break
        i = headers.index(drop)
        headers.pop(i)
        rows = [r[:i] + r[i + 1:] for r in rows]
    return headers, rows


def _compact_sections(result: InspectResult, runtime_m: Sequence[int], width: int, colour: bool = False) -> list[str]:
    """Per (arch, op, runner, N, K): one line per M bucket (the default view; --all lists tactics)."""
    ov = overview(result)
    analyses = glance.analyses_by_choice(result)
    out: list[str] = []
    for g in ov.groups:
        title = f"== {glance.group_title(g)} =="
        out.append(title if len(title) <= width else f"== {glance.group_title(g, runner=False)} ==")
        headers, rows = _fit_compact(glance.compact_rows(g, analyses), width)
        out.append(_simple_table(rows, headers, ["right" if h in glance.NUMERIC else "left" for h in headers])
                   or _tab(rows, headers))
        line = glance.uncovered_line(g)
        if line:
            out += _wrap(line, indent="", width=width)
        out.append("")
    if ov.groups:
        out += _wrap(glance.COMPACT_LEGEND, indent="", width=width)
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
    tmap = glance.tile_map_text(ov)
    if tmap and (len(ov.groups) > 1 or any(len(g.lines) > 1 for g in ov.groups)):
        if max(len(x) for x in tmap.splitlines()) <= width:
            out += ["Tile map", glance.tile_map_text(ov, colour=True) if colour else tmap]
            out += _wrap(glance.MAP_LEGEND, indent="", width=width)
            out.append("")
    return out


def format_inspect(result: InspectResult, *, all_rows: bool = False, runtime_m: Sequence[int] = (), width: int = WIDTH,
                   colour: bool = False) -> str:
    """The whole terminal report: compact per-bucket lines by default, every tactic with `all_rows`;
    `colour` marks the tile map's cells (green won, red failed or fallback) with ANSI colours."""
    if result.discovered and not result.sources and not result.entries and not result.problems:
        return nothing_found(result)
    out: list[str] = [*_wrap(_summary(result), indent="", width=width), ""]
    if result.verdicts:
        out.append("Verdicts")
        for v in result.verdicts:
            out += _wrap(v.text, width=width)
        out.append("")
    if all_rows:
        for sec in view.entry_sections(result):
            out.append(f"== {sec.title} ==")
            out += _wrap(sec.gpu_line, indent="", width=width)
            out.append(_tab(sec.rows, sec.headers))
            for note in sec.footnotes:
                out += _wrap(note, indent="", width=width)
            out.append("")
    else:
        out += _compact_sections(result, runtime_m, width, colour)
    if result.failures:
        out.append("Failures (per op/runner/tactic, counted across inputs)")
        out.append(_tab(view.failure_rows(result.failures, labels=result.group_labels()), view.FAILURE_HEADERS, _FAILURE_WIDTHS))
        for line in glance.next_steps(result.failures, tile_history):
            out += _wrap(line, width=width)
        out.append("")
    if result.not_tried:
        out.append("Never tried")
        for nt in result.not_tried:
            out += _wrap(view.not_tried_line(nt))
        out += _wrap(f"({view.NOT_TRIED_NOTE})")
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
    if result.notes:
        out.append("Notes")
        for n in result.notes:
            out += _wrap(n)
        out.append("")
    out.append("Legend")
    for line in view.legend(result, compact=not all_rows):
        out += _wrap(line)
    return "\n".join(out) + "\n"
