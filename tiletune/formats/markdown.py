"""`--format markdown` for inspect: the same sections as the terminal table, as GitHub-flavoured
Markdown (pipe tables, long tables folded in <details>). Also the helpers the bug-ticket report
reuses, which make everything from the inputs inert: `cell` (text), `code` (inline code),
`code_block` (fenced), `details` (folds). Pure: result in, string out; no tabulate.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Sequence

from tiletune.analysis.results import InspectResult
from tiletune.formats import view
from tiletune.formats.safe_text import terminal_safe

FOLD_ROWS = 12  # tables longer than this fold into <details> so the page stays scannable


# Characters that mean something to GitHub-flavoured Markdown anywhere in a line; each is
# backslash-escaped (it then renders as itself): code spans, emphasis (`_` only where it can open
# or close one: not between letters), strikethrough, links and images (no `[`, no link), table
# pipes. `<`, `>` and `&` become entities instead, so no HTML tag (`<img>`, `</details>`, `<h1>`)
# and no entity the input spelled out can come alive. At the start of the text, what would begin
# a heading, a list or a setext underline is escaped too.
_MD_SPECIAL = re.compile(r"([\\`*~\[\]|])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_LEADING = re.compile(r"^(?:[#+=-]|\d+(?=[.)](?:\s|$)))")
# After escaping, what GitHub still links on its own: bare URLs (www./scheme://) and @mentions.
# A word joiner after "@" and inside "://" / "www." keeps the text readable and unlinked.
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_AUTOLINK = re.compile(r"(?i)(?<=[a-z]):(?=//)|(?<![\w.])www(?=\.)")
_ZWJ = "\u2060"


# The redaction of the Markdown being made (a report that leaves the machine: formats.redact), applied
# to every text from the inputs *before* it is escaped: a token it puts in (`<dir1>`, `<user>`) is
# then escaped like the rest, never a live tag GitHub drops, and a path is seen whole, never cut by
# `clip` or split by escapes. None: no redaction (inspect's Markdown).
_REDACT: Optional[Callable[[str], str]] = None


@contextmanager
def redacting(redact: Optional[Callable[[str], str]]) -> Iterator[None]:
    """Within this block every `cell`, `code`, `code_block` and `table` text is passed through `redact` first."""
    global _REDACT
    before, _REDACT = _REDACT, redact
    try:
        yield
    finally:
        _REDACT = before


def redacted(text: object) -> str:
    """`text` as the Markdown being made shows it before escaping: redacted when a redaction is on
    (so a caller that cuts a text to a length cuts the redacted one, never half a path)."""
    t = str(text)
    return _REDACT(t) if _REDACT is not None else t


_from_input = redacted


def clip(text: str, limit: Optional[int]) -> str:
    """`text` shortened to `limit` characters at a word (None: not cut), the cut marked with an
    ellipsis (core.words.clip_words: never half a word)."""
    if limit is None or len(text) <= limit:
        return text
    from tiletune.core.words import clip_words

    return clip_words(text, limit)


def cell(text: object, limit: Optional[int] = None, *, line_start: bool = True) -> str:
    """Any value from the inputs as inert Markdown text: safe in a table cell, a list item, a heading
    or emphasis. Redacted (see `redacting`), terminal escapes removed, newlines folded, every
    Markdown/HTML construct escaped (links, images, tags, entities, code spans, emphasis), URLs and
    @mentions unlinked."""
    t = clip(" ".join(terminal_safe(_from_input(text)).split()), limit)
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    t = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), t)
    if line_start:  # a table cell cannot start a heading or a list: no need to escape there
        t = _LEADING.sub(lambda m: m.group(0) + "\\" if m.group(0)[0].isdigit() else "\\" + m.group(0), t)
    t = _MENTION.sub("@" + _ZWJ, t)
    return _AUTOLINK.sub(lambda m: m.group(0) + _ZWJ if m.group(0) != ":" else ":" + _ZWJ, t)


def code(text: object, limit: Optional[int] = None) -> str:
    """Inline code: delimiters one backtick longer than any run inside, so the text cannot end it.
    Inside a code span GitHub renders no HTML, links or mentions; newlines are folded."""
    t = clip(" ".join(terminal_safe(_from_input(text)).split()), limit)
    fence = "`" * (_longest_backtick_run(t) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") or fence != "`" else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def code_block(lines: Sequence[str], lang: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run in the lines (at least 3), so
    no line from the inputs can close it."""
    body = "\n".join(terminal_safe(_from_input(x)).replace("\r", "") for x in lines)
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max(map(len, runs)) if runs else 0


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, align_right: Sequence[int] = (),
          escaped: Optional[dict[str, str]] = None) -> str:
    """A GFM pipe table; columns in `align_right` (indices) right-aligned (numbers).

    Each distinct text cell is escaped once (`escaped`: text -> its cell, which the tables of one
    report may share): a big cache's 50,000 rows hold a few thousand distinct cells, and escaping
    one takes several regex passes. tests/formats/test_markdown.py holds it to `cell` per cell."""
    memo: dict[str, str] = {} if escaped is None else escaped
    sep = "|" + "|".join("---:" if i in align_right else "---" for i in range(len(headers))) + "|"
    body = []
    for r in (headers, *rows):
        cells = []
        for c in r:
            text = memo.get(c) if type(c) is str else None  # (only str: 1 and True are equal keys)
            if text is None:
                text = cell(c, line_start=False)
                if type(c) is str:
                    memo[c] = text
            cells.append(text)
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([body[0], sep, *body[1:]])


