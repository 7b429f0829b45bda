"""Reader for FlashInfer autotuner logs: stderr captures and `<workspace>/flashinfer_jit.log`.

Owns the log line grammar of FlashInfer v0.6.x .. 0.7.x (`flashinfer/autotuner.py`, from v0.6.15
`flashinfer/autotuner/autotuner.py`; the logger and its format are in `flashinfer/jit/core.py`):

    <asctime> - <LEVEL> - <file>:<line> - flashinfer.jit: <message>

Messages turned into records (the tag is `[Autotuner]`, `[AutoTuner]` or, before v0.6.8, the
typo `[AutoTunner]`):

- `profiling <runner repr> <tactic>, shapes=..., avg_time <ms>` (and 0.7.x
  `cupti-profiling ... median_time <ms>`)                                   -> PROFILED, time_ms
- `profiling chosen runner: <repr> <tactic> for <key>`; the key is a tuple
  `(op, runner, hash, profile[, extras])` before v0.6.15 and `ProfilingCacheKey(...)` after -> CHOSEN
- `Skipping tactic <repr> <tactic>, due to failure while profiling: <error>` (WARNING before
  v0.6.8, DEBUG after) and the paired DEBUG `Failed when profiling <repr> <tactic>, shapes=....
  Error occurred: <error>`; HEAD's `Skipping tactic <repr> <tactic> while ranking <op>: <error>` -> FAILED
- `Skipped N unsupported tactic(s) for <op>` (INFO, v0.6.8+)               -> FAILED summary: runner "",
  tactic None, count = the N minus the failures the block named itself (0 at DEBUG level, so no
  record), detail tactics_known=False: at INFO level which tactics failed is not in the log
- `Using fallback tactic ...`, `Skipping autotuning for '<op>' (in skip_ops)`, `No tuned config
  covers <op> ...; falling back to runner=R tactic=-1`                      -> FALLBACK
- `[TacticsBlocklist]: Filtered n invalid tactic(s) for <op>::<Runner>`     -> BLOCKED
- `OOM detected, falling back to default tactic`, 0.7.x `cached tactic T for <op> (runner=R,
  source=S) failed revalidation`                                            -> FAILED

Per-tactic lines do not name the op: it is learnt from the end of each profile block (the
`Skipped N ... for <op>` summary or the `chosen runner` key, which also gives the bucketed
profile), so a block's records wait in a small buffer until it closes. Repeated facts (the same
failure for every bucket, a log appended to by several runs) are counted, not repeated.
File-level facts (caches loaded/saved, blocklists, JIT modules built, levels seen) go to
`LogFacts`. Lines are streamed: memory holds one profile block and the distinct facts, never the
file. Keys, tactics and shapes are parsed without eval by `tiletune.readers.keyparse`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from tiletune.readers.interface import ReadContext
from tiletune.readers.jit_identity import workspace_identity
from tiletune.readers.keyparse import parse_literal as _parse_literal_shared  # the shared, eval-free parser
from tiletune.records import Environment, InputProblem, Status, Tactic, TuningRecord

KIND = "log"

JIT_LOG_NAME = "flashinfer_jit.log"
MAX_LINE_BYTES = 1 << 20  # longer lines are cut: a corrupt log must not cost its size in memory
MAX_PENDING = 4096  # per-block buffer cap; a block never closes only in a truncated/corrupt log
MAX_CONTINUATION = 400  # backtrace lines examined after a failure line
MAX_PROBLEMS = 20  # unparsable-line notes per file; then one summary note

# --- line grammar ----------------------------------------------------------------------------
_HEADER = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - (?P<level>[A-Z]+) - (?P<loc>[^ ]+:\d+) - flashinfer\.jit: (?P<msg>.*)"
)
_TAG = re.compile(r"\[(?:Autotuner|AutoTuner|AutoTunner|TacticsBlocklist)\]:? ?")
# Any other logger's header (vLLM `INFO 11-11 06:41:27`, SGLang `[2026-04-16 04:18:09 TP5]`, glog):
# such a line ends a multi-line error even though it is not ours.
_OTHER_HEADER = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b|[IWEF]\d{4} \d\d:\d\d)"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_REPR = re.compile(r"<(?P<path>[\w.<>]+?) object at 0x[0-9a-fA-F]+>")

_UNNAMED_FAILURES = ("tactics not named at INFO level (set FLASHINFER_LOGGING_LEVEL=debug to log "
                     "which failed and why); count = failed tactic profiles")

# --- error text ------------------------------------------------------------------------------
_SMEM = re.compile(r"kernel needs (\d+) bytes of shared memory, device per-block limit is (\d+) bytes")
_CUTLASS_STATUS = re.compile(r"Error: (Error [A-Z][A-Za-z ]+?)(?=\s*(?:\(|$|\.|,))")
_GENERATED_TU = re.compile(r"cutlass_kernel_file_\w+?_sm(\d+)_M(\d+)(_BS)?(_Mixed)?_group(\d+)\.generated\.cu(?::(\d+))?")
_HEX = re.compile(r"0x[0-9a-fA-F]{6,}")
_FRAME = re.compile(r"^\s*(?:\d+\s+0x[0-9a-fA-F]+\s|File \"|at |#\d+ )")
_GENERIC_FIRST = re.compile(r"^(?:\w+Error: )?Traceback \(most recent call last\):?$")
_INFORMATIVE = re.compile(r"Error|error|Failed|failed|Assertion|Unsupported|unsupported|illegal|out of memory|not compiled|invalid")


def _classify(error: str) -> Optional[str]:
    """A coarse failure kind from FlashInfer's / CUTLASS's own wording (research notes section 4)."""
    e = error.lower()
    if "bytes of shared memory" in e or "lacks the shared memory" in e:
        return "shared_memory"
    if "failed to initialize" in e:
        return "initialize"
    if "will fail for params" in e or "can_implement" in e:
        return "can_implement"
    if "unsupported" in e or "not compiled with support" in e or "config is invalid" in e or "disabled by fast_build" in e:
        return "not_instantiated"
    if "illegal instruction" in e or "illegal memory" in e or "illegal address" in e:
        return "illegal_access"
    if "out of memory" in e or "oom" in e.split():
        return "out_of_memory"
    if "cuda error" in e or "cudaerror" in e:
        return "cuda_error"
    return None


class _ErrorText:
    """Folds a (possibly multi-line) exception text into one summary line plus parsed numbers."""

    __slots__ = ("first", "candidates", "extra_lines", "smem", "status", "tu")

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
            m = _SMEM.search(text)
            if m:
                self.smem = (int(m.group(1)), int(m.group(2)))
        if self.status is None:
            m = _CUTLASS_STATUS.search(text)
            if m:
                self.status = m.group(1).strip()
        if self.tu is None:
            m = _GENERATED_TU.search(text)
            if m:
                self.tu = m.group(0)

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
        if self.extra_lines:
            d["error_lines_folded"] = self.extra_lines
        kind = _classify(self.summary() + " " + " ".join(self.candidates[:2]))
        if kind:
            d["failure_kind"] = kind
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


def _detail(d: Dict[str, Any]) -> Tuple[Tuple[str, Any], ...]:
    """Detail dict -> sorted pairs. Tuples in it are already frozen (they come from `_parse_literal`)."""
    return tuple(sorted((k, v if v.__class__ is not list and v.__class__ is not dict else _fz(v)) for k, v in d.items()))


@lru_cache(maxsize=4096)  # a block repeats the same shapes / tactic texts for every tactic
def _parse_literal(text: str) -> Any:
    """A Python literal as FlashInfer prints it (tuples, torch.Size, dtypes, enums) -> frozen value."""
    t = text.strip()
    if "torch.Size" in t:
        t = _TORCH_SIZE.sub(lambda m: "(" + m.group(1) + ("," if m.group(1).strip() else "") + ")", t)
    if "<" in t:
        t = _ENUM_REPR.sub(r"\1", t)
    return _fz(_parse_literal_shared(t))


def _parse_tactic(text: str) -> Tactic:
    t = text.strip()
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    try:
        value = _parse_literal(t)
    except (ValueError, SyntaxError, RecursionError):
        return t  # kept as printed; decode will say it cannot read it
    return value if isinstance(value, (int, str, tuple)) or value is None else t


def _runner_class(repr_text: str) -> str:
    m = _REPR.search(repr_text)
    if m:
        return m.group("path").rsplit(".", 1)[-1]
    return repr_text.strip().split(" ", 1)[0].strip("<>")


def _split_runner(rest: str) -> Tuple[str, str, str]:
    """`<repr> <tactic><tail>` -> (runner class, runner address-repr, text after the repr).

    Raises ValueError (the line is then reported as unparsable) when there is no runner repr.
    """
    m = _REPR.search(rest)
    if not m:
        raise ValueError("no runner repr")
    return m.group("path").rsplit(".", 1)[-1], m.group(0), rest[m.end():].lstrip()


@dataclass(frozen=True)
class ParsedProfilingKey:
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
        op = _parse_literal(m.group("op"))
        runner = _parse_literal(m.group("runner"))
        rest = m.group("rest")
        profile_text, sep, extras_text = rest.rpartition(", extras=")
        if not sep:
            profile_text, extras_text = rest, ""
        shapes = _parse_literal(profile_text)
        extras = _parse_literal(extras_text) if extras_text else None
        if extras is not None and not isinstance(extras, tuple):
            extras = (extras,)
        return ParsedProfilingKey(str(op), str(runner), shapes, extras)
    if t.startswith("("):
        value = _parse_literal(t)
        if isinstance(value, tuple) and len(value) in (4, 5) and isinstance(value[0], str) and isinstance(value[1], str):
            extras = value[4] if len(value) == 5 else None
            if extras is not None and not isinstance(extras, tuple):
                extras = (extras,)
            return ParsedProfilingKey(str(value[0]), str(value[1]), value[3], extras)
        raise ValueError("expected (op, runner, hash, profile[, extras])")
    raise ValueError("not a ProfilingCacheKey(...) or key tuple")


# --- facts about the whole file ------------------------------------------------------------------
@dataclass
class LogFacts:
    """What a log says about its run rather than about one tactic (for doctor / report)."""

    lines: int = 0
    autotuner_lines: int = 0
    levels: Dict[str, int] = field(default_factory=dict)  # autotuner lines per level
    runs: int = 0  # "Autotuning process starts" count
    caches_loaded: List[str] = field(default_factory=list)
    caches_saved: List[str] = field(default_factory=list)
    blocklists_loaded: List[str] = field(default_factory=list)
    blocklist_notes: List[str] = field(default_factory=list)  # not found / different environment
    modules_built: List[str] = field(default_factory=list)  # "Building JIT module <name>"
    cache_env_mismatches: List[str] = field(default_factory=list)  # "Cache file X was created in a different environment (...)"
    truncated_lines: int = 0

    @property
    def has_debug(self) -> bool:
        """Per-tactic failures and timings are DEBUG (since v0.6.8): without them only counts are known."""
        return self.levels.get("DEBUG", 0) > 0

    def add_unique(self, lst: List[str], value: str, cap: int = 64) -> None:
        if value not in lst and len(lst) < cap:
            lst.append(value)


# --- the parser ------------------------------------------------------------------------------
@dataclass
class _Event:
    """A per-tactic fact waiting for its profile block to say which op it belongs to."""

    status: Status
    runner: str
    runner_repr: str
    tactic: Tactic
    line: int
    time_ms: Optional[float] = None
    tensor_shapes: Optional[Tuple[Any, ...]] = None
    error: Optional[_ErrorText] = None
    detail: Dict[str, Any] = field(default_factory=dict)
    op: Optional[str] = None  # known up front only for "while ranking <op>" lines


@dataclass
class _Agg:
    record: Dict[str, Any]
    count: int = 1
    lines: List[int] = field(default_factory=list)


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


class LogParser:
    """Streams one log's lines into records: `feed()` each line, then `finish()`; `facts` is complete after that."""

    def __init__(self, source: str, env: Environment) -> None:
        self.source = source
        self.env = env
        self.facts = LogFacts()
        self._problem_count = 0
        self._pending: List[_Event] = []
        self._block_op: Optional[str] = None  # set by "Skipped N ... for <op>"; chosen line may follow
        self._block_closing = False
        self._op_hint: Optional[str] = None  # tqdm "[AutoTuner]: Tuning <op>" bars in stderr captures
        self._op_by_repr: Dict[str, str] = {}  # runner object (repr incl. address) -> op, from chosen keys
        self._op_by_class: Dict[str, Optional[str]] = {}  # runner class -> op (None when ambiguous)
        self._aggs: Dict[Tuple[Any, ...], _Agg] = {}
        self._cont: Optional[_Event] = None  # failure event collecting backtrace lines
        self._cont_prefix = ""
        self._cont_left = 0
        self._last_fail: Optional[_Event] = None  # for pairing "Skipping tactic" with "Failed when profiling"
        self._last_fallback_key: Optional[Tuple[Any, ...]] = None
        self._out: List[Union[TuningRecord, InputProblem]] = []

    # ----- public ---------------------------------------------------------------------------
    def feed(self, lineno: int, raw: str) -> Iterator[Union[TuningRecord, InputProblem]]:
        """Process one line; yield what became final."""
        self.facts.lines += 1
        if "\x1b" in raw:
            raw = _ANSI.sub("", raw)
        # tqdm redraws with carriage returns: each segment is a line of its own
        for seg in raw.split("\r") if "\r" in raw else (raw,):
            self._line(lineno, seg)
        if self._out:
            out, self._out = self._out, []
            yield from out

    def finish(self) -> Iterator[Union[TuningRecord, InputProblem]]:
        self._end_continuation()
        self._flush_block()
        yield from self._out
        self._out = []
        aggs = sorted(self._aggs.values(), key=lambda a: a.lines[0] if a.lines else 0)
        for agg in aggs:
            yield self._agg_record(agg)
        if self._problem_count > MAX_PROBLEMS:
            yield InputProblem(
                self.source,
                f"{self.source}: {self._problem_count - MAX_PROBLEMS} more autotuner lines could not be parsed (first {MAX_PROBLEMS} reported)",
                fatal=False,
                loses_data=True,
            )
        if self.facts.lines and not self.facts.autotuner_lines:
            yield InputProblem(
                self.source,
                f"{self.source}: no FlashInfer autotuner lines found in {self.facts.lines} lines "
                "(tuning logs need FLASHINFER_LOGGING_LEVEL=info or debug)",
                fatal=False,
                loses_data=False,  # the whole log was read: there was nothing to lose
            )

    # ----- line dispatch ----------------------------------------------------------------------
    def _line(self, lineno: int, text: str) -> None:
        m = _HEADER.search(text)
        if m:
            level, msg, prefix = m.group("level"), m.group("msg"), text[: m.start()]
        else:
            t = _TAG.search(text)
            if t is None:
                if self._cont is not None and not _OTHER_HEADER.match(text[len(self._cont_prefix):] if text.startswith(self._cont_prefix) else text):
                    self._continue(text)
                else:
                    self._end_continuation()
                return
            level, msg, prefix = None, text[t.start():], text[: t.start()]
        self._end_continuation()
        if msg.startswith("Building JIT module "):
            name = msg[len("Building JIT module "):].split(";", 1)[0].strip()
            self.facts.add_unique(self.facts.modules_built, name)
            return
        t = _TAG.match(msg)
        if t is None:
            return  # another flashinfer.jit message (JIT build progress etc.): not ours
        body = msg[t.end():].strip()
        self.facts.autotuner_lines += 1
        if level:
            self.facts.levels[level] = self.facts.levels.get(level, 0) + 1
        try:
            self._message(lineno, level, body, prefix)
        except (ValueError, SyntaxError, RecursionError) as e:
            self._problem(lineno, f"could not parse autotuner line ({e}): {body[:120]}")

    def _message(self, lineno: int, level: Optional[str], body: str, prefix: str) -> None:
        if body.startswith("profiling chosen runner: "):
            self._chosen(lineno, body[len("profiling chosen runner: "):])
        elif body.startswith("profiling ") or body.startswith("cupti-profiling "):
            self._profiled(lineno, body)
        elif body.startswith("Skipping tactic "):
            self._skipping(lineno, level, body[len("Skipping tactic "):], prefix)
        elif body.startswith("Failed when profiling "):
            self._failed_when(lineno, level, body[len("Failed when profiling "):], prefix)
        elif body.startswith("Skipped ") and "unsupported tactic" in body:
            self._skipped_summary(lineno, body)
        elif body.startswith("Tuning "):
            m = re.match(r"Tuning (\S+?):(?:\s|$)", body)
            if m and m.group(1) != self._op_hint:
                # a new op's progress bar: the previous op's unnamed failures (v0.6.7 INFO logs) end here
                self._flush_block()
                self._op_hint = m.group(1)
        elif body.startswith("Autotuning process starts"):
            self._flush_block()
            self.facts.runs += 1
        elif body.startswith("Autotuning process ends"):
            self._flush_block()
        elif body.startswith("Using fallback tactic for "):
            self._fallback_miss(lineno, body)
        elif body.startswith("Generated key"):
            self._generated_key(body[len("Generated key"):])
        elif body.startswith("No tuned config covers "):
            self._out_of_bucket(lineno, body)
        elif body.startswith("Skipping autotuning for "):
            m = re.match(r"Skipping autotuning for '([^']*)'", body)
            if m:
                self._count(("fallback", m.group(1), "", -1, "skip_ops"), lineno, dict(
                    op=m.group(1), runner="", tactic=-1, status=Status.FALLBACK,
                    detail={"reason": "skip_ops: autotuning disabled for this op; runner 0 with tactic -1"}))
        elif body.startswith("cached tactic ") and "failed revalidation" in body:
            self._revalidation(lineno, body)
        elif body.startswith("OOM detected"):
            self._flush_block(oom_line=lineno)
        elif body.startswith("Loaded ") and " configs from " in body:
            self.facts.add_unique(self.facts.caches_loaded, body.split(" configs from ", 1)[1].strip())
        elif body.startswith("Saved ") and " configs to " in body:
            path = body.split(" configs to ", 1)[1]
            self.facts.add_unique(self.facts.caches_saved, re.sub(r" \(\d+ new, \d+ from previous config\)$", "", path).strip())
        elif body.startswith("Loaded ") and "invalid tactic" in body and " from " in body:
            self.facts.add_unique(self.facts.blocklists_loaded, body.rsplit(" from ", 1)[1].strip())
        elif body.startswith("Tactics blocklist file not found") or (body.startswith("File ") and "different environment" in body):
            self.facts.add_unique(self.facts.blocklist_notes, body[:300])
        elif body.startswith("Filtered ") and "invalid tactic" in body:
            self._filtered(lineno, body)
        elif (body.startswith("Cache file ") or body.startswith("Not saving configs to ")) and "different environment" in body:
            # the cache's _metadata differs from this process: FlashInfer ignores (or will not overwrite) it
            self.facts.add_unique(self.facts.cache_env_mismatches, body[:500])

    # ----- per-tactic lines ---------------------------------------------------------------------
    def _before_event(self) -> None:
        # A new per-tactic line after a block's "Skipped N" summary (with no chosen line) starts a new block.
        if self._block_closing:
            self._flush_block()

    def _profiled(self, lineno: int, body: str) -> None:
        cupti = body.startswith("cupti-")
        runner, rrepr, rest = _split_runner(body.split(" ", 1)[1])
        tactic_text, sep, tail = rest.partition(", shapes=")
        if not sep:
            raise ValueError("no shapes=")
        key = ", median_time " if cupti else ", avg_time "
        shapes_text, sep, time_text = tail.rpartition(key)
        if not sep:
            raise ValueError(f"no{key.rstrip()}")
        self._before_event()
        ev = _Event(Status.PROFILED, runner, rrepr, _parse_tactic(tactic_text), lineno)
        try:
            ev.time_ms = float(time_text.strip())
        except ValueError:
            ev.detail["time_text"] = time_text.strip()[:60]
        ev.tensor_shapes = self._shapes_or_none(shapes_text)
        ev.detail["timer"] = "cupti median" if cupti else "mean"
        self._push(ev)

    def _skipping(self, lineno: int, level: Optional[str], rest: str, prefix: str) -> None:
        runner, rrepr, tail = _split_runner(rest)
        op = None
        if ", due to failure while profiling: " in tail:
            tactic_text, _, err = tail.partition(", due to failure while profiling: ")
            phase = "profiling"
        else:
            m = re.match(r"(?P<tac>.*?) while ranking (?P<op>\S+): (?P<err>.*)$", tail)
            if not m:
                raise ValueError("no failure text")
            tactic_text, op, err, phase = m.group("tac"), m.group("op"), m.group("err"), "ranking"
        self._before_event()
        ev = _Event(Status.FAILED, runner, rrepr, _parse_tactic(tactic_text), lineno, op=op)
        ev.error = _ErrorText(err)
        ev.detail.update(phase=phase, level=level)
        self._push(ev)
        self._last_fail = ev
        self._start_continuation(ev, prefix)

    def _failed_when(self, lineno: int, level: Optional[str], rest: str, prefix: str) -> None:
        runner, rrepr, tail = _split_runner(rest)
        head, sep, err = tail.partition(". Error occurred: ")
        if not sep:
            raise ValueError("no 'Error occurred:'")
        tactic_text, sep, shapes_text = head.partition(", shapes=")
        tactic = _parse_tactic(tactic_text)
        shapes = self._shapes_or_none(shapes_text) if sep else None
        last = self._last_fail
        if last is not None and last.runner_repr == rrepr and last.tactic == tactic and last.tensor_shapes is None and last in self._pending:
            # The DEBUG twin of the "Skipping tactic" line just above: same failure, now with shapes.
            last.tensor_shapes = shapes
            self._last_fail = None
            self._start_continuation(None, prefix)  # its copy of the backtrace adds nothing
            return
        self._before_event()
        ev = _Event(Status.FAILED, runner, rrepr, tactic, lineno)
        ev.tensor_shapes = shapes
        ev.error = _ErrorText(err)
        ev.detail.update(phase="profiling", level=level)
        self._push(ev)
        self._last_fail = None
        self._start_continuation(ev, prefix)

    def _skipped_summary(self, lineno: int, body: str) -> None:
        m = re.match(r"Skipped (\d+) unsupported tactic\(s\) for (\S+)", body)
        if not m:
            raise ValueError("unexpected 'Skipped N unsupported tactic(s)' form")
        n, op = int(m.group(1)), m.group(2)
        seen = sum(1 for e in self._pending if e.status is Status.FAILED)
        if n > seen:
            # INFO level hides the per-tactic lines: keep the count, say the tactics are unknown.
            key = ("skipped", op)
            agg = self._aggs.get(key)
            if agg is None:
                self._aggs[key] = _Agg(dict(
                    op=op, runner="", tactic=None, status=Status.FAILED, error=_UNNAMED_FAILURES,
                    detail={"summary": "Skipped N unsupported tactic(s)", "tactics_known": False}), count=n - seen, lines=[lineno])
            else:
                agg.count += n - seen
                if len(agg.lines) < 64:
                    agg.lines.append(lineno)
        self._block_op = op
        self._block_closing = True

    def _chosen(self, lineno: int, rest: str) -> None:
        runner, rrepr, tail = _split_runner(rest)
        tactic_text, sep, key_text = tail.partition(" for ")
        if not sep:
            raise ValueError("no 'for <key>'")
        key = parse_profiling_key(key_text)
        tactic = _parse_tactic(tactic_text)
        self._learn(rrepr, runner, key.op)
        self._flush_block(op=key.op, shapes=key.shapes, extras=key.extras)
        ident = ("chosen", key.op, key.runner, _hashable(tactic), key.shapes, _hashable(key.extras))
        self._count(ident, lineno, dict(op=key.op, runner=key.runner, tactic=tactic, status=Status.CHOSEN,
                                        shapes=key.shapes, extras=key.extras, raw_key=key_text.strip()[:4000]))

    # ----- inference-time fallbacks --------------------------------------------------------------
    def _fallback_miss(self, lineno: int, body: str) -> None:
        m = re.match(r"Using fallback tactic for (\S+) with input shapes (.*)$", body)
        if not m:
            raise ValueError("unexpected 'Using fallback tactic' form")
        op = m.group(1)
        shapes = self._shapes_or_none(m.group(2))
        ident = ("fallback", op, _hashable(shapes))
        self._count(ident, lineno, dict(op=op, runner="", tactic=-1, status=Status.FALLBACK, shapes=shapes,
                                        detail={"reason": "no cache entry for this shape at inference; runner 0 ran tactic -1",
                                                "shapes_are": "runtime input shapes"}))
        self._last_fallback_key = ident

    def _generated_key(self, text: str) -> None:
        agg = self._aggs.get(self._last_fallback_key) if self._last_fallback_key else None
        self._last_fallback_key = None
        if agg is None or agg.record.get("runner"):
            return
        try:
            key = parse_profiling_key(text)
        except (ValueError, SyntaxError):
            return
        agg.record["runner"] = key.runner
        agg.record["detail"]["nearest_profile"] = key.shapes
        agg.record["extras"] = key.extras

    def _out_of_bucket(self, lineno: int, body: str) -> None:
        m = re.match(r"No tuned config covers (\S+) input_shapes=(.*?); falling back to runner=(\S+) tactic=(-?\d+)", body)
        if not m:
            raise ValueError("unexpected 'No tuned config covers' form")
        op, shapes_text, runner, tactic = m.group(1), m.group(2), m.group(3), int(m.group(4))
        shapes = self._shapes_or_none(shapes_text)
        ident = ("fallback", op, _hashable(shapes))
        agg = self._aggs.get(ident)
        if agg is None:
            self._count(ident, lineno, dict(op=op, runner=runner, tactic=tactic, status=Status.FALLBACK, shapes=shapes,
                                            detail={"shapes_are": "runtime input shapes"}))
            agg = self._aggs[ident]
        agg.record["runner"] = agg.record.get("runner") or runner
        agg.record["detail"]["out_of_bucket"] = True
        agg.record["detail"]["reason"] = ("shape outside the tuned bucket range: the tuned cache has this op "
                                          "but no bucket covers it, so runner 0 ran tactic -1 (perf cliff)")

    def _revalidation(self, lineno: int, body: str) -> None:
        # 0.7.x: a cached tactic the runner's validate_tactic() rejects at inference (logged once)
        m = re.match(r"cached tactic (?P<tac>.*) for (?P<op>\S+) \(runner=(?P<runner>[^,]+), source=(?P<src>[^)]*)\) failed revalidation", body)
        if not m:
            raise ValueError("unexpected 'cached tactic ... failed revalidation' form")
        tactic = _parse_tactic(m["tac"])
        self._count(("revalidation", m["op"], m["runner"], _hashable(tactic)), lineno, dict(
            op=m["op"], runner=m["runner"], tactic=tactic, status=Status.FAILED,
            error=f"cached tactic failed revalidation (source={m['src']}); treated as a cache miss",
            detail={"phase": "revalidation", "failure_kind": "can_implement"}))

    def _filtered(self, lineno: int, body: str) -> None:
        m = re.match(r"Filtered (\d+) invalid tactic\(s\) for (\S+) \((\d+) remaining\)", body)
        if not m:
            raise ValueError("unexpected 'Filtered N invalid tactic(s)' form")
        n, key, remaining = int(m.group(1)), m.group(2), int(m.group(3))
        op, _, runner = key.rpartition("::")
        ident = ("filtered", op, runner)
        agg = self._aggs.get(ident)
        if agg is None:
            self._aggs[ident] = _Agg(dict(op=op, runner=runner, tactic=None, status=Status.BLOCKED,
                                          detail={"filtered_per_call": n, "remaining": remaining,
                                                  "note": "tactics removed by the loaded blocklist (the log does not list which)"}),
                                     count=1, lines=[lineno])
        else:
            agg.count += 1

    # ----- blocks, continuation, aggregation -------------------------------------------------------
    def _push(self, ev: _Event) -> None:
        self._pending.append(ev)
        if len(self._pending) >= MAX_PENDING:
            self._flush_block()

    def _learn(self, rrepr: str, runner: str, op: str) -> None:
        self._op_by_repr[rrepr] = op
        prev = self._op_by_class.get(runner, op)
        self._op_by_class[runner] = op if prev == op else None  # MoERunner serves gemm1 and gemm2

    def _op_for(self, ev: _Event, block_op: Optional[str]) -> Tuple[str, Optional[str]]:
        if ev.op:
            return ev.op, None
        if block_op:
            return block_op, None
        if ev.runner_repr in self._op_by_repr:
            return self._op_by_repr[ev.runner_repr], "op inferred from the same runner object's chosen line"
        by_class = self._op_by_class.get(ev.runner)
        if by_class:
            return by_class, "op inferred from the runner class"
        if self._op_hint:
            return self._op_hint, "op taken from the 'Tuning <op>' progress bar"
        return "", "op unknown: the profile block never named it"

    def _flush_block(self, op: Optional[str] = None, shapes: Any = None, extras: Any = None, oom_line: Optional[int] = None) -> None:
        self._end_continuation()
        block_op = op or self._block_op
        for ev in self._pending:
            ev_op, note = self._op_for(ev, block_op)
            detail = dict(ev.detail)
            if note:
                detail["op_note"] = note
            if ev.tensor_shapes is not None:
                detail["tensor_shapes"] = ev.tensor_shapes
            rec_shapes = shapes if shapes is not None else None
            if ev.status is Status.PROFILED:
                detail["runner_repr"] = ev.runner_repr
                self._out.append(self._record(ev_op, ev.runner, ev.tactic, Status.PROFILED, ev.line,
                                              shapes=rec_shapes, extras=extras, time_ms=ev.time_ms, detail=detail))
            else:
                assert ev.error is not None
                err = ev.error.summary()
                detail.update(ev.error.detail())
                # group "the same error" even when it prints a pointer or address that changes per call
                ident = ("failed", ev_op, ev.runner, _hashable(ev.tactic), _HEX.sub("0x_", err))
                agg = self._aggs.get(ident)
                if agg is None:
                    detail["buckets"] = [rec_shapes] if rec_shapes is not None else []
                    self._aggs[ident] = _Agg(dict(op=ev_op, runner=ev.runner, tactic=ev.tactic, status=Status.FAILED,
                                                  shapes=rec_shapes, extras=extras, error=err, detail=detail),
                                             count=1, lines=[ev.line])
                else:
                    agg.count += 1
                    if len(agg.lines) < 64:
                        agg.lines.append(ev.line)
                    buckets = agg.record["detail"].setdefault("buckets", [])
                    if rec_shapes is not None and rec_shapes not in buckets and len(buckets) < 64:
                        buckets.append(rec_shapes)
        if oom_line is not None:
            oom_op = block_op or self._op_hint or ""
            self._count(("oom", oom_op), oom_line, dict(op=oom_op, runner="", tactic=None, status=Status.FAILED,
                                                         error="OOM detected, falling back to default tactic",
                                                         detail={"failure_kind": "out_of_memory",
                                                                 "note": "tuning of this op stopped; runner 0 / tactic -1 used"}))
        self._pending = []
        self._block_op = None
        self._block_closing = False
        self._last_fail = None

    def _start_continuation(self, ev: Optional[_Event], prefix: str) -> None:
        self._cont = ev if ev is not None else _Event(Status.FAILED, "", "", None, 0, error=_ErrorText(""))
        self._cont_prefix = prefix
        self._cont_left = MAX_CONTINUATION

    def _continue(self, text: str) -> None:
        assert self._cont is not None and self._cont.error is not None
        if self._cont_left <= 0:
            return
        self._cont_left -= 1
        if self._cont_prefix and text.startswith(self._cont_prefix):
            text = text[len(self._cont_prefix):]
        self._cont.error.add(text)

    def _end_continuation(self) -> None:
        self._cont = None

    def _count(self, ident: Tuple[Any, ...], lineno: int, fields: Dict[str, Any]) -> None:
        agg = self._aggs.get(ident)
        if agg is None:
            fields.setdefault("detail", {})
            self._aggs[ident] = _Agg(fields, count=1, lines=[lineno])
        else:
            agg.count += 1
            if len(agg.lines) < 64:
                agg.lines.append(lineno)

    def _agg_record(self, agg: _Agg) -> TuningRecord:
        f = dict(agg.record)
        detail = dict(f.pop("detail", {}) or {})
        # file-level facts the report wants next to the entries: where the winners were saved,
        # which cache the inference-time lookups (and their fallbacks) were loaded from
        if f["status"] is Status.CHOSEN and self.facts.caches_saved:
            detail["log_saved_to"] = list(self.facts.caches_saved)
        if f["status"] is Status.FALLBACK and self.facts.caches_loaded:
            detail["log_loaded_from"] = list(self.facts.caches_loaded)
        if f["status"] is Status.FALLBACK and self.facts.cache_env_mismatches:
            detail["log_cache_ignored"] = list(self.facts.cache_env_mismatches)
        if len(agg.lines) > 1:
            detail["lines"] = agg.lines
        if detail.get("buckets") == []:
            detail.pop("buckets")
        return self._record(f.pop("op"), f.pop("runner"), f.pop("tactic"), f.pop("status"), agg.lines[0],
                            count=agg.count, detail=detail, **f)

    def _record(self, op: str, runner: str, tactic: Tactic, status: Status, line: int, *,
                detail: Optional[Dict[str, Any]] = None, **kw: Any) -> TuningRecord:
        clean = {k: v for k, v in (detail or {}).items() if v is not None}
        return TuningRecord(source=self.source, source_kind=KIND, op=op, runner=runner, tactic=tactic,
                            status=status, env=self.env, line=line, detail=_detail(clean), **kw)

    def _shapes_or_none(self, text: str) -> Optional[Tuple[Any, ...]]:
        try:
            v = _parse_literal(text)
        except (ValueError, SyntaxError, RecursionError):
            return None
        return v if isinstance(v, tuple) else None

    def _problem(self, lineno: int, message: str) -> None:
        self._problem_count += 1
        if self._problem_count <= MAX_PROBLEMS:
            # the only caller reports an autotuner line that did not parse: that line's record is lost
            self._out.append(InputProblem(self.source, f"{self.source}:{lineno}: {message}", fatal=False, loses_data=True))


