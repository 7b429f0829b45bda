"""The literal facts a text states, as written: errors, ops and kernels, frames, files, tiles, bytes, versions.

A person reading a ticket wants the facts it gives, in its own words: the error sentence whole (not
cut where the author wrapped the line), the op or kernel it names, the file and line, the tile
"256x256x128" as written, the shared-memory bytes, the CUDA / PyTorch / driver / engine versions.
`LiteralReader.feed(lineno, text)` sees every line and keeps, per kind, the first few distinct values
with the line and the words that hold them (`tiletune.core.events.Literal`, always `stated`: the
text says it; nothing here is decoded or inferred). Bounded: a few values per kind, whatever the
text's size.

Rules that make it general rather than tuned to one ticket:
- an error line (`Type: message`, `CUDA error: ...`, a CUTLASS `Error: ...`, a failure quoted in a
  code span or in double quotes) is kept up to the end of its sentence: a line the author wrapped
  mid-sentence is joined with the lines that continue it (lowercase or indented prose, no log
  prefix, no frame), and never cut mid-word; the author's own elisions ("...", "<...>") stay;
- a traceback's frames (`File "x.py", line N, in fn`) are kept as `x.py:N in fn`, the last
  traceback's application frames only (the interpreter's and torch's module plumbing are left out);
- GPUs and arch tokens come from the clue set (`clues.ClueSet`), which marks a clue named in a
  contrast, a quote, a title or a list of other machines: such a clue is kept as *mentioned*, never
  as this machine's.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from tiletune.core.events import Literal
from tiletune.core.words import quote_bounded
from tiletune.readers.logs.clues import CONTRAST, MARKED, ClueSet
from tiletune.readers.logs.events import sentence_around, sentence_of, wrapped_on

PER_KIND = 6  # distinct values kept per kind
TABLE_ROWS = 8  # rows of one Markdown table said as text (the rest counted)
_LIMIT = {"flag": 6, "none_failed": 2, "smem": 8, "elision": 3, "milestone": 6, "box": 4, "caveat": 2, "table": 4}
MAX_ERROR = 400  # characters of one error sentence (a trtllm-gen kernel's name alone is 120)
MAX_SCAN = 20_000  # characters of one line searched for names, files, tiles, bytes and versions
_JOIN_LINES = 3  # lines a wrapped error sentence may continue over
_JOIN_FENCED = 6  # ... and a message broken over indented lines of a pasted log

# kinds in the order a person needs them (the view keeps this order)
KINDS = ("error", "op", "flag", "config", "none_failed", "caveat", "test", "elision", "table", "frame", "file", "tile",
         "box", "smem", "milestone", "gpu", "arch", "version")

_EXC_TYPE = r"(?:[a-z_][\w]*\.)*(?:[A-Z]\w*(?:Error|Exception)|Exception)"
_EXC = re.compile(r"(?<![\w.])(?P<e>" + _EXC_TYPE + r": \S.*)$")
_CUDA_ERR = re.compile(r"(?<![\w.])(?P<e>CUDA [Ee]rror: \S.*)$")
_CUTLASS_ERR = re.compile(r"^[\s>*`-]*(?P<e>Error: \S.*)$")
_WHAT = re.compile(r"what\(\):\s+(?P<e>\S.*)$")
_ERROR_TAIL = re.compile(r"\s+(?:Search for `|CUDA kernel errors might|For debugging consider|Compile with `TORCH_USE)")
_STATUS = re.compile(r"\b(?:CUBLAS_STATUS|CUDNN_STATUS|CUDA_ERROR|NCCL_ERROR|CUresult)_[A-Z_]+\b|\bcudaError[A-Z]\w+|"
                     r"\b(?:Status::)?kError[A-Z]\w+|\bError Internal\b")
# a failure quoted in a code span or in double quotes ("`This kernel only supports sm100f.`")
_QUOTED = re.compile(r"`\"?(?P<a>[^`]{8,200}?)\"?`|\"(?P<b>[^\"]{8,200})\"")
_FAIL_WORDS = re.compile(r"only supports|not supported|[Uu]nsupported|[Ff]ailed|[Ee]rror\b|illegal|[Aa]ssertion|cannot|exceed|"
                         r"requires \d|out of memory|no kernel image|invalid|unavailable|not defined|\bfatal\b", re.I)
_LOG_PREFIX = re.compile(r"^\s*(?:\(\w[\w ]*pid=\d+\)\s*)?(?:\[[^\]]*\]\s*)*(?:(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\b[^\]]*\]?\s*)?")
# a traceback frame as Python prints it
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<ln>\d+), in (?P<fn>[\w<>.]+)')
_PLUMBING = re.compile(r"/torch/nn/modules/|/torch/_|/_?contextlib\.py|/threading\.py|/asyncio/|/runpy\.py|/multiprocessing/|"
                       r"/concurrent/futures/|/functools\.py|/typing\.py|/torch/utils/_contextlib\.py|<frozen ")
_TB_HEAD = re.compile(r"Traceback \(most recent call last\)")
# a source file and line written in the text ("gemm_grouped_sm120_M128_BS_group2.generated.cu:39", "prefill.cuh: line 2349")
# a log line's logger location: FlashInfer's "... - DEBUG - autotuner.py:2017 - ", vLLM's "INFO 03-13 12:01:42 [core.py:932] "
_LOGGER_AT = re.compile(r"\s-\s(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s-\s[\w.]+\.py:\d+\s-\s|"
                        r"\b(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b[^\[\n]{0,30}\[[\w./-]+\.py:\d+\]")
_FILE_GATE = re.compile(r"\.(?:py|cuh?|cpp|cc|hpp|h|c)\b")
_FILE_TOKEN = re.compile(r"(?<![\w.-])(?P<f>[\w-]+(?:\.[\w-]+)*\.(?:py|cuh|cu|cpp|cc|hpp|h|c))(?![\w-])(?::\s?(?:line )?(?P<ln>\d+)\b)?")
# ops, kernels, runners and functions named in the text
_IDENT = re.compile(r"(?<![\w-])(?:flashinfer::)?[A-Za-z_]\w*(?:::\w+)?")
_LABEL = re.compile(r"\[[\w ]+ Runner\]")
_OP_PREFIX = ("flashinfer::", "trtllm_", "cutlass_", "cute_", "tllm_", "tinygemm_", "b12x_", "xqa_", "fmha_", "tgv_", "cudnn_",
              "cublas_", "deepgemm_", "marlin_")
_OP_FAMILY = ("mm_", "bmm_", "fused_", "grouped_", "batch_", "single_")
_OP_FAMILY_WORDS = ("fp4", "fp8", "bf16", "fp16", "mxfp8", "moe", "gemm", "mm", "attention", "decode", "prefill")
_OP_SUFFIX = ("_moe", "_gemm", "_attention", "_attn", "_decode_with_kv_cache", "_prefill", "_fmha", "_kernel", "_runner")
_LIBRARIES = frozenset(("FA2", "FA3", "FA4", "FlashMLA", "FlashAttention", "DeepGEMM", "cuBLASLt", "cuDNN", "TRTLLM"))
_OP_NAMES = frozenset(("choose_one", "kernel_warmup", "_flashinfer_autotune", "flashinfer_autotune", "do_preparation",
                       "capture_model", "_dummy_run", "profile_run", "run_selected_tactic", "canonicalize_torch_dtype"))


def _op_like(tok: str) -> bool:
    """An op, kernel, runner or function name as FlashInfer / TensorRT-LLM / CUTLASS / the engines name them
    (a test's name is not one)."""
    if tok in _LIBRARIES:  # (a kernel library the text names: "FA3-related error messages")
        return True
    if tok.startswith("test_") or tok.endswith(("_version", "_path", "_dir", "_file", "_size")):
        return False  # (a test's name, a setting's or a metadata key's)
    if "_" not in tok and ":" not in tok:
        return tok.endswith(("Runner", "Launcher", "Kernel")) and tok[:1].isupper() and len(tok) > 6
    if tok in _OP_NAMES or tok.startswith(_OP_PREFIX):
        return True
    if "::" in tok:
        return tok.split("::", 1)[0].endswith(("Runner", "Launcher", "Kernel"))
    if tok.startswith(_OP_FAMILY):
        return any(w in tok[tok.index("_"):] for w in _OP_FAMILY_WORDS)
    if re.search(r"_sm\d{2,3}[af]?$", tok) and tok.count("_") >= 2:  # (an arch's own function: get_candidate_configs_sm120)
        return True
    return tok.endswith(_OP_SUFFIX) and tok[:1].isalpha()


_NAMED_KERNEL = re.compile(r"\b(?:the |in the |in )`?(?P<k>[a-z]\w*_\w+)`? kernel\b")
_LONG_KERNEL = re.compile(r"\b\w{24,}_sm\d{2,3}[af]?\b")
# tile shapes in the notations tickets use: 256x256x128, 128×256, tile (128, 256, 64), [128, 128, 64]
_TILE_X = re.compile(r"(?:(?<![\w.×x*])|(?<=CtaShape))(?P<t>\d{2,3}\s?[x×]\s?\d{1,3}(?:\s?[x×]\s?\d{1,3})?B?)(?![\w.×])")
_TILE_TUPLE = re.compile(r"(?<![\w(\[])(?P<t>[(\[](?P<a>\d{2,3}),\s*(?P<b>\d{2,3})(?:,\s*(?P<c>\d{1,3}))?[)\]])(?![\w,])")
_DIGIT = re.compile(r"\d")
# where the author cut lines out of a paste: "...", "<...>", "(... 413 lines omitted ...)", "[truncated]"
_ELISION = re.compile(r"^\s*(?:\.{3,}|…|<\s*\.{3}\s*>|\[\s*\.{3}\s*\]|\(\s*\.{3}[^)]{0,60}\)|\[?(?:truncated|snip(?:ped)?|omitted)[^\]]{0,40}\]?)\s*$|"
                      r"<\s*\.{3}\s*>|\(\.{3}\s*\d+\s+(?:more\s+)?lines?[^)]*\)|\.{3}\s*\(\d+\s+lines? (?:omitted|skipped)\)", re.I)
_BOX = re.compile(r"\bboxDim\s*[:=]?\s*(?P<b>[(\[][\d,\s]+[)\]])")
# a server's line that says it came up (the stage: start-up completed)
_SERVED = re.compile(r"Application startup complete|Uvicorn running on|The server is fired up|Started server process|"
                     r"Available routes are|Starting vLLM API server")
# a Python error message quoted bare, without its type ("cannot import name 'X' from 'y'")
_BARE_ERR = re.compile(r"^[\s>*`-]*(?P<e>(?:(?:cannot import name|No module named|module '[^']+' has no attribute|"
                       r"CUDA out of memory|no kernel image is available|No compiled \w+ for|No valid \w+|"
                       r"No available kernel)\b|Failed to (?!initialize the TMA)\w+ [^.:]{0,80}:).*)$")
# an exception type or a backend named alone in a code span ("reached the `NotImplementedError`", "`FLASHINFER_TRTLLM`")
_SPAN_TYPE = re.compile(r"`(?P<t>" + _EXC_TYPE + r")`")
_SPAN_BACKEND = re.compile(r"`(?P<b>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*(?:FLASHINFER|TRTLLM|CUTLASS|TRITON|MARLIN|CUTEDSL|DEEPGEMM)"
                           r"[A-Z0-9_]*|(?:FLASHINFER|TRTLLM|CUTLASS|TRITON|MARLIN|CUTEDSL|DEEPGEMM)_[A-Z0-9_]+)`")
# the text's own word that nothing failed ("zero errors", "No panic, no error log", "No errors, no warnings")
_NONE_FAILED = re.compile(r"\b(?:no|zero|0|without(?: any)?)\s+(?:error logs?|errors?|warnings?|failures?|crash(?:es)?|panics?|"
                          r"exceptions?)\b(?:\s*(?:,|and|or)\s*(?:no\s+)?(?:error logs?|errors?|warnings?|failures?|panics?|"
                          r"exceptions?|nothing in the logs?)\b)*", re.I)
# a CUDA-graph capture bar (vLLM, SGLang): its last state in the text says how far start-up got
_CAPTURE = re.compile(r"(?P<bar>Capturing [\w ,()-]*?(?:CUDA|cuda) graphs?(?: \([^)]*\))?):?\s+\d+%\|[^|]*\|\s*(?P<d>\d+)/(?P<t>\d+)")
# a command-line flag the text names in a code span or on a command line ("`--moe-backend flashinfer_trtllm`")
_FLAG = re.compile(r"(?<![\w-])(?P<f>--[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?:[= ](?!--)[\w./:-]+)?)")
_COMMAND = re.compile(r"^\s*(?:\$\s*)?(?:vllm serve|python3? -m|sglang|trtllm-serve|docker run|tiletune|pytest)\b")
_ROW = re.compile(r"^\s*\|(?P<cells>.*)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
# GPU names as tickets write them (the clue set reads "NVIDIA ..." names and a short list; prose drops the vendor)
_GPU = re.compile(r"(?<![\w-])(?:NVIDIA\s+)?(?:GeForce\s+)?(?:RTX\s+PRO\s+\d{4}(?:\s+Blackwell)?(?:\s+(?:Server|Workstation|Max-Q))*"
                  r"(?:\s+Edition)?|RTX\s+50[6-9]0(?:\s+Ti)?|DGX\s+(?:Spark|Station)(?:\s+GB300)?|Jetson\s+(?:AGX\s+)?(?:Thor|Orin)|"
                  r"GB10|GB[23]00|B[23]00|GH200|H[12]00|H20|H800|A[18]00|L40S?|L20)(?![\w-])")
# the author's own caveat about a cause ("not proof", "correlates with", "we suspect") or its scope ("X is unaffected"):
# kept, so a reader does not take a correlation for a cause, nor the failure for one of every machine or path
_CAVEAT = re.compile(r"\bcaveat\b|\bnot (?:a )?proof\b|\bcorrelat(?:es|ed|ion)\b|\bnot (?:yet )?confirmed\b|\bunverified\b|"
                     r"\bhypothes[ie]s\b|\b(?:I|we) suspect\b|\bnot sure (?:whether|if|why)\b|"
                     # the failure's scope: what it does not touch ("B300 PCIe (80 SMs) is unaffected")
                     r"\b(?:is|are|was|were|remains?|stays?)\s+(?:not affected|unaffected)\b|\bdoes(?: not|n't) affect\b", re.I)
# an engine's own configuration line: vLLM's "Initializing a V1 LLM engine (v0.13.0) with config: model='...', ...",
# its "non-default args: {'model_tag': ...}", SGLang's "server_args=ServerArgs(model_path='...', ...)": key=value or
# 'key': value pairs, of which the keys that say what ran and how it was quantized are kept
_CONFIG_LINE = re.compile(r"with config: |non-default args: \{|ServerArgs\(")
_CONFIG_PAIR = re.compile(r"(?:(?<=[\s,({])|^)'?(?P<k>model|model_tag|model_path|quantization|dtype|kv_cache_dtype|"
                          r"tensor_parallel_size|moe_backend|attention_backend)'?\s*[=:]\s*(?P<v>'[^']*'|\"[^\"]*\"|[\w.+/-]+)")
# a test run's result as pytest prints it ("76 passed, 7 skipped", "2 passed, 8647 deselected", "1 failed, 3 passed")
_TEST_RESULT = re.compile(r"\b\d+ (?:passed|failed)(?:(?:,? \d+ (?:passed|failed|skipped|deselected|xfailed|xpassed|errors?|"
                          r"warnings?))+\b| in \d+(?:\.\d+)?s\b)")  # (two counts or a duration: a lone "17 failed" is no test run)
# a test named as pytest names it: a node id ("tests/x.py::TestY::test_z[param]"), a test class, a test function;
# never a file name ("tests/ops/test_kda.py": the files line says those)
_TEST_NAME = re.compile(r"(?<![\w/.-])(?:[\w/.-]+\.py::)?(?:Test[A-Z]\w*(?:::test_\w+)?|test_\w+)(?:\[[^\]\s]{1,60}\])?"
                        r"(?![\w.]|\.py)")
_GPU_GATE2 = re.compile(r"RTX|DGX|Jetson|\b[GBHAL]\w?\d{2,3}\b")
_DIGIT_X = re.compile(r"\d\s?[x×]\s?\d")
_VERSION_GATE = re.compile(r"CUDA|[Tt]orch|[Dd]river|[Ff]lash[Ii]nfer|vLLM|vllm|SGLang|sglang|TensorRT|tensorrt|CUTLASS|cutlass|"
                           r"[Tt]riton|[Tt]ransformers|NCCL|JetPack|nvcc|cuDNN")
# a CuTe shape in a template dump: "TShape = cute::tuple<cute::C<64>, cute::C<128>, cute::C<1> >" (the tile, not the cluster)
_CUTE_SHAPE = re.compile(r"\b(?P<n>TShape|CtaShape\w*|TileShape\w*)\s*=\s*cute::(?:tuple|Shape)<\s*(?P<d>cute::(?:C<\d+>|_\d+)"
                         r"(?:\s*,\s*cute::(?:C<\d+>|_\d+)){1,2})\s*>")
_DIMS_OK = {8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 512}
# shared-memory figures: "102400 bytes", "99 KB", "196608" in a line about shared memory
_SMEM_LINE = re.compile(r"shared|smem|SMEM|SharedMemory|sharedMem", re.I)
_BYTES = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+|\d{3,7})\s?(?P<u>bytes?|B\b)|(?<![\w.])(?P<k>\d{2,3}(?:\.\d)?)\s?(?P<ku>KB|KiB|kB)\b")
_BARE_BIG = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+|\d{5,7})(?![\w.,]\d)")
_VERSION = re.compile(
    r"(?<![\w-])(?P<n>CUDA(?:\s+(?:runtime|toolkit|driver|compiler))?|PyTorch|torch|cuDNN|[Dd]river|NVIDIA driver|FlashInfer|"
    r"flashinfer(?:-python|-cubin|-jit-cache)?|vLLM|vllm|SGLang|sglang|TensorRT-LLM|tensorrt[-_]llm|CUTLASS|cutlass|Triton|triton|"
    r"[Tt]ransformers|NCCL|JetPack|nvcc)"
    r"(?:\s+[Vv]ersion)?[\s:=*`(]{0,40}?v?(?P<v>\d{1,3}\.\d{1,3}(?:\.\d{1,4})?(?:(?:\.post|rc|\.dev|a|b)\d+)?(?:\+[\w.]+)?)(?![\w.])")
