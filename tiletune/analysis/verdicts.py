"""The one-line verdict per arch and op (why each failure happened is analysis/failures.py).

`verdicts` condenses entries, failures and never-tried tiles into lines
like "sm120 fp4_gemm: winners 128x128x256 only; 256x128x128 and 128x256x128 failed 16 times
(Error Internal)". Tactics a retry engine could not even start (status not_run) are named apart,
never counted as failures. Pure functions over pipeline records; no I/O.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from typing import Any, Iterable, Mapping, Optional, Sequence

from msgspec import structs

from tiletune.analysis.results import AnalyzedEntry, Failure, NotTried, RankDisagreement, Verdict
from tiletune.core.archs import arch_family
from tiletune.core.events import Evidence
from tiletune.core.records import Decoded, Status, Undecoded
from tiletune.core.words import quote_bounded, without_advice

_Key = tuple[Optional[str], str, Optional[str]]  # (arch, op, source group)


def _join(labels: Sequence[str], limit: int = 3) -> str:
    shown = list(labels[:limit])
    if len(labels) > limit:
        shown.append(f"{len(labels) - limit} more")
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def verdicts(
    analyzed: Sequence["AnalyzedEntry"], failures: Sequence["Failure"], not_tried: Sequence["NotTried"],
    group_of: Optional[Mapping[str, str]] = None, labels_of: Optional[Mapping[str, str]] = None,
    stated: frozenset[str] = frozenset(),
) -> Iterable["Verdict"]:
    """One verdict per (arch, op) and source group seen in the inputs, sorted by arch, op, group.

    `stated` names the inputs that are tickets (their lines are evidence "stated", not "decoded").
    `group_of` maps each input to its source group (tiletune.analysis.source_groups); inputs of two groups
    are never merged into one verdict. `labels_of` (group -> short name) is given when there are
    several groups: each verdict then names its group.
    """
    group_of = group_of or {}
    keys: dict[_Key, None] = {}  # in order of first use
    winners: dict[_Key, Counter[str]] = {}
    undecoded: Counter[_Key] = Counter()
    undecoded_tactics: dict[_Key, list[Any]] = {}  # the chosen tactics a catalog could not decode (the first 9)
    undecoded_why: dict[_Key, Counter[str]] = {}
    undecoded_tiles: dict[_Key, Counter[str]] = {}  # ambiguous: what candidates share
    not_cutlass: Counter[_Key] = Counter()
    blocked: dict[_Key, list[str]] = {}
    passed: dict[_Key, list[str]] = {}
    stated_ok: dict[_Key, list[str]] = {}  # tactics a ticket's table says work
    not_run: dict[_Key, list[str]] = {}  # a retry engine could not start them: not failures
    not_run_why: dict[_Key, Counter[str]] = {}
    compiled: Counter[_Key] = Counter()
    profiled_only: Counter[_Key] = Counter()  # tactic timings (a DEBUG log) of a key with nothing else
    not_built: dict[_Key, list[str]] = {}
    fallback_ms: dict[_Key, list[Optional[int]]] = {}  # runtime Ms no tuned config covered (None: not stated)
    oom_fallbacks: Counter[_Key] = Counter()  # "OOM detected, falling back to default tactic"
    # the first line each key's verdict rests on beyond its winners: a failure, a fallback, a block
    first_line: dict[_Key, Evidence] = {}
    first_rank: dict[_Key, int] = {}  # the status rank (`_EVIDENT`) of that line: a failure outranks a pass
    tuner_skipped: set[_Key] = set()  # keys with a failure logged as "Skipping tactic ..." (the autotuner went on)
    chosen: dict[int, tuple[Optional[str], Optional[str], Optional[str]]] = {}  # id(decode) -> _chosen_facts
    # INFO "Skipped N" counts: their per-profile Ns, for the catalog comparison (run_verdicts)
    skipped_detail: dict[tuple[Optional[str], Optional[str], str, Optional[str]], dict] = {}
    # the previous record's env, op and input (records of one input share them): a run of them
    # shares one key, worked out once
    env: Any = None
    op: Any = None
    source: Any = None
    key: _Key = (None, "", None)
    # each key's chosen decodes in input order, counted per distinct decode after the loop: a big
    # cache's 50,000 winners share a few hundred decodes (one per tactic answer)
    chosen_of: dict[_Key, list[Any]] = {}
    chosen_ds: list[Any] = []
    # the chosen entries of keys whose winners come from several inputs: a log and a cache of one
    # run record the same choice, which counts once (_one_per_choice)
    chosen_entries: dict[_Key, list[Any]] = {}
    chosen_es: list[Any] = []
    chosen_from: dict[_Key, set[str]] = {}
    new_run = False
    is_chosen = Status.CHOSEN
    for a in analyzed:
        r = a.entry.record  # (not the `record` property: this loop runs once per entry)
        if r.env is not env or r.op is not op or r.source is not source:
            env, op, source = r.env, r.op, r.source
            key = (env.arch, op, group_of.get(source))
            keys.setdefault(key, None)
            chosen_ds = chosen_of.setdefault(key, [])
            chosen_es = chosen_entries.setdefault(key, [])
            new_run = True
        if r.status is is_chosen:
            chosen_ds.append(a.entry.decode)
            if type(a.entry.decode) is not Decoded and len(undecoded_tactics.setdefault(key, [])) < 9:
                undecoded_tactics[key].append(r.tactic)
            chosen_es.append(a.entry)
            if new_run:  # (once per run of one input's records)
                chosen_from.setdefault(key, set()).add(source)
                new_run = False
            continue
        if r.status in _EVIDENT and _EVIDENT.index(r.status) < first_rank.get(key, 99):
            first_rank[key] = _EVIDENT.index(r.status)
            first_line[key] = Evidence(r.source, r.line, _words(r), "stated" if r.source in stated else "decoded")
        if r.status is Status.FAILED and r.tactic is not None and r.detail_dict().get("phase") in ("profiling", "ranking"):
            tuner_skipped.add(key)
        if r.status is Status.BLOCKED:
            lbl = a.config.label() if a.config is not None else f"tactic {_tactic_text(r.tactic)}"
            if lbl not in blocked.setdefault(key, []):
                blocked[key].append(lbl)
        elif r.status is Status.FALLBACK and r.detail_dict().get("oom"):
            oom_fallbacks[key] += r.count  # out of memory while tuning: the default tactic, not a failure
        elif r.status is Status.FALLBACK:
            p = a.entry.problem
            fallback_ms.setdefault(key, []).append(p.m if p is not None else None)
        elif r.status is Status.PROFILED:
            profiled_only[key] += r.count
        elif r.status is Status.COMPILED:
            compiled[key] += 1
        elif r.status is Status.NOT_BUILT:
            module = str(r.detail_dict().get("module") or "a module")
            if module not in not_built.setdefault(key, []):
                not_built[key].append(module)
        elif r.status is Status.PASSED and r.detail_dict().get("stated"):  # a ticket's table row that says OK
            lbl = a.config.label() if a.config is not None else f"tactic {_tactic_text(r.tactic)}"
            if lbl not in stated_ok.setdefault(key, []):
                stated_ok[key].append(lbl)
        elif r.status is Status.PASSED:
            lbl = _attempt_label(a)
            if lbl not in passed.setdefault(key, []):
                passed[key].append(lbl)
        elif r.status is Status.NOT_RUN:
            lbl = _attempt_label(a)
            if lbl not in not_run.setdefault(key, []):
                not_run[key].append(lbl)
            not_run_why.setdefault(key, Counter())[_not_run_reason(r.error)] += r.count
        elif r.status is Status.FAILED and r.tactic is None and r.source_kind == "log" \
                and r.detail_dict().get("failure_kind") != "no_valid_config":
            skipped_detail.setdefault((r.env.arch, r.env.flashinfer_version, r.op, key[2]), r.detail_dict())
    for key, ds in chosen_of.items():
        if len(chosen_from.get(key, ())) > 1:
            ds = _one_per_choice(chosen_entries[key], chosen)
        _count_chosen(key, ds, chosen, winners, not_cutlass, undecoded, undecoded_why, undecoded_tiles)
    fails: dict[_Key, list["Failure"]] = {}
    for f in failures:
        key = (f.arch, f.op, f.group)
        keys.setdefault(key, None)
        fails.setdefault(key, []).append(f)
    nts: dict[_Key, list["NotTried"]] = {}
    for nt in not_tried:
        for key in keys:
            if key[1] == nt.op and key[2] == nt.group and key[0] is not None and arch_family(key[0]) == arch_family(nt.arch):
                nts.setdefault(key, []).append(nt)

    for key in sorted(keys, key=lambda k: (k[0] or "~", k[1], k[2] or "")):
        arch, op, group = key
        label = (labels_of or {}).get(group) if group is not None else None
        parts: list[str] = []
        won = winners.get(key, Counter())
        ranked = sorted(won.items(), key=lambda x: (-x[1], x[0]))
        if ranked:
            if len(ranked) == 1:
                parts.append(f"winners {ranked[0][0]} only")
            else:
                parts.append("winners " + _join([f"{lbl} ({n})" for lbl, n in ranked], 4))
        if not_cutlass[key]:
            parts.append(f"{not_cutlass[key]} chosen non-CUTLASS tactic(s) (no tile to decode)")
        if undecoded[key]:
            whys = [w for w, _ in undecoded_why[key].most_common(2)]
            named = list(dict.fromkeys(_tactic_text(t) for t in undecoded_tactics.get(key, [])))
            which = f" (tactic {_join(named, 4)})" if named and len(named) <= 8 else ""
            parts.append(f"{undecoded[key]} chosen tactic(s){which} undecoded ({'; '.join(whys)})")
            if key in undecoded_tiles:
                top = undecoded_tiles[key].most_common(3)
                more = len(undecoded_tiles[key]) - len(top)
                parts[-1] += ", candidates " + ", ".join(f"{t} ({n})" for t, n in top) + (f" and {more} more" if more > 0 else "")
        flist = fails.get(key, [])
        failed_total = sum(f.count for f in flist)
        disagreements = sum(1 for f in flist if f.reason.model_disagrees)
        # group failures that share a reason so the line stays short
        by_reason: "OrderedDict[str, list[Failure]]" = OrderedDict()
        for f in sorted(flist, key=lambda f: -f.count):
            by_reason.setdefault(_reason_phrase(f, skipped_detail.get((f.arch, f.flashinfer_version, f.op, f.group))), []).append(f)
        for phrase, same in by_reason.items():
            failed = [_failure_label(f) for f in same]
            n = sum(f.count for f in same)
            shapes = [{k: int(v) for k, v in m.groupdict().items()} for f in same for e, _ in f.errors for m in [_NO_CONFIG.match(e)] if m]
            if shapes and all(f.error.startswith("no valid GEMM config") for f in same):
                from tiletune.analysis.run_verdicts import no_config_phrase  # (TensorRT-LLM warnings, not failures)

                parts.append(no_config_phrase(shapes, n))
                continue
            if all(f.tactic is None and (f.arch, f.flashinfer_version, f.op, f.group) in skipped_detail for f in same):
                # INFO "Skipped N unsupported tactic(s)": the autotuner skipped them and went on
                parts.append(f"{n} unsupported tactic skip{'s' if n != 1 else ''} ({phrase})")
                continue
            skipped = " and were skipped: the autotuner went on" if key in tuner_skipped else ""
            parts.append(f"{_join(failed)} failed {_times(n)} ({phrase}){skipped}")
        if passed.get(key):
            parts.append(f"{_join(passed[key])} passed on retry")
        if stated_ok.get(key):
            parts.append(f"{_join(stated_ok[key])} stated OK")
        if not_run.get(key):
            why = not_run_why[key].most_common(1)[0][0]
            parts.append(f"{_join(not_run[key])} not run by retry (the engine could not start {'it' if len(not_run[key]) == 1 else 'them'}: {why})")
        if blocked.get(key):
            parts.append(f"{_join(blocked[key])} blocklisted")
        if compiled[key]:
            parts.append(f"JIT workspace: {compiled[key]} tile instantiation(s) compiled")
        if not_built.get(key):
            parts.append(f"JIT module(s) {_join(not_built[key])} never finished building")
        nt_total = sum(len(nt.tactics) for nt in nts.get(key, []))
        if nt_total:
            ev = "no log of the attempts" if all(nt.evidence == "winners only" for nt in nts[key]) else "per the log"
            parts.append(f"{nt_total} catalog tile(s) never tried ({ev})")
        if oom_fallbacks[key]:
            parts.append(f"out of memory while tuning {_times(oom_fallbacks[key])}: FlashInfer fell back to its default "
                         "tactic (runner 0, tactic -1; a fallback, not a failed tactic)")
        if fallback_ms.get(key):
            ms = sorted({m for m in fallback_ms[key] if m is not None})
            at = f" at runtime M {_join([str(m) for m in ms], 4)}" if ms else ""
            parts.append(f"no tuned config covered a call{at}: FlashInfer ran its fallback tactic (-1, untuned; a fallback, "
                         "not a failure)")
        if not parts and profiled_only[key]:
            parts.append(f"{profiled_only[key]} tactic timing(s) profiled, none chosen or failed in these inputs")
        if not parts:
            parts.append("no chosen, failed, blocked or compiled tactics recorded")
        text = f"{arch or 'unknown arch'} {op or 'op not named'}{f' ({label})' if label else ''}: " + "; ".join(parts)
        yield Verdict(
            arch=arch,
            op=op,
            text=text,
            winners=tuple(ranked),
            failed=failed_total,
            not_tried=nt_total,
            undecoded=undecoded[key],
            disagreements=disagreements,
            source=group if arch is None else None,  # (as before groups: the server of an unknown-arch verdict)
            group=group,
            evidence=(first_line[key],) if key in first_line else (),
        )


_EVIDENT = (Status.FAILED, Status.FALLBACK, Status.BLOCKED, Status.NOT_BUILT, Status.PASSED)


def _words(r: Any) -> str:
    """What a record's line says, short: its error, else its status and tactic."""
    d = r.detail_dict()
    if d.get("said") and r.tactic is None:  # an INFO count: the line as the log printed it
        return str(d["said"])
    if r.error and not d.get("stated_row"):
        # the error's words, without the advice a library prints after them ("Please set TLLM_LOG_LEVEL=WARNING to
        # find out ...", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"): advice is not this run's setting
        return quote_bounded(without_advice(str(r.error)), 240)  # (code and paths in its middle folded, never cut mid-word)
    if d.get("stated_row"):
        return str(d["stated_row"])
    if d.get("said"):
        return str(d["said"])
    reason = d.get("reason")
    return f"{r.status} {r.op} tactic {r.tactic}" + (f": {reason}" if reason else "")


