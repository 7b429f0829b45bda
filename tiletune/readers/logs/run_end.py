"""What ended a run, read from the shape of a text: tracebacks, stop lines, autotuning windows.

A server log or a ticket often holds many errors; only one ended the run. `RunTracker` is fed every
line of one text (autotuner messages too) and keeps its shape, bounded:

- the autotuning windows ("Autotuning process starts" ... "Autotuning process ends") and the lines
  where the autotuner went on after an error (`Skipping tactic`, `Skipped N unsupported tactic(s)`,
  `OOM detected, falling back`): an error followed by one of these, with no window end between,
  was survived, a finding and not the end;
- Python tracebacks: header, frames (file, function, the code line under each), the exception line
  that ends one, or none when the paste is cut after the last frame;
- stop lines: `EngineCore failed to start`, `what():`, `terminate called`, an abort, a core dump,
  an Xid, an exit status, `Fatal Python error`, a segmentation fault, and the lines that report a
  stop for a whole process ("Scheduler hit an exception", "WorkerProc hit an exception",
  "Process EngineCore_0:", "Engine core initialization failed. See root cause above"): these
  wrap the error, they are not it.

`conclude(events)` then says what ended the run (`tiletune.core.events.RunEnd`): the first line that
shows the process stopping, and the last unrecovered error at or before it (an event or a
traceback's exception line; wrappers never). Stage ("autotune", "warm-up", "serving"), the op and
the cut come from evidence lines (frames, the window, a progress bar, a served line) or stay
"unknown". No I/O: the parser feeds the lines.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from tiletune.core.events import Event, Evidence, RunEnd
from tiletune.core.words import quote_bounded

MAX_TRACEBACKS = 64
MAX_MARKS = 4096
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<ln>\d+), in (?P<fn>[\w<>.]+)')
_TB_HEAD = re.compile(r"Traceback \(most recent call last\)")
_EXC_TYPE = r"(?:[a-z_][\w]*\.)*(?:[A-Z]\w*(?:Error|Exception|Interrupt|Exit)|Exception)"  # never a bare "Error:"
# an exception line as Python prints it, after a log prefix ("ERROR 09-07 00:59:17 [core.py:712] ",
# "(EngineCore_0 pid=1) ", "[rank0]: ") or Markdown ("> ", "- ", a backtick)
_EXC_LINE = re.compile(r"^(?P<prefix>.*?)(?<![\w.])(?P<type>" + _EXC_TYPE + r")(?::\s*(?P<msg>\S.*))?$")
_PREFIX_OK = re.compile(r"[\s>*`#|-]*|.*[\])]:?\s+|.*\bERROR\b.*\s|.*\bpid=\d+\)\s+")
# lines that show a process stopping (not an error themselves)
_STOP = re.compile(
    r"(?P<engine>EngineCore failed to start|Engine core initialization failed|WorkerProc failed to start|"
    r"Failed to initialize executor|Capture cuda graph failed|EngineDeadError)"
    r"|(?P<what>what\(\):\s*\S)"
    r"|(?P<terminate>terminate called after throwing)"
    r"|(?P<signal>Caught signal \d+|\bSignal: [A-Z]\w+(?: [a-z]+)* \(\d+\)|received signal SIG[A-Z]+)"
    r"|(?P<abort>\bAborted\b(?: \(core dumped\))?|core dumped)"
    r"|(?P<xid>NVRM: Xid|\bXid \(PCI:|\bXid \d+\b)"
    r"|(?P<exit>exited with (?:exit )?code [1-9]\d*|exit(?:ed)? (?:code|status)[ :=]+[1-9]\d*|returned non-zero exit status)"
    r"|(?P<fatal>Fatal Python error)"
    r"|(?P<segv>Segmentation fault|SIGSEGV|SIGABRT)"
    r"|(?P<killed>\bKilled\b$)",
)
# lines that report a process stopping and wrap its error (the error is in the traceback around them)
_WRAPPER = re.compile(r"hit an exception|Process EngineCore\w*:|Process \w+Proc\w*:|See root cause above|See stack trace \(above\)|"
                      r"Engine core initialization failed|EngineCore failed to start|WorkerProc failed to start|Worker failed|"
                      r"Failed to initialize executor|Scheduler hit|WorkerProc hit")
_SKIP = re.compile(r"Skipping tactic |Skipped \d+ unsupported tactic|OOM detected, falling back|falling back to default tactic")
_WINDOW_START = re.compile(r"Autotuning process starts")
_WINDOW_END = re.compile(r"Autotuning process ends")
_TQDM = re.compile(r"Tuning (?P<op>[\w:.]+?):\s*(?:(?P<pct>\d+)%\s*(?:\|[^|]*\|)?)?\s*(?P<done>\d+)/(?P<total>\d+)")
_SERVED = re.compile(r"Application startup complete|Uvicorn running on|The server is fired up|ready to roll|"
                     r"Available routes are|POST /v1/|\"POST /generate|Started GRPCInferenceService|Started HTTPService|"
                     r"Started Metrics Service", re.I)
# frames and words that place a stop
_WARMUP_FN = re.compile(r"^(?:kernel_warmup|_flashinfer_autotune|flashinfer_autotune|compile_or_warm_up_model|"
                        r"_dummy_run|dummy_run|profile_run|_dummy_sampler_run|capture_model|_capture_cudagraphs|"
                        r"warmup|_warmup\w*|warm_up\w*|determine_available_memory|initialize_kv_cache|"
                        r"_initialize_kv_caches|load_model|init_model_worker|run_engine_core|__init__)$")
_AUTOTUNE_FN = re.compile(r"^(?:choose_one|_profile_single_kernel|_profile_runners|_prepare_input_tensors|"
                          r"run_with_autotune|autotune)$")
_SERVING_FN = re.compile(r"^(?:event_loop\w*|run_batch|forward_batch_generation|step_with_batch_queue|"
                         r"execute_model_async|process_input_requests|handle_generate_request|generate|output_handler|"
                         r"create_completion|create_chat_completion|completion_stream_generator|run_busy_loop)$")
# frames worth naming in a sentence (the rest are torch / module plumbing)
_NAMED_FN = re.compile(r"^(?:kernel_warmup|_flashinfer_autotune|flashinfer_autotune|compile_or_warm_up_model|"
                       r"run_busy_loop|step|execute_model|output_handler|_init_executor|_process_engine_step|"
                       r"_dummy_run|profile_run|capture_model|choose_one|_profile_single_kernel|"
                       r"determine_available_memory|load_model|initialize_kv_cache|event_loop\w*|run_batch|"
                       r"forward_batch_generation|\w+_op|mm_\w+|bmm_\w+|\w*gemm\w*|\w*_moe\w*|\w*fmha\w*|"
                       r"\w*_decode\w*|\w*_prefill\w*|run_selected_tactic)$")
_OP_FN = re.compile(r"^(?P<op>\w+?)_op$")
_PLUMBING = re.compile(r"^(?:_call_impl|_wrapped_call_impl|__call__|forward|inner|_fn|wrapped_fn|backend_impl|"
                       r"decorate_context|run|_bootstrap|_bootstrap_inner|_target|wrapper|\w*_impl)$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_WARNED = re.compile(r"\bWARNING\b|\bWARN\b|^\s*W\d{4} ")  # a traceback logged as a warning (the run went on)
# an engine's own line announcing its warm-up ("🔥 Warming up model ...", "Warming up DeepSeek V4 sparse MLA attention")
_WARMUP_LINE = re.compile(r"\bWarming up\b|\b(?:model|kernel|engine) warm-?up\b", re.I)
_SHUTDOWN = re.compile(r"Shutting down|Waiting for application shutdown|Finished server process|Stopping .* server", re.I)
_CPP_FRAME = re.compile(r"^\s*(?:\(\w+[^)]*\)\s*)?\d+\s+0x[0-9a-fA-F]+\s+(?:void )?(?P<sym>[A-Za-z_][\w:~<>]*?)(?:<[^(]*>)?\(")
# a frame of the backtrace a signal handler prints (glibc's backtrace_symbols, UCX, Open MPI):
# "[host:pid] [ 4] /usr/lib/.../libstdc++.so.6(+0xa2b9e)[0x7f...]", " 4  /root/.../fused_moe_trtllm_sm100.so(_ZN3moe...+0x7f) [0x7d...]"
_NATIVE_FRAME = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:\[\s*\d+\]|\d+)\s+(?P<lib>/?[\w./+-]*?(?P<name>[\w.+-]+\.so(?:\.[\d.]+)?))"
                           r"\((?P<sym>[^)+]*)(?:\+0x[0-9a-fA-F]+)?\)")
# libraries every native backtrace passes through (the signal handler, libc's abort, the C++ runtime, Python)
_SYSTEM_LIB = re.compile(r"^(?:libc|libpthread|libgcc_s|libstdc\+\+|libucs|libucm|libopen-pal|libmpi|ld-linux[\w-]*|"
                         r"libpython[\d.]*|libdl|libm)\.so", re.I)
_ELIDED = re.compile(r"\(?\s*(?:\.\.\.\s*)?\(?\d[\d,]* (?:more )?lines? (?:omitted|elided|removed|skipped|truncated)\)?(?:\s*\.\.\.)?|"
                     r"\[\.\.\.\s*\d[\d,]* lines?[^\]]*\]", re.I)
# a log line (a timestamp, a level, a bracketed tag, a traceback frame) and a line of prose (words and punctuation)
_LOG_LIKE = re.compile(r"^\s*(?:\(\w+[^)]*\)\s*)?(?:\[?\d{4}-\d\d-\d\d|\[?\d\d[-/]\d\d|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b|"
                       r"\[[\w. -]+\]|File \"|Traceback|\d+\s+0x[0-9a-f]+|[IWEF]\d{4} )")
_PROSE = re.compile(r"^(?:[-*] )?(?=(?:[^\W\d_]+[,.;:!?'’)]*\s+){6,})[^|{}<>=]*[.!?:]\s*$")
_WORD = re.compile(r"[^\W\d_]{2,}")
# marks of a log line in any prefix ("(Worker pid=1) (Worker_DP0 pid=1) 2026-03-13 ... - WARNING - ..."): not a paragraph
_LOGGISH = re.compile(r"\bpid=\d+|\b(?:INFO|WARNING|ERROR|DEBUG)\b|\[\w+\.py:\d+\]|^\s*File \"|\d\d:\d\d:\d\d")
_MD_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_MD_OTHER = re.compile(r"^\s*(?:#{1,6} \S|> |[-*] (?:\*\*|`|\[)|\d+\. \*\*|\*\*[A-Z][\w /()-]{0,40}:?\*\*:? )")
_STICKY = re.compile(r"illegal memory access|illegal address|illegal instruction|misaligned address|"
                     r"unspecified launch failure|cudaErrorIllegal|CUDA_ERROR_ILLEGAL|CUDA_ERROR_LAUNCH_FAILED|"
                     r"CUDA_ERROR_MISALIGNED|WARP_ILLEGAL", re.I)
STICKY_CODES = {700: "illegal address", 714: "hardware stack error", 715: "illegal instruction",
                716: "misaligned address", 717: "invalid address space", 718: "invalid program counter",
                719: "launch failure"}
ERROR_KINDS = ("runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded", "exception", "memory_error")
_CODE = re.compile(r"^\s*(?:raise |return |[\w.,\s]+ = |if |elif |assert |[\w.]+\()")  # a traceback's source line
# words that place a stop by the engine's own report: a process that failed to start is at start-up
_STARTUP_WORDS = re.compile(r"EngineCore failed to start|Engine core initialization failed|WorkerProc failed to start|"
                            r"Failed to initialize executor|Capture cuda graph failed")
_AUTOTUNE_CACHE = re.compile(r"Running FlashInfer autotune with cache|Autotuning FlashInfer .* with cache|"
                             r"Using FlashInfer autotune cache file")


def sticky_reason(text: str, code: Optional[int] = None) -> Optional[str]:
    """Why an error poisons the CUDA context (a sticky error: every later CUDA call in the process
    fails), or None: CUDA error codes 700 and 714-719, or their names in the text."""
    if code is not None and code in STICKY_CODES:
        return f"CUDA error {code} ({STICKY_CODES[code]}) is sticky"
    m = _STICKY.search(text)
    if not m:
        return None
    word = re.match(r"\w*", text[m.start():]).group(0) if m.group(0).startswith(("cudaError", "CUDA_ERROR")) else m.group(0)  # type: ignore[union-attr]
    return f"'{word}' is a sticky CUDA error"


def clip_words(text: str, limit: int = 160) -> str:
    """`text` with runs of space folded, whole when it nearly fits `limit`, else cut at a sentence's or a clause's end
    (code in its middle folded first; never mid-word), saying how many words were left out."""
    return quote_bounded(text, limit)


@dataclass
class _Frame:
    line: int
    path: str
    fn: str
    code: str = ""


@dataclass
class _Traceback:
    head: Optional[int]  # the "Traceback (most recent call last)" line; None: frames with no header
    head_text: str = ""
    warned: bool = False  # printed at WARNING level: a handler logged it and the run went on
    frames: List[_Frame] = field(default_factory=list)
    exc_line: Optional[int] = None
    exc_text: str = ""
    exc_type: str = ""
    wrapper: Optional[Tuple[int, str]] = None  # the "hit an exception" line that announced it
    lead_code: Optional[Tuple[int, str]] = None  # a cut paste's first line: the code of a frame cut off above


@dataclass
class _Mark:
    line: int
    text: str
    kind: str


def _unprefixed(text: str, prefix: str) -> str:
    """A paste's line without the log prefix every line of it carries."""
    return text[len(prefix):] if prefix and text.startswith(prefix) else text


