"""Events in a log's lines: fatal errors, progress, cache loads/saves, banners (tiletune.core.events).

`EventLog` aggregates: an event is identified by its kind and its facts (not its line), so the
same fatal line printed by eight ranks, or a log appended to by several runs, is one event with
a count and a bounded list of line numbers. `scan_line()` recognises the events that are not
autotuner messages (those the autotuner parser reports itself through `EventLog.add`):

- runner_init_failed: `[FP4 gemm Runner] Failed to initialize cutlass FP4 gemm on sm120/sm121.
  Error: Error Internal` (MXFP8/FP8/BF16 variants), TensorRT-LLM `Assertion failed: Failed to
  initialize cutlass TMA WS grouped gemm` (+ its generated kernel file name, on the same or a
  following line: arch, CTA M, block scaling);
- cuda_error: `CUDA error: an illegal instruction was encountered`, `torch.AcceleratorError`,
  `CUDA_ERROR_*` / `cudaError*` aborts;
- tma_descriptor_failed: `Failed to initialize the TMA descriptor` (boxDim from the dump);
- smem_exceeded: `MoE grouped GEMM requires N bytes shared memory but device supports M`;
- exception: any other exception line (`ValueError: Invalid MXFP8 split-K tactic: ((128, 32), ...)`,
  `RuntimeError: Error in function 'TllmGenFmhaRunner' at ...: Unsupported architecture`,
  `tvm.error.InternalError: ...`) raised from FlashInfer / CUTLASS / TensorRT-LLM code or naming a
  runner, tactic, kernel or GEMM: its type and text (continuation lines of a wrapped message
  joined), the runner, the tactic as written, the kernel and the arch its name states, and whether
  nearby lines place it at warm-up (autotune, dummy runs, graph capture) or while serving;
- autotune_cache_path, version_banner (via the clues), and the tqdm progress bars.

A fatal text met while an autotuner failure's backtrace is being read is that tactic's failure,
not a fatal event: the autotuner caught it (the parser does not call `scan_line` then).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from tiletune.core import error_text
from tiletune.core.events import Event, Fact
from tiletune.core.words import quote_bounded
from tiletune.readers.logs import trtllm_text

MAX_LINES_KEPT = 64
MAX_EVENTS = 4096  # distinct events per input; past it only counts grow
_ATTACH_WINDOW = 12  # lines after a fatal line that may still carry its kernel file / boxDim

_INIT_FAILED = re.compile(r"Failed to (?P<phase>initialize|run) (?:the )?cutlass (?P<what>.+?)(?: on (?P<archs>sm_?\d{2,3}[af]?(?:\s*/\s*sm_?\d{2,3}[af]?)*))?\s*[.:]\s*Error:\s*(?P<status>Error [A-Za-z ]+?)(?=\s*(?:\(|$|\.|,|`|'|\"))", re.I)
_TRT_ASSERT = re.compile(r"Assertion failed: (?:Failed to initialize cutlass (?P<what>TMA WS grouped gemm|grouped gemm|[\w ]+?gemm)|Error occurred when (?P<run>running GEMM))", re.I)
# a CUTLASS status returned by initialize() in a plain CUTLASS program ("Status::kErrorInternal during initialize()")
_CUTLASS_INIT = re.compile(r"(?:Status::)?(?P<status>kError\w+) (?:during|in|from|at) initialize\(\)")
# exception markers: a runner's line raised (not only printed per tactic)
_RAISED = re.compile(r"\b\w+(?:Error|Exception): |\b\w+\.errors\.\w+: |what\(\):|terminate called|Assertion failed|\bERROR\b|\[E\]|Traceback")
# a process that ended: upgrades a "maybe fatal" event before it (a sticky CUDA error after a tactic failure)
_DIED = re.compile(r"hit an exception|Traceback \(most recent call last\)|Engine core initialization failed|"
                   r"Worker failed|Process EngineCore|core dumped|Aborted|Failed to initialize executor|"
                   r"Scheduler hit an exception|WorkerProc hit|RuntimeError: |File \"[^\"]+\", line \d+, in \w", re.I)
# a dispatcher that has no kernel for the tile it was asked for, raised: the runner cannot run
_UNSUPPORTED_TILE = re.compile(r"(?P<exc>\w+Error: )?(?P<msg>Unsupported tile shape config (?P<cfg>\d+) for MoE gemm|Unsupported tile \([^)]*\) and cluster \([^)]*\) shape combination for arch \d+|Config is invalid for \w+ GEMM)")
_TMA = re.compile(r"Failed to initialize the TMA descriptor", re.I)
_SMEM_EXCEEDED = re.compile(r"(?P<what>[\w ]*GEMM) requires (?P<need>\d[\d,]*) bytes (?:of )?shared memory,? but (?:the )?device (?:only )?supports (?P<limit>\d[\d,]*)", re.I)
_SMEM_LACKS = re.compile(r"GPU lacks the shared memory resources to run (?P<what>\w+) kernel", re.I)
_SMEM_TRITON = re.compile(r"OutOfResources: (?:out of resource: )?shared memory, Required: (?P<need>\d+), Hardware limit: (?P<limit>\d+)")
_CUDA = re.compile(r"(?P<type>torch\.(?:Accelerator|Cuda)Error: )?(?:CUDA [Ee]rror|Error \[CUDA\]): (?P<msg>[A-Za-z][^\n`]*?)(?=\s*(?:CUDA kernel errors|Search for|Compile with|\(|`|\.\s|$))|(?P<name>CUDA_ERROR_[A-Z_]+|cudaError[A-Z]\w+)")
_CUDA_IGNORE = re.compile(r"CUDA kernel errors might be|For debugging consider passing|Compile with `TORCH_USE_CUDA_DSA`|See above for details", re.I)
_CACHE_PATH = re.compile(r"(?:Running FlashInfer autotune with cache|Using FlashInfer autotune cache file|FlashInfer autotune cache(?: file)?)[:\s]+(?P<path>/\S+)")
# FlashInfer 0.7.4's _TuningGroupError texts (flashinfer/autotuner/autotuner.py _tuning_group_agreement,
# _check_tuning_group_phase, _sync_oom_across_tune_group): the ranks of one tuning group disagreed
_GROUP = re.compile(r"Autotune group (?P<what>plan mismatch|phase mismatch|failure) at (?P<phase>.+?)(?:: (?P<rest>.*))?$"
                    r"|(?P<capture>Distributed autotuning cannot synchronize during an active CUDA Graph capture)")
_TQDM = re.compile(r"Tuning (?P<op>[\w:.]+?):\s*(?:(?P<pct>\d+)%\s*(?:\|[^|]*\|)?)?\s*(?P<done>\d+)/(?P<total>\d+)")
# an exception line as Python prints it: `Type: message` at the start of a line, after a log prefix
# ("ERROR 03-13 12:01:42 [x.py:932] ", "[rank0]: ", "(Worker pid=1) ") or Markdown (`- `, `> `, a backtick)
_EXC_TYPE = r"(?:[a-z_][\w]*\.)*(?:[A-Z]\w*(?:Error|Exception)|Exception)"  # `module.SomeError`, bare `Exception` (never a bare "Error:", CUTLASS's print)
_CODE_LINE = re.compile(r"^(?:\([^)]*\)\s*)*(?:(?:ERROR|INFO|WARNING)[^\]]*\]\s*)?\s*(?:raise |return |[\w.]+ = |if |elif |assert )")  # a source line
_EXC_LINE = re.compile(r"(?P<type>\b" + _EXC_TYPE + r"): (?P<msg>\S.*)$"
                       # a C++ exception as std::terminate prints it: "  what():  Error in function 'run' at ..."
                       r"|(?P<what>what\(\)):\s+(?P<wmsg>\S.*)$")
# an exception quoted in a Markdown code span of prose: "... fails with `RuntimeError: Check failed: ...` during ..."
_EXC_SPAN = re.compile(r"`(?P<type>" + _EXC_TYPE + r"): (?P<msg>[^`]+)`")
# where an exception was raised: a traceback frame of the kernels' code, or a ticket's "at `file.py:N`"
_FRAME = re.compile(r'File "(?P<path>[^"]*(?:flashinfer|cutlass|tensorrt_llm)[^"]*)", line (?P<ln>\d+), in (?P<fn>[\w<>]+)')
_KERNEL_PACKAGE = re.compile(r"(?:^|/)(?:flashinfer|cutlass|tensorrt_llm)/")
_AT_SOURCE = re.compile(r"\bat `?(?P<path>[\w./-]+\.(?:py|cu|cuh|cpp|h|hpp)):(?P<ln>\d+)")
_EXC_PREFIX = re.compile(r"[\s>*`#|-]*|.*[\])]:?\s+|.*\bERROR\b.*\s")
# an exception that belongs to the kernels tiletune reads: raised from their code or naming what they run
_EXC_RELEVANT = re.compile(r"flashinfer|cutlass|tensorrt|trtllm|tvm\.|tactic|Runner\b|Runner'|[Aa]uto[Tt]un|gemm|GEMM|Error in function '|"
                           r"\bMemoryError\b|OutOfMemoryError|"
                           r"\bmoe\b|MoE|[Kk]ernel|\bsm_?\d{2,3}|[Uu]nsupported arch|[Ss]hared memory")
_EXC_FUNCTION = re.compile(r"Error in function '(?P<fn>[\w:~<>]+)' at (?P<file>\S+?\.(?:cuh|cu|cpp|h|hpp|py)):(?P<line>\d+)")
_EXC_RUNNER = re.compile(r"\b(?P<runner>[A-Z]\w*Runner)\b")
_EXC_TACTIC = re.compile(r"\btactic\b\s*[:=]?\s*(?P<t>[\[(].*|-?\d+)", re.I)
_EXC_KERNEL = re.compile(r"Kernel:\s*(?P<k>\w+)")
_KERNEL_ARCH = re.compile(r"_sm(?P<a>\d{2,3}[af]?)$")
# words that place a line at warm-up (autotune sweep, dummy runs, graph capture) or while serving
# (code names and log lines only: prose such as "not a graph capture case" must not place it)
_WARMUP = re.compile(r"kernel[_ ]warmup|compile_or_warm_up_model|_dummy_run|\bdummy_run|profile_run|flashinfer_autotune|"
                     r"Autotuning process|\bTuning [\w:.]+:|capture_model|_capture_cudagraphs|capture_end\(|"
                     r"\bWarming up\b|\bmodel warm-?up\b")  # (an engine's own line announcing its warm-up)
_SERVING = re.compile(r"event_loop|run_batch|forward_batch_generation|Prefill batch|Decode batch|\bPOST /|concurrency=")
_STAGE_WINDOW = 40

_SERVED = re.compile(r"Application startup complete|Uvicorn running on|The server is fired up|ready to roll|Starting vLLM API server|"
                     r"Available routes are|Started GRPCInferenceService|Started HTTPService|Started Metrics Service", re.I)
# CUresult / cudaError codes a CUDA call returns, as the CUDA headers name them
CU_RESULT_NAMES = {1: "invalid value", 2: "out of memory", 201: "invalid context", 700: "illegal address",
                   714: "hardware stack error", 715: "illegal instruction", 716: "misaligned address",
                   719: "launch failure", 801: "operation not supported", 999: "unknown error"}
# a line in which the engine reports that a process stopped (the error is in the lines around it)
_ENGINE = re.compile(r"(?P<w>EngineCore failed to start|Engine core initialization failed|(?:Scheduler|WorkerProc|EngineCore) hit an exception|"
                     r"WorkerProc failed to start|EngineDeadError|Failed to initialize executor(?: on rank \d+)?|Worker failed(?: with error)?|"
                     r"Capture cuda graph failed)")
# a builtin MemoryError (an allocation that escaped the autotuner's OOM handler), raised or quoted
_WRAPPABLE = ("cuda_error", "exception", "runner_init_failed", "smem_exceeded", "tma_descriptor_failed", "memory_error")
_MEMORY_ERROR = re.compile(r"(?<![\w.])MemoryError\b(?!\w)")
# a line of prose the author wrapped mid-sentence: it ends on a word that needs the next line
# ("crashes with `cudaErrorIllegalAddress` during the" / "AutoTuner sweep for ...")
_NEEDS_MORE = re.compile(r"\b(?:the|a|an|of|to|in|on|for|with|during|from|at|by|and|or|while|when|after|before|into|"
                         r"than|that|which|is|are|was|were|be|as|its|their|this|shared|allowed)$", re.I)
_NOT_PROSE = re.compile(r"^\s*(?:File |Traceback|#|\||[-*+] |\d+[.)] |>|```|~~~|\[|\(\w+ pid=|(?:ERROR|WARNING|INFO|DEBUG)\b)")


def wrapped_on(prev: str, nxt: str) -> bool:
    """`nxt` continues the sentence `prev` was cut in by the author's line wrap: `prev` ends without a
    sentence end, and `nxt` is not a new item (a frame, a list item, a log line) and either starts in
    lowercase or follows a word that cannot end a sentence ("during the")."""
    p, n = prev.rstrip(), nxt.strip()
    if not p or not n or p.endswith((".", "!", "?", ")", "]", "}", '"', "'", ";")) or _NOT_PROSE.match(nxt):
        return False
    if not re.match(r"[`*]*[A-Za-z]+[`*]*(?:[\s,.;]|$)", n):  # a prose line goes on with a word, not a path, a name or a label
        return False
    return n[0].islower() or bool(_NEEDS_MORE.search(p.rstrip("`*")))


_EVIDENCE_CHARS = 150  # words of evidence a view shows whole (formats.view clips at 160)


def sentence_around(text: str, at: int) -> str:
    """The sentence of a long line that holds position `at`, with ' ...' / '... ' where the line goes on."""
    t = text.strip()
    at = max(0, at - (len(text) - len(text.lstrip())))
    starts = [m.end() for m in re.finditer(r"[.!?:]\s+(?=[A-Z`*(\[])", t[:at])]
    lo = starts[-1] if starts else 0
    hi = len(t)
    for m in re.finditer(r"(?<=[.!?])(?:\s|$)|(?<=[.!?]`)(?:\s|$)", t[at:]):
        hi = at + m.start()
        break
    if hi - lo > _EVIDENCE_CHARS:  # a long sentence: from the clause that holds the fact, so its end stays in view
        clauses = [lo] + [lo + m.end() for m in re.finditer(r"[,:;]\s+", t[lo:at])]
        lo = next((c for c in clauses if hi - c <= _EVIDENCE_CHARS), at)
    return ("... " if lo else "") + t[lo:hi].strip() + (" ..." if hi < len(t) else "")


def sentence_of(text: str) -> str:
    """`text` up to its first sentence end ('. ' not inside a number or an elision), whole when it has none."""
    for m in re.finditer(r"(?<=[.!?])(?:\s|$)", text):
        head = text[:m.start()]
        if head.endswith(("...", "e.g.", "i.e.", "vs.", "etc.")):
            continue
        return head
    return text


def _balanced(text: str) -> str:
    """The bracketed expression at the start of `text` ("((128, 32), (1, 1), True)" of a longer line)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
        elif depth == 0 and not (ch.isdigit() or ch == "-"):
            return text[:i].strip() or text.strip()
    return text.strip()