def _count_chosen(key: _Key, ds: Sequence[Any], chosen: dict[int, tuple[Optional[str], Optional[str], Optional[str]]],
                  winners: dict[_Key, Counter[str]], not_cutlass: Counter[_Key], undecoded: Counter[_Key],
                  undecoded_why: dict[_Key, Counter[str]], undecoded_tiles: dict[_Key, Counter[str]]) -> None:
    """Count one key's chosen decodes `ds` (in input order) into the verdict's counters, each
    distinct decode once with its number of entries, in order of first use: every counter then
    holds what counting one entry at a time gives, in the same order (ties in `most_common` keep it).
    `chosen` memoises each decode's facts by identity (the decodes stay alive meanwhile)."""
    if not ds:
        return
    by_id = dict(zip(map(id, ds), ds))
    for i, n in Counter(map(id, ds)).items():
        facts = chosen.get(i)
        if facts is None:
            facts = chosen[i] = _chosen_facts(by_id[i])
        lbl, why, partial = facts
        if lbl is not None:
            won = winners.get(key)
            if won is None:
                won = winners[key] = Counter()
            won[lbl] += n
        elif why is None:
            not_cutlass[key] += n
        else:
            undecoded[key] += n
            why_count = undecoded_why.get(key)
            if why_count is None:
                why_count = undecoded_why[key] = Counter()
            why_count[why] += n
            if partial:
                tiles = undecoded_tiles.get(key)
                if tiles is None:
                    tiles = undecoded_tiles[key] = Counter()
                tiles[partial] += n


