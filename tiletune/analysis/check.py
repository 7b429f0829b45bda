"""`tiletune check`: will these cache files be used where they are going, and will the ranks agree?

Three decisions are made before a server uses a saved FlashInfer v1 cache, each by its own code
(rules read from each release's source: analysis/cache_rules.py, data/cache_rules.json):

1. FlashInfer's `load_configs` (per file): every field `_collect_metadata()` fills on the target
   must equal the file's `_metadata` value or be the wildcard "*"; otherwise the whole file is
   ignored ("Cache file ... was created in a different environment ... Ignoring cached configs").
   From 0.6.15.post1 a mismatch whose saved value is indeterminate (null, "unknown", "None", or the
   field missing) is soft: still ignored, but the next save overwrites the file. A file without
   `_metadata` is loaded unchecked.
2. vLLM (per data-parallel engine, files `autotune_configs_dp{d}_rank{r}.json`): the files are
   loaded only if every rank has one, all with the same fingerprint (`_metadata` and entry count),
   and every rank's FlashInfer loads its file; otherwise every rank tunes from scratch.
3. SGLang (per TP group, files `rank_tp{t}_pp{p}_dp{d}.json`, TP > 1): every rank hashes its file
   with FlashInfer's metadata of its environment; unless all hashes are equal (the same content on
   every rank) every rank deletes its file and the group tunes from scratch.

The target environment is what FlashInfer on the target computes (`tiletune doctor -f json` runs
the target release's own `_collect_metadata()` when it can, else infers what it can from package
metadata): a field whose target value is unknown makes a verdict "unknown" unless another field
already decides. Which keys differ between ranks is shown in tile terms (decoded tactics).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from msgspec import Struct

from tiletune.analysis.cache_rules import FlashInferRule, engine_rule, flashinfer_rule
from tiletune.core.moe_key_extras import by_name
from tiletune.core.records import Decoded, Entry, InputProblem, TuningRecord

# the reader kinds whose files FlashInfer's load_configs reads (v1 JSON, whatever layout placed them)
V1_KINDS = ("flashinfer-v1", "vllm", "sglang")
_VLLM_NAME = re.compile(r"^autotune_configs_dp(\d+)_rank(\d+)\.json$")
_SGLANG_NAME = re.compile(r"^rank_tp(\d+)_pp(\d+)_dp(\d+)(?:_gpu[\w-]+)?\.json$")
_RANK_FIELDS = ("tp_rank", "ep_rank", "cluster_rank")


class TargetEnv(Struct, frozen=True):
    """The environment that will load the files: FlashInfer's metadata values there, and how known."""

    release: Optional[str]  # the FlashInfer release installed there (None: none, or not known)
    values: Tuple[Tuple[str, Optional[str]], ...]  # field -> value there (None: not known)
    basis: Tuple[Tuple[str, str], ...]  # field -> how the value is known
    source: str  # one line: where the values come from (a doctor file, this host)

    def value(self, field: str) -> Optional[str]:
        return dict(self.values).get(field)


class FieldCheck(Struct, frozen=True):
    """One `_metadata` field compared the way the target's FlashInfer compares it."""

    name: str
    saved: Any  # the file's value (None: absent or null)
    target: Optional[str]
    state: str  # "same", "wildcard", "hard", "soft" (differs), "unknown" (target value not known)
    basis: str  # how the target's value is known
    why: Optional[str] = None  # what the difference means, where the values say it


class FileVerdict(Struct, frozen=True):
    path: str
    layout: str  # reader kind: flashinfer-v1, vllm, sglang
    rank: Optional[str]  # as the file name says: dp0_rank1, tp1_pp0_dp0
    verdict: str  # "used", "ignored", "unknown", "unreadable"
    reason: str  # one sentence naming the field(s) that decide
    deciding: Tuple[str, ...]  # the fields that decide (ignored: those that differ; unknown: those not known)
    fields: Tuple[FieldCheck, ...]
    entries: Optional[int]  # top-level keys other than `_metadata` (vLLM's count)
    severity: Optional[str] = None  # ignored: "hard" (never overwritten) or "soft" (overwritten by the next save)


class RankChoice(Struct, frozen=True):
    rank: str
    tactic: Optional[str]  # None: this rank's file has no entry for the key
    tile: Optional[str]  # the decoded tile (label), None when not decoded
    time_ms: Optional[float] = None


