"""Autotuner messages about caches and stores rather than tactics: which cache FlashInfer ignored
and why, the managed v2 store's lifecycle, and the group-wide failures that end distributed tuning.

Texts, from the releases' sources (flashinfer/autotuner/autotuner.py, flashinfer/autotune_cache.py
of the 0.7.4 wheel; tools/flashinfer_writers drives the release to print the ones a CPU can):

- `Cache file {path} was created in a different environment ({k}: saved={a} vs current={b}, ...).
  Ignoring cached configs. {consequence}` (load_configs; v0.6.7 on) and `Not saving configs to
  {path}: the file was created in a different environment (...)` (save_configs; v0.6.16 on): a
  `cache_ignored` event naming each field that differs, soft (the saved value is indeterminate:
  None / "unknown" / "None", or missing: the next save replaces the file) or hard.
- `Managed autotune cache attached for this process: ManagedAutotuneCache(env_dir='...', ...)`,
  `Re-attaching managed autotune cache at {root} (was {old}, env {hash}).`, `Preloaded {n}/{total}
  managed cache entries into memory[ ({k} not preloadable, served lazily)]`, `autotune_v2_reload():
  ...`, `autotune_v2(persistent_cache=False): ...`, `Managed cache preload skipped ({e}); ...`:
  `managed_cache` events; `Ignoring invalid managed cache entry {path} for key {key}: {e}.
  Treating as a cache miss.` a `cache_miss` event; `Failed to persist managed cache entry for
  {key} under {dir}: {e}. ...` and `Failed to remove managed cache entry {key}: {e}` `managed_cache`
  events that say the store lost a write.
- `Autotune group plan mismatch at {phase!r}: local selection=...`, `Autotune group phase mismatch
  at {phase!r}`, `Autotune group failure at {phase!r}: {detail}`, `Distributed autotuning cannot
  synchronize during an active CUDA Graph capture` (`_TuningGroupError`, raised: ranks of one
  tuning group disagreed, e.g. on which cache entries they hit): a fatal `tuning_group_failed`
  event (read by readers/logs/events.py, as any raised line).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from tiletune.core.events import Fact

EventLog = Any  # readers/logs/events.EventLog (not imported: events.py reads the raised group texts itself)

INDETERMINATE = ("None", "unknown")  # FlashInfer's _INDETERMINATE_META_VALUES as they print (None -> "None")

_ENV_FIELD = re.compile(r"(?P<k>\w+): saved=(?P<saved>.*?) vs current=(?P<current>.*?)(?=, \w+: saved=|$)")
_IGNORED = re.compile(r"^(?:Cache file (?P<load>.+?) was created|Not saving configs to (?P<save>.+?): the file was created)"
                      r" in a different environment \((?P<fields>.*)\)\.(?: (?P<rest>.*))?$")
_ATTACHED = re.compile(r"Managed autotune cache attached for this process: ManagedAutotuneCache\(env_dir='(?P<dir>[^']*)'")
_REATTACH = re.compile(r"Re-attaching managed autotune cache at (?P<root>.+?) \(was (?P<old>.+?), env (?P<hash>\w+)\)")
_PRELOADED = re.compile(r"Preloaded (?P<n>\d+)/(?P<total>\d+) managed cache entries into memory(?: \((?P<skip>\d+) not preloadable)?")
_INVALID_ENTRY = re.compile(r"Ignoring invalid managed cache entry (?P<path>\S+) for key (?P<key>.*?): (?P<err>.*?)\. Treating as a cache miss")


def short(value: str, limit: int = 48) -> str:
    """A metadata value for a sentence: an environment fingerprint's hashes cut short."""
    v = re.sub(r":([0-9a-f]{12})[0-9a-f]{20,}", r":\1…", value)
    return v if len(v) <= limit else v[: limit - 1] + "…"


def environment_fields(text: str) -> list[tuple[str, str, str]]:
    """`k: saved=a vs current=b, ...` -> [(k, a, b)] in the order FlashInfer printed them."""
    return [(m["k"], m["saved"], m["current"]) for m in _ENV_FIELD.finditer(text)]