def _one_per_choice(entries: Sequence[Any], chosen: dict[int, tuple[Optional[str], Optional[str], Optional[str]]]) -> list[Any]:
    """The decodes of `entries` with each choice once: a choice is what was chosen (the decode's
    facts), for which bucket (the problem, else the key's shapes) and by which rank. A log and the
    cache its run wrote (or two copies of one cache) record one choice twice; two ranks choosing
    the same tile for a bucket are two choices."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for e in entries:
        d = e.decode
        facts = chosen.get(id(d))
        if facts is None:
            facts = chosen[id(d)] = _chosen_facts(d)
        p = e.problem
        bucket = (p.m, p.n, p.k, p.batch, p.experts, p.top_k) if p is not None else ("shapes", e.record.shapes)
        choice = (facts, bucket, e.record.op, e.record.runner, e.record.rank)
        if choice not in seen:
            seen.add(choice)
            out.append(d)
    return out


def _chosen_facts(d: Any) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """What a chosen entry with this decode adds to its verdict: (the winner's label, else None and,
    for an undecoded tactic, the gist of why (None: a non-CUTLASS tactic) and what its candidates share)."""
    cfg = d.config if isinstance(d, Decoded) else None
    if cfg is not None:
        lbl = cfg.label()
        if d.runs is not None:  # the binding runs another config (0.6.3..0.6.14 GEMM2)
            lbl = f"{lbl} profiled, runs {d.runs.config.label()}"
        if d.runs_if is not None:  # another tile under a run-time condition (SM103 FP4 K768)
            lbl = f"{lbl} ({d.runs_if.short()})"
        return lbl, None, None
    if isinstance(d, Undecoded) and d.not_a_cutlass_tactic:
        return None, None, None
    why = d.reason if isinstance(d, Undecoded) else "not decoded"
    return None, _reason_head(why), d.candidates_label() if isinstance(d, Undecoded) else None


def with_rank_disagreements(verdicts: Iterable["Verdict"], found: Sequence["RankDisagreement"]) -> Iterable["Verdict"]:
    """Each (arch, op, group) verdict with the buckets whose ranks (of that server) kept different winners."""
    by_key: dict[_Key, list["RankDisagreement"]] = {}
    for d in found:
        by_key.setdefault((d.arch, d.op, d.server), []).append(d)
    for v in verdicts:
        mine = by_key.get((v.arch, v.op, v.group))
        if not mine:
            yield v
            continue
        beyond = sum(1 for d in mine if d.beyond_noise)
        tail = f"ranks disagree in {len(mine)} bucket(s)"
        if beyond:
            tail += f", {beyond} beyond measurement noise"
        elif all(d.beyond_noise is None for d in mine):
            tail += " (no measured times to say whether it matters)"
        yield structs.replace(v, text=f"{v.text}; {tail}", rank_disagreements=tuple(mine))


def with_failure_counts(verdicts: Iterable["Verdict"], events: Sequence[Any],
                        group_of: Mapping[str, Optional[str]]) -> Iterable["Verdict"]:
    """Each op's verdict with TensorRT-LLM's own count of its failed (runner, profile) pairs, where the log's
    `Total failed profiling tactics occurs: N for custom_op=OP` states more failures than it printed lines for:
    later writers log an op's failure once per rank (`warning_once`), so the failure lines alone undercount.
    Ranks (the logger's `[RANK r]`) are summed, each rank's count taken once."""
    per_rank: dict[tuple[str, Optional[str]], dict[Any, tuple[int, int]]] = {}
    evidence: dict[tuple[str, Optional[str]], Evidence] = {}
    for e in events:
        if e.kind != "tuning_failures_counted":
            continue
        op, n, seen = e.fact("op"), e.fact("failed"), e.fact("failure_lines")
        if not (isinstance(op, str) and isinstance(n, int) and isinstance(seen, int)):
            continue
        key = (op, group_of.get(e.source))
        ranks = per_rank.setdefault(key, {})
        rank = (e.source, e.fact("rank"))
        ranks[rank] = max(ranks.get(rank, (0, 0)), (n, seen))
        if e.line and key not in evidence:
            evidence[key] = Evidence(e.source, e.line, e.text)
    for v in verdicts:
        ranks = per_rank.get((v.op, v.group), {})
        n, seen = sum(c for c, _ in ranks.values()), sum(s for _, s in ranks.values())
        if n <= seen:
            yield v
            continue
        named = [r for _src, r in ranks if r is not None]
        over = f" over {len(named)} ranks" if len(named) > 1 else ""
        tail = (f"TensorRT-LLM counted {n} failed (runner, profile) pair(s) for this op{over}, {seen} with a line in "
                "the log (it prints an op's failure once)")
        ev = evidence.get((v.op, v.group))
        yield structs.replace(v, text=f"{v.text}; {tail}", evidence=v.evidence + ((ev,) if ev is not None else ()))


def _not_run_reason(error: Optional[str], width: int = 80) -> str:
    """The first clause of why a retry engine could not start a tactic (its ledger message)."""
    text = " ".join((error or "").split()).removeprefix("engine_error: ")
    head = text.split("; ", 1)[0].strip() or "no reason recorded"
    from tiletune.core.words import clip_words

    return clip_words(head, width)


def _reason_head(reason: str, width: int = 100) -> str:
    """The gist of an undecoded reason: its first clause ('ambiguous', 'FlashInfer version unknown ...')."""
    from tiletune.core.words import clip_words

    head = reason.split(":", 1)[0].strip() if ":" in reason[:width] else reason.strip()
    return clip_words(head, width)


def _attempt_label(a: AnalyzedEntry) -> str:
    """A retried attempt as a tile: its decoded config, else the config a retry ledger recorded it
    built (a target with no tactic), else its tactic."""
    from tiletune.analysis.failures import recorded_config

    config = a.config or recorded_config(a.record)
    return config.label() if config is not None else f"tactic {_tactic_text(a.record.tactic)}"


def _failure_label(f: "Failure") -> str:
    if f.config is not None:
        return f.config.label()
    if f.tactic is None:
        return "tactics the log does not name (runner not named)"
    return f"tactic {_tactic_text(f.tactic)}"


def _tactic_text(t: Any) -> str:
    """A tactic as FlashInfer prints it: a compound tactic is a list ([32, 15]), never a Python tuple."""
    return repr(list(t)).replace("'", "") if isinstance(t, tuple) else str(t)


_NO_CONFIG = re.compile(r"no valid GEMM config for shape \(m=(?P<m>\d+), n=(?P<n>\d+), k=(?P<k>\d+)\)")


def _reason_phrase(f: "Failure", skipped: Optional[dict] = None) -> str:
    if f.tactic is None and skipped is not None:
        from tiletune.analysis.run_verdicts import skipped_phrase

        phrase = skipped_phrase(f, skipped)
        if phrase:
            return phrase
    from tiletune.core.error_text import short_error  # (read only where a failure is phrased)

    r = f.reason
    if r.kind == "smem" and r.need_bytes is not None and r.limit_bytes is not None:
        src = "" if r.basis == "error text" else " by the model"
        err = short_error(f.error) + ": " if f.error else ""
        return f"{err}shared memory {r.need_bytes:,} B > {r.limit_bytes:,} B{src}"
    if r.kind == "runtime" and r.model_disagrees:
        return f"{short_error(f.error)}; not explained by shared memory"
    if r.kind == "not_instantiated":
        return "never instantiated"
    if f.tactic is None and "INFO" in f.error:
        return "INFO summary only: which tactics and why is logged at DEBUG"
    if f.diagnosis in ("wrong_results", "timeout"):  # the error text alone does not say which kind
        return r.summary
    return short_error(f.error) if f.error else r.summary
