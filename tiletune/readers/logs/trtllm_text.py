"""TensorRT-LLM's own texts: the assertion abort, the GEMM profiler's give-up line, and the torch
autotuner's per-candidate lines. The exact texts and where they come from:

- `[TensorRT-LLM][ERROR] Assertion failed: <message> (<file>:<line>)` (TLLM_CHECK /
  `tensorrt_llm::common::throwRuntimeError`), printed after `terminate called after throwing an
  instance of 'tensorrt_llm::common::TllmException'` as `  what():  ...` and followed by numbered
  backtrace frames `N       0x... <symbol>`; the frames name the runner whose code asserted
  (e.g. `tensorrt_llm::kernels::CutlassMoeFCRunner<...>::runMoe(...)`). As a user posted it:
  NVIDIA/TensorRT-LLM#4253 (tests/data/trtllm_tickets/). A fatal `assertion_failed` event.
- `[TensorRT-LLM][WARNING] Have not found any valid GEMM config for shape (m=M, n=N, k=K). Will try
  to use default or fail at runtime` (`GemmPluginProfiler::profileTacticsForProblem`,
  cpp/tensorrt_llm/plugins/common/gemmPluginProfiler.cpp): every tactic of that shape failed or
  none applies. One `no_valid_config` event per (N, K) with its Ms, and a failure per shape.
- `[Autotuner] Candidate: custom_op=OP, runner=R, tactic=T, shapes=S, time=Xms` (NVIDIA/
  TensorRT-LLM#19162, tensorrt_llm/_torch/autotuner.py `_profile_runners`, logged for every
  candidate): `time` is the measured time in ms with three decimals, `inf` for a tactic that
  failed, and `0.000` for the single-candidate shortcut that records its pair without profiling
  (the PR's documented marker: no measurement). The parser turns them into timings and failures.
- The torch autotuner's own per-candidate lines, as TensorRT-LLM's code logged them
  (tests/data/trtllm_writers, NVIDIA/TensorRT-LLM@b35ac1b tensorrt_llm/_torch/autotuner.py):
  `Profiled runner=R, tactic=T, shapes=[torch.Size([..]), ..]: X.XXXXXXms.` (DEBUG, a timing),
  `Failed when profiling runner=R, tactic=T, shapes=[..]. Set TLLM_LOG_LEVEL=DEBUG for more details.`
  (WARNING, a failure; a 2026 copy, Maxritz/TensorRT-LLM-RDNA4@9c650ddc, ends it `. Error: E` instead:
  read, not run) then `Exception captured: E` (DEBUG, its error), and, once the profile is done,
  `Profiling runner=R, tactic=T for cache_key=(op, Runner, hash, shapes).` (DEBUG, the winner) or
  `No valid runner/tactic was found for custom_op=OP, input_shapes=...` (WARNING). Only those closing
  lines name the op, so the parser holds a profile's candidates until one arrives (TrtProfileBuffer).
  A `Candidate:` line (#19162, logged after each candidate's own line) closes that candidate with its op.
- The single-file writer's lines (hyukn/TensorRT-LLM@5619fce tensorrt_llm/_torch/autotuner.py, run by
  tools/trtllm_writers with HuiGao-NV/TensorRT-LLM@195839a's logger.py: `[TRT-LLM] [RANK r] [V] ...`):
  `Failed when profiling ... Error: E` is `warning_once`, keyed on the op, so an op's later failures
  print nothing; `New tuning error occurs:Total failed profiling tactics occurs: N for custom_op=OP.`
  gives the op's count of failed (runner, profile) pairs (a `tuning_failures_counted` event that says
  how many failure lines the log holds beside it). `Loaded N shared cache entries` / `Loaded N
  rank-specific cache entries for rank R` precede `Successfully loaded cache from P using JSON format
  (total N entries)`, one `configs_loaded` event with the parts. The logger's `[RANK r]` (its
  `set_rank`) is each line's rank: every rank's lines are held, closed and recorded apart, so one
  server log holding all ranks' lines interleaved reads as the per-rank logs do.
- #19162's own source is not in any stored copy (no file holds `[Autotuner] Candidate:`); its lines
  in tests/data/trtllm_writers/b35ac1b64368/autotuner+candidates.rank<r>.log are derived from the
  PR's review hunk and labelled so in that folder's PROVENANCE.json.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, List, Optional

ASSERTION = re.compile(r"Assertion failed: (?P<msg>.*?)\s*\((?P<path>[^()\s]+\.(?:cu|cpp|cuh|h|hpp)):(?P<line>\d+)\)")
# a backtrace frame of a TllmException: "2       0xfffec78d2744 tensorrt_llm::kernels::CutlassMoeFCRunner<...>::runMoe(...)"
FRAME = re.compile(r"^\s*(?:\(\w+ pid=\d+\)\s*)?\d+\s+0x[0-9a-fA-F]+\s+(?P<sym>.*)$")
_RUNNER_IN_FRAME = re.compile(r"(?P<cls>[A-Z]\w*(?:Runner|Profiler|Plugin|Gemm\w*))(?:<.*?>)?::(?P<fn>~?\w+)\(")
NO_VALID_CONFIG = re.compile(r"Have not found any valid GEMM config for shape \(m=(?P<m>-?\d+), n=(?P<n>-?\d+), k=(?P<k>-?\d+)\)")
CANDIDATE = re.compile(r"Candidate: custom_op=(?P<op>.+?), runner=(?P<runner>.+?), tactic=(?P<tac>.+?), "
                       r"shapes=(?P<shapes>.+), time=(?P<time>[-+\w.]+)ms\s*$")
NOT_MEASURED = "0.000"  # TRT-LLM#19162: the single-candidate shortcut, recorded without profiling
PROFILED = re.compile(r"Profiled runner=(?P<runner>.+?), tactic=(?P<tac>.+?), shapes=(?P<shapes>\[.*\]): "
                      r"(?P<time>[-+\w.]+)ms\.?\s*$")
FAILED = re.compile(r"Failed when profiling runner=(?P<runner>.+?), tactic=(?P<tac>.+?), shapes=(?P<shapes>\[.*?\])\.(?:\s|$)")
WINNER = re.compile(r"Profiling runner=(?P<runner>.+?), tactic=(?P<tac>.+?) for cache_key=(?P<key>\(.*\))\.?\s*$")
NO_VALID_TACTIC = re.compile(r"No valid runner/tactic was found for custom_op=(?P<op>[^,\s]+), input_shapes=")
# the single-file writer (#10336 on; hyukn/TensorRT-LLM@5619fce as tests/data/trtllm_writers/5619fce9f304 ran it)
RANK_PREFIX = re.compile(r"\[TRT-LLM\]\s*\[RANK (?P<rank>\d+)\]")  # the logger's set_rank (HuiGao-NV@195839a logger.py)
LOADED_SECTION = re.compile(r"Loaded (?P<n>\d+) (?P<part>shared|rank-specific) cache entries(?: for rank (?P<rank>\d+))?\s*$")
FAILURES_COUNTED = re.compile(r"Total failed profiling tactics occurs: (?P<n>\d+) for custom_op=(?P<op>[^\s,]+?)\.?(?:\s|$)")
_TORCH_SIZE = re.compile(r"torch\.Size\(\[(?P<dims>[-\d, ]*)\]\)")
MAX_HELD = 4096  # candidates held for one profile; past it they are given up with no op (a log cut mid-profile)


def torch_sizes(text: str) -> Optional[tuple]:
    """`[torch.Size([1, 512]), torch.Size([1024, 512])]` -> ((1, 512), (1024, 512)); None for another form."""
    sizes = [tuple(int(d) for d in m["dims"].replace(" ", "").split(",") if d) for m in _TORCH_SIZE.finditer(text)]
    return tuple(sizes) if sizes and text.strip().startswith("[") else None


@dataclass
class HeldCandidate:
    """One candidate of the profile being tuned, waiting for the line that names its op."""
    line: int
    runner: str       # class name
    runner_repr: str  # as printed: pairs a Candidate line with the candidate it closes
    tactic: Any
    shapes: Optional[tuple]
    ms: Optional[float]            # measured; None when it failed
    error: Optional[str] = None    # `Exception captured: ...` after a failure


@dataclass
class TrtProfileBuffer:
    """The candidates of the profile being tuned, until `Profiling runner=.. for cache_key=..` or `No valid
    runner/tactic` names its op (or a Candidate line closes one candidate with it)."""
    held: List[HeldCandidate] = field(default_factory=list)

    def add(self, c: HeldCandidate) -> bool:
        """False when full (the caller gives the held ones up first)."""
        if len(self.held) >= MAX_HELD:
            return False
        self.held.append(c)
        return True

    def error(self, text: str) -> None:
        for c in reversed(self.held):
            if c.ms is None:
                if c.error is None:
                    c.error = text
                return

    def take(self, runner_repr: str, tactic: Any) -> Optional[HeldCandidate]:
        """The last held candidate of this runner and tactic, removed (a Candidate line closes it)."""
        for i in range(len(self.held) - 1, -1, -1):
            c = self.held[i]
            if c.runner_repr == runner_repr and c.tactic == tactic:
                return self.held.pop(i)
        return None

    def drain(self) -> List[HeldCandidate]:
        out, self.held = self.held, []
        return out


def frame_runner(text: str) -> Optional[tuple[str, str]]:
    """(runner class, function) a backtrace frame names, skipping the throw helpers; None otherwise."""
    m = FRAME.match(text)
    if not m:
        return None
    sym = m.group("sym")
    if "throwRuntimeError" in sym or "TllmException" in sym:
        return None
    r = _RUNNER_IN_FRAME.search(sym)
    return (r.group("cls"), r.group("fn")) if r else None


def candidate_time(text: str) -> tuple[str, Optional[float]]:
    """('measured', ms) | ('failed', None) | ('not_measured', None) for a Candidate line's time."""
    t = text.strip()
    if t.lower() in ("inf", "+inf"):
        return "failed", None
    if t == NOT_MEASURED:
        return "not_measured", None
    try:
        v = float(t)
    except ValueError:
        return "unreadable", None
    return ("measured", v) if v == v and v not in (float("inf"), float("-inf")) else ("failed", None)


def runner_name(text: str) -> str:
    """A runner as the Candidate line prints it: a repr `<mod.Cls object at 0x..>` or a plain name."""
    m = re.match(r"<(?P<path>[\w.<>]+?) object at 0x[0-9a-fA-F]+>", text.strip())
    if m:
        return m.group("path").rsplit(".", 1)[-1]
    return text.strip()


def shapes_of(text: str) -> Any:
    from tiletune.readers.logs.grammar import parse_log_literal

    try:
        v = parse_log_literal(text)
    except (ValueError, SyntaxError, RecursionError):
        return None
    return v if isinstance(v, tuple) else None
