"""What `tiletune catalog` shows: the releases the catalogs cover, and a release's tactic tables.

`catalog_view(...)` builds a plain JSON-able dict (schema "tiletune.catalog/1");
`tiletune.formats.catalog` turns it into text. Unknown versions, archs or ops raise CatalogError listing what exists.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from tiletune import catalogs
from tiletune.core.archs import arch_family, normalize_arch
from tiletune.core.errors import CatalogError
from tiletune.core.records import TileConfig
from tiletune.core.versions import shown as shown_version

SCHEMA = "tiletune.catalog/1"


# data fields beyond TileConfig that tell two configs of one list apart
_EXTRA_FIELDS = ("sm_version", "dynamic_cluster", "fallback_cluster", "enable_cuda_kernel",
                 "tile_scheduler", "splits", "raster", "swizzle")  # the last four: SM120 SVDQuant table rows


def _config_row(index: int, cfg: TileConfig, known: Optional[str], raw: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    extra = {k: raw[k] for k in _EXTRA_FIELDS if raw and k in raw}
    return {**extra,
        "index": index,
        "name": cfg.name,
        "tile": list(cfg.tile),
        "cluster": list(cfg.cluster),
        "swap_ab": cfg.swap_ab,
        "stream_k": cfg.stream_k,
        "mainloop_schedule": cfg.mainloop_schedule,
        "epilogue_schedule": cfg.epilogue_schedule,
        "epilogue_fusion": cfg.epilogue_fusion,
        "stages": cfg.stages,
        "mma_tile": list(cfg.mma_tile) if cfg.mma_tile else None,
        "known_failure": known,
    }


# judge(config, arch, op, variant) -> why the tile cannot run there, or None: a verdict from outside
# the catalogs (the shared-memory model: `tiletune catalog` passes analysis.catalog_fit.model_failure)
Judge = Callable[[TileConfig, str, str, Mapping[str, Any]], Optional[str]]


def catalog_view(version: Optional[str] = None, arch: Optional[str] = None, op: Optional[str] = None,
                 judge: Optional[Judge] = None) -> dict[str, Any]:
    """Releases covered (no version), or the tactic tables of one release (filtered by arch/op).
    `judge` adds each tactic's `model_failure` (see Judge) beside the catalog's own known failure."""
    keys = catalogs.keys()
    fam = None
    if arch is not None:
        norm = normalize_arch(arch)
        known_archs = sorted({k[1] for k in keys})
        if norm is None:
            raise CatalogError(f"unknown arch {arch!r}; catalogs exist for: {', '.join(known_archs)} (sm121 uses sm120's)")
        fam = arch_family(norm)
        if fam not in known_archs:
            raise CatalogError(f"no catalogs for {norm}; catalogs exist for: {', '.join(known_archs)} (sm121 uses sm120's)")
    if op is not None:
        known_ops = sorted({k[2] for k in keys})
        if op not in known_ops:
            raise CatalogError(f"no catalogs for op {op!r}; ops with catalogs: {', '.join(known_ops)}")
    if version is None:
        rows: list[dict[str, Any]] = []
        for rel in catalogs.releases():
            lists = sorted(
                {(k[2], k[1], k[3]) for k in keys if k[0] == rel and (fam is None or k[1] == fam) and (op is None or k[2] == op)}
            )
            if not lists:
                continue
            sizes = []
            for o, a, r in lists:
                for cat in catalogs.lookup(rel, a, o, r):
                    var = ",".join(f"{k}={v}" for k, v in sorted(cat.variant.items()))
                    sizes.append({"op": o, "arch": a, "runner": r, "variant": var or None, "tactics": len(cat.configs)})
            rows.append({"flashinfer_version": rel, "catalogs": sizes})
        return {"schema": SCHEMA, "releases": rows}
    canon = catalogs.canonical_version(version)
    if canon is None:
        rels = catalogs.releases()
        raise CatalogError(
            f"no catalogs for FlashInfer {shown_version(version)}; nearest: {', '.join(catalogs.nearest_releases(version))} "
            f"(covered: {rels[0]} .. {rels[-1]}, {len(rels)} releases; `tiletune catalog` lists them)"
        )
    sel = sorted({k for k in keys if k[0] == canon and (fam is None or k[1] == fam) and (op is None or k[2] == op)},
                 key=lambda k: (k[2], k[1], k[3]))
    if not sel:
        have = sorted({f"{k[2]}/{k[1]}" for k in keys if k[0] == canon})
        raise CatalogError(f"FlashInfer {canon} has no catalog for {op or 'any op'} on {fam or 'any arch'}; it has: {', '.join(have)}")
    tables = []
    for _, a, o, r in sel:
        for cat in catalogs.lookup(canon, a, o, r):
            raws: Sequence[Optional[Mapping[str, Any]]] = cat.raw or (None,) * len(cat.configs)
            rows = [_config_row(i + cat.index_offset, c, cat.known_failures[i], raws[i])
                    for i, c in enumerate(cat.configs)]
            if judge is not None:
                for config_row, cfg in zip(rows, cat.configs):
                    config_row["model_failure"] = judge(cfg, a, o, cat.variant)
            fb: Optional[str]
            if cat.fallback is not None:
                fb = f"index {cat.fallback + cat.index_offset}"
            elif cat.fallback_config is not None:
                fb = "explicit config"
                rows.append(_config_row(-1, cat.fallback_config, None))
            else:
                fb = cat.fallback_rule  # None, or how the binding picks it at run time
            tables.append({
                "op": o, "runner": r, "arch": a, "variant": dict(cat.variant), "source_file": cat.ref.source_file,
                "tactics": len(cat.configs), "fallback": fb, "configs": rows,
                **({"table_note": cat.table_note} if cat.table_note else {}),
            })
    return {"schema": SCHEMA, "flashinfer_version": canon, "tables": tables}