class KeyDifference(Struct, frozen=True):
    """One cache key whose chosen tactic is not the same on every rank of a group."""

    op: str
    runner: str
    problem: str  # "M<=128 N=4608 K=7168" when the key decodes to a problem, else the raw shapes
    choices: Tuple[RankChoice, ...]


class GroupVerdict(Struct, frozen=True):
    engine: str  # "vllm" or "sglang"
    directory: str
    group: str  # "dp0" (vLLM), "pp0_dp0" (SGLang)
    ranks: Tuple[str, ...]  # the ranks that have a file
    missing: Tuple[str, ...]  # ranks below the highest one that have none
    verdict: str  # "kept", "discarded", "unknown"
    reason: str
    rule: str  # the engine release whose source the rule was read from, and the rule
    differences: Tuple[KeyDifference, ...] = ()
    differences_total: int = 0
    same_keys: int = 0  # keys every rank has with the same tactic


class CheckResult(Struct, frozen=True):
    target: TargetEnv
    rule: Optional[FlashInferRule]
    files: Tuple[FileVerdict, ...]
    groups: Tuple[GroupVerdict, ...]
    problems: Tuple[InputProblem, ...]

    @property
    def misses(self) -> int:
        """Files FlashInfer will ignore, plus rank groups an engine will discard."""
        return sum(f.verdict in ("ignored", "unreadable") for f in self.files) + sum(g.verdict == "discarded" for g in self.groups)

    @property
    def unknowns(self) -> int:
        return sum(f.verdict == "unknown" for f in self.files) + sum(g.verdict == "unknown" for g in self.groups)


class StoreFacts(Struct, frozen=True):
    """A FlashInfer managed (v2) store as found on disk: `<root>/v2/<env hash>/`."""

    manifest: Any  # manifest.json, parsed (None: missing or unreadable)
    directory_name: str
    manifest_hash: Optional[str]  # what FlashInfer computes from that manifest (the directory it looks in)
    entries: int
    misplaced: Tuple[str, ...] = ()  # entry files whose name is not their key's hash: FlashInfer never reads them


def store_verdict(path: str, facts: StoreFacts, target: TargetEnv) -> FileVerdict:
    """Will the target's FlashInfer `autotune_v2` use this store? It looks only in `<root>/v2/<hash of the manifest
    it computes there>`: `_collect_metadata()` + `cache_schema` + its MeasurementPolicy's non-default fields. So
    every environment field must be equal (no wildcard, no soft mismatch), and the directory must be named
    by its own manifest's hash."""
    m = facts.manifest
    if not isinstance(m, dict):
        return FileVerdict(path, "flashinfer-v2", None, "unreadable", "no readable manifest.json: not a store FlashInfer "
                           "wrote (it writes the manifest before any entry)", (), (), facts.entries)
    if facts.manifest_hash != facts.directory_name:
        return FileVerdict(path, "flashinfer-v2", None, "ignored",
                           f"the directory is named {facts.directory_name} but its manifest hashes to {facts.manifest_hash}: "
                           "FlashInfer looks in the directory its own manifest hashes to, never in this one (was the "
                           "manifest edited, or the directory renamed?).", ("manifest",), (), facts.entries, "hard")
    basis = dict(target.basis)
    policy = {k: v for k, v in m.items() if k.startswith("measure_")}
    names = [k for k in m if k != "cache_schema" and not k.startswith("measure_")]
    names += [k for k, _v in target.values if k not in m]
    checks = []
    for name in names:
        saved, current = m.get(name), target.value(name)
        state = "unknown" if current is None else "same" if saved == current else "hard"
        checks.append(FieldCheck(name, saved, current, state, basis.get(name, "not known"),
                                 _why(name, saved, current) if state == "hard" else None))
    differ = tuple(c.name for c in checks if c.state == "hard")
    unknown = tuple(c.name for c in checks if c.state == "unknown")
    tail = ""
    if policy:
        tail = (" It also holds measurement policy fields (" + ", ".join(f"{k}={v}" for k, v in sorted(policy.items()))
                + "): only an autotune_v2 whose MeasurementPolicy sets them computes this manifest.")
    if facts.misplaced:
        tail += (f" {len(facts.misplaced)} of its {facts.entries} entry files are not named by their key's hash "
                 f"(e.g. {facts.misplaced[0]}): FlashInfer never reads them.")
    if differ:
        shown = "; ".join(f"{c.name}: " + (c.why or f"store {_show(c.saved)} vs target {_show(c.target)}")
                          for c in checks if c.name in differ)
        return FileVerdict(path, "flashinfer-v2", None, "ignored",
                           f"the target's FlashInfer looks in another directory (its manifest differs): {shown}.{tail}",
                           differ, tuple(checks), facts.entries, "hard")
    if unknown:
        return FileVerdict(path, "flashinfer-v2", None, "unknown",
                           f"every manifest field matches except {', '.join(unknown)}, whose target value is not known.{tail}",
                           unknown, tuple(checks), facts.entries)
    return FileVerdict(path, "flashinfer-v2", None, "used",
                       f"the target computes this manifest ({len(checks)} fields equal), so autotune_v2 looks here.{tail}",
                       (), tuple(checks), facts.entries)


