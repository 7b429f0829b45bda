"""What a report says it found, and where a pasted log stops: read from the text's structure, not its topic.

A benchmark, a validation comment, a PR or a status page states no failure of a run; what a person
needs first is its finding, in the author's words. A log with no error needs what it is and where it
stops. Neither is a log line tiletune decodes; each is a literal fact *stated* in the text
(`tiletune.core.events.Literal`, kinds below), with its line and words.

Findings (kind "finding"), by the structure authors use to mark them, in this order of weight:
- the first paragraph or list item under a heading that names a result ("TL;DR", "### Measured (B200)",
  "Conclusion", "Results"), or a paragraph opened by a summary label ("**Summary:** prefill ..."): the
  author's own summary (a "## Summary" heading describes the text: the ticket's first sentence quotes it);
- a sentence that opens with a conclusion marker ("Bottom line:", "The result ...", "In short,");
- a sentence the author put in bold as a clause of three words or more ("**It does not reproduce**"),
  never a bold label ("**Cleanup**:") or a bold number;
- a count line with two or more "N <outcome>" figures ("76 passed, 7 skipped",
  "49 benchmarked | 14 working | 29 pending | 17 failed").
A finding sentence is kept whole (a paragraph's sentences up to a bound, never cut mid-word).

Where a log stops (kinds "stops_at", "warning", "named_line"): the last non-empty line of the last pasted
block (a code fence, or the text itself when it is a log), the warnings it logged (a `WARNING` /
`[W]` / `W1007 ...` level, a Python `UserWarning:`) and its lines that name FlashInfer (which
backend or sampler the engine chose); for a log whose lines follow one writer's grammar, that writer
(vLLM: "(EngineCore pid=N) INFO mm-dd hh:mm:ss [file.py:N]", TensorRT-LLM: "[TRT-LLM] [I]").

`FindingReader.feed(lineno, text)` sees every line; `literals()` at the end. Bounded: a few of each.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from tiletune.core.events import Literal

MAX_FINDINGS = 4
MAX_SUMMARY = 480  # characters of an author's summary paragraph kept (whole sentences)
MAX_SENTENCE = 260
_PARA_LINES = 12

# a heading line: Markdown '#', a line that is bold alone, or (in a page flattened to text) a short line alone
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<h>.+?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*\*\*(?P<h>[^*]{2,80})\*\*\s*:?\s*$")
# the words a heading uses to name the author's summary or result
# (a "## Summary" heading is a template's description of the text: the ticket's summary quotes it; a "Summary:"
# label in prose is the author's own summary of results)
_RESULT_HEADING = re.compile(r"^\W*(?:TL;?DR|tl;dr|Results?|Conclusions?|Bottom line|Findings?|Key (?:findings|takeaways|results)|"
                             r"Takeaways?|Verdict|Outcome|Measured|Measurements?)\b", re.I)
# a heading over the text's description of itself (a PR's or an issue's template): its first sentence says what the text is
_ABOUT_HEADING = re.compile(r"^\W*(?:Summary|Description|Purpose|Overview|Motivation|Describe the bug|Bug description|"
                            r"Problem|What does this PR do)\b", re.I)
_SUMMARY_WORDS = re.compile(r"^\W*(?:TL;?DR|tl;dr|Summary|Results?|Conclusions?|Bottom line|Findings?|Key (?:findings|takeaways|results)|"
                            r"Takeaways?|Verdict|Outcome|Measured|Measurements?)\b", re.I)
# a sentence that opens with a conclusion marker (a closed class of discourse markers)
_MARKER = re.compile(r"^\W*(?:TL;?DR\b|Bottom line\b|The (?:result|upshot|net result|conclusion|finding)s?\b|Results?\s*:|"
                     r"Conclusions?\s*:|In short\b|In summary\b|To summari[sz]e\b|Summary\s*:|Net\s*:)", re.I)
# a paragraph that opens with a label ("**Summary:** ...", "TL;DR: ...")
_LABEL = re.compile(r"^\W{0,4}(?:\*\*|__)?(?P<l>[A-Z][\w;/ -]{1,30}?)(?:\*\*|__)?\s*:(?:\*\*|__)?\s+\S")
_BOLD = re.compile(r"\*\*(?P<b>[^*]{3,300}?)\*\*")
# "76 passed", "17 failed", "14 working": a count with its outcome (pytest's summary, a status line)
_OUTCOME_COUNT = re.compile(r"(?<![\w.])\d[\d,]*\s+(?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|succeeded|"
                            r"working|pending|benchmarked|broken|blocked|timed out|OK|FAIL(?:ED)?)\b")
# (a sentence may end inside emphasis: "... 0 errors`.** Each stage")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?:\*\*|__)?`?\s+(?=[A-Z`(\[*\"'])")
# a line of code or of a traceback pasted outside a fence: no prose
_CODEISH = re.compile(r'File "[^"]+", line \d+|^\s*[~^]{4,}\s*$|^\s{4,}\S|^\s*(?:Traceback \(|#\d+ 0x|\w+(?:\.\w+)*\($)')
# a command the text runs (a serving stack's launcher, after a prompt and environment assignments), and a commit named
_COMMAND = re.compile(r"^[\s`>$]*(?:[^`]{0,60}?[$❯➜✗]\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?P<c>(?:vllm serve|python3? -m [\w.]+|trtllm-serve|"
                      r"trtllm-bench|trtllm-build|torchrun|mpirun|docker run|sglang\.launch_server)\b[^`]*)")
_COMMIT = re.compile(r"\b[Cc]ommit(?: id| hash| sha)?\W{0,6}(?P<h>[0-9a-f]{7,40})\b")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FENCE = ("```", "~~~")

# log-line grammar
_LEVEL = re.compile(r"^\s*(?:\(\w[\w ]*pid=\d+\)\s*)?(?:\[[^\]]{1,40}\]\s*)*(?:(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b"
                    r"|(?P<glog>[IWEF])\d{4} \d\d:\d\d:\d\d)")
_TAG_LEVEL = re.compile(r"\[(?:TRT-LLM|TensorRT-LLM)\]\s*\[(?P<l>[IWEV])\]|\[TensorRT-LLM\]\[(?P<l2>INFO|WARNING|ERROR|VERBOSE)\]")
_PROGRESS = re.compile(r"\d+%\s*(?:Completed\s*)?\|.*\|\s*\d+/\d+|\b\d+/\d+ \[\d\d:\d\d")
# a report's aligned 'Key    : value' line (collect_env), not prose's "Bottom line : ..."
_KEY_VALUE = re.compile(r"^\s*[A-Za-z][\w ./()-]{1,40}?(?:\s{2,}:|\s:\s*$)")
_USER_WARNING = re.compile(r"\b\w*Warning: (?P<w>\S.*)$")
_VLLM = re.compile(r"^\s*\((?:EngineCore|APIServer|VllmWorker|Worker|EngineCore_DP\d+)\w* pid=\d+\)|"
                   r"\b(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+\.py:\d+\]")
_SGLANG = re.compile(r"^\s*\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: (?:TP|DP|EP|PP)\d+)*\] (?:(?:INFO|WARNING|ERROR|DEBUG) [\w.]+\.py:\d+:|"
                     r"(?:TP|DP|EP|PP)\d)")
_TRT = re.compile(r"\[TRT-LLM\]\s*\[[IWEV]\]|\[TensorRT-LLM\]\[(?:INFO|WARNING|ERROR|VERBOSE)\]")
# a log line's prefix before its message: process, stamps, tags, level, logger location
_PREFIX = re.compile(r"^\s*(?:\(\w[\w ]*pid=\d+\)\s*)?(?:\[[^\]]{1,40}\]\s*)*"
                     r"(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(?:\d\d-\d\d \d\d:\d\d:\d\d\s+)?(?:\[[\w./-]+:\d+\]\s*|"
                     r"[\w.]+\.py:\d+:\s*)?|"
                     r"[IWEF]\d{4} \d\d:\d\d:\d\d[.\d]* +\d+ [\w./-]+:\d+\]\s*)?")


def _clip(text: str, limit: int = MAX_SENTENCE) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    return text[:limit - 4].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def _unmark(text: str) -> str:
    """Prose without Markdown emphasis ('**1.22×**' -> '1.22×'); code spans keep their backticks."""
    return re.sub(r"\*\*|__", "", text)


def message(text: str) -> str:
    """A log line's message without its process / stamp / level / location prefix ('' when it holds no word: an
    empty message, a banner drawn in block characters)."""
    msg = _PREFIX.sub("", text, count=1).strip()
    return msg if re.search(r"[A-Za-z]{2}", msg) else ""


class FindingReader:
    """Collects a text's findings and where its pasted log stops (see the module docstring)."""

    def __init__(self) -> None:
        self._found: List[Tuple[int, int, Literal]] = []  # (weight, order, finding)
        self._para: List[Tuple[int, str]] = []
        self._under: Optional[Tuple[int, str]] = None  # (line, words) of a summary heading whose first paragraph is open
        self._fenced = False
        self._block: List[Tuple[int, str]] = []  # the last pasted block's non-empty lines (its last ones)
        self._block_lines = 0
        self._block_log = 0  # its lines in a log's grammar
        self._block_kv = 0  # ... and its 'Key : value' lines (an environment report)
        # (lines, log lines, key-value lines, its last two lines) of the last block
        self._last_block: Optional[Tuple[int, int, int, List[Tuple[int, str]]]] = None
        self._text_log = 0  # log lines in the whole text
        self._text_kv = 0
        self._text_lines = 0
        self._last_line: Optional[Tuple[int, str]] = None
        self._prev_line: Optional[Tuple[int, str]] = None
        self.warnings: List[Literal] = []
        self.named: List[Literal] = []
        self.commands: List[Literal] = []
        self.about: Optional[Literal] = None  # what the text says it is (under its "## Summary" / "Description")
        self._about_next = False
        self.commits: List[Literal] = []
        self._vllm = 0
        self._trt = 0
        self._sglang = 0

    # ----- reading --------------------------------------------------------------------------------
    def feed(self, lineno: int, text: str) -> None:
        s = text.strip()
        if s.startswith(_FENCE):
            self._flush()
            if self._fenced:
                self._end_block()
            else:
                self._block, self._block_lines, self._block_log, self._block_kv = [], 0, 0, 0
            self._fenced = not self._fenced
            return
        if not s:
            if not self._fenced:
                self._flush()
            return
        self._text_lines += 1
        if len(self.commands) < 2 and ("serve" in s or "-m " in s or "run" in s or "trtllm" in s or "launch" in s):
            c = _COMMAND.match(s)
            if c is not None and len(c.group("c").split()) >= 2:
                self.commands.append(Literal("command", _clip(c.group("c"), 200), lineno, _clip(s, 240)))
        if "ommit" in s and not self.commits:
            h = _COMMIT.search(s)
            if h is not None:
                self.commits.append(Literal("version", f"commit {h.group('h')}", lineno, _clip(s, 240)))
        if message(s):
            self._prev_line, self._last_line = self._last_line, (lineno, s)
        if "Warning: " in s and len(self.warnings) < 3:  # a Python warning (bare, or after a process prefix)
            w = _USER_WARNING.search(s)
            if w is not None:
                self.warnings.append(Literal("warning", _clip(w.group(0), 240), lineno, _clip(s, 240)))
        logged = self._log_line(lineno, s)
        kv = logged and _KEY_VALUE.match(s) is not None and _LEVEL.match(s) is None
        self._text_kv += kv
        if self._fenced:
            self._block_lines += 1
            self._block_log += logged
            self._block_kv += kv
            if message(s):  # (a line with no message, "(APIServer pid=1) INFO 06-09 10:52:13 [utils.py:344]", is no stop)
                self._block = (self._block + [(lineno, s)])[-2:]
            return
        if logged or s.startswith("|") or _CODEISH.search(text):  # (a log line, a table row or code ends a paragraph)
            self._flush()
            return
        self._prose(lineno, text)

    def _log_line(self, lineno: int, s: str) -> bool:
        """A line in a log's grammar (a level, a tag, a progress bar, a 'Key : value' report line): its warnings
        and its lines naming FlashInfer are kept."""
        lvl = _LEVEL.match(s)
        tag = _TAG_LEVEL.search(s[:80]) if "[" in s else None
        level = (lvl.group("lvl") or lvl.group("glog")) if lvl else (tag.group("l") or tag.group("l2")) if tag else None
        if level is None and not _PROGRESS.search(s) and not _KEY_VALUE.match(s):
            return False
        self._text_log += 1
        self._vllm += bool(_VLLM.search(s[:120]))
        self._trt += bool(_TRT.search(s[:80]))
        self._sglang += bool(_SGLANG.match(s))
        msg = message(s)
        if not msg:
            return True
        if level in ("WARNING", "WARN", "W") and len(self.warnings) < 3 and len(msg.split()) >= 3 \
                and not msg.startswith("Traceback"):  # (a message, not a traceback's line the logger prefixed)
            self.warnings.append(Literal("warning", _clip(msg, 240), lineno, _clip(s, 240)))
        elif level is not None and level.startswith(("I", "D")) and "lashinfer" in s.lower().replace("flashinfer", "lashinfer") \
                and len(self.named) < 3:
            self.named.append(Literal("named_line", _clip(msg, 200), lineno, _clip(s, 240)))
        return True

    def _end_block(self) -> None:
        if self._block:
            self._last_block = (self._block_lines, self._block_log, self._block_kv, self._block[-2:])

    def _prose(self, lineno: int, text: str) -> None:
        s = text.strip()
        head = _MD_HEADING.match(s) or _BOLD_LINE.match(s)
        bare = head is None and len(s.split()) <= 4 and not s.endswith((".", ",", ";", "!", "?")) and not _LIST_ITEM.match(s)
        if head is not None or (bare and _RESULT_HEADING.match(s)):
            self._flush()
            h = head.group("h") if head is not None else s
            self._under = (lineno, h) if _RESULT_HEADING.match(_unmark(h).strip("`* ")) else None
            self._about_next = self.about is None and _ABOUT_HEADING.match(_unmark(h).strip("`* ")) is not None
            return
        if _LIST_ITEM.match(s) and self._para:  # a list item starts a paragraph of its own
            self._flush()
        elif self._para and self._para[-1][1].endswith((".", "!", "?")) and len(s.split()) <= 12 \
                and not s.endswith((".", "!", "?", ",", ";", ":")):
            self._flush()  # (a page flattened to lines: a short line with no stop after a sentence is a title)
        self._para.append((lineno, s))
        if len(self._para) >= _PARA_LINES:
            self._flush()

    def _flush(self) -> None:
        para, self._para = self._para, []
        if not para:
            return
        joined, at = "", []
        for lineno, t in para:
            at.append((len(joined), lineno))
            joined += t + " "
        joined = joined.strip()

        def line_of(off: int) -> int:
            return next((ln for o, ln in reversed(at) if o <= off), para[0][0])

        sentences: List[Tuple[int, str]] = []
        pos = 0
        for sent in _SENTENCE_END.split(joined):
            start = joined.find(sent, pos)
            pos = start + len(sent)
            sentences.append((start, sent))
        if self._about_next:  # the first paragraph under "## Summary": its first sentence says what the text is
            self._about_next = False
            first = _unmark(_LIST_ITEM.sub("", sentences[0][1] if sentences else joined, count=1))
            if len(first.split()) >= 6:
                self.about = Literal("about", _clip(first, 300), para[0][0], _clip(first, 240), "its description")
        label = _LABEL.match(joined)
        if self._under is None and label is not None and _SUMMARY_WORDS.match(label.group("l")):
            self._under = (para[0][0], label.group("l"))  # "**Summary:** prefill ...": a heading inline, its paragraph after it
        if self._under is not None:  # the first paragraph under a summary heading: the author's summary, whole sentences
            kept: List[str] = []
            size = 0
            for _, sent in sentences:
                if kept and size + len(sent) > MAX_SUMMARY:
                    break
                kept.append(sent)
                size += len(sent) + 1
            said = _unmark(_LIST_ITEM.sub("", " ".join(kept), count=1))
            self._add(0, para[0][0], _clip(said, MAX_SUMMARY + 20), f"under '{_clip(_unmark(self._under[1]), 60)}'")
            self._under = None
            return
        for start, sent in sentences:
            if _MARKER.match(_unmark(sent)):
                self._add(1, line_of(start), _clip(_unmark(sent)), "a conclusion marker")
        for off, lineno in at:  # (a marker opening a line whose sentence began on a line before: a flattened page)
            t = joined[off:]
            if _MARKER.match(_unmark(t)) and not any(st == off for st, _ in sentences):
                end = _SENTENCE_END.search(t)
                self._add(1, lineno, _clip(_unmark(t[:end.start()] if end else t)), "a conclusion marker")
        for b in _BOLD.finditer(joined):
            words = b.group("b").strip()
            after = joined[b.end():b.end() + 3].strip()
            opens = b.start() < 6 and re.fullmatch(r"(?:[-*+]|\d+[.)])?", joined[:b.start()].strip()) is not None
            if len(words.split()) < 3 or words.endswith(":") or after.startswith(":") \
                    or (opens and after.startswith(("—", "–", "-"))) \
                    or len(re.findall(r"(?<![\w`])[a-z]{2,}", words)) < 2:
                continue  # (a label "**Cleanup**:", a number "**1.22×**", a name "**NVIDIA GB10 (DGX Spark)**": not a clause)
            held = [(st, sent) for st, sent in sentences if st < b.end() and st + len(sent) > b.start()]
            if held:
                said = " ".join(sent for _, sent in held)
                self._add(2, line_of(held[0][0]), _clip(_unmark(_LIST_ITEM.sub("", said, count=1))), "the author's bold")
        for lineno, t in para:
            if len(_OUTCOME_COUNT.findall(t)) >= 2:  # (a PR's checked test-plan item reports its own tests: said as such)
                checked = re.match(r"\s*(?:[-*+]\s+)?\[[xX ]\]", t) is not None
                self._add(3, lineno, _clip(_unmark(_LIST_ITEM.sub("", t, count=1))),
                          "a checked item's count" if checked else "a count of outcomes")

    def _add(self, weight: int, lineno: int, said: str, why: str) -> None:
        if len(self._found) >= 16 or any(said in f.value or f.value in said for _, _, f in self._found):
            return
        self._found.append((weight, len(self._found), Literal("finding", said, lineno, said, why)))

    # ----- results ----------------------------------------------------------------------------------
    def literals(self, quiet_log: bool = True) -> Tuple[Literal, ...]:
        """The findings (the weightiest first, at most MAX_FINDINGS, then in the text's order); with `quiet_log` (the
        text shows no run ending and no autotuner line) where a pasted log stops, its warnings and its lines naming
        FlashInfer (a log whose autotuner lines or ending are read is said by them)."""
        self._flush()
        if self._fenced:  # a fence left open: the paste is cut inside its block
            self._end_block()
        out = [f for _, _, f in sorted(sorted(self._found, key=lambda t: (t[0], t[1]))[:MAX_FINDINGS],
                                       key=lambda t: t[2].line or 0)]
        out += self.commands + self.commits + ([self.about] if self.about is not None else [])
        if not quiet_log:
            return tuple(out)
        out.extend(self.stops_at())
        return tuple(out + self.warnings + self.named)

    def found(self) -> bool:
        """The text states findings (see the module docstring)."""
        self._flush()
        return bool(self._found)

    def writer(self) -> str:
        """The program whose log grammar most of the text's log lines follow ('' when none does)."""
        if self._vllm >= 2 and self._vllm >= self._trt:
            return "vLLM"
        if self._trt >= 2:
            return "TensorRT-LLM"
        if self._sglang >= 2:
            return "SGLang"
        return ""

    def stops_at(self) -> List[Literal]:
        """The last line of the last pasted log block (or of the text, when the text is a log): where the paste stops;
        and the line before it when that says something else (not the same progress bar redrawn)."""
        if self._last_block is not None and self._last_block[1] >= 2:
            lines, logged, kv, last = self._last_block
        elif self._text_log >= 3 and self._text_log * 2 >= self._text_lines and self._last_line is not None:
            lines, logged, kv = self._text_lines, self._text_log, self._text_kv
            last = [x for x in (self._prev_line, self._last_line) if x is not None]
        else:
            return []
        who = self.writer()
        what = (f"{'an' if who.startswith('S') else 'a'} {who} log" if who else "a 'key : value' report" if kv * 2 >= lines
                else "a log" if logged * 2 >= lines else "a pasted block")
        (lineno, s), prev = last[-1], last[-2] if len(last) > 1 else None
        out = [Literal("stops_at", _clip(message(s), 260), lineno, _clip(s, 240), f"{what} of {lines} lines")]
        if prev is not None and message(prev[1]).split()[:2] != message(s).split()[:2]:
            out.append(Literal("before_stop", _clip(message(prev[1]), 200), prev[0], _clip(prev[1], 240)))
        return out


__all__ = ["FindingReader", "message"]
