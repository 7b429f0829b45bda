"""The at-a-glance view of an inspect result: one line per M bucket, a tile map, rank checks, and
the tuning-quality flags (won by noise, fallback-only buckets, M ranges no bucket covers).

Per (arch, op, runner, N, K) and M bucket: the chosen tile, its measured time when an input holds
one, the runner-up and its margin, and how many tactics failed or were never tried in that bucket.
`which_bucket` answers "which tile runs at my runtime M" through FlashInfer's bucket mapping for
the release. Nothing here reads files or prints; formatters render `Overview`.

Measured times come from the inputs (DEBUG logs' per-tactic profile times, TensorRT-LLM
`min_time`, ledger medians). A winner "won by noise" when its margin over the runner-up is
smaller than the spread the inputs show for the two (their sample ranges), or, when the inputs
hold no samples, smaller than `DEFAULT_NOISE` (said so in the flag's basis).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import chain
from os.path import dirname
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from msgspec import Struct

from tiletune.analysis.results import BucketLine, Group, Overview, Pick, RankDisagreement
from tiletune.analysis.source_groups import SourceGroup, group_names
from tiletune.core.records import Decoded, Problem, Status, Tactic, TileConfig
from tiletune.decode.buckets import bucket_range, hybrid_ceil, pow2_floor, uses_hybrid

DEFAULT_NOISE = 0.05  # relative; used only when the inputs carry no samples to estimate it from

_TRIED = frozenset({Status.CHOSEN, Status.PROFILED, Status.FAILED, Status.PASSED})
_TIMED = frozenset({Status.CHOSEN, Status.PROFILED, Status.PASSED})  # statuses whose time is a measurement


def config_identity(c: TileConfig) -> tuple[Any, ...]:
    """What makes two configs the same kernel, whatever the tactic number or enum name."""
    return (c.tile, c.cluster, c.swap_ab, c.stream_k, c.mainloop_schedule, c.epilogue_schedule,
            c.epilogue_fusion, c.stages, c.style, c.mma_tile)


def choice_key(config: Optional[TileConfig], tactic: Any) -> Any:
    """What tells two picks apart: the config itself when decoded (equal by value; hashing it is
    far cheaper than its repr, which a big cache paid 150,000 times), else the tactic's repr (a
    tactic may hold lists)."""
    return config if config is not None else repr(tactic)


# --- building ----------------------------------------------------------------------------------


def _pick(ae: Any) -> Pick:
    """The plain computation of an entry's Pick (`_Picks` gives the same, sharing work)."""
    rec = ae.entry.record
    d = ae.entry.decode
    not_cutlass, candidates, runs, runs_if = _decode_facts(d)
    return Pick(rec.tactic, ae.entry.config, None if rec.time_ms is None else float(rec.time_ms), _spread(rec.detail),
                not_cutlass, candidates, runs, runs_if=runs_if)


def _spread(detail: Any) -> Optional[float]:
    """The relative spread of the samples a record's detail holds ((max - min) / min), if any."""
    samples = _samples(detail)
    if len(samples) >= 2 and min(samples) > 0:
        return (max(samples) - min(samples)) / min(samples)
    return None


def _decode_facts(d: Any) -> tuple[bool, Optional[str], Optional[str], Optional[str]]:
    """What a Pick takes from its decode: (not CUTLASS, what undecoded candidates share, the tile
    that runs, the tile that runs under a run-time condition)."""
    candidates = d.candidates_label() if hasattr(d, "candidates_label") else None
    runs = d.runs if isinstance(d, Decoded) else None  # (an Undecoded's `runs` are its candidates')
    runs_if = d.runs_if if isinstance(d, Decoded) else None
    return (bool(getattr(d, "not_a_cutlass_tactic", False)), candidates, runs.config.label() if runs is not None else None,
            runs_if.short() if runs_if is not None else None)


