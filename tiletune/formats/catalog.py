"""`tiletune catalog`'s view (catalogs.listing.catalog_view, schema tiletune.catalog/1) as a table or JSON."""

from __future__ import annotations

import json
from typing import Any

from tabulate import tabulate


def render_json(view: dict[str, Any]) -> str:
    return json.dumps(view, indent=1)


def render_table(view: dict[str, Any]) -> str:
    """Plain-text rendering of catalog_view's result."""
    if "releases" in view:
        rows = []
        for r in view["releases"]:
            per_op: dict[str, dict[str, set]] = {}
            for c in r["catalogs"]:
                per_op.setdefault(c["op"], {}).setdefault(c["arch"], set()).add(c["tactics"])
            for i, (o, archs) in enumerate(sorted(per_op.items())):
                sizes = "  ".join(f"{a}:{'/'.join(str(x) if x else '-1 only' for x in sorted(n))}"
                                  for a, n in sorted(archs.items()))
                rows.append([r["flashinfer_version"] if i == 0 else "", o, sizes])
        return ("Tactic catalogs per FlashInfer release: arch:number of tactics (a/b = lists that differ by "
                "variant, e.g. MoE dtype). sm121 uses sm120's lists.\n"
                + tabulate(rows, headers=["release", "op", "archs"], tablefmt="simple") + "\n")
    out = []
    for t in view["tables"]:
        var = "".join(f" {k}={v}" for k, v in sorted(t["variant"].items()))
        out.append(f"FlashInfer {view['flashinfer_version']} {t['arch']} {t['op']} / {t['runner']}{var}: "
                   f"{t['tactics']} tactics, -1 = {t['fallback']} (from {t['source_file']})")
        rows = [[c["index"], c["name"], "x".join(map(str, c["tile"])), "x".join(map(str, c["cluster"])),
                 "yes" if c["swap_ab"] else "", "yes" if c["stream_k"] else "", c["mainloop_schedule"] or "",
                 c["stages"] if c["stages"] is not None else "auto",
                 "x".join(map(str, c["mma_tile"])) if c["mma_tile"] else "", c["known_failure"] or ""] for c in t["configs"]]
        out.append(tabulate(rows, headers=["tactic", "enum", "CTA tile (elem)", "cluster", "swap_ab", "stream_k",
                                           "mainloop schedule", "stages", "2-SM MMA tile", "known failure"],
                            tablefmt="simple"))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
