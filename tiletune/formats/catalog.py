"""`tiletune catalog` output: the view `catalogs.listing.catalog_view` builds, as a terminal table,
GitHub Markdown or JSON. Pure: view in, string out.

A tactic table shows the columns that tell its tactics apart: epilogue schedule, epilogue fusion,
kernel SM, dynamic and fallback cluster and the CUDA-kernel flag appear in the tables where they vary
(fused-MoE FINALIZE copies, SM103's appended SM100 kernels, SM100 epilogues and runtime clusters,
SM90 weight-only lists, SM120 SVDQuant tile schedulers), so two tactics never print the same row
(the SM120 SVDQuant rows that share a kernel differ in the enum column's scheduler parameters).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional, Sequence

from tiletune.formats import markdown as md
from tiletune.formats.fit import fit_table, prose

# (header, value of a config row) of the columns every tactic table shows
_BASE: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("tactic", lambda c: str(c["index"])),
    ("enum", lambda c: c["name"]),
    ("CTA tile (elem)", lambda c: "x".join(map(str, c["tile"]))),
    ("cluster", lambda c: "x".join(map(str, c["cluster"]))),
    ("swap_ab", lambda c: "yes" if c["swap_ab"] else ""),
    ("stream_k", lambda c: "yes" if c["stream_k"] else ""),
    ("mainloop schedule", lambda c: c["mainloop_schedule"] or ""),
    ("stages", lambda c: str(c["stages"]) if c["stages"] is not None else "auto"),
    ("2-SM MMA tile", lambda c: "x".join(map(str, c["mma_tile"])) if c["mma_tile"] else ""),
)
# shown only where they vary within a table
_VARYING: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("epilogue schedule", lambda c: c.get("epilogue_schedule") or ""),
    ("epilogue fusion", lambda c: c.get("epilogue_fusion") or ""),
    # SM103 fused MoE FP4: the SM100 kernels appended after the SM103 ones
    ("kernel SM", lambda c: f"sm{c['sm_version']}" if c.get("sm_version") else ""),
    # SM100 fused MoE: the runtime cluster ("Undefined" = the static one) and its fallback
    ("dynamic cluster", lambda c: c.get("dynamic_cluster") or ""),
    ("fallback cluster", lambda c: c.get("fallback_cluster") or ""),
    # SM90 weight-only: the heuristic's extra "CUDA kernel" entry (the MoE dispatch runs its tile)
    ("CUDA kernel flag", lambda c: "set" if c.get("enable_cuda_kernel") else ""),
    # SM120 SVDQuant: each kernel's tile scheduler (persistent, Stream-K, static persistent)
    ("tile scheduler", lambda c: c.get("tile_scheduler") or ""),
)
# the catalog's own known failure (from the release's source), else the shared-memory model's verdict
_FAILURE = ("known failure", lambda c: c["known_failure"] or c.get("model_failure") or "")


def columns(configs: Sequence[dict[str, Any]]) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """The columns of one tactic table: the base ones, each varying one, the known failure."""
    varying = [col for col in _VARYING if len({col[1](c) for c in configs}) > 1]
    return [*_BASE, *varying, _FAILURE]


def _tables(view: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    out = []
    for t in view["tables"]:
        var = "".join(f" {k}={v}" for k, v in sorted(t["variant"].items()))
        title = (f"FlashInfer {view['flashinfer_version']} {t['arch']} {t['op']} / {t['runner']}{var}: "
                 f"{t['tactics']} tactics, -1 = {t['fallback']} (from {t['source_file']})"
                 + (f"; {t['table_note']}" if t.get("table_note") else ""))
        cols = columns(t["configs"])
        out.append((title, [h for h, _ in cols], [[f(c) for _, f in cols] for c in t["configs"]]))
    return out


def _release_rows(view: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in view["releases"]:
        per_op: dict[str, dict[str, set]] = {}
        for c in r["catalogs"]:
            per_op.setdefault(c["op"], {}).setdefault(c["arch"], set()).add(c["tactics"])
        for i, (o, archs) in enumerate(sorted(per_op.items())):
            sizes = "  ".join(f"{a}:{'/'.join(str(x) if x else '-1 only' for x in sorted(n))}"
                              for a, n in sorted(archs.items()))
            rows.append([r["flashinfer_version"] if i == 0 else "", o, sizes])
    return rows


def _summary_rows(view: dict[str, Any]) -> list[list[str]]:
    """The default view: per op, the releases whose catalogs list it (first .. last, how many) and
    the archs; `--all` gives every release's row."""
    per_op: dict[str, dict[str, Any]] = {}
    for r in view["releases"]:
        for c in r["catalogs"]:
            o = per_op.setdefault(c["op"], {"releases": [], "archs": set()})
            if r["flashinfer_version"] not in o["releases"]:
                o["releases"].append(r["flashinfer_version"])
            o["archs"].add(c["arch"])
    rows = []
    for op, o in sorted(per_op.items()):
        rel = o["releases"]
        rows.append([op, f"{rel[0]} .. {rel[-1]} ({len(rel)})" if len(rel) > 1 else rel[0],
                     " ".join(sorted(o["archs"]))])
    return rows