class _Picks:
    """`_pick` for the entries of one overview, sharing what entries have in common.

    Why: a big cache's 50,000 entries share a few hundred decode objects (one per tactic answer)
    and one detail tuple per input, and most are untimed, so the same Pick would be built over
    and over. Keyed by identity, so only for the life of one overview (the entries keep the keys
    alive); the tactic must be a plain int to share a whole Pick (1, 1.0 and True are equal keys
    but label differently). tests/test_overview_fast.py holds it to `_pick`.
    """

    def __init__(self) -> None:
        self._decode: dict[int, tuple[Optional[TileConfig], bool, Optional[str], Optional[str], Optional[str]]] = {}
        self._spread: dict[int, Optional[float]] = {}
        self._whole: dict[tuple[int, int, int], Pick] = {}
        self._alone: dict[int, tuple[Pick]] = {}
        self._pair: dict[tuple[int, int, int], tuple[Pick, tuple[Pick]]] = {}  # (the keys of `_whole`)
        self.line = BucketLine  # BucketLine(...), every field in order: one per bucket line

    def alone(self, pick: Pick) -> tuple[Pick]:
        """`(pick,)`, one tuple per shared Pick (a bucket's only winner: 50,000 tuples on a big cache)."""
        one = self._alone.get(id(pick))
        if one is None or one[0] is not pick:  # (an unshared Pick may reuse a freed one's id)
            one = self._alone[id(pick)] = (pick,)
        return one

    def one_winner_line(self, ae: Any) -> "BucketLine":
        """`_one_winner_line(ae, self)` in one call: the Pick and its one-tuple are shared as one pair
        per (decode, detail, tactic) where a whole Pick is shared (a cache's 50,000 entries: two
        dict look-ups fewer and no call per Pick)."""
        entry = ae.entry
        rec = entry.record
        tactic = rec.tactic
        if rec.time_ms is None and type(tactic) is int:
            key = (id(entry.decode), id(rec.detail), tactic)
            pair = self._pair.get(key)
            if pair is None:
                pk = self(ae)
                pair = self._pair[key] = (pk, self.alone(pk))
            w, alone = pair
        else:
            w = self(ae)
            alone = self.alone(w)
            if w.time_ms is not None:  # (only a timed entry can carry FlashInfer's selection record)
                rec_up = recorded_runner_up(rec.detail, w.time_ms)
                if rec_up is not None:
                    return self.line(entry.problem, alone, w.time_ms, *rec_up, 0, None, False, w.spread, ae)
        return self.line(entry.problem, alone, w.time_ms, None, None, None, None, 0, None, False, w.spread, ae)

    def __call__(self, ae: Any) -> Pick:
        entry = ae.entry
        rec = entry.record
        d = entry.decode
        tactic = rec.tactic
        whole = rec.time_ms is None and type(tactic) is int
        if whole:
            key = (id(d), id(rec.detail), tactic)
            pk = self._whole.get(key)
            if pk is not None:
                return pk
        facts = self._decode.get(id(d))
        if facts is None:
            facts = self._decode[id(d)] = (entry.config, *_decode_facts(d))
        detail = rec.detail
        spread = self._spread.get(id(detail), _UNSET) if detail else None
        if spread is _UNSET:
            spread = self._spread[id(detail)] = _spread(detail)
        config, not_cutlass, candidates, runs, runs_if = facts
        pk = Pick(tactic, config, None if rec.time_ms is None else float(rec.time_ms), spread, not_cutlass,
                  candidates, runs, runs_if=runs_if)
        if whole:
            self._whole[key] = pk
        return pk


_UNSET: Any = object()


def _samples(detail: Any) -> tuple[float, ...]:
    """Timed samples (ms) a record's detail carries, when its reader kept them."""
    found = None  # samples_ms wins over times_ms; one pass over the detail
    for k, v in detail:
        if k == "samples_ms" and isinstance(v, tuple):
            found = v
            break
        if k == "times_ms" and found is None and isinstance(v, tuple):
            found = v
    if found is None:
        return ()
    return tuple(float(x) for x in found if isinstance(x, (int, float)))


def _is_moe(op: str) -> bool:
    return "moe" in op