def _label_op(label: Optional[str], what: str) -> Optional[str]:
    return error_text.op_for_runner_label(label or "") or error_text.op_for_runner_label(what)


# the file and line a CUDA check names after the error ("(/path/prefill.cuh: line 2349)"; a paste may interleave
# the two: "prefill.cuh700: line ) 2349")
_CUDA_AT = re.compile(r"(?P<file>[\w-]+\.(?:cuh|cu|hpp|h|cpp))(?![A-Za-z]).{0,12}?\bline\W{0,4}(?P<line>\d+)")


_REPEATS = re.compile(r"\((?:×|x|X) ?(?P<a>\d{1,6})\)\s*$|\[repeated (?P<b>\d{1,6})x across cluster\]")


def repeats(text: str) -> int:
    """How many times one line stands for: a paste's trailing '(×64)', or Ray's '[repeated 64x across cluster]'
    (the repeats Ray folded into that line, the first one printed before it); else 1."""
    m = _REPEATS.search(text) if ("x" in text or "×" in text or "X" in text) else None
    if m is None:
        return 1
    return int(m.group("a") or m.group("b"))


_PACE = re.compile(r"\s*\[(?P<el>\d+:\d\d(?::\d\d)?)<[^,\]]*,\s*(?P<r>\d+(?:\.\d+)?)\s?s/profile\]")