# --- FlashInfer's per-file rule ------------------------------------------------------------------

def file_verdict(path: str, layout: str, raw: Any, rule: Optional[FlashInferRule], target: TargetEnv) -> FileVerdict:
    """What the target's FlashInfer `load_configs` does with this parsed file."""
    rank = rank_of(Path(path).name)
    if not isinstance(raw, dict):
        return FileVerdict(path, layout, rank, "unreadable", "not a JSON object: load_configs fails on it (no entry is loaded)",
                           (), (), None)
    entries = sum(1 for k in raw if k != "_metadata")
    if rule is None:
        why = ("the target has no FlashInfer release named" if target.release is None
               else f"FlashInfer {target.release} reads no JSON cache (the first release that does is 0.6.7)")
        return FileVerdict(path, layout, rank, "unknown" if target.release is None else "ignored", why + ".", (), (), entries)
    meta = raw.get("_metadata")
    if meta is None and rule.no_metadata_loaded:
        return FileVerdict(path, layout, rank, "used", f"no _metadata: FlashInfer {rule.release} loads it unchecked.",
                           (), (), entries)
    saved_meta = meta if isinstance(meta, dict) else {}  # a non-object _metadata: every field missing
    basis = dict(target.basis)
    checks: List[FieldCheck] = []
    for name in rule.fields:
        saved = saved_meta.get(name)
        current = target.value(name)
        b = basis.get(name, "not known")
        if rule.wildcard is not None and saved == rule.wildcard:
            state = "wildcard"
        elif current is None:
            state = "unknown"
        elif saved == current:
            state = "same"
        elif rule.indeterminate and saved in rule.indeterminate:
            state = "soft"
        else:
            state = "hard"
        checks.append(FieldCheck(name, saved, current, state, b, _why(name, saved, current) if state in ("hard", "soft") else None))
    hard = tuple(c.name for c in checks if c.state == "hard")
    soft = tuple(c.name for c in checks if c.state == "soft")
    unknown = tuple(c.name for c in checks if c.state == "unknown")
    by = f"FlashInfer {rule.release}"
    if hard or soft:
        differ = hard + soft
        shown = "; ".join(f"{c.name}: " + (c.why or f"file {_show(c.saved)} vs target {_show(c.target)}")
                          for c in checks if c.name in differ)
        sev = "hard" if hard else "soft"
        tail = (" (the file is never overwritten: use another path or delete it)" if hard
                else " (indeterminate saved values: the next save overwrites the file)")
        return FileVerdict(path, layout, rank, "ignored", f"{by} ignores the whole file: {shown}{tail}.", differ,
                           tuple(checks), entries, sev)
    if unknown:
        return FileVerdict(path, layout, rank, "unknown",
                           f"every field {by} compares matches except {', '.join(unknown)}, whose target value is not known.",
                           unknown, tuple(checks), entries)
    return FileVerdict(path, layout, rank, "used", f"{by} loads it: all {len(checks)} compared fields match.", (),
                       tuple(checks), entries)


def _dsl_stack(value: Any) -> Optional[Dict[str, Tuple[str, str]]]:
    """0.7.x cutlass_dsl_version 'tag;soabi;name==version:sha256;...' -> {name: (version, hash)}."""
    if not isinstance(value, str) or "==" not in value:
        return None
    out = {}
    for part in value.split(";"):
        if "==" in part:
            name, _, rest = part.partition("==")
            version, _, digest = rest.partition(":")
            out[name] = (version, digest)
    return out