def overview(entries: Sequence[Any], source_groups: Sequence[SourceGroup] = ()) -> Overview:
    """The at-a-glance view of analysed entries (per source group: servers are never merged).
    `analysis.pipeline.build` makes it once per inspect result (`InspectResult.overview`)."""
    group_of = group_names(source_groups)
    labels = {g.name: g.label for g in source_groups} if len(source_groups) > 1 else {}
    catalog_sizes = _CatalogSizes(entries)
    picks = _Picks()
    one_winner_line = picks.one_winner_line
    # One pass over the entries. Per (arch, op, runner, N, K, source group): its buckets ((batch,
    # experts, top_k, M) -> the index of the bucket's line) and its lines, in the order of each
    # bucket's first entry. A bucket's line is made at once from its first entry when that one is
    # chosen (a cache's usual bucket, `_one_winner_line`); a bucket that turns out to hold several
    # entries, or whose first is not chosen, gets its line from `_bucket_line` after the pass.
    groups: dict[tuple[Any, ...], tuple[dict[tuple[Any, ...], int], list[Optional[BucketLine]]]] = {}
    versions: dict[tuple[Any, ...], Optional[str]] = {}
    unchosen: dict[tuple[Any, ...], Any] = {}  # (group, bucket) -> its first entry, not a chosen one
    several: dict[tuple[Any, ...], list[Any]] = {}  # (group, bucket) -> its entries in input order, where it has several
    other_lines: set[tuple[Any, ...]] = set()  # groups with a line that is not usual (see Group.one_winner_lines)
    for ae in entries:
        entry = ae.entry
        p = entry.problem
        if p is None:
            continue
        rec = entry.record
        gkey = (rec.env.arch, rec.op, rec.runner, p.n, p.k, group_of.get(rec.source))
        g = groups.get(gkey)
        if g is None:
            g = groups[gkey] = ({}, [])
            versions[gkey] = rec.env.flashinfer_version
        buckets, lines = g
        bkey = (p.batch, p.experts, p.top_k, p.m)
        at = buckets.get(bkey)
        if at is None:
            buckets[bkey] = len(lines)
            if rec.status is _CHOSEN:
                line = one_winner_line(ae)
                lines.append(line)
                if line.runner_up is not None:  # FlashInfer's selection record: not a usual line
                    other_lines.add(gkey)
            else:
                lines.append(None)
                unchosen[gkey, bkey] = ae
        else:
            crowd = several.get((gkey, bkey))
            if crowd is None:
                first_line = lines[at]
                several[gkey, bkey] = [unchosen[gkey, bkey] if first_line is None else first_line.winner_entry, ae]
            else:
                crowd.append(ae)
    for (gkey, bkey), aes in chain(((k, (ae,)) for k, ae in unchosen.items() if k not in several), several.items()):
        buckets, lines = groups[gkey]
        lines[buckets[bkey]] = _bucket_line(aes, catalog_sizes, picks)
        other_lines.add(gkey)
    out = []
    gaps = _Uncovered()
    for gkey in sorted(groups, key=lambda g: (g[0] or "", g[1], g[2], g[3], g[4], g[5] or "")):
        usual = gkey not in other_lines
        made: list[Any] = groups[gkey][1] if usual else [line for line in groups[gkey][1] if line is not None]
        if not made:
            continue
        held = tuple(sorted(made, key=_line_m))
        arch, op, runner, n, k, group = gkey
        out.append(Group(arch, op, runner, n, k, versions[gkey], held,
                         gaps(held, versions[gkey], _is_moe(op), usual), group, labels.get(group) if group else None, usual))
    # (one runner per (arch, op): two runners' entries of one shape would be two buckets here)
    one_runner = len({g[:2] for g in versions}) == len({g[:3] for g in versions})
    crowded = tuple(chain.from_iterable(several.values())) if one_runner else None
    return Overview(tuple(out), tuple(rank_disagreements(entries, group_of)), crowded)


def _line_m(line: BucketLine) -> Any:
    """A line's bucket, what a group's lines are sorted by: M as a number; an M that is not one (a
    hand-built problem, a string) after every number, by its text."""
    m = line.problem.m
    return (0, m, "") if isinstance(m, (int, float)) and m == m else (1, 0, str(m))


# (an Enum member read through its class costs a lookup each time: these run per entry)
_CHOSEN, _FALLBACK, _FAILED, _PROFILED = Status.CHOSEN, Status.FALLBACK, Status.FAILED, Status.PROFILED


def _bucket_line(aes: Sequence[Any], catalog_sizes: "_CatalogSizes", picks: "_Picks") -> Optional[BucketLine]:
    if len(aes) == 1 and aes[0].entry.record.status is _CHOSEN:
        return _one_winner_line(aes[0], picks)
    return _any_bucket_line(aes, catalog_sizes, picks)


