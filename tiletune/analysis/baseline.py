"""`--baseline FILE`: failures already known and accepted, so `--fail-on failed` gates on new ones.

A baseline is one of:

- a previous `tiletune inspect -f json` output (tiletune.inspect/1): its `failures`;
- a FlashInfer tactics blocklist (`invalid_tactics` keyed "<op>::<Runner>"): the tactics FlashInfer
  is already told to skip;
- a text file, one accepted failure per line: `OP TACTICS [RUNNER]`, TACTICS a number, a list or a
  range (`mxfp8_gemm 6-9`, `fp4_gemm 3,5`), `#` starting a comment.

A failure is accepted when the baseline names the same op (and runner, where both say it) and
either the same tile (decoded on both sides: a tactic number names another tile in another
release) or the same tactic number where neither side has a tile (text lists, blocklists, or an
undecoded failure). Failures of a different kind than the baseline's still count as accepted by
tactic: the baseline accepts a tactic failing, not one way of failing. Fatal events are never
accepted: what ended a run always fails `--fail-on`. Pure: text in, a `Baseline` out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple, Optional, Sequence

from tiletune.analysis.results import Failure
from tiletune.core.errors import UsageError

_TACTICS = re.compile(r"^-?\d+(?:-\d+)?(?:,-?\d+(?:-\d+)?)*$")


class Accepted(NamedTuple):
    """One accepted failure: op, runner (None: any), tactic (None: any of the op's with this tile), tile label."""

    op: str
    runner: Optional[str] = None
    tactic: Any = None
    tile: Optional[str] = None
    arch: Optional[str] = None


@dataclass
class Baseline:
    """The accepted failures and where they came from (for messages)."""

    source: str
    kind: str  # "inspect JSON", "FlashInfer blocklist", "text list"
    accepted: list[Accepted] = field(default_factory=list)

    def accepts(self, f: Failure) -> bool:
        tile = f.config.label() if f.config is not None else None
        for a in self.accepted:
            if a.op != f.op or (a.runner and f.runner and a.runner != f.runner):
                continue
            if a.arch and f.arch and a.arch != f.arch:
                continue
            if a.tile is not None and tile is not None:
                if a.tile == tile:
                    return True
                continue
            if a.tactic is not None and repr(a.tactic) == repr(f.tactic):
                return True
        return False

    def new_failures(self, failures: Iterable[Failure]) -> list[Failure]:
        """The failures the baseline does not accept."""
        return [f for f in failures if not self.accepts(f)]


def parse(text: str, source: str) -> Baseline:
    """A Baseline from a file's text; UsageError (one line, exit 2) when it is none of the three."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise UsageError(f"--baseline {source}: not JSON ({e}); give a previous `tiletune inspect -f json`, a "
                             "FlashInfer blocklist, or a list of 'OP TACTICS' lines") from None
        if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("tiletune.inspect/"):
            return Baseline(source, "inspect JSON", list(_from_inspect(doc.get("failures") or [], source)))
        if isinstance(doc, dict) and isinstance(doc.get("invalid_tactics"), dict):
            return Baseline(source, "FlashInfer blocklist", list(_from_blocklist(doc["invalid_tactics"], source)))
        raise UsageError(f"--baseline {source}: a JSON object that is neither a tiletune inspect output (schema "
                         "tiletune.inspect/1) nor a FlashInfer blocklist (invalid_tactics)")
    return Baseline(source, "text list", list(_from_lines(text, source)))


def _from_inspect(failures: Sequence[Any], source: str) -> Iterable[Accepted]:
    for i, f in enumerate(failures):
        if not isinstance(f, dict) or not isinstance(f.get("op"), str):
            raise UsageError(f"--baseline {source}: failures[{i}] has no op")
        config = f.get("config")
        tile = config.get("label") if isinstance(config, dict) else None
        yield Accepted(f["op"], f.get("runner") or None, f.get("tactic"), tile if isinstance(tile, str) else None,
                       f.get("arch") or None)


def _from_blocklist(invalid: dict, source: str) -> Iterable[Accepted]:
    for key, tactics in invalid.items():
        op, _, runner = str(key).partition("::")
        if not isinstance(tactics, list):
            raise UsageError(f"--baseline {source}: invalid_tactics[{key!r}] is not a list")
        for t in tactics:
            yield Accepted(op, runner or None, t)


def _from_lines(text: str, source: str) -> Iterable[Accepted]:
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) not in (2, 3) or not _TACTICS.match(words[1]):
            raise UsageError(f"--baseline {source}:{n}: expected 'OP TACTICS [RUNNER]' (e.g. 'mxfp8_gemm 6-9'), "
                             f"got {raw.strip()[:80]!r}")
        runner = words[2] if len(words) == 3 else None
        for part in words[1].split(","):
            m = re.fullmatch(r"(-?\d+)-(\d+)", part)
            lo, hi = (int(m.group(1)), int(m.group(2))) if m else (int(part), int(part))
            if hi - lo > 10_000:
                raise UsageError(f"--baseline {source}:{n}: range {part} names over 10,000 tactics")
            for t in range(lo, hi + 1):
                yield Accepted(words[0], runner, t)


__all__ = ["Accepted", "Baseline", "parse"]