def _why(name: str, saved: Any, current: Optional[str]) -> Optional[str]:
    if name == "cutlass_dsl_version":
        a, b = _dsl_stack(saved), _dsl_stack(current)
        if a is None or b is None:
            return None
        if {k: v[0] for k, v in a.items()} == {k: v[0] for k, v in b.items()}:
            changed = sorted(k for k in a if a[k][1] != b[k][1])
            return (f"the same package versions, installed differently ({', '.join(changed)}): FlashInfer hashes each "
                    "package's RECORD file, which changes with the venv's path when the package has console scripts")
        added = sorted(set(b) - set(a))
        gone = sorted(set(a) - set(b))
        moved = sorted(f"{k} {a[k][0]} -> {b[k][0]}" for k in set(a) & set(b) if a[k][0] != b[k][0])
        bits = ([f"the target adds {', '.join(added)}"] if added else []) + ([f"lacks {', '.join(gone)}"] if gone else []) + moved
        return "; ".join(bits) or None
    if name == "flashinfer_version" and isinstance(saved, str):
        return f"written by FlashInfer {saved}"
    return None


def _show(v: Any) -> str:
    return "(absent)" if v is None else repr(v) if not isinstance(v, str) else f"'{v}'"


def rank_of(name: str) -> Optional[str]:
    m = _VLLM_NAME.match(name)
    if m:
        return f"dp{m.group(1)}_rank{m.group(2)}"
    m = _SGLANG_NAME.match(name)
    if m:
        return f"tp{m.group(1)}_pp{m.group(2)}_dp{m.group(3)}"
    return None


# --- the engines' rank rules ---------------------------------------------------------------------

class _Member(Struct, frozen=True):
    rank: int  # the rank within its group (vLLM world rank, SGLang tp rank)
    label: str
    verdict: FileVerdict
    raw: Any


def _groups(files: Sequence[Tuple[FileVerdict, Any]]) -> Dict[Tuple[str, str, str], List[_Member]]:
    out: Dict[Tuple[str, str, str], List[_Member]] = {}
    for fv, raw in files:
        p = Path(fv.path)
        if p.parent.name == "runs":  # SGLANG_FLASHINFER_AUTOTUNE_CACHE=0 writes these and never reads them back
            continue
        m = _VLLM_NAME.match(p.name)
        if m:
            out.setdefault(("vllm", str(p.parent), f"dp{m.group(1)}"), []).append(_Member(int(m.group(2)), fv.rank or "", fv, raw))
            continue
        m = _SGLANG_NAME.match(p.name)
        if m:
            out.setdefault(("sglang", str(p.parent), f"pp{m.group(2)}_dp{m.group(3)}"), []).append(
                _Member(int(m.group(1)), fv.rank or "", fv, raw))
    return out


def _vllm_fingerprint(raw: Any) -> Optional[Tuple[str, int]]:
    """vLLM's `_autotune_cache_fingerprint`: (_metadata as sorted JSON, entry count); None for a non-object."""
    import json

    if not isinstance(raw, dict):
        return None
    rest = dict(raw)
    meta = rest.pop("_metadata", None)
    return json.dumps(meta, sort_keys=True), len(rest)


def _missing(members: Sequence[_Member], prefix: str, suffix: str, ranks: Optional[int]) -> Tuple[str, ...]:
    have = {m.rank for m in members}
    return tuple(f"{prefix}{r}{suffix}" for r in range(max(max(have) + 1, ranks or 0)) if r not in have)


def _assumed(members: Sequence[_Member], ranks: Optional[int]) -> str:
    """The caveat when the group's size was not given: a missing highest rank cannot be seen."""
    return "" if ranks else f" (taking the group to be the {len(members)} rank(s) found: give --ranks to check for missing ones)"