def _one_winner_line(ae: Any, picks: "_Picks") -> BucketLine:
    """The usual bucket of a cache, one chosen entry: its one winner, nothing timed against it, no
    log; what `_any_bucket_line` gives for it (tests/test_overview_fast.py), without its sets and sorts."""
    w = picks(ae)
    rec_up = recorded_runner_up(ae.entry.record.detail, w.time_ms) if w.time_ms is not None else None
    if rec_up is not None:
        return picks.line(ae.entry.problem, picks.alone(w), w.time_ms, *rec_up, 0, None, False, w.spread, ae)
    return picks.line(ae.entry.problem, picks.alone(w), w.time_ms, None, None, None, None, 0, None, False, w.spread, ae)


RECORDED_TIE = ("FlashInfer's selection record: its tie_tolerance kept this earlier-enumerated tactic over a "
                "faster one (negative margin)")
RECORDED_DEFAULT = ("default 5 % (FlashInfer's selection record holds no samples, and the cache does not record "
                    "the tie_tolerance it was tuned with)")


def recorded_runner_up(detail: Any, winner_ms: Optional[float]) -> Optional[tuple[Pick, float, bool, str]]:
    """(runner-up, margin, won by noise, basis) from a 0.7.4 cache entry's selection record
    (readers/flashinfer_format.py): the fastest other candidate's time as FlashInfer measured it
    (its tactic is not recorded) and the margin FlashInfer computed. None when the entry has no
    record or it names no runner-up (the winner was the only candidate that ran)."""
    facts = None
    for k, v in detail:
        if k == "selection":
            facts = dict(v)
            break
    if facts is None:
        return None
    up, margin, n = facts.get("runner_up_ms"), facts.get("margin"), facts.get("candidates")
    if up is None:
        return None
    if margin is None and winner_ms:
        margin = up / winner_ms - 1.0
    if margin is None:
        return None
    pick = Pick(None, None, float(up), None, False, None, None, n if isinstance(n, int) and n >= 2 else 2)
    if margin < 0:
        return pick, margin, True, RECORDED_TIE
    return pick, margin, margin < DEFAULT_NOISE, RECORDED_DEFAULT


def _any_bucket_line(aes: Sequence[Any], catalog_sizes: "_CatalogSizes", picks: Callable[[Any], Pick] = _pick
                     ) -> Optional[BucketLine]:
    # one pass over the bucket's entries (a big cache has tens of thousands of buckets)
    chosen_aes, fallback, timed_aes = [], [], []
    failed_tactics, tried = set(), set()
    logged = False
    for ae in aes:
        rec = ae.entry.record
        status = rec.status
        if status is _CHOSEN:
            chosen_aes.append(ae)
        elif status is _FALLBACK:
            fallback.append(ae)
        elif status is _FAILED:
            failed_tactics.add(repr(rec.tactic))
        elif status is _PROFILED:
            logged = True
        if status in _TRIED:
            tried.add(repr(rec.tactic))
        if rec.time_ms is not None and status in _TIMED:
            timed_aes.append(ae)
    if not chosen_aes and not fallback:
        return None
    problem = (chosen_aes or fallback)[0].entry.problem
    if len(chosen_aes) == 1:  # the usual bucket: one winner, nothing to tell apart (no config hashed)
        winners = [picks(chosen_aes[0])]
    else:
        chosen: dict[str, Pick] = {}
        for ae in chosen_aes:
            pk = picks(ae)
            ident = choice_key(pk.config, pk.tactic)
            prev = chosen.get(ident)
            if prev is None or (pk.time_ms is not None and (prev.time_ms is None or pk.time_ms < prev.time_ms)):
                chosen[ident] = pk
        winners = list(chosen.values())
    # measured times per tactic in this bucket (profiled, chosen, passed), fastest sample kept
    timed: dict[str, Pick] = {}
    for ae in timed_aes:
        pk = picks(ae)
        ident = repr(pk.tactic)
        if ident not in timed or pk.time_ms < timed[ident].time_ms:  # type: ignore[operator]
            timed[ident] = pk
    runner_up = margin = won_by_noise = basis = wt = own_spread = None
    if len(winners) == 1:
        w = winners[0]
        own = timed.get(repr(w.tactic))
        own_spread = own.spread if own else w.spread
        wt = w.time_ms if w.time_ms is not None else (own.time_ms if own else None)
        others = sorted((p for i, p in timed.items() if i != repr(w.tactic)),
                        key=lambda p: p.time_ms) if timed else []  # type: ignore[arg-type, return-value]
        rec_up = (recorded_runner_up(chosen_aes[0].entry.record.detail, wt)
                  if wt is not None and not others and len(chosen_aes) == 1 else None)
        if rec_up is not None:  # nothing else timed here: FlashInfer's own record of the race
            runner_up, margin, won_by_noise, basis = rec_up
        elif wt is not None and others:
            runner_up = others[0]
            margin = (runner_up.time_ms - wt) / wt if wt > 0 else None  # type: ignore[operator]
            if margin is not None:
                spreads = [s for s in (own_spread, runner_up.spread) if s is not None]
                if spreads:
                    won_by_noise, basis = margin < max(spreads), "samples"
                else:
                    won_by_noise, basis = margin < DEFAULT_NOISE, "default 5 %"
    failed = len(failed_tactics)
    size = None
    if logged:  # never-tried counts need a log of the attempts (and the catalog's size)
        for ae in chosen_aes:
            d = ae.entry.decode
            ref = getattr(d, "catalog", None)
            if ref is not None:
                size = catalog_sizes.get((ref.flashinfer_version, ref.arch, ref.op, ref.runner, ref.variant))
    never = max(size - len(tried), 0) if size is not None else None
    fallback_only = not chosen_aes and bool(fallback)
    return BucketLine(problem, tuple(winners), wt, runner_up, margin, won_by_noise, basis, failed, never, fallback_only,
                      own_spread, chosen_aes[0] if len(chosen_aes) == 1 else None)


