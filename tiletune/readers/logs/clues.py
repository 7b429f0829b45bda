"""Arch, GPU, FlashInfer version and server version from every clue a log or pasted text holds.

A log rarely has `_metadata`, but its text says a lot: a JIT path `.cache/flashinfer/0.5.2/120a/`,
an error "on sm120/sm121", a module `get_trtllm_moe_sm100_module`, an SGLang cache path
`.../autotune/0.6.12/sm103/<hash>/rank_tp3_pp0_dp0.json`, a vLLM cache path
`.../flashinfer_autotune_cache/0.6.11.post2/103a/...`, a GPU name, a `flashinfer-python==0.5.2`
line of an environment dump, a vLLM / SGLang version banner (whose release pins a FlashInfer
version: `tiletune/core/data/server_flashinfer_pins.json`, extracted by tools/server_pins.py).

`ClueSet.feed(lineno, text)` collects clues (each with where it came from and how it is known);
`best_arch()` / `best_version()` pick by strength (`_ARCH_STRENGTH`): a path or the compute
capability states the value; a literal arch token ("SM120", "sm_121a", "12.1a") or a GPU / driver
line describing this machine ("GPU 0: NVIDIA GB10", nvidia-smi's table, "- GPU: ...") come next;
then kernel and module names that carry the arch ("..._sm120_M128_BS_group2"), a GPU named in
prose, an error's "sm120/sm121", a build flag. A clue inside a contrast ("unlike B200", "works on
H100"), a quote (a "> " line) or a list of other machines is kept, marked as such, and never
chosen. When clues disagree the stronger one wins and `overruled()` says which lost and why;
clues of equal strength that disagree are reported, never merged.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Optional, Tuple

from msgspec import Struct

from tiletune.core.archs import arch_from_gpu_name, normalize_arch
from tiletune.core.error_text import archs_named, kernel_file
from tiletune.core.words import quote_bounded

_VER = r"\d+\.\d+\.\d+(?:\.post\d+|rc\d+|\.?dev\d+|a\d+|b\d+)*"
_JIT_PATH = re.compile(r"\.cache/flashinfer/(?P<ver>" + _VER + r")/(?P<arch>\d{2,3}[afn]?)(?=[/_\s'\"]|$)")
_SGLANG_CACHE = re.compile(r"/autotune/(?P<ver>" + _VER + r")/(?P<arch>sm_?\d{2,3}[afn]?)/(?:(?P<hash>[0-9a-f]{6,})/)?(?:rank_tp(?P<tp>\d+)_pp(?P<pp>\d+)_dp(?P<dp>\d+))?")
_VLLM_CACHE = re.compile(r"flashinfer_autotune_cache/(?P<ver>" + _VER + r")/(?P<arch>\d{2,3}[afn]?)/")
_MODULE = re.compile(r"(?:_|\b)sm(?P<arch>\d{2,3})[af]?_module\b|\b(?:fp4|fp8|mxfp8|bf16)_gemm_cutlass_sm(?P<arch2>\d{2,3})\b|fused_moe_(?P<arch3>\d{2,3})\b")
# "Compute Capability: 12.0", "compute capability 12.1"; CUTLASS kernel names "cutlass3x_sm90_...",
# cubin / kernel names ending "_sm100f"; nvcc "-arch=sm_121" (what a binary was built for: weakest)
_CC = re.compile(r"compute(?: capability|_cap(?:ability)?)[:= ]+`?(?:(?P<cc>\d{1,2}\.\d)|\((?P<maj>\d{1,2}),\s*(?P<min>\d)\))", re.I)  # + nvidia-smi's compute_cap
# an arch written as a word of ticket text ("GB300 (SM103 / Blackwell)", "`sm_103a`"), not a path
# component or a longer name ("kSM_100", "/sm120/"); only lines naming one arch (a list is no clue)
_GPU_MODEL = re.compile(r"\bGB10\b|DGX Spark|RTX PRO \d{4}|RTX \d{4} PRO\b|RTX 50\d0|\bG?B300\b|\bG?B[12]00\b|\bG?H[12]00\b|\bH20\b|"
                        r"\bA100\b|Jetson Thor|\bL40S?\b")
_ARCH_WORD = re.compile(r"(?<![\w/.-])(?:SM|sm)_?(?P<a>\d{2,3})[af]?(?![\w/])|(?<![\w.])(?P<cc>1[0-2]\.\d[af])(?![\w.])")
_KERNEL_NAME = re.compile(r"\bcutlass3x_sm(?P<a>\d{2,3})_|_sm(?P<b>\d{2,3})[af]?(?:\.cubin|\b(?=\s|$|`|'|\)))"
                          r"|(?<=[A-Za-z0-9])_sm(?P<c>\d{2,3})[af]?_(?=[A-Za-z0-9])")
_HARDWARE = re.compile(r"\(`?(?:sm|SM)_?(?P<a>\d{2,3})[af]?`?\) (?:hardware|GPUs?|machine)|"
                       r"\bon (?:an? |the |my |our )?`?(?:sm|SM)_?(?P<b>\d{2,3})[af]?`? (?:hardware|GPUs?|machine)")
# a setting the text names: an environment variable of the serving stack set to a value
_SETTING = re.compile(r"(?<![\w$])(?P<s>(?:VLLM|FLASHINFER|SGLANG|SGL|TRTLLM|TLLM|TRT_LLM)_[A-Z0-9_]+=[\w.,:/-]+)")
# ...unless the text only advises it: TensorRT-LLM's autotuner says "Set TLLM_LOG_LEVEL=DEBUG for more details"
# and "Please set TLLM_LOG_LEVEL=WARNING to find out when ..." (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/autotuner.py)
_ADVICE = re.compile(r"(?:[Ss]et|setting) $")
_ADVICE_AFTER = re.compile(r"\s+(?:for more details|to (?:find out|get more))")
_IN_LABEL = re.compile(r"\[[\w ]*$")  # inside an open "[... Runner]" label
# a line that describes this machine's GPU or driver (nvidia-smi, torch, an environment list)
_GPU_LINE = re.compile(r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?:GPU(?: model| type| name)?s?|Device(?: name)?|Hardware|Graphics|"
                       r"Accelerator|Platform|System)(?:\*\*)?\s*(?:\d+\s*)?[:=]|GPU \d+:|\|\s*\d+\s+NVIDIA|NVIDIA-SMI|"
                       r"Driver Version|get_device_name|device_name|torch\.cuda|Found \d+ GPU|cuda:\d", re.I)
# words that put a machine in a contrast ("unlike B200", "works fine on H100", "than on GB200")
_CONTRAST = re.compile(r"\b(?:unlike|compared (?:to|with)|vs\.?|versus|than(?: on| the| a)?|instead of|rather than|"
                       r"other than|whereas|works? (?:fine |well )?(?:on|with)|worked (?:fine |well )?on|fine on|"
                       r"passes on|e\.g\.|such as|like (?:on |the |a )?|except(?: on)?|not on|"
                       r"the public|also (?:on|affects))\W*(?:\w+\W+){0,3}$", re.I)
CONTRAST = _CONTRAST  # (readers/logs/literals.py marks a GPU it finds in a contrast the same way)
_BUILD_ARCH = re.compile(r"-arch[= ](?:sm|compute)_(?P<a>\d{2,3})[af]?\b")
# the arch list a build is given: CUDA_ARCHS="120-real" (TensorRT-LLM), TORCH_CUDA_ARCH_LIST=12.1a (PyTorch extensions),
# CUDA_ARCH=sm_110, CMAKE_CUDA_ARCHITECTURES=120a; a clue only when it names one arch family
_BUILD_LIST = re.compile(r"\b(?:CUDA_ARCHS?|TORCH_CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES)\s*=\s*[\"']?(?P<v>[\w.;+ -]{2,40}?)(?=[\"'`\s]|$)[\"']?")
_DRIVER = re.compile(r"\bdriver(?: version)?\**\s*[:= ]\s*\**(?P<v>\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b", re.I)
_CUDA_VER = re.compile(r"\bCUDA(?: Version| version| toolkit| runtime)?\**\s*[:= ]?\s*\**(?P<v>1[0-3]\.\d)(?!\d|\.\d)")
_GPU_GATE = re.compile(r"NVIDIA|GeForce|RTX|\bGB10\b|\bGB[23]00\b|\bB[123]00\b|\bG?H[12]00\b|\bH[28]00\b|\bA[18]00\b|\bH20\b|\bL(?:20|40S?)\b|DGX Spark")
_GPU_NAME = re.compile(r"NVIDIA (?:GeForce )?[A-Za-z0-9][A-Za-z0-9 .-]{1,60}")
# (Markdown around the name or the version, as tickets write them: "FlashInfer `0.6.18.post1`",
# "flashinfer-python **0.6.12**")
_FI_VERSION = re.compile(
    r"flashinfer(?:[-_](?:python|cubin|jit[-_]cache))?[*`]*\s*(?:==|:|\s+version[: ]|\s+(?=[*`]*v?\d))\s*[*`]*v?(?P<ver>"
    + _VER + r")", re.I)
_SERVER_BANNERS: Tuple[Tuple[str, "re.Pattern[str]"], ...] = (
    ("vllm", re.compile(r"vLLM API server version (?P<ver>[\w.+-]+)|LLM engine \(v(?P<ver2>[\w.+-]+)\)|\bvllm\s*==\s*(?P<ver3>[\w.+-]+)|vLLM Version\s*:\s*(?P<ver4>[\w.+-]+)"
                        r"|█\s+version\s+(?P<ver5>\d[\w.+-]*)", re.I)),  # the ASCII-art start-up banner of vLLM 0.2x
    ("sglang", re.compile(r"\bsglang\s*==\s*(?P<ver>[\w.+-]+)|sglang version\s*[:=]?\s*v?(?P<ver2>\d[\w.+-]*)|SGLang v(?P<ver3>\d[\w.+-]*)", re.I)),
    ("tensorrt_llm", re.compile(r"TensorRT-LLM version:\s*(?P<ver>[\w.+-]+)|tensorrt[_-]llm\s*==\s*(?P<ver2>[\w.+-]+)", re.I)),
)

# Strength of each clue kind (higher wins).
# a kernel / module / file name names the family its code was built for (sm120 kernels run on
# sm121, the sm100 module on sm103): weaker than the device's own name or capability
_ARCH_STRENGTH = {"jit path": 6, "cache path": 6, "compute capability": 6, "gpu line": 5, "arch named": 5,
                  "gpu name": 4, "kernel file name": 4, "kernel name": 4, "module name": 3, "gpu named in prose": 3,
                  "error text": 2, "build flag": 1}
# why a kind ranks where it does (said when it wins over another clue)
_ARCH_WHY = {"jit path": "a JIT workspace path names the arch", "cache path": "a cache path names the arch",
             "compute capability": "the device's compute capability", "gpu line": "a GPU line describing this machine",
             "arch named": "a literal arch token", "gpu name": "a GPU name", "kernel file name": "a kernel file built for it",
             "kernel name": "a kernel / op name carrying the arch", "module name": "a module built for that arch family",
             "gpu named in prose": "a GPU named in prose", "error text": "an error naming the archs it runs on",
             "build flag": "a build flag (what a binary was built for)"}
# a clue inside a contrast, a quote or a list of other machines: kept, marked, never chosen
MARKED = ("in a contrast", "in a quote", "in a list of machines", "in a title", "in a code name")
# an arch token that names what code was built for: "an sm100f cubin", "SM120's broken MoE GEMM tiles", "the SM120
# mixed-MoE/NVFP4 path", "SM120 candidate configs" (the token, then up to three words, then what the code is)
# ("sm_120 kernels" is not one: "the image does not include sm_120 kernels" is said of this machine's arch)
_CODE_AFTER = re.compile(r"(?:[’']s)?\s+(?:[\w/.+-]+\s+){0,3}?(?:cubins?|paths?|tiles?|configs?|candidates?|"
                         r"specializations?|instantiations?)\b", re.I)
# "K=64 tile generation for SM120", "kernels for sm_100": code built for the arch named after it
_CODE_BEFORE = re.compile(r"\b(?:tiles?|cubins?|configs?)(?:\s+[\w-]+){0,2}\s+for\s+(?:the\s+)?`?$", re.I)
# "not SM_100", "not an SM90": a negated token in a list of contrasts
_NEGATED_BEFORE = re.compile(r"\bnot\s+(?:an?\s+|the\s+)?$", re.I)
_VERSION_STRENGTH = {"jit path": 6, "cache path": 6, "package version": 5, "server release pin": 1}


class Clue(Struct, frozen=True, gc=False):
    """One value a text states (or implies), where, and how it is known."""

    what: str  # "arch" | "gpu" | "flashinfer_version" | "server" | "rank"
    value: Any
    how: str  # "decoded" | "inferred"
    kind: str  # "jit path", "cache path", "gpu name", ...
    line: Optional[int]
    text: str  # the words that said it
    context: str = ""  # the whole line they are in (evidence)

    def where(self) -> str:
        at = f" (line {self.line})" if self.line is not None else ""
        return f"{self.kind} '{self.text}'{at}"


@lru_cache(maxsize=1)
def server_pins() -> Dict[str, Any]:
    """The shipped table: server -> release -> FlashInfer pin (see tools/server_pins.py)."""
    try:
        text = resources.files("tiletune.core.data").joinpath("server_flashinfer_pins.json").read_text()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return {}


def pinned_flashinfer(server: str, version: str) -> Optional[Dict[str, Any]]:
    """{"pin": exact version or None, "spec": requirement text, "source": ...} for a server release."""
    releases = server_pins().get("servers", {}).get(server, {})
    v = version.lstrip("v")
    hit = releases.get(v)
    if hit is None:  # "0.11.0rc2.dev5+g..." -> "0.11.0rc2", then "0.11.0"
        base = re.match(r"\d+\.\d+\.\d+(?:rc\d+|\.post\d+)?", v)
        if base:
            hit = releases.get(base.group(0)) or releases.get(re.match(r"\d+\.\d+\.\d+", v).group(0))  # type: ignore[union-attr]
    return hit


class ClueSet:
    """Collects clues from lines; bounded (at most a few per kind)."""

    MAX_PER_KIND = 8

    def __init__(self) -> None:
        self.clues: List[Clue] = []
        self._seen: set = set()

    def add(self, clue: Clue) -> None:
        self._add(clue)

    def _add(self, clue: Clue) -> None:
        if not clue.context and self._line_text:
            clue = Clue(clue.what, clue.value, clue.how, clue.kind, clue.line, clue.text, quote_bounded(self._line_text.strip(), 400))
        key = (clue.what, clue.value, clue.kind)
        if key in self._seen:
            return
        if sum(1 for c in self.clues if c.what == clue.what and c.kind == clue.kind) >= self.MAX_PER_KIND:
            return
        self._seen.add(key)
        self.clues.append(clue)

    def feed(self, lineno: Optional[int], text: str) -> None:
        self._line_text = text
        self._quote = text.lstrip().startswith(">")
        self._title = lineno == 1 and text.startswith("# ")
        self._listed = self._machines_listed(text)
        m: Optional[re.Match[str]]  # one name for every pattern's match below
        if ".cache/flashinfer/" in text:
            for m in _JIT_PATH.finditer(text):
                self._path(lineno, m, "jit path")
        if "/autotune/" in text or "flashinfer_autotune_cache/" in text:
            for rx in (_SGLANG_CACHE, _VLLM_CACHE):
                for m in rx.finditer(text):
                    self._path(lineno, m, "cache path")
        low = text.lower()
        if "flashinfer" in low and ("flashinfer-" in low or "flashinfer_python" in low or "flashinfer_cubin" in low
                                    or "flashinfer " in low or "flashinfer=" in low or "flashinfer:" in low):
            for m in _FI_VERSION.finditer(text):
                if "/" in text[max(0, m.start() - 1):m.start()]:
                    continue  # a path component, handled above
                self._add(Clue("flashinfer_version", m.group("ver"), "decoded", "package version", lineno, m.group(0).strip()))
        if "generated.cu" in text:
            kf = kernel_file(text)
            if kf is not None:
                self._add(Clue("arch", kf.arch, "decoded", "kernel file name", lineno, kf.name))
        if "_sm" in text or "fused_moe_" in text:
            m = _MODULE.search(text)
            if m and text[m.end():m.end() + 2] == "()":
                m = None  # a call in a traceback's source line: what the code would load, not what ran here
            if m:
                num = m.group("arch") or m.group("arch2") or m.group("arch3")
                arch = normalize_arch(num)
                if arch:
                    # a module serves an arch family (the sm100 module also runs on sm103): inferred
                    self._add(Clue("arch", arch, "inferred", "module name", lineno, m.group(0).strip("_")))
        if " on sm" in low or " on SM" in text:
            archs = archs_named(text)
            if archs:
                # "on sm120/sm121": the device is one of these; the first names the catalog family
                self._add(Clue("arch", archs[0], "decoded" if len(archs) == 1 else "inferred", "error text",
                               lineno, "on " + "/".join(archs)))
        if ("NVIDIA" in text or "RTX" in text or "GB" in text or "DGX" in text or "00" in text) and _GPU_GATE.search(text):
            self._gpu(lineno, text)
        if "apability" in text or "compute_cap" in text:
            m = _CC.search(text)
            if m:
                arch = normalize_arch(m.group("cc") or f"{m.group('maj')}.{m.group('min')}")  # ("(11, 0)": torch's tuple)
                if arch:
                    self._add(Clue("arch", arch, "decoded", "compute capability", lineno, m.group(0)))
        if "_sm" in text:
            m = _KERNEL_NAME.search(text)
            if m:
                arch = normalize_arch(m.group("a") or m.group("b") or m.group("c"))
                name = re.search(r"[\w.]*" + re.escape(m.group(0)) + r"[\w.]*", text)
                if name and (text[name.end():name.end() + 1] == "(" or name.group(0).endswith((".hpp", ".h", ".cuh", ".py"))):
                    arch = None  # a call in a traceback's source line: what the code would load, not what ran here
                if arch:
                    self._add(self._placed(Clue("arch", arch, "decoded", "kernel name", lineno,
                                                (name.group(0) if name else m.group(0)).strip("_")), m.start()))
        if "sm" in low or "SM" in text or "." in text:
            found = [(normalize_arch(w.group("a") or w.group("cc")), w) for w in _ARCH_WORD.finditer(text)]
            if len(found) > 1:  # "SM_121. Not SM_90a (...), not SM_100 (...)": the negated ones are a contrast
                kept = [(a, w) for a, w in found if not _NEGATED_BEFORE.search(text[max(0, w.start() - 12):w.start()])]
                for a, w in found:
                    if a and (a, w) not in kept:
                        self._add(Clue("arch", a, "decoded", "arch named in a contrast", lineno, w.group(0)))
                found = kept
            words = {a for a, _ in found if a}
            hw = _HARDWARE.search(text)  # "a kernel for Blackwell-Ultra (sm_103) hardware": this machine, said outright
            hw_arch = normalize_arch(hw.group("a") or hw.group("b")) if hw else None
            if hw and hw_arch:
                self._add(Clue("arch", hw_arch, "decoded", "arch named", lineno, hw.group(0)))
            family = [(a, w) for a, w in found if a and w.group(0).rstrip("`").endswith("f")]
            if len(words) == 2 and family and len({{"sm103": "sm100", "sm121": "sm120"}.get(a, a) for a in words}) == 1:
                # "an sm_100f kernel for sm_103 hardware": the f-suffixed token is the kernels' family target
                words = {a for a in words if a != family[0][0]}
            if len(words) == 1:
                arch = words.pop()
                w = next(w for a, w in found if a == arch)
                if _IN_LABEL.search(text[:w.start()]) and "Runner]" in text[w.end():]:
                    # "[MXFP8 SM120 gemm Runner]": the runner's name carries the family it was built for
                    self._add(Clue("arch", arch, "inferred", "module name", lineno, w.group(0)))
                else:
                    self._add(self._placed(Clue("arch", arch, "decoded", "arch named", lineno, w.group(0)), w.start(), w.end()))
        if "=" in text and "_" in text:
            for m in _SETTING.finditer(text):
                if _ADVICE.search(text[max(0, m.start() - 8):m.start()]) and _ADVICE_AFTER.match(text, m.end()):
                    continue  # advice to set it, not a setting this run had
                self._add(Clue("setting", m.group("s").rstrip(".,:"), "decoded", "setting named", lineno, m.group("s")))
        if "river" in text:
            m = _DRIVER.search(text)
            if m:
                self._add(Clue("driver", m.group("v"), "decoded", "driver version", lineno, m.group(0).strip()))
        if "CUDA" in text:
            m = _CUDA_VER.search(text)
            if m and "capability" not in text[max(0, m.start() - 30):m.start()]:
                self._add(Clue("cuda", m.group("v"), "decoded", "CUDA version", lineno, m.group(0).strip()))
        if "ARCH" in text:
            m = _BUILD_LIST.search(text)
            if m:
                built = {normalize_arch(re.sub(r"[-+](?:real|virtual|PTX)$", "", v, flags=re.I))
                         for v in re.split(r"[;\s]+", m.group("v").strip()) if v}
                one = next(iter(built)) if len(built) == 1 else None
                if one is not None:  # (a list of several is what a wheel supports: no clue)
                    self._add(Clue("arch", one, "inferred", "build flag", lineno, m.group(0)))
        if "-arch" in text:
            m = _BUILD_ARCH.search(text)
            if m:
                arch = normalize_arch(m.group("a"))
                if arch:  # what a binary was built for, not necessarily the device
                    self._add(Clue("arch", arch, "inferred", "build flag", lineno, m.group(0)))
        if ("version" in low or "==" in low or "llm engine" in low) and (
                "vllm" in low or "sglang" in low or "tensorrt" in low or "llm engine" in low or "█" in text):
            for server, rx in _SERVER_BANNERS:
                m = rx.search(text)
                if m:
                    ver = next(g for g in m.groups() if g)
                    self._add(Clue("server", (server, ver), "decoded", "version banner", lineno, m.group(0).strip()))

    def _path(self, lineno: Optional[int], m: "re.Match[str]", kind: str) -> None:
        self._add(Clue("flashinfer_version", m.group("ver"), "decoded", kind, lineno, m.group(0)))
        arch = normalize_arch(m.group("arch"))
        if arch:
            self._add(Clue("arch", arch, "decoded", kind, lineno, m.group(0)))
        gd = m.groupdict()
        if gd.get("tp") is not None:
            self._add(Clue("rank", f"tp{gd['tp']}_pp{gd['pp']}_dp{gd['dp']}", "decoded", kind, lineno, m.group(0)))

    def _gpu(self, lineno: Optional[int], text: str) -> None:
        line_kind = "gpu line" if _GPU_LINE.search(text) else None
        for m in _GPU_NAME.finditer(text):
            name = m.group(0).strip(" .-")
            arch = arch_from_gpu_name(name)
            if arch:
                name = re.split(r"\s{2,}|\s(?:with|on|and|using|for|in|running|from|to|GPUs?|\d+W|\d+MiB)\b", name)[0].strip()
                kind = line_kind or ("gpu name" if self._first_person(text, m.start()) else "gpu named in prose")
                clue = self._placed(Clue("arch", arch, "inferred", kind, lineno, name), m.start())
                if clue.kind not in [k for k in (f"{kind} {x}" for x in MARKED)] and not any(clue.kind.endswith(x) for x in MARKED):
                    self._add(Clue("gpu", name, "decoded", "gpu name", lineno, name))
                self._add(clue)
                return
        for short in ("GB10", "DGX Spark", "RTX 5090", "RTX 6000 PRO", "GB300", "B300", "GB200", "B200", "GH200", "H200", "H100",
                      "H800", "H20", "A100", "A800", "L40S", "L40", "L20"):
            i = text.find(short)
            if i >= 0 and re.search(r"(?<![\w#-])" + re.escape(short) + r"(?![\w-])", text):
                arch = arch_from_gpu_name(short)
                if arch:
                    kind = line_kind or ("gpu name" if self._first_person(text, i) else "gpu named in prose")
                    self._add(self._placed(Clue("arch", arch, "inferred", kind, lineno, short), i))
                return

    # ----- where a clue stands: this machine, or another one named in passing ---------------------
    _line_text = ""
    _quote = False
    _title = False
    _listed = False

    def _placed(self, clue: Clue, at: int, end: Optional[int] = None) -> Clue:
        """The clue, its kind marked when the line puts it in a quote, a contrast or a list of machines, or (a token
        that ends at `end`) names what code was built for ("an sm100f cubin", "the SM120 MoE GEMM tiles")."""
        text = self._line_text
        if self._title:
            mark = "in a title"  # a ticket's title names what the ticket is about, not this machine
        elif self._quote or (end is not None and text[at - 1:at] in "\"“'‘`" and at > 0
                             and text[end:end + 1] in "\"”'’`" and text[end:end + 1]
                             and not text[at - 1:at] == "`"):
            mark = "in a quote"  # ('"sm100" means it was written for datacenter Blackwell': a word quoted)
        elif end is not None and (_CODE_AFTER.match(text, end) or _CODE_BEFORE.search(text[max(0, at - 60):at])):
            mark = "in a code name"  # what a kernel, tile or path was built for, not this machine's arch
        elif _CONTRAST.search(text[max(0, at - 48):at]):
            mark = "in a contrast"
        elif self._listed:
            mark = "in a list of machines"
        else:
            return clue
        return Clue(clue.what, clue.value, clue.how, f"{clue.kind} {mark}", clue.line, clue.text, clue.context)

    @staticmethod
    def _machines_listed(text: str) -> bool:
        """The line names GPUs or archs of two or more families (a list or a comparison of machines)."""
        if not _GPU_GATE.search(text) and "sm" not in text.lower():
            return False
        fams = set()
        for rx, _arch in ((r"\bGB10\b|DGX Spark", "sm121"), (r"RTX PRO|RTX 50\d0", "sm120"), (r"\bG?B300\b", "sm103"),
                          (r"\bG?B[12]00\b", "sm100"), (r"\bG?H[12]00\b|\bH20\b", "sm90"), (r"\bA100\b", "sm80")):
            if re.search(rx, text):
                fams.add(_arch)
        # "on RTX PRO 6000, RTX 5090, or DGX Spark": three machines of one family are a list too
        # (names joined by "/" or a parenthesis are one machine's: "NVIDIA B200 / GB200", "GB10 (DGX Spark)")
        hits = list(_GPU_MODEL.finditer(text))
        if any(a.group(0) != b.group(0) and re.search(r",|\bor\b|\band\b|\bvs\b", text[a.end():b.start()])
               for a, b in zip(hits, hits[1:])):
            return True
        for w in _ARCH_WORD.finditer(text):
            a = normalize_arch(w.group("a") or w.group("cc") or "")
            if a:
                fams.add({"sm121": "sm120"}.get(a, a))
        return len({{"sm121": "sm120", "sm103": "sm100"}.get(f, f) for f in fams}) >= 2

    @staticmethod
    def _first_person(text: str, at: int) -> bool:
        """Prose that says the machine is the writer's: "my RTX 5090", "running on a GB10", "we use ..."."""
        return bool(re.search(r"\b(?:my|our|this|I have|I'm on|we have|we use|using|running on|run on|on (?:a|an|the|my|our|one|two|\d+x?))"
                              r"\W+(?:\w+\W+){0,3}$", text[max(0, at - 40):at], re.I))

    # ----- answers -----------------------------------------------------------------------------
    def _best(self, what: str, strength: Dict[str, int]) -> Tuple[Optional[Clue], List[Clue]]:
        cands = [c for c in self.clues if c.what == what and not c.kind.endswith(MARKED)]
        if not cands:
            return None, []
        # the strongest kind wins; between values of equal strength, the one more clues support (a literal
        # "SM103" beside a GB300 GPU line outranks a lone "SM100" in prose), then the first said
        support: Dict[Any, int] = {}
        for c in cands:
            support[c.value] = support.get(c.value, 0) + strength.get(c.kind, 0)
        best = max(cands, key=lambda c: (strength.get(c.kind, 0), support[c.value], -(c.line or 0)))
        top = strength.get(best.kind, 0)
        if what == "arch":  # a stronger clue wins (overruled() says over what); only equals conflict
            conflicts = [c for c in cands if c.value != best.value and strength.get(c.kind, 0) >= top
                         and not _same_family(what, c.value, best.value)]
        else:
            conflicts = [c for c in cands if c.value != best.value and strength.get(c.kind, 0) >= top - 1
                         and not _same_family(what, c.value, best.value)]
        return best, conflicts

    def best_arch(self) -> Tuple[Optional[Clue], List[Clue]]:
        return self._best("arch", _ARCH_STRENGTH)

    def archs_named(self) -> List[str]:
        """The distinct archs the text names as literal tokens or GPU names (marked ones too: a table or a list of
        machines names each of them), sorted by number."""
        archs = {str(c.value) for c in self.clues if c.what == "arch" and c.kind.startswith(("arch named", "gpu"))}
        return sorted(archs, key=lambda a: int(re.sub(r"\D", "", a) or 0))

    def overruled(self, best: Clue) -> List[str]:
        """Why `best` won over each arch clue that disagrees with it: one phrase per losing clue."""
        out = []
        for c in self.clues:
            if c.what != "arch" or c.value == best.value or _same_family("arch", c.value, best.value):
                continue
            if c.kind.endswith(MARKED):
                why = f"'{c.text}' is named {c.kind[c.kind.rindex(' in a ') + 1:]}"
            else:
                why = f"{_ARCH_WHY.get(best.kind, best.kind)} outranks {_ARCH_WHY.get(c.kind, c.kind)} '{c.text}'"
            out.append(f"not {c.value}" + (f" (line {c.line})" if c.line is not None else "") + f": {why}")
        return out

    def why(self, clue: Clue) -> str:
        return _ARCH_WHY.get(clue.kind, clue.kind)

    def best_gpu(self) -> Optional[Clue]:
        return next((c for c in self.clues if c.what == "gpu"), None)

    def first(self, what: str) -> Optional[Clue]:
        """The first clue of one kind (driver, cuda): the value the text states first."""
        return next((c for c in self.clues if c.what == what), None)

    def all(self, what: str) -> List[Clue]:
        """Every clue of one kind, in the order the text states them (settings)."""
        return [c for c in self.clues if c.what == what]

    def servers(self) -> List[Clue]:
        return [c for c in self.clues if c.what == "server"]

    def best_version(self) -> Tuple[Optional[Clue], List[Clue]]:
        best, conflicts = self._best("flashinfer_version", _VERSION_STRENGTH)
        if best is not None:
            # a JIT/cache path names the base release ("0.6.8"); a package line may refine it ("0.6.8.post1")
            finer = [c for c in conflicts if str(c.value).startswith(str(best.value)) and c.value != best.value]
            if finer and len(finer) == len(conflicts):
                return finer[0], []
            return best, conflicts
        for s in self.servers():
            server, ver = s.value
            pin = pinned_flashinfer(server, ver)
            if pin and pin.get("pin"):
                return Clue("flashinfer_version", pin["pin"], "inferred", "server release pin", s.line,
                            f"{s.text} pins {pin.get('spec') or pin['pin']} ({pin.get('source', 'pin table')})"), []
        return None, []


def _same_family(what: str, a: Any, b: Any) -> bool:
    # an error's "sm120/sm121" and a GB10's sm121 agree; the sm100 module and a GB300's sm103 too
    if what != "arch":
        return False
    fam = {"sm121": "sm120", "sm103": "sm100"}
    return fam.get(a, a) == fam.get(b, b)


__all__ = ["CONTRAST", "Clue", "ClueSet", "pinned_flashinfer", "server_pins"]