# --- streaming ---------------------------------------------------------------------------------
def iter_lines(f: BinaryIO, facts: Optional[LogFacts] = None) -> Iterator[Tuple[int, str]]:
    """(1-based line number, text) for each line, reading at most MAX_LINE_BYTES of any line."""
    lineno = 0
    while True:
        chunk = f.readline(MAX_LINE_BYTES)
        if not chunk:
            return
        lineno += 1
        if not chunk.endswith(b"\n") and len(chunk) >= MAX_LINE_BYTES:
            if facts is not None:
                facts.truncated_lines += 1
            while True:  # drop the rest of an over-long line without holding it
                more = f.readline(MAX_LINE_BYTES)
                if not more or more.endswith(b"\n"):
                    break
        yield lineno, chunk.decode("utf-8", errors="replace").rstrip("\r\n")


def parse_lines(lines: Iterable[Tuple[int, str]], source: str, env: Environment,
                parser: Optional[LogParser] = None) -> Iterator[Union[TuningRecord, InputProblem]]:
    """Records from already-split lines (tests, other readers)."""
    p = parser or LogParser(source, env)
    for lineno, text in lines:
        yield from p.feed(lineno, text)
    yield from p.finish()


def environment_for(path: Path, ctx: ReadContext) -> Environment:
    """A JIT log's version and arch come from its path (`.../flashinfer/<version>/<arch>/`)."""
    if path.name == JIT_LOG_NAME:
        ident = workspace_identity(path.parent)
        if ident is not None:
            return ctx.environment(flashinfer_version=ident.version, version_source="jit-path",
                                   arch=ident.arch, arch_source="jit-path" if ident.arch else None)
    return ctx.environment()