class RunTracker:
    """Keeps the shape of one text (see the module docstring)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.starts: List[int] = []
        self.ends: List[Tuple[int, str]] = []
        self.skips: List[Tuple[int, str]] = []
        self.tracebacks: List[_Traceback] = []
        self.stops: List[_Mark] = []
        self.wrappers: List[_Mark] = []
        self.bars: List[Tuple[int, str, int, int, str]] = []  # (line, op, done, total, text): the last state per line
        self.served: Optional[Tuple[int, str]] = None
        self.warmups: List[Tuple[int, str]] = []  # lines announcing a warm-up (log lines, not prose)
        self.cache_lines: List[Tuple[int, str]] = []  # "Running FlashInfer autotune with cache: ..." (autotuning begins)
        self.shutdown: Optional[Tuple[int, str]] = None  # the first "Shutting down" line
        self.cpp_frames: List[Tuple[int, str]] = []  # C++ backtrace frames (line, symbol)
        self.native_frames: List[Tuple[int, str, str]] = []  # a signal's backtrace frames (line, library, symbol)
        self.elisions: List[Tuple[int, str]] = []  # "... (413 lines omitted) ...": where the author cut the paste
        self.markdown = 0  # fence, table, heading, quote or bullet lines: the text is a ticket
        self.prose_lines = 0  # sentences outside code fences
        self.wordy_lines = 0  # lines of eight words or more outside fences that are not log lines (a paragraph)
        self.log_lines = 0  # log lines outside code fences
        self.last_line = 0
        self._open: Optional[_Traceback] = None
        self._pending_wrapper: Optional[Tuple[int, str]] = None
        self._in_fence = False
        self._frame_prefix = ""
        self._prev_line: Optional[Tuple[int, str]] = None

    # ----- feeding -----------------------------------------------------------------------------
    def feed(self, lineno: int, text: str) -> None:
        self.last_line = lineno
        if _FENCE.match(text):
            self.markdown += 1
            self._in_fence = not self._in_fence
            return
        if not self._in_fence and (_MD_TABLE.match(text) or _MD_OTHER.match(text)):
            self.markdown += 1
        if not self._in_fence and text.strip():
            if _LOG_LIKE.match(text):
                self.log_lines += 1
            elif _PROSE.match(text.strip()):
                self.prose_lines += 1
            if not _LOG_LIKE.match(text) and not _LOGGISH.search(text) and len(_WORD.findall(text)) >= 8:
                self.wordy_lines += 1
        if "Autotuning process" in text:
            if _WINDOW_START.search(text):
                self.starts.append(lineno)
            elif _WINDOW_END.search(text):
                self.ends.append((lineno, text.strip()))
        if ("Skip" in text or "OOM" in text or "falling back" in text) and _SKIP.search(text) and len(self.skips) < MAX_MARKS:
            self.skips.append((lineno, text.strip()))
        if "Tuning " in text:
            bars = list(_TQDM.finditer(text))
            if bars:  # a line holding several redraws glued together: its last state wins
                b = bars[-1]
                if len(self.bars) < MAX_MARKS:
                    self.bars.append((lineno, b.group("op"), int(b.group("done")), int(b.group("total")), b.group(0)))
        if "omitted" in text or "lines" in text:
            m_el = _ELIDED.search(text)
            if m_el and len(self.elisions) < MAX_MARKS:
                self.elisions.append((lineno, m_el.group(0)))
        if "hutting" in text or "shutdown" in text or "Stopping" in text:
            if _SHUTDOWN.search(text) and self.shutdown is None:
                self.shutdown = (lineno, text.strip())
        if "0x" in text and len(self.cpp_frames) < MAX_MARKS:
            cf = _CPP_FRAME.match(text)
            if cf:
                self.cpp_frames.append((lineno, cf.group("sym")))
            nf = _NATIVE_FRAME.match(text)
            if nf:
                self.native_frames.append((lineno, nf.group("name"), nf.group("sym")))
        if self.served is None and _SERVED.search(text):
            self.served = (lineno, text.strip())
        if "arm" in text and not self._in_fence and _WARMUP_LINE.search(text) and not _PROSE.match(text.strip()):
            self.warmups.append((lineno, text.strip()))
            del self.warmups[:-4]  # (the last few: the one before a stop is what counts)
        if "[Autotuner]" in text or "[AutoTuner]: Skipping" in text:
            return  # the autotuner's own messages (and their errors) are not the process's stop
        if _AUTOTUNE_CACHE.search(text) and len(self.cache_lines) < MAX_MARKS:
            self.cache_lines.append((lineno, text.strip()))
        code = self._open is not None and self._open.frames and lineno - self._open.frames[-1].line == 1 \
            and _CODE.match(text[len(self._frame_prefix):] if self._frame_prefix and text.startswith(self._frame_prefix) else text)
        self._traceback_line(lineno, text)
        self._prev_line = (lineno, text)
        if code:
            return  # a frame's source line ("raise RuntimeError(...)") shows the code, not a stop
        if _WRAPPER.search(text) and len(self.wrappers) < MAX_MARKS:
            self.wrappers.append(_Mark(lineno, text.strip(), "wrapper"))
            self._pending_wrapper = (lineno, text.strip())
        m = _STOP.search(text)
        if m and len(self.stops) < MAX_MARKS:
            self.stops.append(_Mark(lineno, text.strip(), m.lastgroup or "stop"))

    def _traceback_line(self, lineno: int, text: str) -> None:
        if _TB_HEAD.search(text):
            if len(self.tracebacks) < MAX_TRACEBACKS:
                tb = _Traceback(lineno, text.strip(), warned=bool(_WARNED.search(text[: text.find("Traceback")])))
                w = self._pending_wrapper
                if w is not None and lineno - w[0] <= 3:
                    tb.wrapper = w
                elif _WRAPPER.search(text):
                    tb.wrapper = (lineno, text.strip())
                self.tracebacks.append(tb)
                self._open = tb
            return
        fr = _FRAME.search(text)
        if fr:
            cur = self._open
            if cur is None or cur.exc_line is not None:
                if len(self.tracebacks) >= MAX_TRACEBACKS:
                    return
                cur = _Traceback(None)
                prev = self._prev_line
                if prev is not None and prev[0] == lineno - 1 and _CODE.match(_unprefixed(prev[1], text[: fr.start()].rstrip())):
                    cur.lead_code = (prev[0], _unprefixed(prev[1], text[: fr.start()].rstrip()).strip())
                self.tracebacks.append(cur)
                self._open = cur
            if len(cur.frames) < 400:
                cur.frames.append(_Frame(lineno, fr.group("path"), fr.group("fn")))
                self._frame_prefix = text[: fr.start()].rstrip()
            return
        open_tb = self._open
        if open_tb is None or open_tb.exc_line is not None:
            return
        tb = open_tb
        body = text.strip()
        if not body or set(body) <= set("^~ "):
            return
        m = _EXC_LINE.match(text.rstrip())
        if m and _PREFIX_OK.fullmatch(m.group("prefix")) and (m.group("msg") is not None or not m.group("prefix").strip()):
            tb.exc_line, tb.exc_text, tb.exc_type = lineno, text.strip(), m.group("type")
            return
        if tb.frames and not tb.frames[-1].code and lineno - tb.frames[-1].line <= 2:
            code = text
            if self._frame_prefix and code.startswith(self._frame_prefix):
                code = code[len(self._frame_prefix):]  # the log prefix every line of the paste carries
            tb.frames[-1].code = code.strip()  # the source line Python prints under a frame

    # ----- answers -------------------------------------------------------------------------------
    @property
    def is_ticket(self) -> bool:
        """A ticket (Markdown, or prose rather than a log): what it says is stated by a person."""
        return self.markdown > 0 or (self.prose_lines >= 2 and self.prose_lines >= self.log_lines) \
            or (self.log_lines == 0 and self.wordy_lines >= 2)  # paragraphs and no log line: a person's words

    def how(self) -> str:
        """How a line of this text is known: 'stated' in a ticket, 'decoded' from a log."""
        return "stated" if self.is_ticket else "decoded"

    def ev(self, line: Optional[int], words: str, how: Optional[str] = None, basis: str = "", limit: int = 240) -> Evidence:
        return Evidence(self.source, line, clip_words(words, limit), how or self.how(), basis)

    def survived_by(self, line: int) -> Optional[Tuple[int, str]]:
        """The skip line that shows the autotuner going on after an error at `line` (no window end
        and no stop between them), or None."""
        i = bisect.bisect_right([s for s, _ in self.skips], line)
        if i >= len(self.skips):
            # the autotuner's own "Skipping tactic ... due to failure" line holds the error itself
            return next(((s, t) for s, t in self.skips if s == line), None)
        s, t = self.skips[i]
        if any(line < e < s for e, _ in self.ends) or any(line < st.line < s for st in self.stops) \
                or any(line < st < s for st in self.starts):
            return None
        if any(line < tb.exc_line < s for tb in self.tracebacks if tb.exc_line is not None and not self._in_window(tb.exc_line)):
            return None
        return s, t

    def _in_window(self, line: int) -> bool:
        """An autotuning window is open at `line` (a start before it with no end between, or an end after it
        with no start: a text that begins inside a window)."""
        last_start = max((s for s in self.starts if s <= line), default=None)
        last_end = max((e for e, _ in self.ends if e <= line), default=None)
        if last_start is not None:
            return last_end is None or last_end < last_start
        return last_end is None and any(e > line for e, _ in self.ends)

    def conclude(self, events: Sequence[Event]) -> Optional[RunEnd]:
        """What ended the run, or None when the text shows no stop."""
        stop, tb = self._first_stop(events)
        if stop is None:
            return None
        stop_line, stop_text = stop
        reach = stop_line
        what = next((st for st in self.stops if st.kind == "what" and stop_line <= st.line <= stop_line + 3), None)
        if what is not None:  # "terminate called after throwing ..." then "  what():  <the error>"
            reach = what.line
        cause, cause_kind, cause_line = self._cause(events, reach, tb)
        if cause is None and what is not None:
            cause, cause_kind, cause_line = (what.line, what.text), "exception", what.line
        if cause is None and _WRAPPER.search(stop_text):
            # "WorkerProc failed to start." then the worker's traceback: its exception is the error
            nxt = next((t for t in self.tracebacks if t.exc_line is not None and stop_line < t.exc_line <= stop_line + 200
                        and not _WRAPPER.search(t.exc_text) and not t.warned), None)
            if nxt is not None and nxt.exc_line is not None:
                tb = nxt
                exc_line: int = nxt.exc_line
                ev = next((e for e in events if e.kind in ERROR_KINDS and exc_line in (e.lines or (e.line,))), None)
                cause, cause_kind, cause_line = (exc_line, nxt.exc_text), (ev.kind if ev else "exception"), \
                    (ev.line if ev else exc_line)
        stage, stage_ev, in_autotuner = self._stage(stop_line, tb)
        op, op_ev = self._op(stop_line, tb, events, cause_line)
        frames = tuple(f.fn for f in (tb.frames if tb else []) if _NAMED_FN.match(f.fn) and not _PLUMBING.match(f.fn))
        inner = next((f for f in reversed(tb.frames if tb else []) if not _PLUMBING.match(f.fn)
                      and "/torch/" not in f.path and "contextlib" not in f.path), None)
        innermost = self.ev(inner.line, f"{inner.fn}: {inner.code}" if inner.code else f"in {inner.fn}") if inner else None
        if innermost is None and tb is not None and tb.lead_code is not None:
            # only torch's dispatch frames below a cut: the call the paste starts with ("torch.ops._C_custom_ar.all_reduce(...)")
            innermost = self.ev(tb.lead_code[0], f"the call {tb.lead_code[1]}")
        elided = next((e for e in reversed(self.elisions) if e[0] <= stop_line), None)
        if innermost is None and cause is not None:  # a C++ exception: the first frame of its backtrace that is code
            sym = next((f for f in self.cpp_frames if cause[0] < f[0] <= cause[0] + 12
                        and not re.search(r"throw|Exception|check|assert|[Ee]rror|\.so\(\+0x", f[1])), None)
            if sym is not None:  # its name without the signature: "ns::PermuteGemm1::Runner::run"
                innermost = self.ev(sym[0], re.sub(r"\(.*$", "", sym[1]).strip() or sym[1])
        if innermost is None and cause is None and _STOP.search(stop_text) and \
                _STOP.search(stop_text).lastgroup == "signal":  # type: ignore[union-attr]
            innermost = self._signal_frame(stop_line)
        shut = self.shutdown if self.shutdown is not None and self.shutdown[0] > stop_line else None
        cut = None
        last_frame = None
        if tb is not None and tb.exc_line is None and cause is None:
            cut = "after_last_frame"
            if tb.frames:
                f = tb.frames[-1]
                last_frame = self.ev(f.line, f"{f.fn}: {f.code}" if f.code else f"in {f.fn}")
        elif tb is not None and tb.head is None and cause is None:
            cut = "before_traceback"
        after = next(((e, t) for e, t in reversed(self.ends) if e <= stop_line), None)
        wrapper = tb.wrapper if tb is not None and tb.wrapper else next(
            ((w.line, w.text) for w in self.wrappers if abs(w.line - stop_line) <= 2), None)
        return RunEnd(
            source=self.source, stopped=self.ev(stop_line, stop_text),
            cause=self.ev(cause[0], cause[1], limit=400) if cause else None, cause_kind=cause_kind, cause_line=cause_line,
            stage=stage, stage_evidence=stage_ev, op=op, op_evidence=op_ev, in_autotuner=in_autotuner,
            frames=_dedupe(frames), cut=cut, last_frame=last_frame, innermost=innermost,
            elided=self.ev(*elided) if elided else None, shutdown=self.ev(*shut) if shut else None,
            after_autotune=self.ev(after[0], after[1]) if after else None,
            wrapper=self.ev(wrapper[0], wrapper[1]) if wrapper else None)

    def _signal_frame(self, stop_line: int) -> Optional[Evidence]:
        """Where a signal struck, from the backtrace its handler printed (within 60 lines after the signal line): the
        first frame outside the system libraries, as library and (demangled) function; when every frame is a system
        library's, those libraries, so the sentence can say the code that raised it is not shown."""
        frames = [f for f in self.native_frames if stop_line < f[0] <= stop_line + 60]
        if not frames:
            return None
        own = next((f for f in frames if not _SYSTEM_LIB.match(f[1])), None)
        if own is not None:
            fn = demangled_name(own[2])
            return self.ev(own[0], f"{own[1]}" + (f" ({fn})" if fn else ""),
                           basis="the first frame of the signal's backtrace outside the system libraries")
        libs = list(dict.fromkeys(f"{f[1]}" + (f" {f[2]}" if f[2] and not f[2].startswith("_Z") else "") for f in frames))
        return self.ev(frames[-1][0], ", ".join(libs[-4:]), basis="only system libraries in the signal's backtrace")

    def _first_stop(self, events: Sequence[Event]) -> Tuple[Optional[Tuple[int, str]], Optional[_Traceback]]:
        """The first line that shows the process stopping, and the traceback it ends (if any)."""
        cands: List[Tuple[int, str, Optional[_Traceback]]] = []
        for t in self.tracebacks:
            if t.warned:
                continue  # a handler logged it as a warning and the run went on
            if t.exc_line is not None:
                if self._in_window(t.exc_line) and self.survived_by(t.exc_line):
                    continue  # the autotuner printed it and went on
                cands.append((t.exc_line, t.exc_text, t))
            elif t.frames or t.head is not None:
                at = t.wrapper or ((t.head, t.head_text) if t.head is not None else
                                   (t.frames[0].line, f'File "{t.frames[0].path}", in {t.frames[0].fn}'))
                if self._in_window(at[0]) and self.survived_by(at[0]):
                    continue
                cands.append((at[0], at[1], t))
        for st in self.stops:
            if st.kind == "what" or st.kind == "terminate" or not self.survived_by(st.line):
                cands.append((st.line, st.text, self._tb_near(st.line)))
        # a raised error line with no traceback around it (a fatal event the text shows raised)
        memory = [e for e in events if e.kind == "memory_error" and e.line is not None]
        if memory:  # an escaping MemoryError ends the run; a ticket telling several runs ends with the last it tells
            last = max(memory, key=lambda e: max(e.lines or (e.line or 0,)))
            ln = max(last.lines or (last.line or 0,))
            cands.append((ln, last.text, self._tb_near(ln)))
        for e in events:
            if e.kind in ERROR_KINDS and e.is_fatal and e.line is not None and e.fact("survived") is None:
                if e.kind == "memory_error":
                    continue
                elif e.kind == "exception" or "raised" in e.facts_dict() or e.fatal is None:
                    if not any(t.exc_line == e.line for t in self.tracebacks) and self._raised_alone(e):
                        cands.append((e.line, e.text, None))
        if not cands:
            return None, None
        line, text, first_tb = min(cands, key=lambda c: c[0])
        return (line, text), first_tb

    def _raised_alone(self, e: Event) -> bool:
        """An exception event whose own line shows it raised (an exception line, `what():`)."""
        m = _EXC_LINE.match(e.text.rstrip()) if e.text else None
        return bool(m and _PREFIX_OK.fullmatch(m.group("prefix")) and m.group("msg"))

    def _tb_near(self, line: int) -> Optional[_Traceback]:
        for tb in self.tracebacks:
            first = tb.head if tb.head is not None else (tb.frames[0].line if tb.frames else None)
            last = tb.exc_line or (tb.frames[-1].line if tb.frames else first)
            if first is not None and last is not None and first - 3 <= line <= last + 3:
                return tb
        return None

    def _cause(self, events: Sequence[Event], stop_line: int,
               tb: Optional[_Traceback]) -> Tuple[Optional[Tuple[int, str]], Optional[str], Optional[int]]:
        """The last unrecovered error at or before the stop: the stopping traceback's own exception
        when it is not a wrapper, else the last error event (not survived, not a wrapper) before it."""
        inner = next((e for e in events if e.kind in ERROR_KINDS and e.kind != "exception" and e.fact("survived") is None
                      and stop_line in (e.lines or (e.line,))), None)
        if inner is not None:  # the stop line carries the error itself (a wrapper quoting it, or the error raised)
            return (stop_line, inner.text), inner.kind, inner.line
        if tb is not None and tb.exc_line is not None and tb.exc_line == stop_line and not _WRAPPER.search(tb.exc_text):
            ev = next((e for e in events if e.kind in ERROR_KINDS and stop_line in (e.lines or (e.line,))), None)
            return (tb.exc_line, tb.exc_text), (ev.kind if ev else "exception"), (ev.line if ev else tb.exc_line)
        best: Optional[Tuple[int, Event]] = None
        for e in events:
            if e.kind not in ERROR_KINDS or e.fact("survived") is not None:
                continue
            if _WRAPPER.search(e.text or ""):
                continue
            for ln in (e.lines or ((e.line,) if e.line is not None else ())):
                if ln <= stop_line and (best is None or ln > best[0]):
                    best = (ln, e)
        for t in self.tracebacks:  # an earlier traceback's own exception (not survived, not a wrapper)
            if t.exc_line is not None and t.exc_line <= stop_line and not _WRAPPER.search(t.exc_text) and not t.warned \
                    and not (self._in_window(t.exc_line) and self.survived_by(t.exc_line)):
                if best is None or t.exc_line > best[0]:
                    ev = next((e for e in events if e.kind in ERROR_KINDS and t.exc_line in (e.lines or (e.line,))), None)
                    if ev is not None:
                        best = (t.exc_line, ev)
                    else:
                        return (t.exc_line, t.exc_text), "exception", t.exc_line
        if best is None:
            return None, None, None
        ln, e = best
        return (ln, e.text if ln == e.line else e.text), e.kind, e.line

    def _stage(self, stop_line: int, tb: Optional[_Traceback]) -> Tuple[str, Optional[Evidence], Optional[Evidence]]:
        """(stage, its evidence, the evidence that it stopped inside an autotuner: FlashInfer's, or
        TensorRT-LLM's own when the frame's path says so (the evidence's `basis` names which))."""
        frames = tb.frames if tb else []
        in_tuner = None
        for f in frames:
            if _AUTOTUNE_FN.match(f.fn) or "choose_one(" in f.code or "/autotuner" in f.path:
                owner = "TensorRT-LLM's autotuner" if "tensorrt_llm" in f.path else "FlashInfer's autotuner"
                in_tuner = self.ev(f.line, f"{f.fn}" + (f": {f.code}" if f.code else ""), basis=owner)
                break
        bar = self._open_bar(stop_line)
        if in_tuner is not None:
            return "autotune", in_tuner, in_tuner
        if bar is not None:
            ln, op, done, total, text = bar
            e = self.ev(ln, text)
            return "autotune", e, e
        if self._in_window(stop_line) and self.starts:
            start = max(s for s in self.starts if s <= stop_line) if any(s <= stop_line for s in self.starts) else None
            if start is not None:
                e = self.ev(start, "Autotuning process starts")
                return "autotune", e, e
        for f in reversed(frames):  # the innermost frame that says where it was
            if f.fn in ("_flashinfer_autotune", "flashinfer_autotune"):
                return "autotune", self.ev(f.line, f"in {f.fn}" + (f": {f.code}" if f.code else "")), None
            if _SERVING_FN.match(f.fn) or (f.fn in ("run_busy_loop", "step", "_process_engine_step") and "engine" in f.path):
                return "serving", self.ev(f.line, f"in {f.fn}"), None
            if _WARMUP_FN.match(f.fn) and f.fn not in ("__init__", "run_engine_core", "load_model", "init_model_worker"):
                return "warm-up", self.ev(f.line, f"in {f.fn}"), None
            if f.fn in ("load_model", "load_weights", "process_weights_after_loading"):
                return "warm-up", self.ev(f.line, f"in {f.fn} (model loading)"), None
        if self.served is not None and self.served[0] < stop_line:
            return "serving", self.ev(*self.served), None
        warm = next((w for w in reversed(self.warmups) if w[0] < stop_line), None)
        if warm is not None and stop_line - warm[0] <= 200:  # the engine said it was warming up, and never served
            return "warm-up", self.ev(warm[0], warm[1]), None
        near = [c for c in self.cache_lines if 0 <= stop_line - c[0] <= 40]
        if near:  # SGLang / vLLM announce the autotune cache as FlashInfer's autotuning begins
            return "autotune", self.ev(*near[-1]), None
        for f in reversed(frames):
            if f.fn in ("_init_executor", "init_device", "init_model_worker", "initialize", "_initialize_kv_caches") or (
                    f.fn == "__init__" and ("engine" in f.path or "executor" in f.path or "scheduler" in f.path)):
                return "start-up", self.ev(f.line, f"in {f.fn}"), None
        for w in self.wrappers + self.stops:
            if abs(w.line - stop_line) <= 3 and _STARTUP_WORDS.search(w.text):
                m = _STARTUP_WORDS.search(w.text)
                return "start-up", self.ev(w.line, m.group(0) if m else w.text), None
        return "unknown", None, None

    def _open_bar(self, line: int) -> Optional[Tuple[int, str, int, int, str]]:
        """The tuning bar last drawn at or shortly before `line`, when unfinished."""
        best = None
        for b in self.bars:
            if b[0] <= line and (best is None or b[0] >= best[0]):
                best = b
        if best is None or best[2] >= best[3] or line - best[0] > 12:
            return None
        return best

    def _op(self, stop_line: int, tb: Optional[_Traceback], events: Sequence[Event],
            cause_line: Optional[int]) -> Tuple[Optional[str], Optional[Evidence]]:
        for f in reversed(tb.frames if tb else []):
            m = _OP_FN.match(f.fn)
            if m and "flashinfer" in f.path:
                return m.group("op"), self.ev(f.line, f"in {f.fn}")
        bar = self._open_bar(stop_line)
        if bar is not None:
            return bar[1], self.ev(bar[0], bar[4])
        if cause_line is not None:
            ev = next((e for e in events if e.line == cause_line), None)
            if ev is not None and ev.fact("op"):
                return str(ev.fact("op")), self.ev(ev.line, ev.text, "inferred" if ev.facts_dict()["op"].how == "inferred" else None,
                                                    ev.facts_dict()["op"].source)
        return None, None


