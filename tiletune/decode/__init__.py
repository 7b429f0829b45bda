"""Decoding: TuningRecord -> Entry (the problem its key stands for + the config its tactic means).

The tactic of a CUTLASS runner is an index into a config list that differs per FlashInfer
release and arch, so decoding needs both; without them the answer is an `Undecoded` that says
which option to pass. Non-CUTLASS runners (cuBLASLt, cuDNN, trtllm-gen, CuTe DSL, ...) are
`Undecoded(not_a_cutlass_tactic=True)`: nothing to decode, not an error. When several catalogs
match (MoE lists per dtype when the key carries none) and disagree, the entry is ambiguous and
lists the candidates; it is also ambiguous, never one tile, when any variant the key leaves
possible has no list (the tactic may index that list), and the reason says which and, where the
catalog data records it, why. Decoding is memoised per (release, arch, op, runner, variant, tactic),
so a 50,000-entry cache costs a few thousand lookups.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping, Optional, Sequence

from msgspec import structs

from tiletune import catalogs
from tiletune.catalogs import Catalog, moe, nearest_releases
from tiletune.core.archs import arch_family
from tiletune.core.records import (
    CandidateRuns,
    Decode,
    Decoded,
    Entry,
    Environment,
    Problem,
    Status,
    TuningRecord,
    Undecoded,
    element_types,
    freeze,
)
from tiletune.core.versions import shown as shown_version
from tiletune.core.vocabulary import FUSED_MOE_FAMILY, FUSED_MOE_OPS, MOE_RUNNER
from tiletune.decode import problems
from tiletune.decode.runners import name_non_cutlass_tactic, not_cutlass_reason


def decode(record: TuningRecord) -> Entry:
    """Decode one record. Never raises for data problems: those become Undecoded reasons."""
    problem, note = problems.problem_for(record)
    return Entry(record, problem, decode_tactic(record, problem), note)  # (positional: one per record)


def decode_all(records: Iterable[TuningRecord]) -> list[Entry]:
    """`[decode(r) for r in records]`, with what the records of one op, runner, extras and
    environment share worked out once per group instead of once per record.

    Why: those four decide everything but the shapes and the tactic, and a cache's records share
    the very objects (the v1 reader makes one op, runner, extras and environment per distinct
    text), so consecutive records are grouped by identity, with nothing hashed per record. A group
    has its problem builder (problems.problem_builder) and, where the tactic alone then decides the
    decode (`_tactic_alone_decides`), one decode per distinct int tactic. tests/test_decode.py pins
    this to `decode`, record by record, over mixed and odd records."""
    out: list[Entry] = []
    append = out.append
    entry = Entry  # Entry(record, problem, decode, problem_note), one per record
    groups: dict[tuple, tuple] = {}
    op: Any = _NOTHING
    runner = extras = env = kind = op
    build: Any = None
    table: Optional[dict[int, Decode]] = None
    for r in records:
        if not (r.op is op and r.runner is runner and r.extras is extras and r.env is env and r.source_kind is kind):
            op, runner, extras, env, kind = r.op, r.runner, r.extras, r.env, r.source_kind
            build, table = _group(groups, op, runner, extras, env, kind)
        problem, note = build(r.shapes) if build is not None else problems.problem_for(r)
        t = r.tactic
        if table is not None and t.__class__ is int:
            d = table.get(t)
            if d is None:
                d = table[t] = decode_tactic(r, problem)
        else:
            d = decode_tactic(r, problem)
        append(entry(r, problem, d, note))
    return out


_NOTHING = object()  # no record's op: the first record starts a group
_MAX_GROUPS = 4096  # a log's records may each bring their own extras: the group memo stays bounded


def _group(groups: dict[tuple, tuple], op: Any, runner: Any, extras: Any, env: Any, kind: Any) -> tuple[Any, Optional[dict]]:
    """(problem builder or None, tactic -> decode memo or None) of the records sharing these objects."""
    key = (op, runner, id(extras), id(env), kind)
    try:
        hit = groups.get(key)
    except TypeError:  # an unhashable op or runner: decoded record by record
        return None, None
    if hit is None:
        if len(groups) >= _MAX_GROUPS:
            groups.clear()
        build = None
        if type(op) is str and type(runner) is str and type(env) is Environment:
            build = problems.problem_builder(op, runner, extras, env.flashinfer_version)
        table: Optional[dict[int, Decode]] = {} if _tactic_alone_decides(op, extras, env, kind) else None
        hit = groups[key] = (build, table, extras, env)  # (holds extras and env, so their ids stay theirs)
    return hit[0], hit[1]


def _tactic_alone_decides(op: str, extras: Any, env: Any, kind: str) -> bool:
    """Whether `decode_tactic` answers an int tactic of these records from the tactic alone (with
    these four), never from the record's problem: dense ops, and fused-MoE keys whose extras name
    the variant; not a text input that lacks the release or arch (its reason is the record's own)."""
    if type(env) is not Environment:
        return False
    if kind == "log" and (not env.flashinfer_version or not env.arch):
        return False
    if op not in FUSED_MOE_OPS:
        return True
    try:
        hash(extras)
        return moe.extras_dict(extras) is not None
    except Exception:  # noqa: BLE001 - odd extras: decode_tactic decides, record by record
        return False


def decode_tactic(record: TuningRecord, problem: Optional[Problem] = None) -> Decode:
    """What `record.tactic` means for its op/runner on its release and arch."""
    if record.source_kind == "log" and (not record.env.flashinfer_version or not record.env.arch):
        return _decode_uncached(record, problem)  # the reason names the clues a text is searched for
    t = record.tactic
    tt: Any = t.__class__  # (a type is hashable; typeshed's union of type[...] says otherwise)
    if record.op not in FUSED_MOE_OPS:  # dense: the answer depends on these values only
        args = (record.op, record.runner, record.env.flashinfer_version, record.env.arch, t, tt)
        try:
            return _dense_cached(*args)
        except TypeError:  # unhashable tactic
            return _decode_uncached(record, problem)
    moe_args = (record.op, record.runner, record.env.flashinfer_version, record.env.arch, record.extras,
                element_types(record.extras), t, tt)
    try:
        hit = _moe_by_extras(*moe_args)
    except TypeError:  # an unhashable extra or tactic
        hit = None
    return hit if hit is not None else _decode_uncached(record, problem)


# Both keyed with the types of the extras' elements and of the tactic (records.element_types): 1 and
# True are equal keys, but tactic True is no index and extras True and 1 mean different dtypes.
@functools.lru_cache(maxsize=65536)
def _moe_by_extras(op: str, runner: str, version: Optional[str], arch: Optional[str], extras: Any, extras_types: Any,
                   tactic: Any, tactic_type: type) -> Optional[Decode]:
    """A fused-MoE decode when the key's extras name its variant (then these six values decide it,
    as the five do for dense ops: every M bucket of a layer shares one answer); None when the
    variant depends on the problem instead (keys without extras)."""
    if moe.extras_dict(extras) is None:
        return None
    probe = TuningRecord(source="", source_kind="", op=op, runner=runner, tactic=tactic, status=Status.CHOSEN,
                         env=Environment(flashinfer_version=version, arch=arch), extras=extras)
    return _decode_uncached(probe, None)


@functools.lru_cache(maxsize=65536)
def _dense_cached(op: str, runner: str, version: Optional[str], arch: Optional[str], tactic: Any,
                  tactic_type: type) -> Decode:
    probe = TuningRecord(source="", source_kind="", op=op, runner=runner, tactic=tactic, status=Status.CHOSEN,
                         env=Environment(flashinfer_version=version, arch=arch))
    return _decode_uncached(probe, None)


def _decode_uncached(record: TuningRecord, problem: Optional[Problem]) -> Decode:
    op, runner = record.op, record.runner
    if not runner and record.tactic is None:
        # an INFO "Skipped N unsupported tactic(s)" count: the line names no runner and no tactic
        return Undecoded(reason="runner not named: an INFO summary counts failed tactics without naming them "
                                "(FLASHINFER_LOGGING_LEVEL=debug logs each)")
    if not runner and record.detail_dict().get("stated"):
        # a ticket's table row: it states the tactic number (and maybe the tile) but not the runner whose list it indexes
        shape = record.detail_dict().get("stated_shape")
        return Undecoded(reason="runner not named: a ticket's table states this tactic number, not the runner whose "
                                "tactic list it indexes" + (f"; the row states: {shape}" if shape else ""))
    if runner == MOE_RUNNER and op in ("", FUSED_MOE_FAMILY):
        return _moe_either_gemm(record)
    why_not = not_cutlass_reason(op, runner)
    if why_not:
        named = name_non_cutlass_tactic(op, runner, record.tactic)
        return Undecoded(reason=f"{why_not}: {named}" if named else why_not, not_a_cutlass_tactic=True)
    is_moe = op in FUSED_MOE_OPS
    if not is_moe and not catalogs.has_catalogs_for(op, runner):
        return Undecoded(reason=f"{op}/{runner}: no tactic catalog in tiletune for this runner "
                                "(not a CUTLASS dense GEMM or fused-MoE runner it knows)",
                         not_a_cutlass_tactic=True)
    version, arch = record.env.flashinfer_version, record.env.arch
    if not version or not arch:
        return Undecoded(reason=missing_env_reason(record))
    canon = catalogs.canonical_version(version)
    if canon is None:
        return Undecoded(reason=f"no catalogs for FlashInfer {shown_version(version)}; nearest releases covered: "
                                f"{', '.join(nearest_releases(version))} (pass --flashinfer-version)")
    key: tuple = ((),)  # dense runners: one list, no variant
    if is_moe:
        if moe.extras_dict(record.extras) is not None:  # the key names the variant: op + extras decide it
            try:
                key = _moe_variant_key(record.op, record.extras, element_types(record.extras))
            except TypeError:  # an unhashable extra
                key = _moe_variant_key.__wrapped__(record.op, record.extras, ())
        else:
            key = tuple(freeze(dict(v)) for v in (moe.variants_for(record, problem) or ({},)))
    try:
        tactic_type: Any = record.tactic.__class__
        return _decode_cached(canon, arch_family(arch), op, runner, key, record.tactic, tactic_type)
    except TypeError:  # unhashable tactic: decode uncached
        return _decode_cached.__wrapped__(canon, arch_family(arch), op, runner, key, record.tactic, None)


def with_moe_dtype(entries: Sequence[Entry], moe_dtype: str) -> tuple[list[Entry], int, list[str]]:
    """`--dtype` for fused-MoE keys that do not record their dtype (before FlashInfer 0.6.18rc2):
    every such entry whose tactic the catalogs left ambiguous is decoded again against only the
    variants whose activation or weight type is `moe_dtype` (retry's --dtype narrows the same
    way). Returns the entries, how many were narrowed to one tile, and the variants (act x weight)
    of ambiguous keys `moe_dtype` matches none of; keys that record their dtype are never overridden."""
    from tiletune.core.vocabulary import short_dtype

    want = short_dtype(moe_dtype.lower()) or moe_dtype.lower()
    out, narrowed = [], 0
    unmatched: dict[str, None] = {}
    for e in entries:
        r = e.record
        if (r.op not in FUSED_MOE_OPS or moe.extras_dict(r.extras) is not None or not isinstance(e.decode, Undecoded)
                or not r.env.flashinfer_version or not r.env.arch):
            out.append(e)
            continue
        canon = catalogs.canonical_version(r.env.flashinfer_version)
        allowed = moe.variants_for(r, e.problem)
        variants = [v for v in allowed if want in (v.get("act"), v.get("weight"))]
        if canon is None or not variants:
            for v in allowed:
                unmatched[f"{v.get('act')} x {v.get('weight')}"] = None
            out.append(e)
            continue
        key = tuple(freeze(dict(v)) for v in variants)
        tactic_type: Any = r.tactic.__class__
        try:
            d = _decode_cached(canon, arch_family(r.env.arch), r.op, r.runner, key, r.tactic, tactic_type)
        except TypeError:  # unhashable tactic
            d = _decode_cached.__wrapped__(canon, arch_family(r.env.arch), r.op, r.runner, key, r.tactic, None)
        if isinstance(d, Decoded):
            narrowed += 1
            out.append(structs.replace(e, decode=d))
        else:
            out.append(e)
    return out, narrowed, list(unmatched)


def _moe_either_gemm(record: TuningRecord) -> Undecoded:
    """A CUTLASS fused-MoE MoERunner tactic whose text never says gemm1 or gemm2: both candidates."""
    if not record.env.flashinfer_version or not record.env.arch:
        return Undecoded(reason="CUTLASS fused-MoE MoERunner; gemm1 or gemm2 not named; " + missing_env_reason(record))
    cands, said = [], []
    for op in FUSED_MOE_OPS:
        d = _decode_uncached(structs.replace(record, op=op), None)
        if isinstance(d, Decoded):
            cands.append(d.config)
            said.append(f"{op.rsplit('::', 1)[-1]} {d.config.label()}")
        elif isinstance(d, Undecoded):
            cands.extend(d.candidates)
            said.append(f"{op.rsplit('::', 1)[-1]} {d.candidates_label() or 'not decoded (' + d.reason.split(';')[0][:120] + ')'}")
    return Undecoded(reason="CUTLASS fused-MoE MoERunner tactic; the text does not say gemm1 or gemm2: "
                            + "; ".join(said), candidates=tuple(cands))


def missing_env_reason(record: TuningRecord) -> str:
    """Everything still missing to decode this record, in one message (never a flag at a time).

    A log or pasted text has no `_metadata`: its message names the clues tiletune looked for."""
    version, arch = record.env.flashinfer_version, record.env.arch
    text_input = record.source_kind == "log"
    looked = ("JIT or cache path, package version line, server banner" if text_input else "_metadata, JIT path")
    missing = []
    if not version:
        missing.append("--flashinfer-version (FlashInfer version unknown, no " + looked + " names it)")
    if not arch:
        missing.append("--arch (GPU arch unknown, no " + ("JIT or cache path, GPU name or error text" if text_input
                                                           else "_metadata.gpu, JIT path or GPU name")
                       + " names it; the same runner has different lists on sm100, sm103 and sm120)")
    return "to decode CUTLASS tactics pass " + " and ".join(missing)


@functools.lru_cache(maxsize=4096)  # every bucket of an MoE op repeats the same 20 extras
def _moe_variant_key(op: str, extras: tuple, extras_types: tuple) -> tuple:
    """The catalog variants of a fused-MoE key whose extras name its dtypes (see moe.variants_for)."""
    probe = TuningRecord(source="", source_kind="", op=op, runner="", tactic=None, status=Status.CHOSEN, extras=extras)
    return tuple(freeze(dict(v)) for v in (moe.variants_for(probe, None) or ({},)))


@functools.lru_cache(maxsize=16384)  # (keyed with the tactic's type too: see _moe_by_extras)
def _decode_cached(version: str, arch: str, op: str, runner: str, variants: tuple, tactic: Any,
                   tactic_type: Optional[type]) -> Decode:
    cats: list[Catalog] = []
    missing: list[dict] = []  # candidate variants this release/arch has no list for
    for v in variants:
        found = catalogs.lookup(version, arch, op, runner, dict(v))
        if v:  # a named variant matches exactly: plain fp8 x mxfp4 is not the humming-scaled list
            names = {k for k, _ in v}
            found = [c for c in found if names.issuperset(c.variant)]
        if not found:
            missing.append(dict(v))
        for c in found:
            if c not in cats:
                cats.append(c)
    if not cats:
        why = _why_missing(version, arch, missing[:1])
        if why:
            return Undecoded(reason=f"FlashInfer {version} {arch}: no {op} catalog for {why}")
        have = sorted({a for (ver, a, o, r) in catalogs.keys() if ver == version and o == op and r == runner})
        if arch in have and missing and "act" in missing[0]:
            # the arch has lists, not for this variant: name the variant, never "no catalog for sm90 (it has sm90)"
            pairs = ", ".join(dict.fromkeys(_pair_text(v) for v in moe.known_variants(version, arch)))
            wanted = ", ".join(dict.fromkeys(_pair_text(v) for v in missing))
            return Undecoded(reason=f"FlashInfer {version} {arch}: no {op} list for {wanted} (tiletune does not extract "
                                    f"that variant on {arch}; its {arch} lists: {pairs})")
        extra = f" (it has {', '.join(have)})" if have else ""
        return Undecoded(reason=f"FlashInfer {version} has no {op}/{runner} catalog for {arch}{extra}")
    results = [catalogs.resolve(c, tactic) for c in cats]
    decoded = [r for r in results if isinstance(r, Decoded)]
    if missing:
        # The key leaves a variant possible whose list tiletune lacks: the tactic may index that
        # list, so answering from the others would present a guess as a decode.
        absent = _why_missing(version, arch, missing) or (
            ", ".join(dict.fromkeys(_pair_text(v) for v in missing))
            + " (not extracted by tiletune, or not built by this release)")
        return Undecoded(
            reason=f"ambiguous: the key leaves several variants possible and FlashInfer {version} {arch} has no "
                   f"{op} catalog for the candidate variant(s) {absent}; "
                   f"the catalogued candidates would give: {_candidates_text(cats, results)}",
            candidates=tuple(dict.fromkeys(d.config for d in decoded)), runs=_candidate_runs(cats, results))
    if len(results) == 1:
        return results[0]
    configs = {d.config for d in decoded}
    if len(decoded) == len(results) and len(configs) == 1:
        return decoded[0]  # several lists, one meaning
    desc = _candidates_text(cats, results)
    return Undecoded(reason=f"ambiguous: {len(cats)} {op} catalogs match and disagree ({desc})",
                     candidates=tuple(dict.fromkeys(d.config for d in decoded)), runs=_candidate_runs(cats, results))


def _candidate_runs(cats: Sequence[Catalog], results: Sequence[Decode]) -> tuple[CandidateRuns, ...]:
    """The candidate variants whose binding runs another config than the one profiled (0.6.3..0.6.14 GEMM2)."""
    out = []
    for c, r in zip(cats, results):
        if isinstance(r, Decoded) and r.runs is not None:
            fin = c.variant.get("finalize")
            out.append(CandidateRuns(variant=_pair_text(c.variant) + ("" if fin is None else f", finalize={fin}"),
                                     profiled=r.config, runs=r.runs))
    return tuple(out)


def _candidates_text(cats: Sequence[Catalog], results: Sequence[Decode]) -> str:
    """'bf16 x bf16 -> 128x16x64; fp8 x fp8 -> 128x16x128': one line per variant and meaning
    (the finalize flag is named only where it changes the meaning)."""
    rows: dict[tuple[str, str], list[str]] = {}
    for c, r in zip(cats, results):
        label = r.config.label() if isinstance(r, Decoded) else "out of range"
        if isinstance(r, Decoded) and r.runs is not None:  # the 0.6.3..0.6.14 GEMM2 id pitfall
            label += f" profiled, runs {r.runs.config.label()}"
        fin = c.variant.get("finalize")
        rows.setdefault((_pair_text(c.variant), label), []).append("" if fin is None else f"finalize={fin}")
    labels_per_pair: dict[str, int] = {}
    for pair, _label in rows:
        labels_per_pair[pair] = labels_per_pair.get(pair, 0) + 1
    out = []
    for (pair, label), fins in rows.items():
        tag = f" ({', '.join(f for f in fins if f)})" if labels_per_pair[pair] > 1 and any(fins) else ""
        out.append(f"{pair}{tag} -> {label}")
    return "; ".join(out)


def _why_missing(version: str, arch: str, missing: Sequence[Mapping[str, Any]]) -> Optional[str]:
    """'bf16 x fp8 (deepseek-block) (<why>); ...' for fused-MoE variants, when the data explains the
    absence of at least one of them (its not_extracted notes); None otherwise."""
    if not missing or "act" not in missing[0]:
        return None
    parts: dict[str, Optional[str]] = {}
    explained = False
    for v in missing:
        why = moe.why_no_list(version, arch, v)
        explained = explained or why is not None
        parts.setdefault(_pair_text(v), why)
    if not explained:
        return None
    return "; ".join(f"{k} ({why or 'not extracted by tiletune, or not built by this release'})"
                     for k, why in parts.items())


def _pair_text(variant: Mapping[str, Any]) -> str:
    """'bf16 x fp8' (activation x weight, plus any scaling) of a fused-MoE variant; finalize left out."""
    if "act" not in variant:
        return ",".join(f"{k}={v}" for k, v in sorted(variant.items())) or "default"
    text = f"{variant['act']} x {variant.get('weight')}"
    return f"{text} ({variant['scaling']})" if variant.get("scaling") else text


def catalog_for(arch: str, version: str, op: str, runner: str,
                variant: Optional[Mapping[str, Any]] = None) -> list[Catalog]:
    """Every catalog list a tactic of (op, runner) can index on this arch and release (for "never tried")."""
    canon = catalogs.canonical_version(version)
    if canon is None:
        return []
    return catalogs.lookup(canon, arch_family(arch), op, runner, variant)
