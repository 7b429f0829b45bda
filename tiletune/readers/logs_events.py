"""Events in a log's lines: fatal errors, progress, cache loads/saves, banners (tiletune.events).

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
- autotune_cache_path, version_banner (via the clues), and the tqdm progress bars.

A fatal text met while an autotuner failure's backtrace is being read is that tactic's failure,
not a fatal event: the autotuner caught it (the parser does not call `scan_line` then).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from tiletune import diagnosis
from tiletune.events import Event, Fact

MAX_LINES_KEPT = 64
MAX_EVENTS = 4096  # distinct events per input; past it only counts grow
_ATTACH_WINDOW = 12  # lines after a fatal line that may still carry its kernel file / boxDim

_INIT_FAILED = re.compile(r"Failed to initialize (?:the )?cutlass (?P<what>.+?)(?: on (?P<archs>sm_?\d{2,3}[af]?(?:\s*/\s*sm_?\d{2,3}[af]?)*))?\s*[.:]\s*Error:\s*(?P<status>Error [A-Za-z ]+?)(?=\s*(?:\(|$|\.|,))", re.I)
_TRT_ASSERT = re.compile(r"Assertion failed: Failed to initialize cutlass (?P<what>TMA WS grouped gemm|grouped gemm|[\w ]+?gemm)", re.I)
_TMA = re.compile(r"Failed to initialize the TMA descriptor", re.I)
_SMEM_EXCEEDED = re.compile(r"(?P<what>[\w ]*GEMM) requires (?P<need>\d[\d,]*) bytes (?:of )?shared memory,? but (?:the )?device (?:only )?supports (?P<limit>\d[\d,]*)", re.I)
_CUDA = re.compile(r"(?:torch\.(?:Accelerator|Cuda)Error: )?CUDA error: (?P<msg>[A-Za-z][^\n]*?)(?=\s*(?:CUDA kernel errors|Search for|Compile with|\(|$))|(?P<name>CUDA_ERROR_[A-Z_]+|cudaError[A-Z]\w+)")
_CUDA_IGNORE = re.compile(r"CUDA kernel errors might be|For debugging consider passing|Compile with `TORCH_USE_CUDA_DSA`|See above for details", re.I)
_CACHE_PATH = re.compile(r"Running FlashInfer autotune with cache:\s*(?P<path>\S+)")
_TQDM = re.compile(r"Tuning (?P<op>[\w:.]+?):\s*(?P<pct>\d+)%\|[^|]*\|\s*(?P<done>\d+)/(?P<total>\d+)")
_SERVED = re.compile(r"Application startup complete|Uvicorn running on|The server is fired up|ready to roll|Starting vLLM API server|Available routes are", re.I)


def _label_op(label: Optional[str], what: str) -> Optional[str]:
    return diagnosis.op_for_runner_label(label or "") or diagnosis.op_for_runner_label(what)


class EventLog:
    """Aggregated events of one input (see the module docstring)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._events: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
        self._open: Optional[Tuple[Tuple[Any, ...], int]] = None  # a fatal event that may get more facts
        self._served_line: Optional[int] = None  # the first "server is up" line
        self._last_box: Optional[Tuple[Tuple[int, ...], int]] = None  # (boxDim, line) of the last TMA dump line
        self.dropped = 0

    # ----- recording ---------------------------------------------------------------------------
    def add(self, kind: str, line: Optional[int], text: str, summary: str, facts: Dict[str, Fact],
            key: Tuple[Any, ...] = (), fatal: Optional[bool] = None, count: int = 1) -> Tuple[Any, ...]:
        ident = (kind,) + tuple(key)
        ev = self._events.get(ident)
        if ev is None:
            if len(self._events) >= MAX_EVENTS:
                self.dropped += count
                return ident
            ev = self._events[ident] = dict(kind=kind, line=line, text=text.strip()[:500], summary=summary,
                                            facts=dict(facts), fatal=fatal, count=0, lines=[])
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

    def events(self) -> List[Event]:
        out = []
        for ev in sorted(self._events.values(), key=lambda e: (e["line"] or 0)):
            if (self._served_line is not None and ev["line"] is not None and ev["line"] > self._served_line
                    and ev["kind"] in ("runner_init_failed", "cuda_error", "tma_descriptor_failed", "smem_exceeded")):
                ev["facts"].setdefault("served_before", Fact(True, "decoded", f"server-ready line {self._served_line}"))
            out.append(Event(kind=ev["kind"], source=self.source, summary=ev["summary"], text=ev["text"],
                             line=ev["line"], count=ev["count"], lines=tuple(ev["lines"]),
                             facts=tuple(ev["facts"].items()), fatal=ev["fatal"]))
        return out

    @property
    def any_fatal(self) -> bool:
        from tiletune.events import EVENT_KINDS

        return any((e["fatal"] if e["fatal"] is not None else EVENT_KINDS.get(e["kind"], False))
                   for e in self._events.values())

    # ----- recognising ------------------------------------------------------------------------
    def scan_line(self, lineno: int, text: str) -> None:
        """Events in a line that is not an autotuner message (or its failure's backtrace)."""
        if self._open is not None:
            self._attach(lineno, text)
        if "boxDim" in text:
            bd = diagnosis.box_dim(text)
            if bd:
                self._last_box = (bd, lineno)
        if self._served_line is None and _SERVED.search(text):
            self._served_line = lineno
        if "Failed to initialize" in text or "failed to initialize" in text:
            if _TMA.search(text):
                self._tma(lineno, text)
            elif "Assertion failed" in text and _TRT_ASSERT.search(text):
                self._trt_assert(lineno, text)
            else:
                m = _INIT_FAILED.search(text)
                if m:
                    self._init_failed(lineno, text, m)
        elif "shared memory" in text and "requires" in text:
            m = _SMEM_EXCEEDED.search(text)
            if m:
                self._smem_exceeded(lineno, text, m)
        if "CUDA" in text or "cudaError" in text:
            self._cuda(lineno, text)
        if "Running FlashInfer autotune with cache" in text:
            m = _CACHE_PATH.search(text)
            if m:
                self.cache_path(lineno, text, m.group("path"))

    def _fatal_seen(self) -> None:
        """Hook for a fatal line (kept for symmetry; start-up vs serving is decided in events())."""

    def _init_failed(self, lineno: int, text: str, m: "re.Match[str]") -> None:
        d = diagnosis.diagnose(text)
        what = m.group("what").strip()
        archs = tuple("sm" + re.sub(r"\D", "", a) for a in (m.group("archs") or "").split("/") if a.strip())
        status = m.group("status").strip()
        op = _label_op(d.runner_label, what)
        where = "error text"
        facts: Dict[str, Fact] = {"cutlass_status": Fact(status, "decoded", where),
                                  "error_class": Fact((d.cls or diagnosis.ErrorClass.INITIALIZE).value, "decoded", "error text")}
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
        self._fatal_seen()
        summary = (f"the {op or what} CUTLASS runner failed to initialize"
                   + (f" on {'/'.join(archs)}" if archs else "") + f", {status}")
        if d.smem_over:
            summary += f" (needs {d.smem_need:,} B of shared memory, limit {d.smem_limit:,} B)"
        ident = self.add("runner_init_failed", lineno, text, summary, facts,
                         key=(d.runner_label or what, archs, status, d.smem_need))
        self._open = (ident, lineno)

    def _trt_assert(self, lineno: int, text: str) -> None:
        m = _TRT_ASSERT.search(text)
        assert m is not None
        d = diagnosis.diagnose(text)
        what = m.group("what").strip()
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

    def _kernel_file_facts(self, ident: Tuple[Any, ...], kf: diagnosis.KernelFile) -> None:
        src = f"kernel file name {kf.name}"
        self.add_fact(ident, "kernel_file", Fact(kf.name, "decoded", "error text"))
        self.add_fact(ident, "arch", Fact(kf.arch, "decoded", src))
        self.add_fact(ident, "cta_m", Fact(kf.cta_m, "decoded", src))
        self.add_fact(ident, "block_scaled", Fact(kf.block_scaled, "decoded", src + (" (_BS)" if kf.block_scaled else " (no _BS)")))
        ev = self.get(ident)
        if ev is not None and "arch" not in ev["summary"] and f" on {kf.arch}" not in ev["summary"]:
            ev["summary"] += (f" on {kf.arch} (kernel {kf.name}: CTA M {kf.cta_m}"
                              + (", block-scaled" if kf.block_scaled else "") + ")")

    def _attach(self, lineno: int, text: str) -> None:
        assert self._open is not None
        ident, start = self._open
        if lineno - start > _ATTACH_WINDOW:
            self._open = None
            return
        if "generated.cu" in text:
            kf = diagnosis.kernel_file(text)
            if kf is not None:
                self._kernel_file_facts(ident, kf)
        if "boxDim" in text and ident[0] == "tma_descriptor_failed":
            bd = diagnosis.box_dim(text)
            if bd:
                self.add_fact(ident, "box_dim", Fact(bd, "decoded", f"TMA descriptor dump (line {lineno})"))

    def _tma(self, lineno: int, text: str) -> None:
        facts: Dict[str, Fact] = {"error_class": Fact("tma_descriptor", "decoded", "error text")}
        if self._last_box and lineno - self._last_box[1] <= _ATTACH_WINDOW:
            facts["box_dim"] = Fact(self._last_box[0], "decoded", f"TMA descriptor dump (line {self._last_box[1]})")
        self._fatal_seen()
        box = facts.get("box_dim")
        ident = self.add("tma_descriptor_failed", lineno, text,
                         "a TMA descriptor was rejected (cuTensorMapEncode failed)"
                         + (f"; boxDim {box.value} is the tile's TMA box" if box else ""),
                         facts, key=(box.value if box else None,))
        self._open = (ident, lineno)

    def _smem_exceeded(self, lineno: int, text: str, m: "re.Match[str]") -> None:
        need, limit = int(m.group("need").replace(",", "")), int(m.group("limit").replace(",", ""))
        what = m.group("what").strip()
        facts = {"smem_need_bytes": Fact(need, "measured", "error text"),
                 "smem_limit_bytes": Fact(limit, "measured", "error text (the device's per-block limit)"),
                 "error_class": Fact("shared_memory", "decoded", "error text")}
        if "moe" in what.lower():
            facts["op"] = Fact("fused_moe", "inferred", f"'{what}'")
        self._fatal_seen()
        ident = self.add("smem_exceeded", lineno, text,
                         f"{what} needs {need:,} B of shared memory, the device allows {limit:,} B per block",
                         facts, key=(what, need, limit))
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
        cls, _ = diagnosis.classify(text)
        facts = {"error": Fact(msg, "decoded", "error text"),
                 "error_class": Fact((cls or diagnosis.ErrorClass.CUDA_ERROR).value, "decoded", "error text")}
        self._fatal_seen()
        self.add("cuda_error", lineno, text, f"CUDA error: {msg}", facts, key=(msg.lower(),))

    # ----- helpers the parser calls -------------------------------------------------------------
    def cache_path(self, lineno: int, text: str, path: str) -> None:
        from tiletune.readers.logs_clues import ClueSet

        cs = ClueSet()
        cs.feed(lineno, path)
        facts: Dict[str, Fact] = {"path": Fact(path, "decoded", "log line")}
        for c in cs.clues:
            if c.what in ("arch", "flashinfer_version", "rank"):
                facts[c.what] = Fact(c.value, "decoded", f"cache path {c.text}")
        self.add("autotune_cache_path", lineno, text, f"SGLang ran FlashInfer autotune with cache {path}", facts, key=(path,))

    def progress(self, lineno: int, body: str) -> bool:
        """A tqdm `Tuning <op>: 40%|...| 4/10` bar: the op and its profile count (final value kept)."""
        m = _TQDM.search(body)
        if not m:
            return False
        op, done, total = m.group("op"), int(m.group("done")), int(m.group("total"))
        ident = ("tuning_progress", op)
        ev = self.get(ident)
        if ev is None:
            self.add("tuning_progress", lineno, body, f"tuned {op}: {done} of {total} profiles",
                     {"op": Fact(op, "decoded", "progress bar"), "profiles": Fact(total, "decoded", "progress bar"),
                      "profiles_done": Fact(done, "decoded", "progress bar")}, key=(op,), count=0)
            ev = self.get(ident)
        if ev is not None:
            prev = ev["facts"]["profiles_done"].value
            if done > prev:
                ev["facts"]["profiles_done"] = Fact(done, "decoded", "progress bar")
                ev["facts"]["profiles"] = Fact(total, "decoded", "progress bar")
                ev["summary"] = f"tuned {op}: {done} of {total} profiles"
            if done == total and ev["count"] == 0 or (done == total and prev != total):
                ev["count"] += 1  # one completed bar
        return True
