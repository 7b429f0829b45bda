"""A log and the cache it saved or loaded: the log's records take that cache's release, arch and GPU.

A FlashInfer DEBUG log states no FlashInfer version and often no arch or GPU, so its tactics would
decode against no release and its section would say "unknown arch". But the autotuner writes
"Saved N configs to PATH" and "Loaded N configs from PATH", and users attach that very cache
beside the log. When PATH is a cache read in the same invocation (the same file, or a file of the
same name in the log's own folder: a run's files copied together keep their names), the log's
records take what that cache's `_metadata` states, each labelled as inferred with the log line it
rests on. Nothing is taken when the log states a different release, arch or GPU itself (then the
two are different runs), or when the log names caches that state different environments.

Seen on real files: bench/h200_074 (FlashInfer 0.7.4 on an H200: the log and the cache it saved
were shown as two groups, the log's as "unknown arch, flashinfer version unknown").
"""

from __future__ import annotations

import os.path
from typing import Optional, Sequence

from msgspec.structs import replace

from tiletune.core.events import Event, Fact, InputFacts
from tiletune.core.records import Environment, InputProblem, TuningRecord

_CACHE_KINDS = frozenset(("flashinfer-v1",))
_NAMING_EVENTS = {"configs_saved": "saved", "configs_loaded": "loaded"}
_FIELDS = ("flashinfer_version", "arch", "gpu")


def _real(path: str) -> str:
    return os.path.realpath(path) if path not in ("", "-", "<stdin>") else path


def _cache_envs(records: Sequence[TuningRecord]) -> dict[str, Optional[Environment]]:
    """cache source -> the one environment its records state (None where they state several)."""
    envs: dict[str, Optional[Environment]] = {}
    for r in records:
        if r.source_kind not in _CACHE_KINDS:
            continue
        env = r.env
        if not (env.flashinfer_version or env.arch or env.gpu):
            continue
        if r.source not in envs:
            envs[r.source] = env
        elif envs[r.source] is not None and envs[r.source] != env:
            envs[r.source] = None
    return envs


def _named_cache(log: str, named: str, caches: dict[str, Optional[Environment]]) -> Optional[str]:
    """The cache input a log's "Saved/Loaded ... PATH" names, if one was read."""
    real = _real(named)
    folder = os.path.dirname(_real(log))
    base = os.path.basename(named.replace("\\", "/"))
    for source in caches:
        if _real(source) == real:
            return source
    for source in caches:
        if os.path.basename(source) == base and os.path.dirname(_real(source)) == folder:
            return source
    return None


def adopt_named_caches(records: list[TuningRecord], events: Sequence[Event], inputs: list[InputFacts],
                       problems: list[InputProblem]) -> tuple[list[TuningRecord], list[InputFacts]]:
    """Records and input facts of each log that names a cache read beside it, completed from that
    cache's environment (module docstring); a note per log says what was taken and why."""
    naming = [e for e in events if e.kind in _NAMING_EVENTS and isinstance(e.fact("path"), str)]
    if not naming:
        return records, inputs  # most runs: no log names a cache, and the records are not walked
    caches = _cache_envs(records)
    if not caches:
        return records, inputs
    # log -> (cache source, event) for each cache it names
    named: dict[str, list[tuple[str, Event]]] = {}
    for e in naming:
        source = _named_cache(e.source, e.fact("path"), caches)
        if source is not None and source != e.source and caches[source] is not None:
            named.setdefault(e.source, []).append((source, e))
    if not named:
        return records, inputs
    facts_of = {f.source: f for f in inputs}
    adopted: dict[str, tuple[Environment, str, Event, dict[str, str]]] = {}
    for log, hits in named.items():
        envs = {id(caches[s]): caches[s] for s, _ in hits}
        if len({(e.flashinfer_version, e.arch, e.gpu) for e in envs.values() if e is not None}) != 1:
            continue  # caches of different environments: which run the log is, is not known
        cache, event = hits[0]
        env = caches[cache]
        assert env is not None
        # what the log states itself: its records' environment and its text's facts
        own = [r.env for r in records if r.source == log]
        info = facts_of.get(log)
        stated = {f: {getattr(e, f) for e in own if getattr(e, f)} for f in _FIELDS}
        if info is not None:
            for f in _FIELDS:
                fact = getattr(info, f)
                if fact is not None and fact.value:
                    stated[f].add(str(fact.value))
        if any(vals and vals != {getattr(env, f)} for f, vals in stated.items() if getattr(env, f)):
            continue  # the log states another release, arch or GPU: another run
        take = {f: getattr(env, f) for f in _FIELDS if getattr(env, f) and not stated[f]}
        if take:
            adopted[log] = (env, cache, event, take)
    if not adopted:
        return records, inputs
    out: list[TuningRecord] = []
    for r in records:
        a = adopted.get(r.source) if r.source_kind == "log" else None
        if a is None:
            out.append(r)
            continue
        env, cache, event, take = a
        basis = f"inferred: {os.path.basename(r.source)}:{event.line} {_NAMING_EVENTS[event.kind]} {os.path.basename(cache)}"
        new = dict(take)
        if "arch" in take:
            new["arch_source"] = basis
        if "flashinfer_version" in take:
            new["version_source"] = basis
        out.append(replace(r, env=replace(r.env, **new)))
    new_inputs: list[InputFacts] = []
    for info in inputs:
        a = adopted.get(info.source)
        if a is None:
            new_inputs.append(info)
            continue
        env, cache, event, take = a
        where = f"the cache this log {_NAMING_EVENTS[event.kind]} ({os.path.basename(cache)}), whose _metadata states it"
        new_inputs.append(replace(info, **{f: Fact(v, "inferred", where, event.line, event.text) for f, v in take.items()}))
    for log, (_env, cache, event, take) in adopted.items():
        said = ", ".join(f"{'FlashInfer ' if f == 'flashinfer_version' else ''}{v}" for f, v in take.items())
        problems.append(InputProblem(log, f"{log}: {said} inferred from {cache}, the cache this log "
                                          f"{_NAMING_EVENTS[event.kind]} (line {event.line}), whose _metadata states it",
                                     fatal=False, loses_data=False))
    return out, new_inputs