class EventLog:
    """Aggregated events of one input (see the module docstring)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._events: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
        self._open: Optional[Tuple[Tuple[Any, ...], int]] = None  # a fatal event that may get more facts
        self._served_line: Optional[int] = None  # the first "server is up" line
        self._died_line: Optional[int] = None  # the first line that shows a process ending
        self._last_box: Optional[Tuple[Tuple[int, ...], int]] = None  # (boxDim, line) of the last TMA dump line
        self._last_cuda: Dict[str, int] = {}
        self._stage_hint: Dict[str, int] = {}  # "warm-up" / "serving" -> last line that said so
        self._stage_text: Dict[str, str] = {}  # ... and its words
        self._frame: Optional[Tuple[str, int]] = None  # (innermost kernel-code frame, line) of the open traceback
        self._soft: Optional[Tuple[Tuple[Any, ...], int]] = None  # (event, last line) whose words the author wrapped
        self.dropped = 0
        self._adds = 0  # add() calls: a line that made an event of a specific kind is no generic exception
        self._last_ident: Optional[Tuple[Any, ...]] = None  # the event add() last counted

    # ----- recording ---------------------------------------------------------------------------
    def add(self, kind: str, line: Optional[int], text: str, summary: str, facts: Dict[str, Fact],
            key: Tuple[Any, ...] = (), fatal: Optional[bool] = None, count: int = 1,
            maybe_fatal: bool = False) -> Tuple[Any, ...]:
        ident = (kind,) + tuple(key)
        self._adds += 1
        self._last_ident = ident
        ev = self._events.get(ident)
        if ev is None:
            if len(self._events) >= MAX_EVENTS:
                self.dropped += count
                return ident
            ev = self._events[ident] = dict(kind=kind, line=line, text=text.strip()[:500], summary=summary,
                                            facts=dict(facts), fatal=fatal, count=0, lines=[], maybe_fatal=maybe_fatal)
        ev["count"] += count
        if line is not None and len(ev["lines"]) < MAX_LINES_KEPT:
            ev["lines"].append(line)
        return ident

    def add_fact(self, ident: Tuple[Any, ...], name: str, fact: Fact) -> None:
        ev = self._events.get(ident)
        if ev is not None and name not in ev["facts"]:
            ev["facts"][name] = fact

    def get(self, ident: Tuple[Any, ...]) -> Optional[Dict[str, Any]]:
        return self._events.get(ident)

    def mark_survived(self, run: Any) -> None:
        """Errors the autotuner went on after (a skip line follows, no window end or stop between:
        `run_end.RunTracker.survived_by`) are findings, not what ended the run: `survived` with the
        skip line as evidence, and not fatal, unless the error is sticky (CUDA 700, 715, an illegal
        address or instruction): then it poisons the process's CUDA context, said by
        `poisons_context`, and stays fatal even though the autotuner went on."""
        from tiletune.readers.logs.run_end import ERROR_KINDS, sticky_reason

        for ev in self._events.values():
            if ev["kind"] not in ERROR_KINDS:
                continue
            facts = ev["facts"]
            code = facts["error_code"].value if "error_code" in facts else None
            sticky = sticky_reason(f"{ev['text']} {facts['error'].value if 'error' in facts else ''}", code)
            if sticky and "poisons_context" not in facts:
                facts["poisons_context"] = Fact(sticky, "inferred", "a sticky CUDA error fails every later CUDA call "
                                                "in the process", line=ev["line"], words=quote_bounded(ev["text"], 400))
                # a TMA encode that only returns the sticky code (715) is printed, not shown ending the run; an
                # error that reports the fault in words ("due to an illegal memory access") propagated
                if ev["kind"] != "tma_descriptor_failed" or "due to" in ev["text"]:
                    ev["fatal"], ev["maybe_fatal"] = None, False
            if "survived" in facts or ev["kind"] == "memory_error":
                continue  # (an escaping MemoryError is never survived: the autotuner's handler did not catch it)
            lines = [ln for ln in (ev["lines"] or [ev["line"]]) if ln is not None]
            by = [run.survived_by(ln) for ln in lines]
            if lines and all(by):
                s_line, s_text = by[-1]
                facts["survived"] = Fact(True, run.how(), f"line {s_line}: the autotuner went on", line=s_line,
                                         words=quote_bounded(s_text, 400))
                # survived: not what ended the run (a sticky one still poisons the context: `poisons_context` says so)
                ev["fatal"], ev["maybe_fatal"] = False, False

    def events(self) -> List[Event]:
        out = []
        for ev in sorted(self._events.values(), key=lambda e: (e["line"] or 0)):
            if ev["fatal"] is False and ev.get("maybe_fatal") and self._died_line is not None and ev["line"] is not None \
                    and ev["line"] <= self._died_line:
                ev["fatal"] = None  # the process ended after it: the kind's default (fatal) holds
                ev["facts"]["ended_run"] = Fact(True, "inferred", f"a process ended after it (line {self._died_line})")
            if (self._served_line is not None and ev["line"] is not None and ev["line"] > self._served_line
                    and ev["kind"] in ("runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded", "exception")):
                ev["facts"].setdefault("served_before", Fact(True, "decoded", f"server-ready line {self._served_line}"))
            if ev["fatal"] is False and ev.get("maybe_fatal"):
                ev["facts"].setdefault("ended_run", Fact(False, "inferred", "no line after it shows the process ending"))
            out.append(Event(kind=ev["kind"], source=self.source, summary=ev["summary"], text=ev["text"],
                             line=ev["line"], count=ev["count"], lines=tuple(ev["lines"]),
                             facts=tuple(ev["facts"].items()), fatal=ev["fatal"]))
        return out

    @property
    def died_line(self) -> Optional[int]:
        """The first line that shows a process ending (a traceback, 'hit an exception'), or None."""
        return self._died_line

    def tuning_at(self, line: int) -> Optional[Tuple[str, int, int]]:
        """(op, profiles done, profiles) of the tuning bar last drawn at or before `line`, if it was
        unfinished: a process that ended then ended during that op's autotune."""
        best: Optional[Tuple[int, str, int, int]] = None
        for ev in self._events.values():
            if ev["kind"] != "tuning_progress" or "op" not in ev["facts"]:
                continue
            drawn = [ln for ln in ev["lines"] if ln <= line]
            if drawn and (best is None or max(drawn) > best[0]):
                f = ev["facts"]
                best = (max(drawn), str(f["op"].value), int(f["profiles_done"].value), int(f["profiles"].value))
        if best is None or best[2] >= best[3] or line - best[0] > _ATTACH_WINDOW:
            return None
        return best[1], best[2], best[3]

    # ----- recognising ------------------------------------------------------------------------
    def scan_line(self, lineno: int, text: str) -> None:
        """Events in a line that is not an autotuner message (or its failure's backtrace)."""
        if self._soft is not None:
            self._unwrap(lineno, text)
        if self._open is not None:
            self._attach(lineno, text)
        before = self._adds
        if 'File "' in text or "Traceback" in text:
            # the innermost frame of the kernels' code on the line (a page kept as one line holds a whole traceback;
            # vLLM's own ".../backends/flashinfer.py" is not FlashInfer's code)
            frs = [f for f in _FRAME.finditer(text) if _KERNEL_PACKAGE.search(f.group("path"))] or list(_FRAME.finditer(text))
            fr = frs[-1] if frs else None
            if fr:
                self._frame = (f"{fr.group('path').rsplit('/', 1)[-1]}:{fr.group('ln')} in {fr.group('fn')}", lineno)
            elif "Traceback (most recent call last)" in text:
                self._frame = None
        if _WARMUP.search(text):
            self._stage_hint["warm-up"] = lineno
            self._stage_text["warm-up"] = quote_bounded(text.strip(), 400)
        elif _SERVING.search(text):
            self._stage_hint["serving"] = lineno
            self._stage_text["serving"] = quote_bounded(text.strip(), 400)
        if "boxDim" in text:
            bd = error_text.box_dim(text)
            if bd:
                self._last_box = (bd, lineno)
        if self._served_line is None and _SERVED.search(text):
            self._served_line = lineno
        if self._died_line is None and _DIED.search(text):
            self._died_line = lineno
        if "Failed to" in text or "failed to" in text or "Assertion failed" in text:
            if _TMA.search(text):
                self._tma(lineno, text)
            elif "Assertion failed" in text and _TRT_ASSERT.search(text):
                self._trt_assert(lineno, text)
            else:
                m = _INIT_FAILED.search(text)
                if m:
                    self._init_failed(lineno, text, m)
        elif "initialize()" in text and "kError" in text:
            m = _CUTLASS_INIT.search(text)
            if m:
                self._cutlass_init(lineno, text, m)
        if "shared memory" in text:
            m = _SMEM_EXCEEDED.search(text) or _SMEM_TRITON.search(text)
            if m:
                self._smem_exceeded(lineno, text, m)
            elif _SMEM_LACKS.search(text):
                self._smem_exceeded(lineno, text, None)
        if "CUDA" in text or "cudaError" in text:  # ("CUDA error: ..." and FlashInfer's "CUDA Error: ...")
            self._cuda(lineno, text)
        if "autotune cache" in text or "autotune with cache" in text:
            m = _CACHE_PATH.search(text)
            if m:
                self.cache_path(lineno, text, m.group("path"))
        if "Unsupported tile" in text or "Config is invalid" in text:
            m = _UNSUPPORTED_TILE.search(text)
            if m:
                raised = bool(m.group("exc")) or bool(_RAISED.search(text))
                self.add("runner_init_failed", lineno, text,
                         f"a runner has no kernel for the tile it was asked to run: {m.group('msg')}",
                         {"error_class": Fact("not_instantiated", "decoded", "error text"),
                          "error": Fact(m.group("msg"), "decoded", "error text")},
                         key=("unsupported", m.group("msg")), fatal=None if raised else False, maybe_fatal=not raised)
        if "MemoryError" in text and _MEMORY_ERROR.search(text) and not text.lstrip().startswith(("File ", "raise ")):
            self._memory_error(lineno, text)
        if "Assertion failed" in text and self._adds == before:  # one no specific kind above explained
            self._assertion(lineno, text)
        if "Autotune group " in text or "Distributed autotuning cannot" in text:  # 0.7.4's _TuningGroupError (raised)
            self._group_failure(lineno, text)
        if self._adds == before and ("Error" in text or "Exception" in text) and not _CUDA.search(text):
            self._exception(lineno, text)
        if ("fail" in text or "hit an" in text or "Dead" in text) and not _CODE_LINE.match(text):
            m = _ENGINE.search(text)
            if m:
                w = m.group("w")
                self.add("engine_failed", lineno, text, f"the engine reported a process stopping: {w}",
                         {"said": Fact(w, "decoded", "engine line")}, key=(w,))
        if self._adds != before and self._last_ident is not None and self._last_ident[0] in _WRAPPABLE:
            ev = self._events.get(self._last_ident)
            if ev is not None and ev["line"] == lineno and not _NOT_PROSE.match(text) and len(text.strip()) >= 40:
                self._soft = (self._last_ident, lineno)

    def _unwrap(self, lineno: int, text: str) -> None:
        """The next line of an error the author wrapped mid-sentence: its words join the event's text (the
        evidence a person reads), up to the sentence's end; an exception's message too."""
        assert self._soft is not None
        ident, last = self._soft
        ev = self._events.get(ident)
        self._soft = None
        if ev is None or lineno != last + 1 or len(ev["text"]) >= 480 or not wrapped_on(ev["text"], text):
            return
        piece = sentence_of(text.strip())
        ev["text"] = f"{ev['text']} {piece}"[:500]
        if ev["kind"] == "exception" and "error" in ev["facts"] and not ev.get("wrapped"):
            err = ev["facts"]["error"]
            if str(err.value) and ev["text"].rstrip("`").endswith(piece.rstrip("`")):
                msg = f"{err.value} {piece}".rstrip("`").strip()
                ev["facts"]["error"] = Fact(msg[:600], "decoded", f"exception text (wrapped over lines {ev['line']}-{lineno})")
                self._summarize_exception(ident)
        if piece == text.strip() and len(ev["text"]) < 480:
            self._soft = (ident, lineno)  # (the sentence goes on)

    def _fatal_seen(self) -> None:
        """Hook for a fatal line (kept for symmetry; start-up vs serving is decided in events())."""

    def _init_failed(self, lineno: int, text: str, m: "re.Match[str]") -> None:
        d = error_text.diagnose(text)
        what = m.group("what").strip()
        archs = tuple("sm" + re.sub(r"\D", "", a) for a in (m.group("archs") or "").split("/") if a.strip())
        status = m.group("status").strip()
        op = _label_op(d.runner_label, what)
        where = "error text"
        facts: Dict[str, Fact] = {"cutlass_status": Fact(status, "decoded", where),
                                  "error_class": Fact((d.cls or error_text.ErrorClass.INITIALIZE).value, "decoded", "error text")}
        if d.runner_label:
            facts["runner"] = Fact(d.runner_label, "decoded", "error text")
        if op:
            facts["op"] = Fact(op, "inferred", f"runner label '{d.runner_label or what}'")
        if archs:
            facts["arch"] = Fact(archs[0] if len(archs) == 1 else "/".join(archs),
                                 "decoded", f"error text 'on {'/'.join(archs)}'")
        if d.smem_need is not None:
            facts["smem_need_bytes"] = Fact(d.smem_need, "measured", "error text")
            facts["smem_limit_bytes"] = Fact(d.smem_limit, "measured", "error text")
        phase = m.group("phase").lower()
        facts["phase"] = Fact(phase, "decoded", "error text")
        raised = bool(_RAISED.search(text[: m.start()])) or bool(_RAISED.search(text))
        summary = (f"the {op or what} CUTLASS runner failed to {phase}"
                   + (f" on {'/'.join(archs)}" if archs else "") + f", {status}")
        if d.smem_over:
            summary += f" (needs {d.smem_need:,} B of shared memory, limit {d.smem_limit:,} B)"
        if not raised:
            summary += " (printed, not shown raised: not shown to end the run)"
        ident = self.add("runner_init_failed", lineno, text, summary, facts,
                         key=(d.runner_label or what, archs, status, d.smem_need, phase),
                         fatal=None if raised else False, maybe_fatal=not raised)
        self._open = (ident, lineno)

    def _trt_assert(self, lineno: int, text: str) -> None:
        m = _TRT_ASSERT.search(text)
        assert m is not None
        d = error_text.diagnose(text)
        if m.group("run"):
            facts0: Dict[str, Fact] = {"phase": Fact("run", "decoded", "assertion text"),
                                       "error_class": Fact("launch_failure", "inferred", "'Error occurred when running GEMM'")}
            kf = re.search(r"([\w/]+\.(?:cpp|cu|h)):(\d+)", text)
            if kf:
                facts0["file"] = Fact(f"{kf.group(1).rsplit('/', 1)[-1]}:{kf.group(2)}", "decoded", "assertion text")
            said = re.search(r"Assertion failed: (?P<m>[^(]+?)\s*(?:\(|$)", text)
            msg = said.group("m").strip() if said else "Error occurred when running GEMM!"
            where = f" ({facts0['file'].value})" if "file" in facts0 else ""
            self.add("runner_init_failed", lineno, text, f"a TensorRT-LLM GEMM runner failed while running: "
                     f"Assertion failed: {msg}{where}", facts0, key=("trt-run", facts0["file"].value if "file" in facts0 else None))
            return
        what = (m.group("what") or "").strip()
        facts: Dict[str, Fact] = {"runner": Fact(f"TensorRT-LLM cutlass {what}", "decoded", "assertion text"),
                                  "op": Fact("fused_moe", "inferred", f"'{what}' is the CUTLASS fused-MoE grouped GEMM"),
                                  "error_class": Fact("initialize", "decoded", "assertion text")}
        if d.cutlass_status:
            facts["cutlass_status"] = Fact(d.cutlass_status, "decoded", "assertion text")
        self._fatal_seen()
        ident = self.add("runner_init_failed", lineno, text,
                         f"TensorRT-LLM's CUTLASS {what} failed to initialize" + (f", {d.cutlass_status}" if d.cutlass_status else ""),
                         facts, key=("trt", what, d.cutlass_status, d.kernel_file.name if d.kernel_file else None))
        if d.kernel_file:
            self._kernel_file_facts(ident, d.kernel_file)
        self._open = (ident, lineno)

    def _assertion(self, lineno: int, text: str) -> None:
        """Any other TensorRT-LLM assertion (`[TensorRT-LLM][ERROR] Assertion failed: MSG (FILE:LINE)`,
        readers/logs/trtllm_text.py): fatal when raised (`what():`, `terminate called`, an
        exception type), the runner from the backtrace frames that follow (`_attach`)."""
        m = trtllm_text.ASSERTION.search(text)
        if m is None:
            return
        msg, path, line = m.group("msg").strip(), m.group("path"), int(m.group("line"))
        raised = bool(_RAISED.search(text.replace("Assertion failed", "")))
        facts: Dict[str, Fact] = {"assertion": Fact(msg[:400], "decoded", "assertion text"),
                                  "file": Fact(f"{path.rsplit('/', 1)[-1]}:{line}", "decoded", "assertion text"),
                                  "path": Fact(path, "decoded", "assertion text (the build machine's path)")}
        cls, _ = error_text.classify(msg)
        if cls is not None:
            facts["error_class"] = Fact(cls.value, "decoded", "assertion text")
        summary = (f"TensorRT-LLM aborted on an assertion: {msg[:200]} ({path.rsplit('/', 1)[-1]}:{line})" if raised
                   else f"TensorRT-LLM assertion: {msg[:200]} ({path.rsplit('/', 1)[-1]}:{line})")
        ident = self.add("assertion_failed", lineno, text, summary, facts, key=(msg[:200], path, line),
                         fatal=None if raised else False, maybe_fatal=not raised)
        self._open = (ident, lineno)

    def _group_failure(self, lineno: int, text: str) -> bool:
        """A raised `_TuningGroupError` (its exception line): ranks of one tuning group disagreed."""
        m = _GROUP.search(text)
        if not m:
            return False
        if m["capture"]:
            self.add("tuning_group_failed", lineno, text, "distributed autotuning stopped: a tuning group cannot "
                       "synchronize inside a CUDA graph capture (tune before capturing)",
                       {"failure": Fact("inside graph capture", "decoded", "exception text")}, key=("capture",))
            return True
        what, phase, rest = m["what"], m["phase"], m["rest"] or ""
        facts: dict[str, Any] = {"phase": Fact(phase, "decoded", "exception text"), "failure": Fact(what, "decoded", "exception text")}
        if rest.startswith("local selection="):
            facts["local_selection"] = Fact(rest[len("local selection="):][:300], "decoded", "exception text")
        elif rest:
            facts["detail"] = Fact(rest[:300], "decoded", "exception text")
        cache = "'cache'" in phase or phase == "cache"
        summary = (f"distributed autotuning stopped: the tuning group's ranks disagreed ({what} at {phase})"
                   + ("; at the cache-hit agreement: ranks held different cached selections" if cache else ""))
        self.add("tuning_group_failed", lineno, text, summary, facts, key=(what, phase))
        return True

    def _kernel_file_facts(self, ident: Tuple[Any, ...], kf: error_text.KernelFile) -> None:
        src = f"kernel file name {kf.name}"
        self.add_fact(ident, "kernel_file", Fact(kf.name, "decoded", "error text"))
        self.add_fact(ident, "arch", Fact(kf.arch, "decoded", src))
        self.add_fact(ident, "cta_m", Fact(kf.cta_m, "decoded", src))
        self.add_fact(ident, "block_scaled", Fact(kf.block_scaled, "decoded", src + (" (_BS)" if kf.block_scaled else " (no _BS)")))
        ev = self.get(ident)
        if ev is not None and "arch" not in ev["summary"] and f" on {kf.arch}" not in ev["summary"]:
            # the file names the arch the kernel was built for, not this machine's (a GB10, sm121, runs sm120 kernels)
            ev["summary"] += (f" (kernel {kf.name}, built for {kf.arch}: CTA M {kf.cta_m}"
                              + (", block-scaled" if kf.block_scaled else "") + ")")

    def _attach(self, lineno: int, text: str) -> None:
        assert self._open is not None
        ident, start = self._open
        if lineno - start > _ATTACH_WINDOW:
            self._open = None
            return
        if "generated.cu" in text:
            kf = error_text.kernel_file(text)
            if kf is not None:
                self._kernel_file_facts(ident, kf)
        if ident[0] == "exception":
            self._exception_more(ident, lineno, text)
        if ident[0] == "assertion_failed" and "runner" not in (self.get(ident) or {}).get("facts", {}):
            fr = trtllm_text.frame_runner(text)
            if fr is not None:  # the first frame past the throw helpers that names a runner's code
                self.add_fact(ident, "runner", Fact(fr[0], "decoded", f"backtrace frame (line {lineno})"))
                self.add_fact(ident, "function", Fact(f"{fr[0]}::{fr[1]}", "decoded", f"backtrace frame (line {lineno})"))
                ev = self.get(ident)
                if ev is not None:
                    ev["summary"] += f"; raised in {fr[0]}::{fr[1]} (backtrace)"
        if "boxDim" in text and ident[0] == "tma_descriptor_failed":
            bd = error_text.box_dim(text)
            if bd:
                self.add_fact(ident, "box_dim", Fact(bd, "decoded", f"TMA descriptor dump (line {lineno})"))

    def _tma(self, lineno: int, text: str) -> None:
        facts: Dict[str, Fact] = {"error_class": Fact("tma_descriptor", "decoded", "error text")}
        if self._last_box and lineno - self._last_box[1] <= _ATTACH_WINDOW:
            facts["box_dim"] = Fact(self._last_box[0], "decoded", f"TMA descriptor dump (line {self._last_box[1]})")
        self._fatal_seen()
        box = facts.get("box_dim")
        code = re.search(r"TMA descriptor\s+(\d+)", text)
        # "... due to an illegal memory access": a sticky CUDA error, the process cannot go on
        cls, _ = error_text.classify(text.replace("Failed to initialize the TMA descriptor", ""))
        sticky = cls in (error_text.ErrorClass.ILLEGAL_ACCESS, error_text.ErrorClass.ILLEGAL_INSTRUCTION)
        if code:
            facts["error_code"] = Fact(int(code.group(1)), "decoded", "error text (a CUresult)")
        name = CU_RESULT_NAMES.get(int(code.group(1))) if code else None
        due = re.search(r"due to (?:an? )?(?P<why>[\w ]+?)(?: was encountered)?\s*$", text)
        if sticky:  # the encode failed because the context already held an earlier kernel's sticky error
            why = due.group("why") if due else (name or "a sticky CUDA error")
            summary = (f"a TMA descriptor could not be built: the CUDA context already held a sticky error ({why}) "
                       "from an earlier kernel" + (f" (CUresult {code.group(1)})" if code else ""))
        else:
            summary = ("a TMA descriptor was rejected (cuTensorMapEncode failed"
                       + (f", CUresult {code.group(1)}" + (f" = {name}" if name else "") if code else "")
                       + (f", due to {due.group('why')}" if due and not code else "") + ")")
        box_text = "(" + ",".join(map(str, box.value)) + ")" if box else ""  # as the dump prints it
        ident = self.add("tma_descriptor_failed", lineno, text,
                         summary + (f"; boxDim {box_text} is the tile's TMA box" if box else ""),
                         facts, key=(box.value if box else None, code.group(1) if code else None),
                         fatal=None if sticky else False, maybe_fatal=not sticky)
        self._open = (ident, lineno)

    def _memory_error(self, lineno: int, text: str) -> None:
        """A builtin MemoryError: raised (an exception line) or quoted as escaping; it ends the run."""
        raised = bool(re.search(r"(?:^|[\s\])])MemoryError(?::|$)", text.strip())) or bool(
            re.search(r"escap\w*|raised|propagat\w*|uncaught|not caught|died|crash", text, re.I))
        if not raised:
            return
        amount = re.search(r"(\d[\d.,]*\s*[KMG]i?B) requested(?: with (?:only )?(\d[\d.,]*\s*[KMG]i?B) free)?", text)
        facts = {"error_class": Fact("out_of_memory", "decoded", "error text")}
        summary = "a builtin MemoryError escaped (not caught by the autotuner's OOM handler)"
        if amount:
            facts["requested"] = Fact(amount.group(1), "measured", "error text")
            summary += f": {amount.group(1)} requested" + (f" with {amount.group(2)} free" if amount.group(2) else "")
        self.add("memory_error", lineno, text, summary, facts, key=("memory", amount.group(1) if amount else None))

    def _exception(self, lineno: int, text: str) -> None:
        """A raised exception line from the kernels' code (or naming a runner, tactic or kernel)."""
        m = _EXC_LINE.search(text)
        if m is None or not _EXC_PREFIX.fullmatch(text[: m.start()]):
            m = _EXC_SPAN.search(text)  # quoted in prose: the span is the whole message
            if m is None:
                return
        frame, self._frame = self._frame, None  # an exception line closes its traceback
        gd = m.groupdict()
        if gd.get("what"):
            etype, msg = "C++ exception (what())", gd["wmsg"].strip()
        else:
            etype, msg = m.group("type"), m.group("msg").strip().rstrip("`").strip()
        # relevant: it names the kernels' code, a tactic or runner; or the sentence quoting it does; or
        # its traceback went through FlashInfer / CUTLASS / TensorRT-LLM code
        in_kernel_code = frame is not None and lineno - frame[1] <= _STAGE_WINDOW
        if not (_EXC_RELEVANT.search(etype + " " + msg) or in_kernel_code
                or (_EXC_RELEVANT.search(text) and "`" in text[: m.start() + 1])):
            return
        facts: Dict[str, Fact] = {"exception_type": Fact(etype, "decoded", "exception line"),
                                  "error": Fact(msg[:400], "decoded", "exception line")}
        cls, _ = error_text.classify(msg)
        if cls is not None:
            facts["error_class"] = Fact(cls.value, "decoded", "error text")
        self._exception_facts(facts, msg)
        stage = self._stage(lineno)
        if stage is not None:
            facts["stage"] = stage
        if frame is not None and in_kernel_code:
            facts["raised_in"] = Fact(frame[0], "decoded", f"traceback frame (line {frame[1]})")
        ident = self.add("exception", lineno, text, "", facts, key=(etype, msg[:200]))
        self._summarize_exception(ident)
        # a message cut at ':' / ',' or with an open bracket goes on in the next lines (a wrapped paste)
        wrapped = msg.endswith((":", ",", " at")) or msg.count("(") > msg.count(")") or msg.count("[") > msg.count("]")
        self._open = (ident, lineno)
        ev = self.get(ident)
        if ev is not None:
            ev["wrapped"] = wrapped

    def _exception_facts(self, facts: Dict[str, Fact], msg: str) -> None:
        fn = _EXC_FUNCTION.search(msg)
        if fn:
            facts.setdefault("file", Fact(f"{fn.group('file').rsplit('/', 1)[-1]}:{fn.group('line')}", "decoded", "exception text"))
            if fn.group("fn").endswith("Runner"):
                facts.setdefault("runner", Fact(fn.group("fn"), "decoded", "exception text 'Error in function'"))
            else:
                facts.setdefault("function", Fact(fn.group("fn"), "decoded", "exception text 'Error in function'"))
        r = _EXC_RUNNER.search(msg)
        if r and "runner" not in facts:
            facts["runner"] = Fact(r.group("runner"), "decoded", "exception text")
        t = _EXC_TACTIC.search(msg)
        if t and "tactic" not in facts:
            facts["tactic"] = Fact(_balanced(t.group("t")), "decoded", "exception text (the tactic as written)")
        k = _EXC_KERNEL.search(msg)
        if k and "kernel" not in facts:
            facts["kernel"] = Fact(k.group("k"), "decoded", "exception text")
            a = _KERNEL_ARCH.search(k.group("k"))
            if a:
                facts["arch"] = Fact("sm" + a.group("a"), "decoded", f"kernel name {k.group('k')}")
        if "op" not in facts:
            op = error_text.op_for_runner_label(str(facts["runner"].value) if "runner" in facts else msg)
            if op:
                facts["op"] = Fact(op, "inferred", "words of the exception text")

    def _exception_more(self, ident: Tuple[Any, ...], lineno: int, text: str) -> None:
        """Lines after an exception: the rest of a wrapped message, and where the run was."""
        ev = self.get(ident)
        if ev is None:
            return
        if ev.get("wrapped"):
            t = text.strip()
            if not t or t.startswith("```") or _EXC_LINE.search(t) or t.startswith(("File ", "Traceback", "[")):
                ev["wrapped"] = False
            else:
                msg = f"{ev['facts']['error'].value} {t}"
                ev["facts"]["error"] = Fact(msg[:600], "decoded", f"exception text (wrapped over lines {ev['line']}-{lineno})")
                self._exception_facts(ev["facts"], msg)
                cls, _ = error_text.classify(msg)
                if cls is not None:
                    ev["facts"]["error_class"] = Fact(cls.value, "decoded", "error text")
                ev["wrapped"] = not (t.endswith(")") and msg.count("(") <= msg.count(")")) and lineno - ev["line"] < 4
        if lineno - ev["line"] <= 3 and not ev.get("wrapped"):
            # a ticket says where it was raised on the next line: "at `flashinfer/gemm/gemm_base.py:5327`,
            # called from `mm_mxfp8` -> `CuteDSLMxfp8GemmRunner.forward`"
            at = _AT_SOURCE.search(text)
            if at and "raised_in" not in ev["facts"]:
                ev["facts"]["raised_in"] = Fact(f"{at.group('path')}:{at.group('ln')}", "decoded", f"line {lineno}")
            r = _EXC_RUNNER.search(text)
            if r and "runner" not in ev["facts"]:
                ev["facts"]["runner"] = Fact(r.group("runner"), "decoded", f"line {lineno} (where it was raised)")
        if "stage" not in ev["facts"]:
            if _WARMUP.search(text):
                ev["facts"]["stage"] = Fact("warm-up", "inferred", f"line {lineno} names the warm-up / autotune path",
                                            line=lineno, words=quote_bounded(text.strip(), 400))
            elif _SERVING.search(text):
                ev["facts"]["stage"] = Fact("serving", "inferred", f"line {lineno} names the serving loop",
                                            line=lineno, words=quote_bounded(text.strip(), 400))
        self._summarize_exception(ident)

    def _stage(self, lineno: int) -> Optional[Fact]:
        hints = [(ln, st) for st, ln in self._stage_hint.items() if lineno - ln <= _STAGE_WINDOW]
        if not hints:
            return None
        ln, st = max(hints)
        return Fact(st, "inferred", f"line {ln} names the {'warm-up / autotune path' if st == 'warm-up' else 'serving loop'}",
                    line=ln, words=self._stage_text.get(st, ""))

    def _summarize_exception(self, ident: Tuple[Any, ...]) -> None:
        ev = self.get(ident)
        if ev is None:
            return
        f = ev["facts"]
        msg = str(f["error"].value)
        fn = _EXC_FUNCTION.search(msg)
        if fn:  # "Error in function 'run' at /long/path/x.cu:258: text" -> "in run (x.cu:258): text"
            msg = f"in {fn.group('fn')} ({f['file'].value}): " + msg[fn.end():].lstrip(": ")
        msg = re.sub(r"\s+", " ", msg)
        if "kernel" in f:  # the kernel name is a fact of its own; the text keeps the numbers around it
            msg = msg.replace(str(f["kernel"].value), "<kernel>")
        text = f"{f['exception_type'].value} {msg[:200]}" if fn else f"{f['exception_type'].value}: {msg[:200]}"
        named = [f"{k} {f[k].value}" for k in ("runner", "tactic", "kernel", "arch") if k in f and str(f[k].value) not in text]
        if "raised_in" in f and "file" not in f:
            named.append(f"raised in {f['raised_in'].value}")
        if "stage" in f:
            named.append(f"at {f['stage'].value}" if f["stage"].value == "warm-up" else "while serving")
        ev["summary"] = text + (f" ({'; '.join(named)})" if named else "")

    def _cutlass_init(self, lineno: int, text: str, m: "re.Match[str]") -> None:
        status = m.group("status")
        facts = {"cutlass_status": Fact(status, "decoded", "error text"), "phase": Fact("initialize", "decoded", "error text"),
                 "error_class": Fact("initialize", "decoded", "error text")}
        d = error_text.diagnose(text)
        if d.smem_need is not None:
            facts["smem_need_bytes"] = Fact(d.smem_need, "measured", "error text")
        self.add("runner_init_failed", lineno, text, f"a CUTLASS kernel failed in initialize() with {status}", facts,
                 key=("cutlass", status))

    def _smem_exceeded(self, lineno: int, text: str, m: "Optional[re.Match[str]]") -> None:
        if m is None:  # "GPU lacks the shared memory resources to run GroupedGEMM kernel": no numbers
            lm = _SMEM_LACKS.search(text)
            what = lm.group("what") if lm else "kernel"
            raised = bool(_RAISED.search(text))
            src = re.search(r"([\w.-]+\.(?:h|hpp|cu|cuh|cpp)):(\d+)", text)
            self.add("smem_exceeded", lineno, text, f"the GPU lacks the shared memory to run the {what} kernel"
                     + (f" ({src.group(1)}:{src.group(2)})" if src else "") + " (no byte counts in the text)",
                     {"error_class": Fact("shared_memory", "decoded", "error text"), "kernel": Fact(what, "decoded", "error text")},
                     key=("lacks", what), fatal=None if raised else False, maybe_fatal=not raised)
            return
        need, limit = int(m.group("need").replace(",", "")), int(m.group("limit").replace(",", ""))
        what = m.groupdict().get("what") or ("Triton kernel" if "OutOfResources" in text else "kernel")
        what = what.strip()
        facts = {"smem_need_bytes": Fact(need, "measured", "error text"),
                 "smem_limit_bytes": Fact(limit, "measured", "error text (the device's per-block limit)"),
                 "error_class": Fact("shared_memory", "decoded", "error text")}
        if "moe" in what.lower():
            facts["op"] = Fact("fused_moe", "inferred", f"'{what}'")
        raised = bool(_RAISED.search(text))
        ident = self.add("smem_exceeded", lineno, text,
                         f"{what} needs {need:,} B of shared memory, the device allows {limit:,} B per block"
                         + ("" if raised else " (printed, not shown raised: not shown to end the run)"),
                         facts, key=(what, need, limit), fatal=None if raised else False, maybe_fatal=not raised)
        self._open = (ident, lineno)

    def _cuda(self, lineno: int, text: str) -> None:
        if _CUDA_IGNORE.search(text) and "CUDA error:" not in text:
            return
        m = _CUDA.search(text)
        if not m:
            return
        msg = (m.group("msg") or m.group("name") or "").strip().rstrip(".")
        if not msg or msg.lower().startswith("see above"):
            return
        cls, _ = error_text.classify(text)
        facts = {"error": Fact(msg, "decoded", "error text"),
                 "error_class": Fact((cls or error_text.ErrorClass.CUDA_ERROR).value, "decoded", "error text")}
        # one error prints as several lines ("CUDA error: ...", its cudaError name, torch's hint):
        # lines of the same class within a few lines of the last are one occurrence
        klass = (cls or error_text.ErrorClass.CUDA_ERROR).value
        last = self._last_cuda.get(klass)
        self._last_cuda[klass] = lineno
        if last is not None and lineno - last <= 5:
            return
        at = ""
        src = _CUDA_AT.search(text[m.end():])  # where the check that caught it sits ("prefill.cuh: line 2349")
        if src:
            facts["file"] = Fact(f"{src.group('file')}:{src.group('line')}", "decoded", "error text")
            at = f" (caught at {src.group('file')} line {src.group('line')})"
        typ = (m.group("type") or "").strip()
        if typ:
            facts["exception_type"] = Fact(typ.rstrip(": "), "decoded", "error text")
        # a long line of prose: its evidence is the sentence that says it, the author's words around it marked as cut
        words = sentence_around(text, m.start()) if len(text.strip()) > 200 else text
        self.add("cuda_error", lineno, words, f"{typ + ' ' if typ else ''}CUDA error: {msg}{at}", facts, key=(klass,))

    def tactic_cuda_error(self, lineno: int, text: str, op: Optional[str]) -> None:
        """A CUDA error inside an autotuner tactic failure: the autotuner caught it, but the error is
        sticky and often ends the process (fatal when a later line shows the process ending)."""
        cls, _ = error_text.classify(text)
        if cls not in (error_text.ErrorClass.ILLEGAL_ACCESS, error_text.ErrorClass.ILLEGAL_INSTRUCTION,
                       error_text.ErrorClass.CUDA_ERROR, error_text.ErrorClass.LAUNCH_FAILURE):
            return
        m = _CUDA.search(text)
        msg = ((m.group("msg") or m.group("name")) if m else None) or text.strip()[:200]
        facts = {"error": Fact(msg.strip(), "decoded", "autotuner failure line"),
                 "error_class": Fact(cls.value, "decoded", "error text"),
                 "where": Fact("inside an autotuner tactic failure", "decoded", "log line")}
        if op:
            facts["op"] = Fact(op, "decoded", "profile block")
        self.add("cuda_error", lineno, text, f"CUDA error in a tactic the autotuner skipped: {msg.strip()[:160]}", facts,
                 key=("tactic", cls.value), fatal=False, maybe_fatal=True)

    # ----- helpers the parser calls -------------------------------------------------------------
    def cache_path(self, lineno: int, text: str, path: str) -> None:
        from tiletune.readers.logs.clues import ClueSet

        cs = ClueSet()
        cs.feed(lineno, path)
        facts: Dict[str, Fact] = {"path": Fact(path, "decoded", "log line")}
        for c in cs.clues:
            if c.what in ("arch", "flashinfer_version", "rank"):
                facts[c.what] = Fact(c.value, "decoded", f"cache path {c.text}")
        who = "SGLang" if "/sglang/" in path or "Running FlashInfer autotune" in text else ("vLLM" if "vllm" in path else "the server")
        self.add("autotune_cache_path", lineno, text, f"{who} used the FlashInfer autotune cache {path}", facts, key=(path,))

    def progress(self, lineno: int, body: str) -> bool:
        """A tqdm `Tuning <op>: 40%|...| 4/10` bar: the op and its profile count (final value kept)."""
        bars = list(_TQDM.finditer(body))
        if not bars:
            return False
        m = bars[-1]  # several redraws glued on one line (no carriage return kept): its last state wins
        op, done, total = m.group("op"), int(m.group("done")), int(m.group("total"))
        ident = ("tuning_progress", op)
        ev = self.get(ident)
        if ev is None:
            self.add("tuning_progress", lineno, body, f"tuned {op}: {done} of {total} profiles",
                     {"op": Fact(op, "decoded", "progress bar"), "profiles": Fact(total, "decoded", "progress bar"),
                      "profiles_done": Fact(done, "decoded", "progress bar"),
                      "passes": Fact(1, "decoded", "progress bars (a bar that starts again is a new pass)"),
                      "complete_passes": Fact(int(done >= total), "decoded", "progress bars that reached their total")},
                     key=(op,), count=0)
            ev = self.get(ident)
            if ev is not None:
                ev["count"] += 1
            return True
        if ev is not None:
            # passes: a bar that starts again (fewer done than before, another total, or any update after a
            # complete one: a pass printed only at its end) is a new pass; a pass is complete once it reaches its total
            f = ev["facts"]
            prev_done, prev_total = f["profiles_done"].value, f["profiles"].value
            if done < prev_done or total != prev_total or prev_done >= prev_total:
                f["passes"] = Fact(f["passes"].value + 1, "decoded", "progress bars (a bar that starts again is a new pass)")
            if done >= total:  # (an update after a complete one started a new pass above: each counts once)
                f["complete_passes"] = Fact(f["complete_passes"].value + 1, "decoded", "progress bars that reached their total")
            # the bar's last state wins (a bar that restarted and stopped early shows where it stopped)
            ev["facts"]["profiles_done"] = Fact(done, "decoded", "progress bar", line=lineno, words=m.group(0))
            ev["facts"]["profiles"] = Fact(total, "decoded", "progress bar", line=lineno, words=m.group(0))
            ev["summary"] = f"tuned {op}: {done} of {total} profiles"
            ev["count"] += 1  # every bar update (a redraw) is one progress segment
        if ev is not None:  # tqdm's "[06:15<07:51, 42.84s/profile]": the pace of the bar's last state
            pace = _PACE.match(body, m.end())
            for name in ("elapsed", "s_per_profile"):
                ev["facts"].pop(name, None)
            if pace is not None:
                ev["facts"]["elapsed"] = Fact(pace.group("el"), "decoded", "progress bar", line=lineno, words=pace.group(0))
                ev["facts"]["s_per_profile"] = Fact(float(pace.group("r")), "decoded", "progress bar", line=lineno,
                                                    words=pace.group(0))
        return True