def _catalog_sizes(entries: Sequence[Any]) -> dict[tuple[Any, ...], int]:
    sizes: dict[tuple[Any, ...], int] = {}
    for ae in entries:
        ref = getattr(ae.entry.decode, "catalog", None)
        if ref is not None and ref.size:
            sizes[(ref.flashinfer_version, ref.arch, ref.op, ref.runner, ref.variant)] = ref.size
    return sizes


class _CatalogSizes:
    """`_catalog_sizes(entries)`, worked out on first use: only buckets with a log of the attempts
    ask, and a cache alone has none (the pass over every entry is then skipped)."""

    def __init__(self, entries: Sequence[Any]) -> None:
        self._entries = entries
        self._sizes: Optional[dict[tuple[Any, ...], int]] = None

    def get(self, key: tuple[Any, ...]) -> Optional[int]:
        if self._sizes is None:
            self._sizes = _catalog_sizes(self._entries)
        return self._sizes.get(key)


def uncovered(lines: Sequence[BucketLine], version: Optional[str], moe: bool) -> tuple[tuple[int, Optional[int]], ...]:
    """Runtime M ranges that map to no bucket the inputs hold (default mapping of the release).

    Between two held buckets every M whose bucket is absent is uncovered; above the largest held
    bucket, M maps to buckets the cache does not hold (FlashInfer then falls back), so that range is
    open. Buckets off the default grid (custom tuning_buckets) make the answer unknown: empty.
    """
    ranges = []
    held = [line for line in lines if not line.fallback_only]  # fallback lines hold a runtime M, not a bucket
    for line in held:
        r = line.problem.m_range
        if r is None:
            return ()
        ranges.append(r)
    if not ranges:
        return ()
    ranges.sort()
    gaps: list[tuple[int, Optional[int]]] = []
    nxt = 1
    for lo, hi in ranges:
        if lo > nxt:
            gaps.append((nxt, lo - 1))
        nxt = max(nxt, hi + 1)
    if not moe:  # (only MoE's cap closes the top range)
        gaps.append((nxt, None))
        return tuple(gaps)
    last = bucket_range(max(line.problem.m for line in held), moe=moe, version=version)
    if not (last.note and "capped" in last.note):
        gaps.append((nxt, None))
    return tuple(gaps)


class _Uncovered:
    """`uncovered` for the groups of one overview, once per distinct set of buckets.

    Why: a big cache's thousands of (N, K) groups mostly hold the same M buckets, so the same
    ranges were sorted and walked once per group. What `uncovered` reads of a group's lines is,
    when none is a fallback line (`no_fallback`), their M ranges in order and, for MoE, the largest
    M: the key. tests/test_overview_fast.py holds it to `uncovered`.
    """

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], tuple[tuple[int, Optional[int]], ...]] = {}

    def __call__(self, lines: Sequence[BucketLine], version: Optional[str], moe: bool,
                 no_fallback: bool) -> tuple[tuple[int, Optional[int]], ...]:
        if not no_fallback or not lines:
            return uncovered(lines, version, moe)
        key = (version, moe, max([line.problem.m for line in lines]) if moe else None,
               *[line.problem.m_range for line in lines])
        gaps = self._memo.get(key)
        if gaps is None:
            gaps = self._memo[key] = uncovered(lines, version, moe)
        return gaps


