"""What a ticket states in its own words: Markdown tactic tables, failing counts and tile shapes in prose.

A person writing a ticket summarises: a table of tactics with OK / FAIL rows, "13 of 16 tactics
fail", "the 256x128 and 128x256 tiles fail with Error Internal". None of it is a log line tiletune
decodes; each is a fact *stated in the ticket* (`how = "stated"`), with its line and words:

- a Markdown table whose header names a tactic (or config / tile) column and whose rows carry a
  result (OK, PASS, FAIL, an error) -> one record per tactic of each row (a row's "6-9" is four
  tactics), FAILED with the row's own words as the error, or PASSED; the op comes from the nearest
  runner label or op name the text states before the table ("[MXFP8 SM120 gemm Runner]" ->
  mxfp8_gemm), else it is said to be unknown;
- "N of M tactics / configs / tiles fail" and tile shapes named in a sentence that says they fail
  -> stated facts (`InputFacts.stated`) the verdicts show with their line.

`TicketReader.feed(lineno, text)` sees every line; `records(parser)` and `facts()` at the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, List, Optional, Tuple

from tiletune.core import error_text
from tiletune.core.events import Fact
from tiletune.core.records import Status, TuningRecord
from tiletune.core.words import quote_bounded
from tiletune.readers.logs.grammar import frozen_detail

MAX_ROWS = 512
_TABLE_ROW = re.compile(r"^\s*\|(?P<cells>.*)\|\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_TACTIC_HEAD = re.compile(r"\b(?:tactic|tactics|config(?:uration)?s?|cfg|tile|tiles|idx|index)\b", re.I)
_RESULT_HEAD = re.compile(r"\b(?:result|status|outcome|ok\??|pass(?:es)?|works?|sm\d{2,3}\w*|error|fail\w*|verdict)\b", re.I)
_FAIL = re.compile(r"\bFAIL\w*|\bfails?\b|\bfailed\b|\berror\b|\bError\b|kError\w*|\bcrash\w*|\bIMA\b|illegal|❌|✗|\bno\b|\bNO\b", re.I)
_OK = re.compile(r"^\W*(?:OK|PASS(?:ED|ES)?|works?|yes|✅|✓|✔|fine|good)\b", re.I)
_TACTIC_CELL = re.compile(r"^\W*(?P<a>\d{1,4})\s*(?:[-–—]|\.\.)\s*(?P<b>\d{1,4})\W*$|^\W*(?P<list>\d{1,4}(?:\s*[,/]\s*\d{1,4})*)\W*$")
_COUNT = re.compile(r"\b(?P<n>\d{1,4})\s+(?:of|out of)\s+(?:the\s+)?(?P<m>\d{1,4})\s+(?:\w+\s+){0,3}?"
                    r"(?P<what>tactics?|configs?|configurations?|tiles?|kernels?|candidates?)\b[^.]{0,60}?"
                    r"\b(?P<verb>fail\w*|error\w*|crash\w*|are skipped|were skipped|skipped|rejected)", re.I)
_COUNT_BARE = re.compile(r"\b(?P<all>all |every )?(?P<n>\d{1,4})\s+(?:[\w-]+\s+){0,5}?(?P<what>tactics?|configs?|configurations?|tiles?|kernels?)"
                         r"\s+(?:\w+\s+){0,2}?(?P<verb>fail\w*(?: to \w+)?|are skipped|were skipped|(?:are |were )?rejected|skipped)", re.I)
# a table row that reports a failure in words ("FAIL", "Error Internal", "garbage output", "NaN", a cross mark)
_ROW_FAIL = re.compile(r"\bFAIL\w*|\bfail\w*|Error\b|\berror\b|kError\w*|\bcrash\w*|garbage|\bNaN\b|❌|✗|illegal|\bOOM\b|"
                       r"\bskipped\b|not supported|unsupported", re.I)
_SHAPE = re.compile(r"(?<![\w.])(?P<m>\d{2,3})\s*[x×]\s*(?P<n>\d{2,3})(?:\s*[x×]\s*(?P<k>\d{2,4}))?(?![\w.])")
_FAIL_SENTENCE = re.compile(r"\bfail\w*|\bError Internal\b|kErrorInternal|\bcrash\w*|\bexceed\w*|\bdo(?:es)? not fit\b|\bcannot\b", re.I)
# where a ticket's prose places the failure (never a log line's code names: events.py reads those)
_PROSE_SERVING = re.compile(r"\b(?:while serving|during serving|when serving|during (?:the )?(?:CUDA[- ]graph )?replay|"
                            r"on (?:the|a) (?:very )?first (?:[\w-]+ )?request|after (?:\d+|a few|several|some|about \d+) "
                            r"(?:requests|minutes of serving)|(?:chat|completion) request|under load|during decode|"
                            r"in production traffic|while (?:handling|processing) requests|during (?:the )?first request|"
                            r"deployed successfully|(?:failed|fails|crash\w*) in chat|"
                            # a request's phase: the decode phase, an output token, prefill requests (a served request)
                            r"during (?:the )?decode (?:phase|step)|(?:around|at|after) (?:the )?output token \d+|"
                            r"\bprefill requests?\b)", re.I)
_PROSE_WARMUP = re.compile(r"\b(?:during|while|at|in|inside) (?:the )?(?:CUDA[- ]?graph capture|graph capture|(?:kernel )?warm-?up|"
                           r"start-?up|engine(?:[- ]core)? (?:start(?:-?up)?|init\w*|warm-?up)|model load(?:ing)?|"
                           r"autotun\w*|tuning pass)|"
                           r"\b(?:engine |kernel )?warm-?up (?:crash\w*|fail\w*|abort\w*)|"
                           r"before any (?:real )?traffic|fails? to start|at boot|crash-?loop|capture_end\(|"
                           r"\bstart-?up (?:to )?fail\w*|start-?up failure|\bengine[- ]?(?:core )?warm-?up (?:crash|fail)\w*|"
                           r"(?:fail|crash)\w* (?:\w+ ){0,2}(?:on )?every model load", re.I)
# a sentence that introduces an error quoted as an example, not as this run's ("A typical error is:")
_EXAMPLE_INTRO = re.compile(r"\b(?:(?:a |the )?typical (?:error|message|failure|output)s?(?: (?:is|are|looks like|reads))?|"
                            r"(?:errors?|messages?|failures?) (?:such as|like)|for example|e\.g\.|for instance)\s*:\s*$", re.I)
# an error quoted inside a sentence: 'the error literally says "FP4 Gemm not supported ..."', 'fails with "..."'
_ERROR_SAYS = re.compile(r"\b(?:error|exception|message|traceback)s?\b[^\"“]{0,30}?\b(?:says?|reads?|is|was|shows?)\W{0,3}"
                         r"[\"“](?P<q>[^\"”]{8,200})[\"”]|\bfail(?:s|ed)? with [\"“](?P<q2>[^\"”]{8,200})[\"”]", re.I)
# a heading that opens the ticket's own summary of itself
_SUMMARY_HEAD = re.compile(r"#+\s*(?:\W+\s*)?(?:Summary|Description|Problem|Describe the bug|Bug Description|TL;DR|Overview)\b", re.I)
# a line that reads as an error message (what a ticket quotes after "fails with this error:")
_ERROR_LIKE = re.compile(r"\b\w*(?:Error|Exception)\b|^No \w+|\b(?:failed|cannot|unable|not supported|unsupported|"
                         r"not available|requires?)\b", re.I)
# a sentence or quoted line that states a failure in words (a ticket's prose, or an error quoted bare)
_SAYS_FAIL = re.compile(r"Error Internal|kError\w+|\bhang(?:s|ing)? (?:indefinitely|forever|at|on|in|during|when|after)\b|"
                        r"\bdeadlock\w*|\bstuck at\b|\bfreez(?:es|ing) (?:at|on|during)\b|"
                        r"\bfail(?:s|ed|ing)? (?:to|with|at|on|in|for)\b|\bfails\b|\bcrash(?:es|ed)?\b|"
                        r"illegal (?:memory|instruction)|garbage output|\bNaN\b|out of memory|\bOOM\b|corrupt\w*|"
                        r"too much shared|causing an? `?\w*Error|"
                        r"Assertion failed|exceeds? (?:the )?(?:\d|shared|SMEM)", re.I)
_STRONG_FAIL = re.compile(r"Error Internal|kError\w+|Error:|fail(?:s|ed)? to (?:initialize|run|launch|start)|Assertion failed|"
                          r"illegal (?:memory|instruction)|\d+ (?:of \d+ )?[\w -]{0,40}(?:tactics|kernels|tiles|configs)", re.I)
_QUOTED_FAIL = re.compile(r"kError\w+|Error Internal|Assertion failed|Failed to (?:initialize|get|load|find|launch|run)\b|"
                          r"not supported|Unsupported|"
                          r"too much shared data|ptxas (?:error|fatal)")
# the call a ticket names as where it failed ("during the calling to `trtllm_batch_decode_with_kv_cache`")
_CALL_NAMED = re.compile(r"(?:during|in|when|while) (?:the )?(?:call(?:ing)? (?:to|of) |calling )`(?P<fn>[\w.]+)`", re.I)
# a call chain the ticket states in a code span: "`run_selected_tactic → Fp8BlockScaleLauncher::run → prepare_moe`"
_CHAIN = re.compile(r"`(?P<c>[\w.:<>]+(?:\(\))?(?:\s*(?:→|->)\s*[\w.:<>]+(?:\(\))?){2,})`")
# the prose puts the failure after the autotuner finished ("Autotuning process ends`) — the crash happens afterwards")
_AFTER_TUNE = re.compile(r"(?:Autotuning process ends|autotun\w*(?: sweep| pass)?[^.;]{0,40}\b(?:complete[sd]?|ends|ended|finishe[sd])\b)"
                         r"[^.;]{0,80}\b(?:afterwards|after (?:that|it|this))\b", re.I)
# a call chain a pasted block marks as where something happens ("a() → b() → c()  ← OOMs here")
_MARKED_CHAIN = re.compile(r"(?P<c>\w+\(\)(?:\s*(?:→|->)\s*\w+\(\)){1,})\s*(?:←|<-+)\s*(?P<note>\S.*)$")
# the prose says what the run did instead of stopping: a fallback or a skip ("the autotuner falling back to slow
# kernel tactics", "The autotuner skips all the SM120 GEMM tiles")
_WENT_ON = re.compile(r"(?:autotuner|tuner|tactics?|kernels?|tiles?|configs?)\W+(?:\w+\W+){0,3}?"
                      r"(?:falls? back|falling back|fell back|skips|skipped|skipping)\b|"
                      r"\b(?:falls? back|falling back|fell back) to (?:\w+ ){0,3}(?:kernels?|tactics?|configs?)\b|"
                      r"\b(?:silent|quiet)(?:ly)? (?:\w+ ){0,2}?(?:fall ?back|fell back|falling back)\b|"
                      r"\b(?:silent|quiet)(?:ly)? (?:\w+ ){0,2}?(?:running|ran|runs) (?:\w+ ){0,4}?(?:on|through|via) \w+", re.I)
# a measurement the prose reports: a number with its unit, a change "36 -> 234", a count "88 entries", "12/22"
_MEASURE = re.compile(r"(?<![\w.])~?\d[\d,]*(?:\.\d+)?\s?(?:tok/s|t/s|tokens?/s|tps|ms|µs|us|s|sec|seconds?|min|minutes?|h|"
                      r"hours?|MHz|GHz|GB/s|TB/s|GiB|GB|MiB|MB|KiB|KB|bytes?|%|x|×)(?![\w/])|"
                      r"(?<![\w.])\d[\d,.]*\s?(?:→|->)\s?~?\d[\d,.]*|(?<![\w./])\d+\s?/\s?\d+(?![\w./])|"
                      r"\b\d+ (?:of|out of) \d+\b|\b\d[\d,]* (?:[a-z-]+ )?(?:entries|configs?|candidates|tactics|profiles|kernels|"
                      r"requests|errors|configurations|shapes|keys)\b", re.I)
# words that make a sentence a finding (a result), not a description of the setup
_RESULT_WORDS = re.compile(r"\b(?:result|summary|went from|faster|slower|throughput|speed-?up|regression|published|skipped|"
                           r"aborted|died|crash\w*|killed|measured|reused|gain|drop\w*|improv\w*|tapering|best|worst|"
                           r"stuck|unanimous|differ\w*|validated|sustained|errors?|stalls?|complete[ds]?)\b", re.I)
# a sentence that describes the setup (the machine, driver, OS): its numbers are not findings
_SETUP_WORDS = re.compile(r"^\W*(?:machine|setup|hardware|environment|engine|model|command|gpu|os|driver)s?\W*:|"
                          r"\bdriver \d|\bUbuntu\b|\bkernel \d|\bJetPack\b", re.I)
_LOGGED = re.compile(r"\b(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b|^\s*\[\d{4}-\d\d-\d\d|^\s*\(\w+ pid=\d+\)|"
                     r"\[(?:Auto[Tt]uner|TensorRT-LLM|TRT-LLM)\]|^\s*\[[A-Z][\w -]*\] ")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(`\[])")
_CONTRASTED = re.compile(r"\b(?:instead of|unlike|rather than|compared (?:to|with)|as opposed to)\b[^.;]*$", re.I)
_NOT_FAIL = re.compile(r"(?<!Internal )\b(?:no|zero|0) (?:errors?|failures?|crash(?:es)?)\b|without (?:any )?(?:errors?|failures?)|"
                       r"\b(?:fixed|resolved|works)\b", re.I)
_NEGATED = re.compile(r"\b(?:not|never|no)\b[^.;,]{0,20}$|n't[^.;,]{0,20}$", re.I)
# a failure named as a risk, not as something that happened: "to avoid OOM", "prevents the crash" (before it); "the
# deadlock hazard the window removes" (after it). ("after removing X it still crashes" states one: no removal before.)
_POTENTIAL_BEFORE = re.compile(r"\b(?:avoid\w*|prevent\w*|risk of|guard\w* against)\W+(?:\w+\W+){0,2}$", re.I)
_POTENTIAL_AFTER = re.compile(r"^\W*(?:hazards?|risks?)\b|^[^.;,]{0,24}\bremoves\b", re.I)


def _potential(text: str, start: int, end: int) -> bool:
    """The failure words at text[start:end] name a risk (avoided, prevented, removed), not a failure that happened."""
    return bool(_POTENTIAL_BEFORE.search(text[max(0, start - 40):start]) or _POTENTIAL_AFTER.search(text[end:end + 40]))


_OP_WORDS = re.compile(r"\b(?P<op>(?:mxfp8|fp8|fp4|nvfp4|bf16|fp16)_gemm|mm_(?:fp4|mxfp8|fp8|bf16)|bmm_fp8|cutlass_fused_moe|"
                       r"trtllm_fp4_block_scale_moe|trtllm_fp8_block_scale_moe|fused_moe)\b")
_OP_ALIASES = {"mm_fp4": "fp4_gemm", "mm_mxfp8": "mxfp8_gemm", "mm_fp8": "fp8_gemm", "mm_bf16": "bf16_gemm",
               "nvfp4_gemm": "fp4_gemm"}


@dataclass
class _Table:
    start: int
    header: List[str]
    tactic_col: int
    result_col: int
    op: Optional[Tuple[str, int, str]]  # (op, line, words) stated before the table
    rows: List[Tuple[int, List[str]]] = field(default_factory=list)


def _words(text: str, limit: int = 400) -> str:
    """`text` whole when it nearly fits, else cut at a sentence's or a clause's end (never mid-word), saying how many
    words were left out (`tiletune.core.words.quote_bounded`)."""
    return quote_bounded(text, limit)


def _cells(text: str) -> Optional[List[str]]:
    m = _TABLE_ROW.match(text)
    if not m:
        return None
    return [c.strip().strip("*`").strip() for c in m.group("cells").split("|")]


def _sentence(text: str, at: int) -> str:
    """The sentence of a long line that holds position `at` (a page kept as one line)."""
    start = max(text.rfind(". ", 0, at), text.rfind("** ", 0, at), text.rfind("## ", 0, at))
    end = text.find(". ", at)
    return text[start + 2 if start >= 0 else 0: end + 1 if end >= 0 else len(text)].strip()


def tactics_of(cell: str) -> List[int]:
    """'6-9' -> [6, 7, 8, 9]; '3, 7' -> [3, 7]; '12' -> [12]; anything else -> []."""
    m = _TACTIC_CELL.match(cell)
    if not m:
        return []
    if m.group("a") is not None:
        a, b = int(m.group("a")), int(m.group("b"))
        return list(range(a, b + 1)) if 0 <= b - a <= 256 else []
    return [int(x) for x in re.split(r"\s*[,/]\s*", m.group("list").strip())]


def _wordy(sentence: str) -> bool:
    """A sentence of prose rather than a flattened table or a command: most of its tokens are plain words."""
    toks = sentence.split()
    return len(toks) >= 6 and sum(1 for t in toks if t.strip(".,;:!?()'\"`*").isalpha()) >= 0.6 * len(toks)


class TicketReader:
    """Collects a ticket's tables and statements (see the module docstring)."""

    def __init__(self) -> None:
        self.tables: List[_Table] = []
        self.stated: List[Fact] = []  # what the prose states (counts of failing tactics, failing tile shapes)
        self.call_named: Optional[Fact] = None  # the call the ticket says failed
        self.chains: List[Fact] = []  # call chains the prose states in code spans ("a → b → c")
        self.after_tune: Optional[Fact] = None  # the prose says the failure came after autotuning ended
        self.went_on: List[Fact] = []  # prose saying the run fell back or skipped and went on (not an abort)
        self.reported: List[Tuple[int, int, Fact]] = []  # (score, order, fact): prose sentences reporting measurements
        self._para: List[Tuple[int, str]] = []  # the prose paragraph being read (a sentence may be wrapped over lines)
        self.examples: List[Fact] = []  # errors quoted as examples ("A typical error is:" and the next line)
        self.quoted_errors: List[Fact] = []  # the error quoted on the line after "fails ... with this error:"
        self.summary: Optional[Fact] = None  # the ticket's own first sentence (see _summary)
        self._under_summary = False
        self._summary_fixed = False
        # the last line that introduced an error (its number, its words, whether as an example)
        self._intro: Optional[Tuple[int, str, bool]] = None
        self.says_fail: List[Fact] = []  # lines of prose that state a failure in words (quoted, not as log lines)
        self.stage_said: List[Tuple[str, int, str, str]] = []
        self._prev_prose = ""  # (stage, line, words, the line) the prose states
        self._prev: Optional[Tuple[int, List[str]]] = None  # a row that may be a table's header
        self._open: Optional[_Table] = None
        self._op: Optional[Tuple[str, int, str]] = None  # the last op the text named
        self._fenced = False
        self._fenced_prose: List[Tuple[int, str]] = []  # sentences of prose inside the open fence
        self._finished = False
        self._rows_of: Optional[Tuple[int, List[str]]] = None  # (header line, header) of a table that is not a tactic table

    def feed(self, lineno: int, text: str) -> None:
        self._example(lineno, text)
        if text.lstrip().startswith(("```", "~~~")):
            self._fenced = not self._fenced
            self._fenced_prose = []  # (a fence that closes held a paste: its lines stay unread as prose)
            return
        if self._fenced:  # a pasted log: its lines are log lines, not the ticket's words (they may name the op)
            if len(self._fenced_prose) < 256 and not _LOGGED.search(text[:120]) and _wordy(text) \
                    and text.rstrip().endswith((".", "!", "?", ":")):
                self._fenced_prose.append((lineno, text))  # read as prose if the fence is never closed (see finish)
            self._note_op(lineno, text)
            mc = _MARKED_CHAIN.search(text) if ("←" in text or "<-" in text) and len(self.chains) < 8 else None
            if mc:
                chain = " -> ".join(p.strip().rstrip("()") for p in re.split(r"→|->", mc.group("c")))
                self.chains.append(Fact(chain, "stated", f"a call chain the ticket marks '{mc.group('note').strip()[:60]}' "
                                                         f"(line {lineno})", line=lineno, words=_words(text.strip())))
            if _QUOTED_FAIL.search(text) and len(self.says_fail) < 32:  # an error quoted in a code block
                self.says_fail.append(Fact(_words(text.strip()), "stated", "an error the ticket quotes in a code block",
                                           line=lineno, words=_words(text.strip())))
            return
        if text.lstrip().startswith("Error: ") and len(self.says_fail) < 32:  # a bare CUTLASS error quoted in prose
            self.says_fail.append(Fact(_words(text.strip()), "stated", "an error the ticket quotes", line=lineno,
                                       words=_words(text.strip())))
            return
        cells = _cells(text) if "|" in text else None
        if cells is None:
            self._open = None
            self._prev = None
            self._rows_of = None
            self._statements(lineno, text)
            self._note_op(lineno, text)
            return
        if self._open is not None:
            if not _SEPARATOR.match(text) and len(self._open.rows) < MAX_ROWS:
                self._open.rows.append((lineno, cells))
            return
        if _SEPARATOR.match(text) and self._prev is not None:
            head = self._prev[1]
            t = next((i for i, h in enumerate(head) if _TACTIC_HEAD.search(h)), None)
            r = next((i for i, h in enumerate(head) if i != t and _RESULT_HEAD.search(h)), None)
            if t is not None and r is not None:
                self._open = _Table(self._prev[0], head, t, r, self._op)
                self.tables.append(self._open)
            else:
                self._rows_of = (self._prev[0], head)  # another table: its failing rows are stated facts
            self._prev = None
            return
        if self._rows_of is not None:
            if _ROW_FAIL.search(text) and len(self.stated) < 64:
                head = self._rows_of[1]
                row = "; ".join(f"{h}: {c}" if h and c and h != c else c for h, c in zip(head, cells) if c)
                self.stated.append(Fact(f"a table row (line {lineno}): {row[:300]}", "stated",
                                        f"a Markdown table in the ticket (header line {self._rows_of[0]})",
                                        line=lineno, words=_words(text.strip())))
            return
        self._prev = (lineno, cells)

    def _note_op(self, lineno: int, text: str) -> None:
        label = error_text.op_for_runner_label(text) if "Runner" in text or "runner" in text else None
        if label:
            self._op = (label, lineno, text.strip())
            return
        m = _OP_WORDS.search(text)
        if m:
            op = _OP_ALIASES.get(m.group("op"), m.group("op"))
            self._op = (op, lineno, text.strip())

    def _stage(self, lineno: int, text: str) -> None:
        """Where the prose places the failure: serving or warm-up, unless negated ("not during capture"); a
        sentence broken over two lines ("the crash happens during" / "CUDA-graph capture.") is read whole."""
        said, text = text, text.replace("**", "").replace("`", "")  # ("at **CUDA-graph capture**": emphasis is not words)
        prev, self._prev_prose = self._prev_prose, text.strip()[-40:]
        joined = f"{prev} {text}" if prev else text
        for stage, rx in (("serving", _PROSE_SERVING), ("warm-up", _PROSE_WARMUP)):
            for m in rx.finditer(joined):
                if m.end() <= len(prev) + 1 and prev:
                    continue  # (the previous line alone: already read)
                if _NEGATED.search(joined[max(0, m.start() - 30):m.start()]) \
                        or _CONTRASTED.search(joined[max(0, m.start() - 60):m.start()]):
                    continue  # ("not during capture"; "instead of non-finite output during startup": another case)
                if len(self.stage_said) < 16:
                    self.stage_said.append((stage, lineno, m.group(0), _words(said.strip())))
                break

    def finish(self) -> None:
        """At the end of the text: a fence opened and never closed (a template's "```text" left open, then the
        author's report) held the author's sentences, not a paste; they are read as prose, once."""
        if self._finished:
            return
        self._finished = True
        if self._fenced:
            self._fenced = False
            for lineno, text in self._fenced_prose:
                self._statements(lineno, text)
            self._flush_paragraph()

    def stated_stage(self) -> Optional[Fact]:
        """The stage the prose states, when it states only one (else None: the text does not say)."""
        stages = {s for s, _, _, _ in self.stage_said}
        if len(stages) != 1:
            return None
        stage, line, words, context = self.stage_said[0]
        return Fact(stage, "stated", f"the ticket says '{words}' (line {line})", line=line, words=context)

    def _summary(self, lineno: int, text: str) -> None:
        """The ticket's own first sentence of prose: under a 'Summary' / 'Description' / 'Problem' heading when it
        has one, else the first one; quoted whole as what the ticket says (never judged)."""
        body = text.strip()
        if body.startswith("#"):
            self._under_summary = bool(_SUMMARY_HEAD.match(body))
            return
        if self._summary_fixed or (self.summary is not None and not self._under_summary) or _LOGGED.search(body[:120]):
            return
        said = _sentence(body, 0).replace("**", "")
        if len(said.split()) >= 8 and _wordy(said) and said.endswith((".", "!", "?", ":")):
            self.summary = Fact(_words(said), "stated", f"the ticket's first sentence (line {lineno})", line=lineno,
                                words=_words(said))
            self._summary_fixed = self._under_summary  # (a summary heading's sentence is kept; else a later one may win)

    def _statements(self, lineno: int, text: str) -> None:
        self._stage(lineno, text)
        self._summary(lineno, text)
        q = _ERROR_SAYS.search(text) if ('"' in text or "“" in text) and len(self.quoted_errors) < 8 else None
        if q:  # 'the error literally says "FP4 Gemm not supported ..."': an error quoted in the prose
            self.quoted_errors.append(Fact((q.group("q") or q.group("q2")).strip(), "stated", f"an error the ticket quotes in its prose "
                                           f"(line {lineno})", line=lineno, words=_words(_sentence(text, q.start()))))
        self._paragraph(lineno, text)
        if self.after_tune is None and "fter" in text:
            a = _AFTER_TUNE.search(text.replace("**", "").replace("`", "").replace("*", ""))
            if a:
                self.after_tune = Fact(True, "stated", f"the ticket says '{a.group(0)}' (line {lineno})", line=lineno,
                                       words=_words(text.strip()))
        c = _CALL_NAMED.search(text)
        if c and self.call_named is None:
            self.call_named = Fact(c.group("fn"), "stated", f"the ticket names the call (line {lineno})", line=lineno,
                                   words=_words(text.strip()))
        if ("→" in text or "->" in text) and len(self.chains) < 8:
            for ch in _CHAIN.finditer(text):
                chain = " -> ".join(part.strip() for part in re.split(r"→|->", ch.group("c")))
                self.chains.append(Fact(chain, "stated", f"a call chain the ticket states (line {lineno})", line=lineno,
                                        words=_words(text.strip())))
        w = _WENT_ON.search(text) if len(self.went_on) < 4 and ("back" in text or "skip" in text or "ilent" in text
                                                                 or "uiet" in text) else None
        if w:
            said = _sentence(text, w.start()) if len(text) > 240 else text.strip()
            if len(said) > 200:  # a long sentence: the words around the fallback, marked as cut
                at = said.find(w.group(0))
                lo = max(0, said.rfind(" ", 0, max(0, at - 100)) + 1) if at > 100 else 0
                hi = said.find(" ", at + len(w.group(0)) + 60)
                said = ("... " if lo else "") + said[lo:hi if hi > 0 else len(said)] + (" ..." if hi > 0 else "")
            if said.count("|") < 4:
                self.went_on.append(Fact(_words(said), "stated", "the ticket's prose", line=lineno, words=_words(said)))
        f = _SAYS_FAIL.search(text)
        if f and len(self.says_fail) < 32 and len(text.strip()) > 12 \
                and not _NOT_FAIL.search(text[max(0, f.start() - 60):f.end() + 60]) \
                and not _potential(text, f.start(), f.end()):  # (near the words, in a long line)
            said = _sentence(text, f.start()) if len(text) > 240 else text.strip()
            if said.count("|") < 4:  # (a table flattened into one line is not a sentence: its rows are read as a table)
                self.says_fail.append(Fact(_words(said), "stated", "the ticket's prose", line=lineno, words=_words(said)))

        m = _COUNT.search(text) if " of " in text else None
        if m and len(self.stated) < 64:
            n, total = int(m.group("n")), int(m.group("m"))
            if 0 < n <= total:
                self.stated.append(Fact(f"{n} of {total} {m.group('what')} {m.group('verb')}", "stated",
                                        "the ticket's prose", line=lineno, words=_words(text.strip())))
        elif len(self.stated) < 64:
            b = _COUNT_BARE.search(text)
            if b and int(b.group("n")) > 0:
                self.stated.append(Fact(f"{(b.group('all') or '')}{b.group('n')} {b.group('what')} {b.group('verb')}",
                                        "stated", "the ticket's prose", line=lineno, words=_words(text.strip())))
        if ("x" in text or "×" in text) and _FAIL_SENTENCE.search(text) and len(self.stated) < 64:
            shapes = []
            for s in _SHAPE.finditer(text):
                dims = [int(v) for v in (s.group("m"), s.group("n"), s.group("k")) if v]
                if all(d in (8, 16, 32, 64, 96, 128, 192, 256, 512) for d in dims[:2]):
                    shapes.append("x".join(map(str, dims)))
            if shapes:
                shapes = list(dict.fromkeys(shapes))
                self.stated.append(Fact(f"tile shape{'s' if len(shapes) > 1 else ''} {', '.join(shapes)} named "
                                        "in a sentence about a failure", "stated", "the ticket's prose",
                                        line=lineno, words=_words(text.strip())))

    def _paragraph(self, lineno: int, text: str) -> None:
        """Prose lines gathered into paragraphs (a blank line, a heading or a list item starts a new one)."""
        if _LOGGED.search(text[:120]):  # a log line outside a fence: not the ticket's prose
            self._flush_paragraph()
            return
        starts = not text.strip() or re.match(r"\s*(?:#|[-*+] |\d+[.)] |>)", text) is not None
        ended = bool(self._para) and (self._para[-1][1].endswith((".", "!", "?", ":")) or self._para[-1][1].startswith("#"))
        if starts or ended or len(self._para) >= 40:
            self._flush_paragraph()
        if text.strip():
            self._para.append((lineno, text.strip()))

    def _flush_paragraph(self) -> None:
        para, self._para = self._para, []
        if not para or len(self.reported) >= 64 or not any(ch.isdigit() for _, t in para for ch in t):
            return
        if len(para) >= 5 and sum(len(t.split()) for _, t in para) <= 4 * len(para):
            return  # (a table flattened to one cell a line, a page's table copied as text: no sentences of prose)
        joined, at = "", []  # the paragraph as one text, and where each of its lines starts in it
        for lineno, t in para:
            at.append((len(joined), lineno))
            joined += t.replace("**", "") + " "  # (emphasis is not words: ".** A" ends a sentence)
        pos = 0
        sentences: List[Tuple[int, str]] = []  # (where in the paragraph, the sentence)
        for sent in _SENTENCE_END.split(joined.strip()):
            start = joined.find(sent, pos)
            pos = start + len(sent)
            sentences.append((start, sent))
            line = next((ln for off, ln in reversed(at) if off <= max(start, 0)), para[0][0])
            self._report(line, sent)
        if len(para) > 1:  # a failure stated on a wrapped line: the whole sentence, not the line's piece of it
            lines = {ln for ln, _ in para}
            dropped: List[int] = []
            for i, f in enumerate(self.says_fail):
                if f.line not in lines or f.source != "the ticket's prose":
                    continue
                off = next((o for o, ln in at if ln == f.line), 0)
                end = next((o for o, ln in at if o > off), len(joined))
                piece = str(f.value).replace("**", "")
                # the sentence that holds the piece and overlaps its line
                at_o, whole = next(((o, t) for o, t in sentences if o < end and o + len(t) >= off and piece[:20] in t),
                                   (0, ""))
                if whole and len(whole) > len(piece) and _wordy(whole):
                    fm = _SAYS_FAIL.search(whole)
                    if fm and (_NOT_FAIL.search(whole[max(0, fm.start() - 60):fm.end() + 80])
                               or _potential(whole, fm.start(), fm.end())):
                        dropped.append(i)  # read whole, the sentence says it was fixed or did not fail
                        continue
                    said = _words(whole)
                    start = next((ln for o, ln in reversed(at) if o <= at_o), f.line)  # where the sentence starts
                    self.says_fail[i] = Fact(said, f.how, f.source, line=start, words=said)
            for i in reversed(dropped):
                del self.says_fail[i]

    def _report(self, lineno: int, text: str) -> None:
        """A prose sentence that reports measurements (numbers with units, changes, counts), scored by how many it
        holds and whether it reads as a finding; setup descriptions are left out."""
        for sent in (text,):
            found = list(dict.fromkeys(m.group(0) for m in _MEASURE.finditer(sent)))
            if not found or _SETUP_WORDS.search(sent):
                continue
            score = len(found) + 2 * len(set(w.lower() for w in _RESULT_WORDS.findall(sent)))
            if score < 3:
                continue
            said = sent.strip().strip("#>-* ").replace("**", "")
            if len(said) > 220:  # a long sentence: the words around its measurements, cut at words and marked
                first = said.find(found[0])
                lo = said.rfind(" ", 0, max(0, first - 60)) + 1 if first > 60 else 0
                # its head (what it is about: "Autotune does not wedge forever here but crawls:") stays when it is
                # short and ends a clause before the window
                head = re.match(r"[^:;]{12,90}[:;]\s", said)
                keep = head.group(0).strip() if head and head.end() < lo else ""
                hi = said.find(" ", lo + 200 - len(keep))
                said = (f"{keep} ... " if keep else "... " if lo else "") + said[lo:hi if hi > 0 else len(said)] \
                    + (" ..." if hi > 0 else "")
            self.reported.append((score, len(self.reported), Fact(said, "stated", "the ticket's prose", line=lineno,
                                                                  words=said)))

    def reports(self) -> List[Fact]:
        """The prose's measurement sentences that carry the most (at most 3), in the text's order."""
        self._flush_paragraph()
        best = sorted(self.reported, key=lambda t: (-t[0], t[1]))[:3]
        return [f for _, _, f in sorted(best, key=lambda t: t[1])]

    def _example(self, lineno: int, text: str) -> None:
        """An error quoted as an example: the first line of words within 3 lines after a sentence that introduces
        one ("A typical error is:", "errors such as:"). It is what such runs print, not a line of one run."""
        body = text.strip()
        if not body or body.startswith(("```", "~~~")):
            return
        intro = self._intro
        if intro is not None and lineno - intro[0] <= 3 and len(self.examples) + len(self.quoted_errors) < 8:
            if intro[2]:
                self.examples.append(Fact(_words(body), "stated", f"an error the ticket quotes as an example after "
                                          f"'{intro[1]}' (line {intro[0]})", line=lineno, words=_words(body)))
            elif _ERROR_LIKE.search(body) and not re.match(r"[-*+] |\d+[.)] ", body):  # an error, not a list or prose
                self.quoted_errors.append(Fact(_words(body), "stated", f"the error the ticket quotes after "
                                               f"'{intro[1]}' (line {intro[0]})", line=lineno, words=_words(body)))
            self._intro = None
            return
        self._intro = None
        m = _EXAMPLE_INTRO.search(body)
        if m:
            self._intro = (lineno, body[:200], True)  # (the whole line: it says what failed, "an import error occurs")
        elif body.endswith(":") and _SAYS_FAIL.search(body) and not _NOT_FAIL.search(body):
            self._intro = (lineno, body[:200], False)  # "vLLM fails during startup with a ... error:": what follows is it

    def failure_lines(self) -> List[Fact]:
        """The lines that state a failure, those naming an error or a count first (at most 3)."""
        self._flush_paragraph()  # (a failure stated on a wrapped line is quoted as its whole sentence)
        ranked = sorted(self.says_fail, key=lambda f: (not _STRONG_FAIL.search(str(f.value)), f.line or 0))
        return sorted(ranked[:3], key=lambda f: f.line or 0)

    def records(self, source: str, env: Any) -> Iterator[TuningRecord]:
        """One record per tactic of each result row of a tactic table (stated, never a decode of a log line)."""
        for t in self.tables:
            op = t.op[0] if t.op else ""
            for lineno, cells in t.rows:
                if max(t.tactic_col, t.result_col) >= len(cells):
                    continue
                tactics = tactics_of(cells[t.tactic_col])
                result = cells[t.result_col]
                if not tactics or not result:
                    continue
                failed = bool(_FAIL.search(result)) and not _OK.match(result)
                ok = bool(_OK.match(result))
                if not failed and not ok:
                    continue
                row = " | ".join(cells)
                detail: dict[str, Any] = {"stated": "a row of a Markdown table in the ticket", "stated_row": _words(row)}
                others = [c for i, c in enumerate(cells) if i not in (t.tactic_col, t.result_col) and c]
                if others:
                    detail["stated_shape"] = " | ".join(others)[:200]
                if t.op:
                    detail["op_note"] = f"op stated before the table, line {t.op[1]}: {t.op[2][:160]}"
                else:
                    detail["op_note"] = "op unknown: the ticket does not name it before the table"
                for tac in tactics:
                    yield TuningRecord(source=source, source_kind="log", op=op, runner="", tactic=tac,
                                       status=Status.FAILED if failed else Status.PASSED, env=env, line=lineno,
                                       error=result if failed else None, detail=frozen_detail(detail))


__all__ = ["TicketReader", "tactics_of"]
