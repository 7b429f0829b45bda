"""Events: what a log or pasted text says about a run that is not one tuning entry.

A server log holds more than per-tactic facts: the fatal error that ended the server (a CUTLASS
runner that failed to initialize, a CUDA abort, a rejected TMA descriptor, a grouped GEMM over
the shared-memory limit), OOM fallbacks, INFO summaries of skipped tactics, cache loads and
saves, version banners, tuning progress. Each becomes one `Event`; identical events (the same
line printed by every rank, a log appended to by several runs) are counted, not repeated.

Every fact an event carries says how it is known and where from (`Fact`, `HOW`):
- `decoded`: read exactly from a log line by a fixed grammar (a kernel file name's `sm120_M128_BS`,
  the `on sm120` of an error, a cache path's `/0.6.12/sm103/`);
- `stated`: written in a ticket by a person (a code fence, a Markdown table, a quoted error, prose):
  what the ticket says, not a log line tiletune read;
- `inferred`: concluded, not stated (an op from a runner's label words, a FlashInfer version from
  the one a server release pins, which tactics an INFO count stands for), with its basis;
- `measured`: a number the running program measured or reported (a time, a device limit);
- `modelled`: a number tiletune's model computed.
A fact may carry its evidence: the line and the words that hold it (`Evidence`).

What ended a run is a fact about an input as a whole (`RunEnd`, in `InputFacts.run_end`): the line
that shows the process stopping, the last unrecovered error before it, and the stage, op and cut
each with their evidence or said to be unknown.

The kinds and which are fatal are the shared vocabulary of the corpus (`EVENT_KINDS`). Records
layer: no I/O, no parsing.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

from msgspec import Struct

from tiletune.core.timeline import Timeline

# kind -> fatal (a fatal event ended, or would end, the server)
EVENT_KINDS: Mapping[str, bool] = {
    "runner_init_failed": True,
    "cuda_error": True,
    "tma_descriptor_failed": True,
    "smem_exceeded": True,
    "exception": True,  # any other raised exception from the kernels' code (type, text, runner, tactic)
    "memory_error": True,  # a builtin MemoryError that escaped the autotuner's OOM handler
    "engine_failed": True,  # the engine's own line that a process stopped ("EngineCore failed to start")
    "fallback_tactic": False,  # FlashInfer ran its default tactic: no tuned config covered the call
    "oom_fallback": False,
    "tactics_skipped": False,
    "tactic_failed": False,
    "tactic_profiled": False,
    "config_cache_hit": False,
    "configs_saved": False,
    "configs_loaded": False,
    "autotune_cache_path": False,
    "tuning_progress": False,
    "version_banner": False,
    "cache_fragment": False,
    # FlashInfer 0.7.x (readers/logs/cache_messages.py, readers/logs/parser.py)
    "cache_ignored": False,  # a cache FlashInfer ignored (or would not save to): created in a different environment
    "cache_miss": False,  # a cached entry FlashInfer treated as a miss (revalidation failed, invalid store entry)
    "managed_cache": False,  # the managed v2 store attached, preloaded, reloaded, or a write it lost
    "tie_retime_failed": False,  # a near-tied tactic failed while tie_tolerance re-timed it: not kept
    "tuning_group_failed": True,  # the ranks of one autotune process group disagreed: distributed tuning stopped
    # TensorRT-LLM (readers/logs/trtllm_text.py)
    "assertion_failed": True,  # a C++ assertion abort: what(): [TensorRT-LLM][ERROR] Assertion failed: ... (file:line)
    "no_valid_config": False,  # "Have not found any valid GEMM config for shape (m, n, k)": no tactic could run it
    "no_valid_tactic": False,  # the torch autotuner's "No valid runner/tactic was found for custom_op=": no entry saved
    "tuning_failures_counted": False,  # "Total failed profiling tactics occurs: N for custom_op=": the op's failed pairs
}

HOW = ("decoded", "stated", "inferred", "measured", "modelled")


class Evidence(Struct, frozen=True, gc=False):
    """The words that hold a fact: which input, which line, what it says, and how it is known
    (`HOW`; `basis` says why, for an inference)."""

    source: str
    line: Optional[int]
    words: str
    how: str = "decoded"
    basis: str = ""

    def where(self) -> str:
        """'file.log:12' (or the input alone when no line is known)."""
        return f"{self.source}:{self.line}" if self.line is not None else self.source

    def to_jsonable(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source": self.source, "line": self.line, "words": self.words, "how": self.how}
        if self.basis:
            d["basis"] = self.basis
        return d


class Fact(Struct, frozen=True, gc=False):
    """One fact with how it is known (`HOW`) and where it came from (a phrase naming the text);
    `line` and `words`, when known, are its evidence line."""

    value: Any
    how: str
    source: str
    line: Optional[int] = None
    words: str = ""

    def to_jsonable(self) -> dict[str, Any]:
        v = self.value
        if isinstance(v, tuple):
            v = list(v)
        d = {"value": v, "how": self.how, "from": self.source}
        if self.line is not None:
            d["line"] = self.line
        if self.words:
            d["words"] = self.words
        return d


class Literal(Struct, frozen=True, gc=False):
    """One literal fact a text states, as written (always `stated`): `kind` is one of error, op, frame,
    file, tile, smem, gpu, arch, version; `value` the words as the text gives them (an error sentence
    joined over the author's line wraps); `line` and `words` its evidence; `mark` says when the text
    names it only in passing ("in a contrast", "in a quote", "in a title", "in a list of machines"):
    then it is mentioned, never this machine's."""

    kind: str
    value: str
    line: Optional[int] = None
    words: str = ""
    mark: str = ""

    def to_jsonable(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "value": self.value, "how": "stated", "line": self.line,
                             "words": self.words}
        if self.mark:
            d["mark"] = self.mark
        return d


class Event(Struct, frozen=True, gc=False):
    """One event in one input (aggregated: `count` identical occurrences, first at `line`).

    `facts` holds named facts (op, runner, arch, tile, cta_m, block_scaled, smem_need_bytes,
    smem_limit_bytes, box_dim, cutlass_status, error_class, flashinfer_version, rank, path, ...).
    `summary` is one plain sentence for people; `text` the first line as written (trimmed).
    """

    kind: str
    source: str
    summary: str
    text: str = ""
    line: Optional[int] = None
    count: int = 1
    lines: Tuple[int, ...] = ()
    facts: Tuple[Tuple[str, Fact], ...] = ()
    fatal: Optional[bool] = None  # None: the kind's default (EVENT_KINDS)

    @property
    def is_fatal(self) -> bool:
        return EVENT_KINDS.get(self.kind, False) if self.fatal is None else self.fatal

    def fact(self, name: str) -> Any:
        for k, f in self.facts:
            if k == name:
                return f.value
        return None

    def facts_dict(self) -> dict[str, Fact]:
        return dict(self.facts)

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "fatal": self.is_fatal,
            "source": self.source,
            "line": self.line,
            "count": self.count,
            "lines": list(self.lines),
            "summary": self.summary,
            "text": self.text,
            "facts": {k: f.to_jsonable() for k, f in self.facts},
        }