def which_bucket(m: int, version: Optional[str]) -> int:
    """The bucket FlashInfer's default mapping sends runtime M to in this release (MoE's
    tune_max_num_tokens cap is applied by `at_runtime_m`, which knows the held buckets)."""
    hybrid = uses_hybrid(version)
    if hybrid is False:
        return pow2_floor(m)
    return hybrid_ceil(m)


def at_runtime_m(group: Group, m: int) -> tuple[int, Optional[BucketLine]]:
    """(bucket, the line that serves it or None) for runtime M in this group."""
    b = which_bucket(m, group.flashinfer_version)
    if _is_moe(group.op):
        b = min(b, max((line.problem.m for line in group.lines), default=b))
    for line in group.lines:
        if line.problem.m == b:
            return b, line
    return b, None


# --- rank disagreement -------------------------------------------------------------------------


def rank_disagreements(analyzed: Iterable[Any], group_of: Optional[Mapping[str, str]] = None) -> Iterable[RankDisagreement]:
    """Per server (rank files of one source group: `group_of` maps input -> group, else the files'
    directory) and bucket: ranks whose winners differ."""
    per: dict[tuple[Any, ...], dict[str, Pick]] = defaultdict(dict)
    problems: dict[tuple[Any, ...], Problem] = {}
    for ae in analyzed:
        rec = ae.entry.record
        if rec.rank is None or rec.status is not Status.CHOSEN:  # (most records have no rank: asked first)
            continue
        p = ae.entry.problem
        if p is None:
            continue
        key = ((group_of or {}).get(rec.source) or dirname(rec.source), rec.env.arch, rec.op, rec.runner, p.n, p.k, p.batch, p.experts, p.top_k, p.m)
        per[key][rec.rank] = _pick(ae)
        problems[key] = p
    for key in sorted(per, key=lambda k: tuple("" if v is None else str(v).zfill(12) for v in k)):
        picks = per[key]
        idents = {choice_key(pk.config, pk.tactic) for pk in picks.values()}
        if len(idents) < 2:
            continue
        times = [pk.time_ms for pk in picks.values()]
        beyond: Optional[bool] = None
        basis = "no measured times in the inputs"
        if all(t is not None for t in times):
            lo, hi = min(times), max(times)  # type: ignore[type-var]
            spreads = [pk.spread for pk in picks.values() if pk.spread is not None]
            noise = max(spreads) if spreads else DEFAULT_NOISE
            beyond = lo > 0 and (hi - lo) / lo > noise  # type: ignore[operator]
            basis = "sample spread" if spreads else "default 5 % noise"
        yield RankDisagreement(key[1], key[2], key[3], problems[key], key[0],
                               tuple(sorted(picks.items())), beyond, basis)


# --- what to do next about a failure -----------------------------------------------------------


class TileHistory(Struct, frozen=True, gc=False):
    """Which catalogued releases list a config for (arch, op, runner), and under which tactic."""

    listed: tuple[tuple[str, int], ...]  # (release, tactic index) where the config is in the list
    absent: tuple[str, ...]  # releases with a list for (arch, op, runner) that lacks the config
    moved: tuple[str, ...]  # releases where the failed tactic number names a different config


def tile_history(config: TileConfig, tactic: Tactic, arch: str, op: str, runner: str) -> TileHistory:
    """The tile across every catalogued release (decoded from each release's own catalog)."""
    from tiletune import catalogs  # the decode layer; imported here: most views never need it

    want = config_identity(config)
    listed: list[tuple[str, int]] = []
    absent: list[str] = []
    moved: list[str] = []
    for release in catalogs.releases():
        cats = catalogs.lookup(release, arch, op, runner)
        if not cats:
            continue
        found = None
        for cat in cats:
            for i, c in enumerate(cat.configs):
                if config_identity(c) == want:
                    found = i + cat.index_offset
                    break
            if found is not None:
                break
        if found is None:
            absent.append(release)
        else:
            listed.append((release, found))
        if isinstance(tactic, int) and not isinstance(tactic, bool) and found != tactic:
            moved.append(release)
    return TileHistory(tuple(listed), tuple(absent), tuple(moved))
