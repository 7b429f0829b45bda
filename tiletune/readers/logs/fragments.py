"""A FlashInfer cache (or part of one) pasted into a log or a ticket's text.

People paste caches into tickets cut short: `...` lines where entries were elided, a `_metadata`
block with or without its braces, `_`-prefixed header keys FlashInfer development builds add
(`_last_updated_by`). Each line of the form `"(<key tuple>)": [runner, tactic(, policy)]` is one
entry and is recovered on its own (the key parsed without eval by `tiletune.readers.keyparse`);
`_metadata` values become clues; elisions and unreadable entry lines are counted and noted.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, List, Optional, Tuple

from tiletune.core.events import Fact
from tiletune.core.records import Status, TuningRecord, freeze
from tiletune.readers.keyparse import parse_key

_ENTRY = re.compile(r'^\s*"(?P<key>\(.*\))"\s*:\s*(?P<value>\[.*\])\s*,?\s*$')
_ENTRY_OPEN = re.compile(r'^\s*"(?P<key>\(.*\))"\s*:\s*(?P<value>\[.*)$')  # a pretty-printed value follows
MAX_VALUE_LINES = 200
_META = re.compile(r'^\s*"(?P<name>_?[A-Za-z][\w]*)"\s*:\s*(?P<value>"[^"]*"|-?\d[\d.]*|true|false|null|\{)\s*,?\s*$')
_ELISION = re.compile(r'^\s*(?:\.\.\.|…|\[\.\.\.\]|"\.\.\."\s*(?::\s*\.\.\.)?|\.\.\.\s*\(.*\))\s*,?\s*$')
MAX_ENTRIES = 100_000


class CacheFragment:
    """Collects the entries, metadata and elisions of caches pasted in a text."""

    def __init__(self) -> None:
        self.entries: List[Tuple[int, str, Any]] = []  # (line, key text, value)
        self.metadata: dict[str, Any] = {}
        self.elided = 0
        self.unreadable = 0
        self.problems: List[str] = []
        self._first_line: Optional[int] = None
        self._in_fragment = False
        self._open: Optional[Tuple[int, str, List[str]]] = None  # (line, key, value lines so far)

    def feed(self, lineno: int, text: str) -> bool:
        """True when the line belongs to a pasted cache (and was taken)."""
        if self._open is not None:
            return self._continue_value(text)
        if '"' not in text and not self._in_fragment:
            return False
        m = _ENTRY.match(text)
        if not m:
            mo = _ENTRY_OPEN.match(text)
            if mo:
                self._open = (lineno, mo.group("key"), [mo.group("value")])
                self._mark(lineno)
                return True
        if m:
            try:
                value = json.loads(m.group("value"))
            except ValueError:
                self.unreadable += 1
                return True
            if len(self.entries) < MAX_ENTRIES:
                self.entries.append((lineno, m.group("key"), value))
            self._mark(lineno)
            return True
        if self._in_fragment and _ELISION.match(text):
            self.elided += 1
            return True
        m = _META.match(text)
        if m and (self._in_fragment or m.group("name") in ("_metadata", "flashinfer_version", "gpu", "_last_updated_by")):
            raw = m.group("value")
            if raw != "{":
                try:
                    self.metadata[m.group("name")] = json.loads(raw)
                except ValueError:
                    pass
            self._mark(lineno)
            return True
        return False

    def _continue_value(self, text: str) -> bool:
        assert self._open is not None
        lineno, key, parts = self._open
        parts.append(text.strip())
        joined = " ".join(parts).rstrip().rstrip(",")
        if joined.count("[") == joined.count("]"):
            self._open = None
            try:
                value = json.loads(joined)
            except ValueError:
                self.unreadable += 1
                return True
            if len(self.entries) < MAX_ENTRIES:
                self.entries.append((lineno, key, value))
        elif len(parts) > MAX_VALUE_LINES or _ELISION.match(text):
            self._open = None
            self.unreadable += 1
        return True

    def finish(self) -> None:
        """An entry whose value the text cut off is counted as unreadable."""
        if self._open is not None:
            self._open = None
            self.unreadable += 1

    def _mark(self, lineno: int) -> None:
        self._in_fragment = True
        if self._first_line is None:
            self._first_line = lineno

    def records(self, parser: Any) -> Iterator[TuningRecord]:
        """One CHOSEN record per recovered entry, with the environment the whole text implies
        (`parser`: the LogParser whose source, environment and events the entries join)."""
        self.finish()
        if not self.entries and not self.metadata:
            return
        recovered = 0
        for lineno, key, value in self.entries:
            try:
                pk = parse_key(key)
            except (ValueError, RecursionError):
                self.unreadable += 1
                continue
            if not isinstance(value, list) or len(value) < 2:
                self.unreadable += 1
                continue
            recovered += 1
            detail = [("pasted_cache", True)]
            if len(value) >= 3:
                detail.append(("profiling_policy", freeze(value[2])))
            yield TuningRecord(parser.source, "log", pk.op, pk.runner, freeze(value[1]), Status.CHOSEN, parser.env,
                               pk.shapes, pk.extras, key, None, None, 1, None, lineno, tuple(sorted(detail)))
        what = f"{recovered} entr{'y' if recovered == 1 else 'ies'} of a pasted cache recovered"
        skipped = []
        if self.elided:
            skipped.append(f"{self.elided} '...' elision line(s) stood for entries that are not in the text")
        if self.unreadable:
            skipped.append(f"{self.unreadable} entry line(s) could not be read")
        underscored = sorted(k for k in self.metadata if k.startswith("_") and k != "_metadata")
        if underscored:
            skipped.append(f"header key(s) {', '.join(underscored)} kept as metadata")
        parser.events.add("cache_fragment", self._first_line, "", what + (": " + "; ".join(skipped) if skipped else ""),
                          {"entries": Fact(recovered, "decoded", "entry lines of the pasted cache"),
                           "elided": Fact(self.elided, "decoded", "'...' lines"),
                           "unreadable": Fact(self.unreadable, "decoded", "entry lines that could not be read")},
                          key=("fragment",))
        if skipped:
            self.problems.append(what + "; " + "; ".join(skipped))
