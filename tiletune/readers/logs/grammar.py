"""The line grammar of FlashInfer autotuner logs, and the literal parsing their messages need.

FlashInfer v0.6.x .. 0.7.x logs (`flashinfer/autotuner.py`, from v0.6.15
`flashinfer/autotuner/autotuner.py`; logger and format in `flashinfer/jit/core.py`):

    <asctime> - <LEVEL> - <file>:<line> - flashinfer.jit: <message>

This module owns the header and tag patterns, runner reprs (`<...CutlassFp4GemmRunner object at
0x7f...>` and the abbreviated `<MoERunner>` people paste), tactic and shape literals (parsed
without eval by `tiletune.readers.keyparse`), `ProfilingCacheKey(...)` keys, and the folding of a
multi-line error text into one summary line plus what `tiletune.core.error_text` reads from it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from msgspec import Struct

from tiletune.core import error_text
from tiletune.core.records import Tactic
from tiletune.readers.keyparse import parse_literal as _parse_literal_shared  # the shared, eval-free parser

# --- line grammar ----------------------------------------------------------------------------
HEADER = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - (?P<level>[A-Z]+) - (?P<loc>[^ ]+:\d+) - flashinfer\.jit: (?P<msg>.*)"
)
TAG = re.compile(r"\[(?:Autotuner|AutoTuner|AutoTunner|TacticsBlocklist)\]:? ?")
# Any other logger's header (vLLM `INFO 11-11 06:41:27`, SGLang `[2026-04-16 04:18:09 TP5]`, glog):
# such a line ends a multi-line error even though it is not ours.
OTHER_HEADER = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b|[IWEF]\d{4} \d\d:\d\d)"
)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_REPR = re.compile(r"<(?P<path>[\w.<>]+?) object at 0x[0-9a-fA-F]+>")
# an abbreviated repr as people paste it: `Skipping tactic <MoERunner> 14`, `<...MoERunner object at ...>`
_SHORT_REPR = re.compile(r"<(?:\.\.\.|…)?(?P<path>[A-Za-z_][\w.]*?)(?: object at [^>]*)?>")

UNNAMED_FAILURES = ("tactics not named at INFO level (set FLASHINFER_LOGGING_LEVEL=debug to log "
                     "which failed and why); count = failed tactic profiles")

# --- error text ------------------------------------------------------------------------------
HEX = re.compile(r"0x[0-9a-fA-F]{6,}")
_FRAME = re.compile(r"^\s*(?:\d+\s+0x[0-9a-fA-F]+\s|File \"|at |#\d+ )")
_GENERIC_FIRST = re.compile(r"^(?:\w+Error: )?Traceback \(most recent call last\):?$")
_INFORMATIVE = re.compile(r"Error|error|Failed|failed|Assertion|Unsupported|unsupported|illegal|out of memory|not compiled|invalid")


class ErrorText:
    """Folds a (possibly multi-line) exception text into one summary line plus parsed numbers."""

    __slots__ = ("first", "candidates", "extra_lines", "smem", "status", "tu", "_text")

    def __init__(self, first: str) -> None:
        self.first = first.strip()
        self.candidates: List[str] = []
        self.extra_lines = 0
        self.smem: Optional[Tuple[int, int]] = None
        self.status: Optional[str] = None
        self.tu: Optional[str] = None
        self._scan(self.first)

    def _scan(self, text: str) -> None:
        if self.smem is None:
            self.smem = error_text.smem_need_limit(text)
        if self.status is None:
            self.status = error_text.cutlass_status(text)
        if self.tu is None:
            kf = error_text.kernel_file(text)
            if kf is not None:
                self.tu = kf.name + (f":{kf.line}" if kf.line is not None else "")

    def add(self, line: str) -> None:
        self.extra_lines += 1
        text = line.strip()
        if not text or _FRAME.match(text):
            return
        self._scan(text)
        if len(self.candidates) < 4:  # bounded: a pending block may hold thousands of these
            self.candidates.append(text[:500])

    def summary(self) -> str:
        """The informative line: the first line unless it is only a traceback header."""
        if self.first and not _GENERIC_FIRST.match(self.first):
            return self.first
        for c in self.candidates:
            if _INFORMATIVE.search(c) and not _GENERIC_FIRST.match(c):
                return c
        return self.candidates[0] if self.candidates else (self.first or "(empty error text)")

    def detail(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {}
        if self.smem:
            d["smem_needed_bytes"], d["smem_limit_bytes"] = self.smem
        if self.status:
            d["cutlass_status"] = self.status
        if self.tu:
            d["instantiation"] = self.tu
            kf = error_text.kernel_file(self.tu)
            if kf is not None:  # decoded from the generated kernel file's name
                d["kernel_file_arch"], d["kernel_cta_m"], d["kernel_block_scaled"] = kf.arch, kf.cta_m, kf.block_scaled
        if self.extra_lines:
            d["error_lines_folded"] = self.extra_lines
        cls, _ = error_text.classify(self.summary() + "\n" + "\n".join(self.candidates[:2]))
        if cls is not None:
            d["failure_kind"] = cls.value
        return d


# --- literal parsing (never eval) --------------------------------------------------------------
_TORCH_SIZE = re.compile(r"torch\.Size\(\[([^\]]*)\]\)")
_ENUM_REPR = re.compile(r"<([A-Za-z_][\w.]*): [^<>]*>")


def _fz(value: Any) -> Any:
    """`records.freeze` for the plain lists/tuples/dicts parsed here, without its Mapping checks (hot path)."""
    c = value.__class__
    if c is tuple or c is list:
        return tuple([_fz(v) for v in value])
    if c is dict:
        return tuple(sorted((str(k), _fz(v)) for k, v in value.items()))
    return value


def frozen_detail(d: Dict[str, Any]) -> Tuple[Tuple[str, Any], ...]:
    """Detail dict -> sorted pairs. Tuples in it are already frozen (they come from `parse_log_literal`)."""
    return tuple(sorted((k, v if v.__class__ is not list and v.__class__ is not dict else _fz(v)) for k, v in d.items()))


@lru_cache(maxsize=4096)  # a block repeats the same shapes / tactic texts for every tactic
def parse_log_literal(text: str) -> Any:
    """A Python literal as FlashInfer prints it (tuples, torch.Size, dtypes, enums) -> frozen value."""
    t = text.strip()
    if "torch.Size" in t:
        t = _TORCH_SIZE.sub(lambda m: "(" + m.group(1) + ("," if m.group(1).strip() else "") + ")", t)
    if "<" in t:
        t = _ENUM_REPR.sub(r"\1", t)
    return _fz(_parse_literal_shared(t))


def parse_tactic(text: str) -> Tactic:
    t = text.strip()
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    try:
        value = parse_log_literal(t)
    except (ValueError, SyntaxError, RecursionError):
        return t  # kept as printed; decode will say it cannot read it
    return value if isinstance(value, (int, str, tuple)) or value is None else t


def split_runner(rest: str) -> Tuple[str, str, str]:
    """`<repr> <tactic><tail>` -> (runner class, runner address-repr, text after the repr).

    Raises ValueError (the line is then reported as unparsable) when there is no runner repr.
    """
    m = _REPR.search(rest)
    if not m:
        m = _SHORT_REPR.match(rest.lstrip())
        if not m:
            raise ValueError("no runner repr")
        rest = rest.lstrip()
    return m.group("path").rsplit(".", 1)[-1], m.group(0), rest[m.end():].lstrip()


class ParsedProfilingKey(Struct, frozen=True, gc=False):
    op: str
    runner: str
    shapes: Optional[Tuple[Any, ...]]
    extras: Optional[Tuple[Any, ...]]


_PCK_FIELDS = re.compile(
    r"ProfilingCacheKey\(custom_op=(?P<op>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"), "
    r"runner_class_name=(?P<runner>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"), runner_hash=-?\d+, "
    r"nearest_profile=(?P<rest>.*)\)\s*$"
)


def parse_profiling_key(text: str) -> ParsedProfilingKey:
    """Parse the key printed after `profiling chosen runner: ... for`: a `ProfilingCacheKey(...)`
    dataclass repr (v0.6.15+) or the plain tuple `(op, runner, hash, profile[, extras])`.

    Raises ValueError naming what is wrong.
    """
    t = text.strip()
    m = _PCK_FIELDS.match(t)
    if m:
        op = parse_log_literal(m.group("op"))
        runner = parse_log_literal(m.group("runner"))
        rest = m.group("rest")
        profile_text, sep, extras_text = rest.rpartition(", extras=")
        if not sep:
            profile_text, extras_text = rest, ""
        shapes = parse_log_literal(profile_text)
        extras = parse_log_literal(extras_text) if extras_text else None
        if extras is not None and not isinstance(extras, tuple):
            extras = (extras,)
        return ParsedProfilingKey(str(op), str(runner), shapes, extras)
    if t.startswith("("):
        value = parse_log_literal(t)
        if isinstance(value, tuple) and len(value) in (4, 5) and isinstance(value[0], str) and isinstance(value[1], str):
            extras = value[4] if len(value) == 5 else None
            if extras is not None and not isinstance(extras, tuple):
                extras = (extras,)
            return ParsedProfilingKey(str(value[0]), str(value[1]), value[3], extras)
        raise ValueError("expected (op, runner, hash, profile[, extras])")
    raise ValueError("not a ProfilingCacheKey(...) or key tuple")