def vllm_group(directory: str, group: str, members: Sequence[_Member], ranks: Optional[int] = None) -> GroupVerdict:
    release, rule = engine_rule("vllm")
    members = sorted(members, key=lambda m: m.rank)
    dp = group[2:]
    missing = _missing(members, f"dp{dp}_rank", "", ranks)
    labels = tuple(m.label for m in members)
    rule_text = f"vLLM {release}: {rule['keep']}"
    if missing:
        return GroupVerdict("vllm", directory, group, labels, missing, "discarded",
                            f"{', '.join(missing)} {'has' if len(missing) == 1 else 'have'} no file: every rank tunes from scratch "
                            "(if the group is larger than the highest rank seen, those ranks are missing too).", rule_text)
    prints = [(m, _vllm_fingerprint(m.raw)) for m in members]
    if any(fp is None for _, fp in prints):
        bad = ", ".join(m.label for m, fp in prints if fp is None)
        return GroupVerdict("vllm", directory, group, labels, (), "discarded", f"{bad}: not a JSON object, no fingerprint.", rule_text)
    first = prints[0][1]
    differ = [(m, fp) for m, fp in prints if fp != first]
    if differ:
        details = []
        for m, fp in differ:
            assert fp is not None and first is not None
            what = []
            if fp[0] != first[0]:
                what.append("_metadata differs")
            if fp[1] != first[1]:
                what.append(f"{fp[1]} entries against {first[1]} on {members[0].label}")
            details.append(f"{m.label}: {', '.join(what)}")
        return GroupVerdict("vllm", directory, group, labels, (), "discarded",
                            "fingerprints differ (" + "; ".join(details) + "): every rank tunes from scratch.", rule_text)
    return _after_flashinfer("vllm", directory, group, members, labels, rule_text,
                             "every rank has a file with the same fingerprint" + _assumed(members, ranks))


def sglang_group(directory: str, group: str, members: Sequence[_Member], ranks: Optional[int] = None) -> GroupVerdict:
    release, rule = engine_rule("sglang")
    members = sorted(members, key=lambda m: m.rank)
    pp_dp = group
    labels = tuple(m.label for m in members)
    rule_text = f"SGLang {release}: {rule['keep']}"
    missing = _missing(members, "tp", f"_{pp_dp}", ranks)
    if len(members) == 1 and not missing:
        return _after_flashinfer("sglang", directory, group, members, labels,
                                 f"SGLang {release}: with one TP rank no digests are compared", "one TP rank" + _assumed(members, ranks))
    if missing:
        return GroupVerdict("sglang", directory, group, labels, missing, "discarded",
                            f"{', '.join(missing)} {'has' if len(missing) == 1 else 'have'} no file (digest ''): "
                            "every rank deletes its file and the group tunes from scratch.", rule_text)
    # The digest hashes the parsed file with the (shared) target environment: equal digests <=> equal content.
    first = members[0].raw
    differ = [m for m in members[1:] if not isinstance(m.raw, dict) or m.raw != first]
    if not isinstance(first, dict) or differ:
        names = ", ".join(m.label for m in differ) or members[0].label
        return GroupVerdict("sglang", directory, group, labels, (), "discarded",
                            f"the files' contents differ ({names} against {members[0].label}): every rank deletes its file "
                            "and the group tunes from scratch.", rule_text)
    return _after_flashinfer("sglang", directory, group, members, labels, rule_text,
                             "every rank's file has the same content" + _assumed(members, ranks))


def _after_flashinfer(engine: str, directory: str, group: str, members: Sequence[_Member], labels: Tuple[str, ...],
                      rule_text: str, agreed: str) -> GroupVerdict:
    """The engine keeps the files only if FlashInfer then loads every rank's file."""
    ignored = [m for m in members if m.verdict.verdict in ("ignored", "unreadable")]
    unknown = [m for m in members if m.verdict.verdict == "unknown"]
    if ignored:
        fields = sorted({f for m in ignored for f in m.verdict.deciding})
        return GroupVerdict(engine, directory, group, labels, (), "discarded",
                            f"{agreed}, but FlashInfer ignores {', '.join(m.label for m in ignored)} ({', '.join(fields) or 'unreadable'}): "
                            + ("every rank clears what it loaded and tunes from scratch." if engine == "vllm"
                               else "those ranks tune from scratch."), rule_text)
    if unknown:
        fields = sorted({f for m in unknown for f in m.verdict.deciding})
        return GroupVerdict(engine, directory, group, labels, (), "unknown",
                            f"{agreed}; whether FlashInfer loads them depends on {', '.join(fields)} (not known for the target).",
                            rule_text)
    return GroupVerdict(engine, directory, group, labels, (), "kept", f"{agreed} and FlashInfer loads every one.", rule_text)


# --- differences between ranks in tile terms ----------------------------------------------------

MAX_DIFFERENCES = 50  # per group in the result; the count says how many there were


def key_of(rec: TuningRecord) -> Tuple[Any, ...]:
    """A key with the rank indices a 0.6.18rc2-0.7.1 fused-MoE key carries taken out (ranks tune the same problem)."""
    extras: Any = rec.extras
    named = by_name(extras)
    if named is not None and "tp_rank" in named:
        extras = tuple(v for k, v in named.items() if k not in _RANK_FIELDS)
    return (rec.op, rec.runner, rec.shapes if rec.shapes is not None else rec.raw_key, extras)