SUMMARY_TITLE = ("Tactic catalogs per op: the FlashInfer releases that list it and the archs. "
                 "`tiletune catalog --all` lists every release's list sizes; `--flashinfer-version V [--arch A] "
                 "[--op O]` shows one release's tactics.")

RELEASES_TITLE = ("Tactic catalogs per FlashInfer release: arch:number of tactics (a/b = lists that differ by "
                  "variant, e.g. MoE dtype). sm121 uses sm120's lists.")


def render_table(view: dict[str, Any], all_rows: bool = False, width: Optional[int] = None) -> str:
    """Plain-text rendering (the releases view: per op by default, every release with `all_rows`),
    fitted to `width` columns when given (text wrapped at spaces, then columns left out, with a note)."""
    see = "a wider COLUMNS or -f markdown"
    if "releases" in view and not all_rows:
        text, note = fit_table(["op", "releases", "archs"], _summary_rows(view), width,
                               wrap=("archs", "releases"), drops=("archs", "releases"), see=see)
        return _prose(SUMMARY_TITLE, width) + "\n" + text + "\n" + (_prose(note, width) + "\n" if note else "")
    if "releases" in view:
        text, note = fit_table(["release", "op", "archs"], _release_rows(view), width, wrap=("archs",),
                               drops=("archs",), see=see)
        return _prose(RELEASES_TITLE, width) + "\n" + text + "\n" + (_prose(note, width) + "\n" if note else "")
    out = []
    notes: dict[str, None] = {}
    for title, headers, rows in _tables(view):
        text, note = fit_table(headers, rows, width, wrap=_TACTIC_WRAP, drops=_TACTIC_DROPS, see=see)
        out += [_prose(title, width), text, ""]
        if note:
            notes[note] = None
    out += [_prose(n, width) for n in notes]
    return "\n".join(out).rstrip() + "\n"


# a tactic table's text columns (wrapped at spaces first) and the columns left out, least needed
# first, when the terminal is narrower still (the tactic, its tile and its known failure stay; the
# enum, which names the kernel, goes last)
_TACTIC_WRAP = ("known failure", "mainloop schedule", "epilogue schedule", "epilogue fusion", "tile scheduler")
_TACTIC_DROPS = ("2-SM MMA tile", "epilogue fusion", "tile scheduler", "epilogue schedule", "mainloop schedule",
                 "fallback cluster", "dynamic cluster", "CUDA kernel flag", "stream_k", "stages", "kernel SM",
                 "swap_ab", "cluster", "enum")


def _prose(text: str, width: Optional[int]) -> str:
    return text if width is None else prose(text, width)


def render_markdown(view: dict[str, Any], all_rows: bool = False, width: Optional[int] = None) -> str:
    """GitHub-flavoured Markdown: one pipe table per catalog, long ones folded."""
    if "releases" in view and not all_rows:
        return SUMMARY_TITLE + "\n\n" + md.table(["op", "releases", "archs"], _summary_rows(view)) + "\n"
    if "releases" in view:
        rows = _release_rows(view)
        return RELEASES_TITLE + "\n\n" + md.table(["release", "op", "archs"], rows) + "\n"
    out = [f"# FlashInfer {view['flashinfer_version']} tactic catalogs", ""]
    for title, headers, rows in _tables(view):
        out += [f"**{md.cell(title)}**", "", md.maybe_fold(f"{len(rows)} tactics", md.table(headers, rows, align_right=[0]),
                                                          len(rows)), ""]
    return "\n".join(out).rstrip() + "\n"


def render_json(view: dict[str, Any], all_rows: bool = False, width: Optional[int] = None) -> str:
    """The whole view (JSON always holds every release)."""
    return json.dumps(view, indent=1)