_VERSION_NAME = {"torch": "PyTorch", "pytorch": "PyTorch", "cuda": "CUDA", "driver": "driver", "nvidia driver": "driver",
                 "flashinfer": "FlashInfer", "flashinfer-python": "FlashInfer", "vllm": "vLLM", "sglang": "SGLang",
                 "tensorrt-llm": "TensorRT-LLM", "tensorrt_llm": "TensorRT-LLM", "cutlass": "CUTLASS", "triton": "Triton",
                 "transformers": "Transformers"}
_PROSE_AFTER = re.compile(r"(?<=[.!?])\s+(?=(?:The|This|That|These|It|Its|We|I|So|But|When|If|Workaround|See|Please|Note|In|On|"
                          r"After|Before|Same|Also|Then|However|Setting|Using|With|Without|Root)\b)")
_FENCE = ("```", "~~~")


def _clip(text: str, limit: int = MAX_ERROR) -> str:
    """`text` whole up to `limit` characters, else with its code middle folded (template and call arguments, a path's
    directories) and cut at a sentence's or clause's end, never mid-word, saying what it left out."""
    return quote_bounded(text, limit * 4 // 5)  # (whole up to a quarter over: `limit` itself)


def _sentence(text: str) -> str:
    """An error message up to where the prose after it starts: a '.' followed by a new sentence of prose ("... sm120.
    The same config ..."), never one inside the message ("... on sm120. Error: Error Internal"), a number or an
    elision."""
    for m in _PROSE_AFTER.finditer(text):
        head = text[:m.start()]
        if head.endswith(("...", "e.g.", "i.e.", "vs.", "etc.")):
            continue
        return head
    return text


def _gpu_name(text: str) -> str:
    """A GPU's name as the text writes it, without the prose after it ("NVIDIA B200 GPUs using vLLM" -> "NVIDIA B200")."""
    words: List[str] = []
    for w in text.split():
        if not (w[:1].isupper() or w[:1].isdigit()) or w in ("GPU", "GPUs", "GPU:") or not re.match(r"[\w.-]+$", w):
            break
        words.append(w)
    return " ".join(words) or text


def _logged(text: str) -> bool:
    """The line carries a log prefix (a level, a bracketed stamp or tag, a process): a new message, not a wrap."""
    m = _LOG_PREFIX.match(text)
    return m is not None and m.end() > len(text) - len(text.lstrip())


def _ended(text: str) -> bool:
    """The text ends a sentence (or a bracket, a quote, a code span): no wrapped continuation follows."""
    t = text.rstrip()
    return not t or t.endswith((".", "!", "?", ")", "]", "`", "'", '"', "}", ">")) and not t.endswith("...") or t.endswith(":")


class LiteralReader:
    """Collects the literal facts of one text (see the module docstring)."""

    def __init__(self) -> None:
        self._by: Dict[str, List[Literal]] = {k: [] for k in KINDS}
        self._seen: set = set()
        self._fenced = False
        self._frames: List[Literal] = []  # the current traceback's application frames
        self._frames_raised = False  # the current traceback ended in its exception line
        self._raised_frames: List[Literal] = []  # the last earlier traceback that did
        self._open: Optional[Tuple[int, int]] = None  # (index in errors, last line joined) of a wrapped error
        self._joined = 0
        self._gpus: List[Literal] = []  # GPU names found by `_GPU` (bounded below)
        self._captures: Dict[str, Literal] = {}  # CUDA-graph capture bar -> its last state (at most 4 bars)
        self._row_prev: Optional[Tuple[int, List[str]]] = None  # a table row that may be a header
        self._tbl: Optional[Tuple[int, List[str], List[List[str]]]] = None  # (header line, header, rows) being read

    # ----- reading --------------------------------------------------------------------------------
    def feed(self, lineno: int, text: str) -> None:
        s = text.strip()
        if s.startswith(_FENCE):
            self._fenced = not self._fenced
            self._open = None
            return
        if self._open is not None and self._continue(lineno, text):
            return
        self._open = None
        if not ("|" in text and not self._fenced and self._table(lineno, text)):  # (a table's cells are read below too)
            self._table_end()
        if not s:
            return
        if "Traceback" in text and _TB_HEAD.search(text):
            if self._frames and self._frames_raised:  # (a traceback that ended in its exception: kept, see literals())
                self._raised_frames = self._frames
            self._frames, self._frames_raised = [], False
        if 'File "' in text:
            frames = list(_FRAME.finditer(text))  # (a page kept as one line holds a whole traceback)
            for fr in frames:
                self._frame(lineno, fr)
            if frames and not _EXC.search(text[frames[-1].end():]):
                return
            if frames:
                text = text[frames[-1].end():]
        # cheap gates first: a long debug log's lines mostly hold none of these, and each scan costs a regex
        self._errors(lineno, text)
        if self._frames and not self._frames_raised and _EXC.search(text):
            self._frames_raised = True  # the open traceback ended in its exception line
        text = text[:MAX_SCAN]  # (a page kept as one line is read to here for names and numbers)
        if "_" in text or "Runner" in text or "Kernel" in text or "kernel" in text or "FA" in text or "Flash" in text \
                or "GEMM" in text or "cuBLAS" in text:
            self._ops(lineno, text)
        if "--" in text and len(self._by["flag"]) < 6:
            spans = re.findall(r"`([^`]+)`", text) if "`" in text else []
            for part in spans + ([text] if _COMMAND.match(text) else []):
                for f in _FLAG.finditer(part):
                    self._add("flag", f.group("f"), lineno, text)
        if len(self._by["none_failed"]) < 2 and ("no " in text or "No " in text or "zero" in text or "0 " in text
                                                 or "without" in text):
            for n in _NONE_FAILED.finditer(text):
                if re.search(r"rror|Status|kError|failed", text[max(0, n.start() - 25):n.start()]):
                    continue  # (CUTLASS's "Error Internal no error" is a status text, not the author saying nothing failed)
                # the clause it stands in ("No errors occur during the capture phase"), up to its end
                rest = re.split(r"[.,;:!?]|\s(?:but|however|although|though|while)\s", text[n.end():n.end() + 100], maxsplit=1)[0]
                self._add("none_failed", (n.group(0) + rest).strip(), lineno, text)
        if "Capturing" in text and "raph" in text:
            caps = list(_CAPTURE.finditer(text))
            if caps:  # (glued tqdm redraws: the last state on the line)
                c = caps[-1]
                bar = " ".join(c.group("bar").split())
                if bar in self._captures or len(self._captures) < 4:
                    self._captures[bar] = Literal("milestone", f"{bar}: {c.group('d')}/{c.group('t')} (its last state here)",
                                                  lineno, _clip(text, 240))
        if ".py" in text or ".c" in text or ".h" in text:
            # (a logger's own location, "- DEBUG - autotuner.py:2017 -" or "INFO ... [core.py:932]", is no fact of the run)
            self._files(lineno, _LOGGER_AT.sub(" ", text) if ".py:" in text else text)
        if ("x" in text or "×" in text) and _DIGIT_X.search(text) or "tile" in text or "Tile" in text or "Shape" in text:
            self._tiles(lineno, text)
        if "..." in text or "…" in text or "omitted" in text or "truncated" in text or "snip" in text:
            e = _ELISION.search(text)
            if e:
                self._add("elision", f"'{e.group(0).strip()}'", lineno, text)
        if "boxDim" in text:
            for b in _BOX.finditer(text):
                self._add("box", "boxDim " + re.sub(r"\s+", "", b.group("b")), lineno, text)
        if ("tartup" in text or "server" in text or "routes" in text) and _SERVED.search(text):
            self._add("milestone", _SERVED.search(text).group(0), lineno, text)  # type: ignore[union-attr]
        if "`" in text:
            for t in _SPAN_TYPE.finditer(text):
                if not any(t.group("t") in e.value for e in self._by["error"]):
                    self._add("error", f"{t.group('t')} (named in a code span)", lineno, text)
            for b in _SPAN_BACKEND.finditer(text):
                self._add("op", b.group("b"), lineno, text)
        if ("config" in text or "args" in text) and not self._by["config"] and _CONFIG_LINE.search(text):
            pairs = [f"{m.group('k')}={m.group('v').strip(chr(39) + chr(34))}" for m in _CONFIG_PAIR.finditer(text[:MAX_SCAN])
                     if m.group("v").strip("'\"") not in ("None", "auto", "")]
            if pairs:  # one line per text: the engine's own statement of what it ran
                self._add("config", ", ".join(dict.fromkeys(pairs)), lineno, text)
        if ("passed" in text or "failed" in text) and len(self._by["test"]) < PER_KIND:
            for t in _TEST_RESULT.finditer(text):
                self._add("test", f"result '{t.group(0)}'", lineno, text)
        if ("test_" in text or "Test" in text) and len(self._by["test"]) < PER_KIND:
            for t in _TEST_NAME.finditer(text):
                self._add("test", t.group(0), lineno, text)
        if not self._fenced and len(self._by["caveat"]) < 2 and _CAVEAT.search(text) and not _logged(text):
            cv = _CAVEAT.search(text)
            assert cv is not None
            self._add("caveat", sentence_around(text, cv.start()) if len(text) > 160 else s, lineno, text)
        if _GPU_GATE2.search(text):
            for g in _GPU.finditer(text):
                mark = "in a contrast" if CONTRAST.search(text[max(0, g.start() - 48):g.start()]) else ""
                if len(self._gpus) < 64:
                    self._gpus.append(Literal("gpu", " ".join(g.group(0).split()), lineno, _clip(text, 240), mark))
        if _DIGIT.search(text):
            if "byte" in text or "KB" in text or "KiB" in text or "kB" in text or "hared" in text or "smem" in text \
                    or "SMEM" in text or "SharedMem" in text:
                self._smem(lineno, text)
            if _VERSION_GATE.search(text):
                self._versions(lineno, text)

    def _table(self, lineno: int, text: str) -> bool:
        """A Markdown table's lines: its header and rows, said as one line of text when it ends (True: consumed)."""
        row = _ROW.match(text)
        if row is None and not _RULE.match(text):
            return False
        if _RULE.match(text):
            if self._row_prev is not None and self._tbl is None:
                self._tbl = (self._row_prev[0], self._row_prev[1], [])
            return True
        # (bounded: a hostile row of a million cells keeps 32 of them, each cut to 200 characters)
        cells = [re.sub(r"\*\*|__", "", c).strip()[:200] for c in row.group("cells").split("|", 32)[:32]] if row else []
        if self._tbl is not None:
            if len(self._tbl[2]) < 256:
                self._tbl[2].append(cells)
        else:
            self._row_prev = (lineno, cells)
        return True

    def _table_end(self) -> None:
        tbl, self._tbl, self._row_prev = self._tbl, None, None
        if tbl is None or not tbl[2]:
            return
        line, head, rows = tbl
        shown = "; ".join(" | ".join(c for c in r if c) for r in rows[:TABLE_ROWS])
        more = f"; {len(rows) - TABLE_ROWS} more row(s)" if len(rows) > TABLE_ROWS else ""
        said = f"{len(rows)} row(s) under '{' | '.join(h for h in head if h)}': {shown}{more}"
        self._add("table", _clip(said, 600), line, " | ".join(head))

    def _add(self, kind: str, value: str, lineno: Optional[int], words: str, mark: str = "") -> bool:
        key = (kind, value.lower() if kind not in ("error", "smem") else re.sub(r"\D", "", value) if kind == "smem" else value)
        if key in self._seen or len(self._by[kind]) >= _LIMIT.get(kind, PER_KIND):
            return False
        self._seen.add(key)
        self._by[kind].append(Literal(kind, value, lineno, _clip(words, 240), mark))
        return True

    def _errors(self, lineno: int, text: str) -> None:
        if "rror" in text or "xception" in text or "what()" in text:
            if self._error_line(lineno, text):
                return
        if "cannot" in text or "No module" in text or "has no attribute" in text or "out of memory" in text \
                or "no kernel image" in text or "No compiled" in text or "No valid" in text or "No available" in text \
                or "Failed to" in text:
            self._bare_error(lineno, _LOG_PREFIX.sub("", text, count=1) if ("[" in text or "pid=" in text) else text)
        if ("`" in text or '"' in text) and _FAIL_WORDS.search(text):
            for q in _QUOTED.finditer(text):
                said = (q.group("a") or q.group("b") or "").strip()
                if _FAIL_WORDS.search(said) and not _FRAME.search(said) and " " in said:
                    self._add("error", _clip(said), lineno, text)
        if "_STATUS" in text or "_ERROR_" in text or "cudaError" in text or "kError" in text or "Error Internal" in text \
                or "CUresult" in text:
            for st in _STATUS.finditer(text):
                if not any(st.group(0) in e.value for e in self._by["error"]):
                    self._add("error", st.group(0), lineno, text)

    def _bare_error(self, lineno: int, text: str) -> None:
        m = _BARE_ERR.match(text)
        if m:
            self._add("error", _clip(m.group("e").strip().rstrip("`")), lineno, text)

    def _error_line(self, lineno: int, text: str) -> bool:
        """An error line (an exception, a CUDA error, `what():`, CUTLASS's `Error:`): kept to its sentence's end."""
        body = _LOG_PREFIX.sub("", text, count=1) if ("[" in text or "ERROR" in text) else text
        for rx in (_EXC, _CUDA_ERR, _WHAT, _CUTLASS_ERR):
            m = rx.search(body)
            if m:
                said = m.group("e").strip().rstrip("`").strip()
                if rx is _EXC and not self._fenced and "`" in body[:m.start()] and body[:m.start()].count("`") % 2:
                    said = said.split("`", 1)[0]  # an exception quoted in a code span of prose: the span is the message
                said = _ERROR_TAIL.split(said, 1)[0].rstrip()  # (torch's hints after a CUDA error are not the error)
                whole = _sentence(said) if not self._fenced or rx is not _CUTLASS_ERR else said
                if self._add("error", _clip(whole), lineno, text):
                    # prose wrapped mid-sentence; in a fence (log lines), only a message its author broke where it
                    # cannot end (after ':', ',', ' at' or an open bracket), continued on indented lines
                    held = said.rstrip().endswith((":", ",", " at", "(")) or said.count("(") > said.count(")")
                    if (not self._fenced and not _ended(said) and whole == said) or (self._fenced and held):
                        self._open = (len(self._by["error"]) - 1, lineno)
                        self._joined = 0
                return True
        return False

    def _continue(self, lineno: int, text: str) -> bool:
        """A line that continues an error sentence the author wrapped: joined to it (True), else False."""
        assert self._open is not None
        i, last = self._open
        s = text.strip()
        indented = len(text) - len(text.lstrip()) >= 2
        if lineno != last + 1 or not s or self._joined >= (_JOIN_FENCED if self._fenced else _JOIN_LINES) or _logged(text) \
                or _EXC.match(s) or _FRAME.search(s) or s.startswith(("^", "~", "Traceback")) \
                or not (indented if self._fenced else wrapped_on(self._by["error"][i].value, text)):
            return False
        lit = self._by["error"][i]
        piece = s if self._fenced else sentence_of(s)
        # an identifier the author broke over two lines ("..._m128x8x16" / "_c1x1x1_...") is one word again
        glue = "" if piece.startswith("_") and lit.value[-1:].isalnum() else " "
        joined = f"{lit.value}{glue}{piece}"
        if self._fenced:
            for k in _LONG_KERNEL.finditer(joined):
                self._add("op", k.group(0), lit.line, f"{lit.words} {s}")
        self._by["error"][i] = Literal(lit.kind, _clip(joined), lit.line, _clip(f"{lit.words} {s}", 240), lit.mark)
        self._joined += 1
        held = piece.rstrip().endswith((":", ",", " at", "(")) or joined.count("(") > joined.count(")")
        if (self._fenced and not held) or (not self._fenced and (piece != s or _ended(piece))):
            self._open = None
        else:
            self._open = (i, lineno)
        # the continuation may name an op or a tile of its own
        self._ops(lineno, text)
        self._tiles(lineno, text)
        self._smem(lineno, joined)  # (the line before may say it is about shared memory)
        self._files(lineno, text)
        return True

    def _frame(self, lineno: int, fr: "re.Match[str]") -> None:
        path = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", fr.group("path"))  # (a Markdown auto-link in a pasted path)
        if _PLUMBING.search(path) or path.startswith(("/usr/lib/python", "<")):
            return
        name = path.rsplit("/", 1)[-1]
        value = f"{name}:{fr.group('ln')} in {fr.group('fn')}"
        lit = Literal("frame", value, lineno, fr.group(0), "")
        if len(self._frames) < 64 and all(f.value != value for f in self._frames):  # (a traceback pasted twice)
            self._frames.append(lit)

    def _ops(self, lineno: int, text: str) -> None:
        if len(self._by["op"]) >= PER_KIND:
            return
        if "kernel" in text:
            for m in _NAMED_KERNEL.finditer(text):
                self._add("op", f"{m.group('k')} kernel", lineno, text)
        if "_sm" in text:
            for m in _LONG_KERNEL.finditer(text):
                if not any(m.group(0) in o.value for o in self._by["op"]):  # (the tail of a name joined above)
                    self._add("op", m.group(0), lineno, text)
        names = [m.group(0) for m in _IDENT.finditer(text) if _op_like(m.group(0))
                 and text[m.end():m.end() + 1] != "/"]  # (a folder of a path is no name; a file's stem may be)
        if "Runner]" in text:
            names += _LABEL.findall(text)
        for v in names:
            if len(v) > 80 or v.endswith(("_kernel",)) and any(v in o.value for o in self._by["op"]):
                continue
            if any(v != o.value and (v in o.value.split() or v.startswith("_") and v in o.value) for o in self._by["op"]):
                continue  # (a word of a longer name, or the tail of a kernel's name its author broke over lines)
            if re.fullmatch(r"\w+_(?:runner|kernel)", v) and v.islower() and "_" not in v[:-7]:
                continue  # ("my_kernel"-like words of prose are no name)
            self._add("op", v, lineno, text)

    def _files(self, lineno: int, text: str) -> None:
        if not _FILE_GATE.search(text):
            return
        for m in _FILE_TOKEN.finditer(text):
            f, ln = m.group("f"), m.group("ln")
            if ln:
                self._add("file", f"{f}:{ln}", lineno, text)
                continue
            if "_" not in f and text[max(0, m.start() - 1):m.start()] != "/" and f"`{f}`" not in text:
                continue  # ("llama.cpp" is a project's name; a file named alone carries an underscore, a path or a code span)
            if not any(o.value.startswith(f + ":") for o in self._by["file"]) and f.count(".") <= 3:
                self._add("file", f, lineno, text)

    def _tiles(self, lineno: int, text: str) -> None:
        for m in _TILE_X.finditer(text):
            dims = [int(d) for d in re.split(r"\s?[x×]\s?", m.group("t").rstrip("B"))]
            if dims[0] in _DIMS_OK and dims[1] in _DIMS_OK and (len(dims) < 3 or dims[2] in _DIMS_OK | {1, 2, 4}):
                self._add("tile", m.group("t"), lineno, text)
        if "Shape" in text and "cute::" in text:
            for c in _CUTE_SHAPE.finditer(text):
                cute = re.findall(r"\d+", c.group("d"))
                self._add("tile", f"{'x'.join(cute)} (written '{c.group('n')} = cute::...<{', '.join(cute)}>')", lineno, text)
        if ("tile" in text or "Tile" in text) and ("(" in text or "[" in text):  # a tuple in a sentence about tiles
            for t in _TILE_TUPLE.finditer(text):
                parts = [t.group("a"), t.group("b")] + ([t.group("c")] if t.group("c") else [])
                if all(int(d) in _DIMS_OK for d in parts[:2]):
                    self._add("tile", f"{'x'.join(parts)} (written '{t.group('t')}')", lineno, text)

    def _smem(self, lineno: int, text: str) -> None:
        about = bool(_SMEM_LINE.search(text))
        for m in _BYTES.finditer(text):
            if m.group("n") is not None:
                if m.group("u") == "B" and (int(m.group("n").replace(",", "")) < 1024 or not about):
                    continue  # ("397B" parameters, the "256B" of a CUTLASS tile name: not bytes)
                self._add("smem", f"{m.group('n')} {m.group('u')}", lineno, text)
            elif about:
                self._add("smem", f"{m.group('k')} {m.group('ku')}", lineno, text)
        if about:
            for m in _BARE_BIG.finditer(text):
                n = int(m.group("n").replace(",", ""))
                if 16_384 <= n <= 1_048_576 and not any(m.group("n") in o.value for o in self._by["smem"]):
                    self._add("smem", m.group("n"), lineno, text)

    def _versions(self, lineno: int, text: str) -> None:
        for m in _VERSION.finditer(text):
            name = m.group("n")
            label = _VERSION_NAME.get(name.lower(), name)
            if label.lower().startswith("cuda") and "capability" in text[max(0, m.start() - 20):m.end() + 20].lower():
                continue
            if re.search(r"\b(?:build|built|compiled)\b", text[max(0, m.start() - 30):m.start()], re.I):
                continue  # ("CUDA used to build PyTorch: 13.0" is CUDA's version, not PyTorch's)
            self._add("version", f"{label} {m.group('v')}", lineno, text)

    # ----- answers ----------------------------------------------------------------------------------
    def literals(self, clues: Optional[ClueSet] = None) -> Tuple[Literal, ...]:
        """Every kind's values in `KINDS` order; GPUs and arch tokens from `clues` (marked ones as mentioned)."""
        self._table_end()
        # the frames of the traceback that raised: the last one, unless it was cut before any exception line (a teardown
        # traceback pasted after the error: vllm#16515) and an earlier one ended in its exception
        frames = self._raised_frames if self._raised_frames and not self._frames_raised else self._frames
        if frames:
            for f in frames[:2] + frames[-4:] if len(frames) > 6 else frames:
                if (f.value, f.line) not in {(x.value, x.line) for x in self._by["frame"]}:
                    self._by["frame"].append(f)
        if clues is not None:
            for c in clues.clues:
                mark = next((m for m in MARKED if c.kind.endswith(m)), "")
                if c.what == "gpu" or (c.what == "arch" and c.kind.startswith("gpu")):
                    self._add("gpu", _gpu_name(str(c.text)), c.line, c.context or c.text, mark)
                elif c.what == "arch" and c.kind.startswith(("arch named", "compute capability")):
                    self._add("arch", str(c.text), c.line, c.context or c.text, mark)
                elif c.what == "arch" and c.kind.startswith("kernel"):  # the arch token inside a kernel's name
                    tok = re.search(r"sm_?\d{2,3}[af]?", str(c.text))
                    if tok:
                        self._add("arch", tok.group(0), c.line, c.context or c.text, mark or "in a kernel name")
                elif c.what == "arch" and c.kind.startswith(("jit path", "cache path")):  # the path's arch folder
                    folder = re.search(r"/(sm_?\d{2,3}[afn]?|\d{2,3}[afn]?)(?=/|$)", str(c.text))
                    self._add("arch", f"{folder.group(1) if folder else c.value} (in {c.kind} {c.text})", c.line,
                              c.context or c.text, mark)
        for g in self._gpus[:64]:  # names the clue set did not read ("RTX PRO 6000" in prose)
            if not any(g.value.lower() in x.value.lower() for x in self._by["gpu"]):
                self._add("gpu", g.value, g.line, g.words, g.mark)
        self._by["gpu"].sort(key=lambda x: (x.line is None, x.line or 0))  # (in the text's order)
        for cap in self._captures.values():
            if all(cap.value != x.value for x in self._by["milestone"]):
                self._by["milestone"].append(cap)
        self._captures = {}
        out: List[Literal] = []
        for k in KINDS:
            out.extend(self._by[k])
        return tuple(out)


__all__ = ["KINDS", "LiteralReader"]