def tile_text(entry: Entry) -> Optional[str]:
    return entry.decode.config.label() if isinstance(entry.decode, Decoded) else None


def problem_text(entry: Entry) -> str:
    p = entry.problem
    if p is None:
        return str(entry.record.shapes if entry.record.shapes is not None else entry.record.raw_key)
    rng = (f"M<={p.m}" if p.m_range is None else f"M={p.m_range[0]}" if p.m_range[0] == p.m_range[1]
           else f"M {p.m_range[0]}-{p.m_range[1]}")
    return f"{rng} N={p.n} K={p.k}" + (f" batch={p.batch}" if p.batch != 1 else "")


def rank_differences(group: GroupVerdict, entries: Iterable[Entry], paths: Dict[str, str]) -> GroupVerdict:
    """`group` with the keys whose tactic differs between its ranks (`paths`: file -> rank label)."""
    from msgspec.structs import replace

    per_key: Dict[Tuple[Any, ...], Dict[str, Entry]] = {}
    for e in entries:
        rank = paths.get(e.record.source)
        if rank is None or e.record.status.value != "chosen":
            continue
        per_key.setdefault(key_of(e.record), {})[rank] = e
    diffs: List[Tuple[Tuple[Any, ...], KeyDifference]] = []
    same = 0
    for key in sorted(per_key, key=repr):
        by_rank = per_key[key]
        tactics = {repr(by_rank[r].record.tactic) if r in by_rank else None for r in group.ranks}
        if len(tactics) == 1:
            same += 1
            continue
        any_e = next(iter(by_rank.values()))
        choices = tuple(RankChoice(r, repr(by_rank[r].record.tactic) if r in by_rank else None,
                                   tile_text(by_rank[r]) if r in by_rank else None,
                                   by_rank[r].record.time_ms if r in by_rank else None) for r in group.ranks)
        order = (any_e.record.op, any_e.record.runner, any_e.problem.m if any_e.problem else 0, len(diffs))
        diffs.append((order, KeyDifference(any_e.record.op, any_e.record.runner, problem_text(any_e), choices)))
    diffs.sort(key=lambda x: x[0])
    return replace(group, differences=tuple(d for _, d in diffs[:MAX_DIFFERENCES]), differences_total=len(diffs), same_keys=same)


def check(sources: Sequence[Tuple[str, str]], raw: Dict[str, Any], entries: Sequence[Entry], target: TargetEnv,
          problems: Sequence[InputProblem] = (), ranks: Optional[int] = None,
          stores: Optional[Dict[str, StoreFacts]] = None) -> CheckResult:
    """Every v1 file's FlashInfer verdict and every rank group's engine verdict.

    `sources`: (path, reader kind) of each input read; `raw`: path -> the parsed file (or an
    InputProblem's message when it could not be parsed); `entries`: the decoded records of them all;
    `ranks`: the ranks of each group (vLLM: tensor x pipeline parallel size; SGLang: TP size), when known.
    """
    rule = flashinfer_rule(target.release) if target.release else None
    verdicts: List[Tuple[FileVerdict, Any]] = []
    for path, kind in sources:
        if kind not in V1_KINDS or path not in raw:
            continue
        obj = raw[path]
        verdicts.append((file_verdict(path, kind, obj, rule, target), obj))
    store_verdicts = [store_verdict(path, facts, target) for path, facts in (stores or {}).items()]
    groups: List[GroupVerdict] = []
    by_source: Dict[str, List[Entry]] = {}
    for e in entries:
        by_source.setdefault(e.record.source, []).append(e)
    for (engine, directory, name), members in sorted(_groups(verdicts).items()):
        g = vllm_group(directory, name, members, ranks) if engine == "vllm" else sglang_group(directory, name, members, ranks)
        if len(members) > 1:
            paths = {m.verdict.path: m.label for m in members}
            g = rank_differences(g, (e for p in paths for e in by_source.get(p, ())), paths)
        groups.append(g)
    return CheckResult(target, rule, tuple(v for v, _ in verdicts) + tuple(store_verdicts), tuple(groups), tuple(problems))


__all__ = ["CheckResult", "FieldCheck", "FileVerdict", "GroupVerdict", "KeyDifference", "RankChoice", "StoreFacts",
           "TargetEnv", "check", "file_verdict", "key_of", "problem_text", "store_verdict", "tile_text"]