class RunEnd(Struct, frozen=True, gc=False):
    """What ended a run, as one input shows it.

    `stopped`: the line showing the process stop (a traceback's end, "EngineCore failed to start",
    `what():`, an abort, an Xid, an exit status), None when the text shows none. `cause`: the last
    unrecovered error before it (None: the text does not show it), `cause_kind` its event kind and
    `cause_line` the event's first line (to find the event). `stage`: "autotune", "warm-up",
    "serving" or "unknown", each with its evidence (`stage_evidence`). `op`: the op being run or
    tuned, from a frame, a progress bar or the error (`op_evidence`). `frames`: the named
    frames of the traceback that stopped it, outermost first ("kernel_warmup -> _flashinfer_autotune").
    `cut`: where the text is cut, when it is ("after_last_frame": the traceback ends without its
    exception line; "before_traceback": frames or an exception with no traceback header).
    `after_autotune`: the "Autotuning process ends" line before the stop, when there is one.
    `wrapper`: the line that reports the stop for the process ("WorkerProc hit an exception").
    """

    source: str
    stopped: Optional[Evidence] = None
    cause: Optional[Evidence] = None
    cause_kind: Optional[str] = None
    cause_line: Optional[int] = None
    stage: str = "unknown"
    stage_evidence: Optional[Evidence] = None
    op: Optional[str] = None
    op_evidence: Optional[Evidence] = None
    in_autotuner: Optional[Evidence] = None
    frames: Tuple[str, ...] = ()
    cut: Optional[str] = None
    after_autotune: Optional[Evidence] = None
    wrapper: Optional[Evidence] = None
    last_frame: Optional[Evidence] = None  # the frame a cut traceback ends at (its function and source line)
    innermost: Optional[Evidence] = None  # the innermost frame of the application's code (not torch's plumbing)
    elided: Optional[Evidence] = None  # where the author cut lines out of the paste ("... (413 lines omitted) ...")
    shutdown: Optional[Evidence] = None  # a server shutting down after the stop ("Shutting down")

    def to_jsonable(self) -> dict[str, Any]:
        e = lambda x: x.to_jsonable() if x is not None else None  # noqa: E731
        return {"stopped": e(self.stopped), "cause": e(self.cause), "cause_kind": self.cause_kind,
                "cause_line": self.cause_line, "stage": self.stage, "stage_evidence": e(self.stage_evidence),
                "op": self.op, "op_evidence": e(self.op_evidence), "in_autotuner": e(self.in_autotuner),
                "frames": list(self.frames), "cut": self.cut, "after_autotune": e(self.after_autotune),
                "wrapper": e(self.wrapper), "last_frame": e(self.last_frame), "innermost": e(self.innermost),
                "elided": e(self.elided), "shutdown": e(self.shutdown)}