def read_log(path: Path, ctx: ReadContext, parser: Optional[LogParser] = None,
             env: Optional[Environment] = None) -> Iterator[Union[TuningRecord, InputProblem]]:
    """Stream one log file into records; `parser.facts` holds file-level facts afterwards."""
    source = str(path)
    p = parser or LogParser(source, env or environment_for(path, ctx))
    try:
        f = open(path, "rb")
    except OSError as e:
        yield InputProblem(source, f"{source}: cannot open log ({e.strerror or e})", fatal=True, loses_data=True)
        return
    with f:
        try:
            for lineno, text in iter_lines(f, p.facts):
                yield from p.feed(lineno, text)
        except OSError as e:
            yield InputProblem(source, f"{source}: read error after line {p.facts.lines} ({e.strerror or e})",
                               fatal=False, loses_data=True)
    yield from p.finish()


# --- reader protocol -------------------------------------------------------------------------------
_SNIFF_MARKERS = (
    re.compile(rb"flashinfer\.jit: "),
    re.compile(rb"\[(?:Autotuner|AutoTuner|AutoTunner|TacticsBlocklist)\]"),
)


SNIFF_SCAN_BYTES = 16 << 20  # server logs start with pages of config before tuning begins
_SCAN_MARKERS = (b"flashinfer.jit: ", b"[Autotuner]: ", b"[AutoTuner]: ", b"[AutoTunner]: ")
_TEXT_SUFFIXES = ("", ".log", ".out", ".err", ".txt")