def demangled_name(sym: str) -> str:
    """The qualified name of an Itanium-mangled C++ symbol, template arguments left out
    ('_ZN3moe3dev7routing15routingDeepSeek12KernelParamsIf...EE15setKernelParamsERKNS2_4DataE' ->
    'moe::dev::routing::routingDeepSeek::KernelParams::setKernelParams'); a plain name as it is; '' when
    it cannot be read."""
    if not sym.startswith("_Z"):
        return sym
    s, i = sym, 2
    parts: List[str] = []
    nested = i < len(s) and s[i] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "rVKRO":  # cv / ref qualifiers of a member function
            i += 1
    while i < len(s):
        c = s[i]
        if c.isdigit():
            j = i
            while j < len(s) and s[j].isdigit():
                j += 1
            n = int(s[i:j])
            if n <= 0 or j + n > len(s):
                return ""
            parts.append(s[j:j + n])
            i = j + n
            if not nested:
                break
        elif c == "I":  # template arguments: skipped (names inside them are read by length, never as markup)
            depth, i = 1, i + 1
            while i < len(s) and depth:
                if s[i].isdigit():
                    j = i
                    while j < len(s) and s[j].isdigit():
                        j += 1
                    i = j + int(s[i:j])
                    continue
                if s[i] == "L":  # a literal (Lb0E, Li4E): its value is digits, not a length
                    e = s.find("E", i)
                    if e < 0:
                        return ""
                    i = e + 1
                    continue
                depth += 1 if s[i] in "IN" else -1 if s[i] == "E" else 0
                i += 1
        elif c == "S":  # a substitution (S_, S0_, St): a name given before
            j = s.find("_", i)
            if s.startswith("St", i):
                parts.append("std")
                i += 2
            elif j < 0:
                return ""
            else:
                i = j + 1
        elif c == "E" or not nested:
            break
        else:
            return ""  # a construct this reader does not know: no guess
    return "::".join(parts)


def _dedupe(names: Tuple[str, ...]) -> Tuple[str, ...]:
    out: List[str] = []
    for n in names:
        if not out or out[-1] != n:
            out.append(n)
    return tuple(out)


__all__ = ["ERROR_KINDS", "RunTracker", "STICKY_CODES", "clip_words", "sticky_reason", "warned_tracebacks"]


def warned_tracebacks(tracker: RunTracker) -> List[Tuple[int, str]]:
    """(line, words) of each traceback a handler logged as a WARNING: the run went on after it."""
    return [(t.head, t.head_text) for t in tracker.tracebacks if t.warned and t.head is not None]