class InputFacts(Struct, frozen=True, gc=False):
    """What one text input says about its run as a whole: arch, GPU, FlashInfer version, servers.

    Each is a `Fact` (how known, from where) or None when the text does not say; `conflicts`
    lists clues that disagree (then nothing is chosen and the user is asked)."""

    source: str
    arch: Optional[Fact] = None
    gpu: Optional[Fact] = None
    flashinfer_version: Optional[Fact] = None
    servers: Tuple[Tuple[str, Fact], ...] = ()  # (server, version fact)
    conflicts: Tuple[str, ...] = ()
    ended: Optional[Fact] = None  # the text shows a process ending (a traceback, "hit an exception")
    run_end: Optional[RunEnd] = None  # what ended the run, with its evidence
    arch_why: Optional[Fact] = None  # when arch clues disagree: which won and why (value: the sentence)
    stated: Tuple[Fact, ...] = ()  # what a ticket's prose states ("13 of 16 tactics fail", failing tile shapes)
    stated_stage: Optional[Fact] = None  # where a ticket's prose places the failure ("after 63 requests": serving)
    says_fail: Tuple[Fact, ...] = ()  # a ticket's lines that state a failure in words (no event reads them)
    call_named: Optional[Fact] = None  # the call a ticket says failed ("during the calling to `X`")
    driver: Optional[Fact] = None  # the driver version the text states ("Driver Version: 550.144.03")
    cuda: Optional[Fact] = None  # the CUDA version the text states ("CUDA Version: 12.4")
    warned: Tuple[Fact, ...] = ()  # warnings that printed a traceback and went on (the warning's line)
    settings: Tuple[Fact, ...] = ()  # settings the text names ("VLLM_USE_FLASHINFER_MOE_FP16=1"), each with its line
    went_on: Tuple[Fact, ...] = ()  # a ticket's prose saying the run fell back or skipped and went on
    torch_warning: Optional[Fact] = None  # PyTorch warned that this GPU is outside its build's capability range
    reported: Tuple[Fact, ...] = ()  # a ticket's prose sentences reporting measurements ("36 tok/s to 234 tok/s")
    after_tune: Optional[Fact] = None  # a ticket says the failure came after autotuning ended
    chains: Tuple[Fact, ...] = ()  # call chains a ticket states in code spans ("a → b → c"), as "a -> b -> c"
    examples: Tuple[Fact, ...] = ()  # errors a ticket quotes as examples ("A typical error is:"), not lines of one run
    quoted_errors: Tuple[Fact, ...] = ()  # the error a ticket quotes after saying it failed ("fails ... with ... error:")
    summary: Optional[Fact] = None  # a ticket's own first sentence (under "## Summary" when it has one), quoted
    ticket: bool = False  # the text is a ticket (Markdown: fences, tables, quotes, prose): what it says is "stated"
    literals: Tuple[Literal, ...] = ()  # the literal facts the text states, as written (readers/logs/literals.py)
    # the lines' stamps (tiletune.core.timeline): where the start-up's time went; written out by the
    # analysis (tiletune.analysis.warmup_cost), not in this object's JSON
    timeline: Optional[Timeline] = None

    def to_jsonable(self) -> dict[str, Any]:
        f = lambda x: x.to_jsonable() if x is not None else None  # noqa: E731
        return {"source": self.source, "arch": f(self.arch), "gpu": f(self.gpu),
                "flashinfer_version": f(self.flashinfer_version),
                "servers": [{"server": s, **v.to_jsonable()} for s, v in self.servers],
                "conflicts": list(self.conflicts), "ended": f(self.ended),
                "run_end": self.run_end.to_jsonable() if self.run_end is not None else None,
                "arch_why": f(self.arch_why),
                "stated": [x.to_jsonable() for x in self.stated],
                "stated_stage": f(self.stated_stage),
                "says_fail": [x.to_jsonable() for x in self.says_fail],
                "call_named": f(self.call_named),
                "driver": f(self.driver), "cuda": f(self.cuda),
                "warned": [x.to_jsonable() for x in self.warned],
                "settings": [x.to_jsonable() for x in self.settings],
                "chains": [x.to_jsonable() for x in self.chains],
                "examples": [x.to_jsonable() for x in self.examples],
                "quoted_errors": [x.to_jsonable() for x in self.quoted_errors],
                "summary": f(self.summary),
                "after_tune": f(self.after_tune),
                "went_on": [x.to_jsonable() for x in self.went_on],
                "reported": [x.to_jsonable() for x in self.reported],
                "torch_warning": f(self.torch_warning),
                "ticket": self.ticket,
                "literals": [x.to_jsonable() for x in self.literals]}


__all__ = ["EVENT_KINDS", "Event", "Evidence", "Fact", "HOW", "InputFacts", "Literal", "RunEnd"]