def details(summary: str, body: str, *, open_: bool = False) -> str:
    """A <details> fold; blank lines around the body so GitHub renders the Markdown inside. The
    summary is escaped here; the body is Markdown the caller built from escaped parts."""
    return f"<details{' open' if open_ else ''}>\n<summary>{cell(summary)}</summary>\n\n{body}\n\n</details>"


def maybe_fold(summary: str, body: str, rows: int) -> str:
    return details(summary, body) if rows > FOLD_ROWS else body


def numeric_columns(headers: Sequence[str]) -> list[int]:
    numeric = {"N", "K", "count", "smem KiB*", "FLOP/B*", "t us*", "eff %*", "t us cal*", "eff % cal*", "meas us",
               "roofline %*", "t us* (range)", "t us cal* (range)"}
    return [i for i, h in enumerate(headers) if h in numeric]


def compact_sections(result: InspectResult, runtime_m: Sequence[int] = (), uncalibrated: bool = False) -> list[str]:
    """The per-bucket view and the tile map as Markdown (the default; `--all` lists every tactic)."""
    from tiletune.formats import glance

    ov = result.overview
    analyses = glance.analyses_by_choice(result, ov, uncalibrated)
    any_calibrated = False
    out: list[str] = []
    labels: dict[int, str] = {}  # id(Pick) -> its label, while `ov` holds the Picks (they are shared)
    m_texts: dict = {}  # M range -> its cell
    escaped: dict[str, str] = {}  # a cell's text -> it escaped (the groups share most cells)
    align = numeric_columns(glance.COMPACT_HEADERS)
    for g in ov.groups:
        rows = glance.compact_rows(g, analyses, labels, m_texts)
        headers = glance.COMPACT_HEADERS
        if result.calibrations and analyses.calibrated(g):
            headers, any_calibrated = glance.CALIBRATED_HEADERS, True
        out += [f"## {cell(glance.group_title(g))}", ""]
        out.append(maybe_fold(f"{len(rows)} buckets", table(headers, rows, align_right=align, escaped=escaped), len(rows)))
        line = glance.uncovered_line(g)
        if line:
            out += ["", f"_{cell(line)}_"]
        out.append("")
    if ov.groups:
        out += [f"_{cell(glance.COMPACT_LEGEND)}_", ""]
        if any_calibrated:
            out += [f"_{cell(glance.CALIBRATED_LEGEND)}_", ""]
    if ov.rank_disagreements:
        out += ["## Rank disagreements", ""]
        out += [f"- {cell(glance.rank_line(d))}" for d in ov.rank_disagreements]
        out.append("")
    if runtime_m:
        out += ["## At runtime M", ""]
        out += [f"- {cell(line)}" for line in glance.runtime_m_lines(ov, runtime_m)]
        out.append("")
    headers, rows = glance.tile_map(ov)
    if rows:
        out += ["## Tile map", "", table(headers, rows), "", f"_{cell(glance.MAP_LEGEND)}_", ""]
    return out