def _scan_for_marker(path: Path) -> bool:
    """Look past the first 4 KiB (text-like names only) for an autotuner marker, in 1 MiB chunks."""
    try:
        with open(path, "rb") as f:
            tail, read = b"", 0
            while read < SNIFF_SCAN_BYTES:
                chunk = f.read(1 << 20)
                if not chunk:
                    return False
                if b"\x00" in chunk:
                    return False
                buf = tail + chunk
                if any(m in buf for m in _SCAN_MARKERS):
                    return True
                tail, read = buf[-32:], read + len(chunk)
    except OSError:
        return False
    return False


def sniff(path: Path, head: bytes) -> bool:
    """A FlashInfer JIT log by name, or a text file with a flashinfer.jit / autotuner line in its
    first 4 KiB (or, for .log/.out/.err/.txt names, its first 16 MiB).

    JSON (caches, blocklists) never matches: the first non-blank byte of a log is not `{` or `[`
    followed by a quote/newline. Binary files (NUL bytes) never match.
    """
    if path.is_dir():
        return False
    if path.name == JIT_LOG_NAME:
        return True
    stripped = head.lstrip()
    if stripped[:1] == b"{" or (stripped[:1] == b"[" and stripped[1:2] in (b"{", b"\n", b"\"", b"]", b" ")):
        return False
    if b"\x00" in head:
        return False
    if any(m.search(head) for m in _SNIFF_MARKERS):
        return True
    return len(head) >= 4096 and path.suffix.lower() in _TEXT_SUFFIXES and _scan_for_marker(path)


def read(path: Path, ctx: ReadContext) -> Iterator[Union[TuningRecord, InputProblem]]:
    """Records from one log file (protocol entry point)."""
    return read_log(Path(path), ctx)
