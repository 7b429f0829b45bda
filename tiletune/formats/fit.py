"""Fitting a plain table, and prose, to the terminal width (issue 25 item 11). Pure: rows, headers
and a width in; text (and a note naming any column left out) out.

A table that fits is returned exactly as tabulate writes it, so wide terminals see no change. One
that does not first wraps the caller's text columns at spaces (never inside a word: a path or a
name with no space stays whole), then leaves out the caller's least-needed columns, one at a time,
until it fits; the note says which and how to see them. A line that is one unbreakable token (a
long path) may still be wider than the terminal: cutting it would lose what it says.
"""

from __future__ import annotations

import textwrap
from typing import Any, Optional, Sequence


def wrap_prose(text: str, width: int, indent: str = "", hang: str = "    ") -> list[str]:
    """`text` wrapped at spaces to `width`, continuation lines indented by `hang` (words never cut)."""
    if len(indent) + len(text) <= width or not text.strip():
        return [indent + text]
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + hang,
                         break_long_words=False, break_on_hyphens=False) or [indent + text]


def prose(text: str, width: int, hang: str = "    ") -> str:
    """Each line of `text` wrapped by `wrap_prose` (its own leading spaces kept as the indent)."""
    out: list[str] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        out += wrap_prose(body, width, line[:len(line) - len(body)], hang)
    return "\n".join(out)


def widest(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _render(headers: Sequence[str], rows: Sequence[Sequence[str]], tab: dict[str, Any], tight: bool = False) -> str:
    """tabulate's "simple" table; `tight`: without the two spaces tabulate adds to every header (its
    MIN_PADDING, a module global: restored at once), for a table that has to fit a narrow terminal."""
    import tabulate

    if not tight:
        return tabulate.tabulate([list(r) for r in rows], headers=list(headers), tablefmt="simple", **tab)
    saved = tabulate.MIN_PADDING
    tabulate.MIN_PADDING = 0
    try:
        return tabulate.tabulate([list(r) for r in rows], headers=list(headers), tablefmt="simple", **tab)
    finally:
        tabulate.MIN_PADDING = saved


def _wrapped(headers: list[str], rows: list[list[str]], over: int, wrap: Sequence[str]) -> list[list[str]]:
    """`rows` with the `wrap` columns wrapped at spaces, narrowed by up to `over` characters in all
    (each no narrower than its longest word or its header)."""
    rows = [list(r) for r in rows]
    for name in wrap:
        if name not in headers or over <= 0:
            continue
        i = headers.index(name)
        natural = max((len(r[i]) for r in rows), default=0)
        floor = max([len(name)] + [len(w) for r in rows for w in r[i].split()])
        give = min(over, natural - floor)
        if give <= 0:
            continue
        over -= give
        for r in rows:
            r[i] = "\n".join(textwrap.wrap(r[i], natural - give, break_long_words=False,
                                           break_on_hyphens=False)) or r[i]
    return rows


def fit_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], width: Optional[int], *,
              wrap: Sequence[str] = (), drops: Sequence[str] = (), see: str = "a wider COLUMNS",
              **tab: Any) -> tuple[str, str]:
    """(table, note): the "simple" tabulate table of `rows`, fitted to `width` (None: as it is).

    `wrap`: text columns that may wrap at spaces, tried first, in order. `drops`: columns that may be
    left out, least needed first, when wrapping is not enough. The note ("" when nothing was left
    out) names the columns left out and how to see them (`see`). `tab`: tabulate's own options.
    """
    head = list(headers)
    body = [[str(c) for c in r] for r in rows]
    text = _render(head, body, tab)
    if width is None or widest(text) <= width:
        return text, ""
    # tabulate's options that hold one entry per column lose the entry of a column left out
    per_column = {k: list(v) for k, v in tab.items() if k in ("colalign", "maxcolwidths") and v is not None}
    gone: list[str] = []
    pending = [d for d in drops if d in head]
    while True:
        text = _render(head, body, {**tab, **per_column}, tight=True)
        fitted = _wrapped(head, body, widest(text) - width, wrap)
        text = _render(head, fitted, {**tab, **per_column}, tight=True)
        if widest(text) <= width or not pending:
            break
        i = head.index(pending.pop(0))
        gone.append(head.pop(i))
        body = [r[:i] + r[i + 1:] for r in body]
        for values in per_column.values():
            values.pop(i)
    if not gone:
        return text, ""
    names = ", ".join(gone)
    return text, f"Left out to fit {width} columns: {names} (see them with {see})."