def format_inspect(result: InspectResult, *, all_rows: bool = False, runtime_m: Sequence[int] = (), width: int = 0,
                   colour: bool = False, uncalibrated: bool = False, summary: bool = False, verbose: bool = False) -> str:
    """Inspect output as Markdown (per-bucket lines by default, every tactic with `all_rows`;
    `width` and `colour` are the terminal's and do not apply to Markdown)."""
    from tiletune.formats.table import nothing_found

    if result.discovered and not result.sources and not result.entries and not result.problems:
        return code_block([nothing_found(result).rstrip("\n")]) + "\n"
    out: list[str] = ["# tiletune inspect", ""]
    if result.verdicts:
        out.append("## Verdicts")
        out.append("")
        for v in result.verdicts:
            out.append(f"- {cell(v.text)}")
            out += [f"  - {cell(line)}" for line in view.evidence_lines(v)]
        out.append("")
    if summary:  # -q: the verdicts and the counts only
        return "\n".join([*out, cell(view.counts_line(result))]) + "\n"
    if not all_rows:
        out += compact_sections(result, runtime_m, uncalibrated)
    for sec in view.entry_sections(result, uncalibrated=uncalibrated) if all_rows else ():
        out.append(f"## {cell(sec.title)}")
        out.append("")
        out.append(f"_{cell(sec.gpu_line)}_")
        out.append("")
        out.append(maybe_fold(f"{len(sec.rows)} rows", table(sec.headers, sec.rows, align_right=numeric_columns(sec.headers)), len(sec.rows)))
        if sec.footnotes:
            out.append("")
            out += [f"- {cell(n)}" for n in sec.footnotes]
        out.append("")
    failures, skips = view.split_skips(result.failures)
    if skips:
        out += [f"## {cell(view.SKIPPED_TITLE)}", ""]
        out.append(table(view.SKIPPED_HEADERS, view.skipped_rows(skips, result, result.group_labels()), align_right=[1]))
        out.append("")
    if failures:
        from tiletune.analysis.overview import tile_history
        from tiletune.formats.glance import next_steps

        out.append("## Failures")
        out.append("")
        out.append(table(view.FAILURE_HEADERS, view.failure_rows(failures, error_width=100_000, labels=result.group_labels()), align_right=[3]))
        out.append("")
        for step in next_steps(result.failures, tile_history, result.read_flags, view.gpus_named(result)):
            out.append(f"- {cell(step.text)}")
            if step.command:  # a fenced block inside the item: copied whole, never cut or escaped
                out += ["", "  ```sh", f"  {step.command}", "  ```", ""]
        out.append("")
    if result.not_tried:
        out.append("## Never tried")
        out.append("")
        out += [f"- {cell(view.not_tried_line(nt, limit=len(nt.tactics) if verbose else 12))}" for nt in result.not_tried]
        out.append("")
        out.append(f"_{cell(view.NOT_TRIED_NOTE)}_")
        out.append("")
    warmup = view.warmup_lines(result)
    if warmup:
        out += ["## Warm-up cost", "", f"_{cell(view.WARMUP_TITLE)}_", ""]
        out += [("- " if level == 0 else "  - ") + cell(line) for level, line in warmup]
        out.append("")
    stated = view.stated_lines(result)
    if stated:
        out += ["## Stated in the text", "", f"_{cell(view.STATED_TITLE)}_", ""]
        out += [f"- {cell(line)}" for line in stated]
        out.append("")
    events = view.event_lines(result)
    if events:
        out += ["## Events", ""]
        out += [f"- {cell(line)}" for line in events]
        out.append("")
    losses, notes = view.split_problems(result)
    if losses:
        out.append("## Inputs that could not be used")
        out.append("")
        out += [f"- {cell(p.message)}" for p in losses]
        out.append("")
    if notes:
        out.append("## Notes on the inputs")
        out.append("")
        out += [f"- {cell(p.message)}" for p in notes]
        out.append("")
    if result.sources:
        out.append("## Sources")
        out.append("")
        out += [f"- {cell(line)}" for line in view.source_legend(result)]
        out.append("")
    recorded = view.flashinfer_records(result)
    if recorded:
        out.append("## Recorded by FlashInfer")
        out.append("")
        out += [f"- {cell(line)}" for line in recorded]
        out.append("")
    if result.notes:
        out.append("## Notes")
        out.append("")
        out += [f"- {cell(n)}" for n in result.notes]
        out.append("")
    out.append("## Legend")
    out.append("")
    # the legend's "*" marks model columns: cell() escapes it, else "- * ..." renders as a nested
    # bullet and two of them as emphasis
    out += ["- " + cell(line) for line in view.legend(result)]
    return "\n".join(out) + "\n"