def cache_ignored(events: "EventLog", lineno: int, body: str) -> Optional[str]:
    """The `cache_ignored` event of a different-environment line; returns the cache path (None: not one)."""
    m = _IGNORED.match(body)
    if not m:
        return None
    fields = environment_fields(m["fields"])
    path = m["load"] or m["save"]
    loading = m["load"] is not None
    soft = bool(fields) and all(saved in INDETERMINATE for _k, saved, _c in fields)
    differs = "; ".join(f"{k} {short(a)} (saved) vs {short(b)} (running)" for k, a, b in fields) or "fields not printed"
    what = "ignored the cache" if loading else "did not save to the cache"
    consequence = ("every op it held was tuned again or ran its fallback" if loading
                   else "this run's results were not written to it")
    summary = (f"FlashInfer {what} {path}: it was created in a different environment ({differs}); {consequence}"
               + (" (the saved values are indeterminate: FlashInfer replaces the file on its next save)" if soft else ""))
    facts: dict[str, Fact] = {
        "path": Fact(path, "decoded", "log line"),
        "action": Fact("ignored on load" if loading else "not saved", "decoded", "log line"),
        "fields": Fact(tuple((k, a, b) for k, a, b in fields), "decoded", "log line: field, saved, current"),
        "severity": Fact("soft" if soft else "hard", "inferred",
                         "FlashInfer's rule: a saved value None/'unknown'/'None' is soft (healed on save), any other hard"),
    }
    events.add("cache_ignored", lineno, body, summary, facts, key=(path, loading, tuple(fields)))
    return path


def managed(events: "EventLog", lineno: int, body: str) -> bool:
    """The managed v2 store's messages; False when `body` is not one of them."""
    facts: dict[str, Fact]
    m = _ATTACHED.match(body)
    if m:
        env_dir = m["dir"]
        facts = {"env_dir": Fact(env_dir, "decoded", "log line"),
                 "env_hash": Fact(env_dir.rstrip("/").rsplit("/", 1)[-1], "decoded", "the store directory's name")}
        events.add("managed_cache", lineno, body, f"managed autotune store attached: {env_dir}", facts, key=("attached", env_dir))
        return True
    m = _REATTACH.match(body)
    if m:
        facts = {"root": Fact(m["root"], "decoded", "log line"), "previous_root": Fact(m["old"], "decoded", "log line"),
                 "previous_env_hash": Fact(m["hash"], "decoded", "log line")}
        events.add("managed_cache", lineno, body, f"managed autotune store re-attached at {m['root']} (was {m['old']})",
                   facts, key=("reattached", m["root"], m["old"]))
        return True
    m = _PRELOADED.match(body)
    if m:
        n, total, skip = int(m["n"]), int(m["total"]), int(m["skip"]) if m["skip"] else 0
        facts = {"preloaded": Fact(n, "decoded", "log line"), "entries": Fact(total, "decoded", "log line"),
                 "not_preloadable": Fact(skip, "decoded", "log line")}
        events.add("managed_cache", lineno, body, f"managed store: {n} of {total} entries preloaded"
                   + (f" ({skip} without key_fields, read lazily)" if skip else ""), facts, key=("preloaded", n, total, skip))
        return True
    m = _INVALID_ENTRY.match(body)
    if m:
        facts = {"entry": Fact(m["path"], "decoded", "log line"), "key": Fact(m["key"], "decoded", "log line"),
                 "error": Fact(m["err"], "decoded", "log line")}
        events.add("cache_miss", lineno, body, f"managed store entry {m['path']} ignored ({m['err']}): "
                   "a cache miss for its key", facts, key=("invalid_entry", m["path"]))
        return True
    for prefix, what in (("Managed autotune cache attached", "attached"), ("Re-attaching managed autotune cache", "re-attached"),
                         ("Preloaded ", "preloaded")):
        if body.startswith(prefix) and (what != "preloaded" or "managed cache entries" in body):
            # a form the patterns above do not parse (a release that reworded its values): the kind is known
            events.add("managed_cache", lineno, body, f"managed autotune store {what} ({body[:120]})",
                       {"text": Fact(body[:300], "decoded", "log line")}, key=(what, body[:200]))
            return True
    for prefix, summary, kind in (
        ("autotune_v2_reload()", "autotune_v2_reload(): in-memory winners dropped, the store's entries serve", "managed_cache"),
        ("autotune_v2(persistent_cache=False)", "autotune_v2(persistent_cache=False): no disk access in that context",
         "managed_cache"),
        ("Managed cache preload skipped", "managed store preload failed: entries are read lazily", "managed_cache"),
        ("Failed to persist managed cache entry", "a tuned winner was NOT written to the managed store (kept in memory only)",
         "managed_cache"),
        ("Failed to remove managed cache entry", "a managed store entry could not be removed before re-tuning", "managed_cache"),
        ("Ignoring protocol entry", "a managed store protocol entry was ignored", "managed_cache"),
    ):
        if body.startswith(prefix):
            events.add(kind, lineno, body, summary, {"text": Fact(body[:300], "decoded", "log line")}, key=(prefix, body[:200]))
            return True
    return False
