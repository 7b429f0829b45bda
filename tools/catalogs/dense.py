"""Dense-GEMM extractor (`tiletune/catalogs/data/dense-gemm.json`): reads FlashInfer's own C++ of
one release (its PyPI wheel or a git tag) with the shared scanner (tools/catalogs/cpp.py).

What it reads, per release and CUTLASS dense runner:
- `include/flashinfer/gemm/cutlass_gemm_configs.h`: the enum definitions (`CutlassTileConfigSM*`,
  `ClusterShape`, schedule enums) and the `CutlassGemmConfig` constructors (which positional
  argument lands in which field: the SM120 constructor gained `swap_ab` before `use_stream_k` in
  v0.6.11, so positions must come from the release itself);
- the runner's `getConfigs()` body, run by a small interpreter that understands exactly the
  statement forms FlashInfer uses (vector literals, range-for, counted for, `push_back`,
  `emplace_back`, the "best tactics first" reorder with `std::find`). Anything else raises
  `ExtractError`: a release whose code this cannot follow fails loudly instead of being guessed;
- the runner's dispatch `switch (gemmConfig.tile_config_smXXX)`: enum name -> CUTLASS CTA shape
  in elements (the SM120 `...x128B` names meant K elements before v0.6.11 and K bytes after, and
  only the dispatch code of that release says which), plus the cluster-shape switch (which
  clusters exist, and whether a cluster runs the 2-SM MMA);
- the binding `.cu`: what tactic `-1` becomes (`tactic = 0`, or an explicit default config);
- `flashinfer/jit/gemm/core.py`: the CTA shapes the JIT generator instantiates (a dispatched tile
  missing there is recorded as a known failure);
- a tile switch under a run-time guard before the unconditional one (SM103 FP4, 0.6.16 on: K768
  tiles run a 128x128x256 kernel when the output is not 32-byte aligned): each config it covers
  records `runs_instead` (tile, condition in words, file:line), a note decode attaches, never the
  decode itself. An unread guard is an ExtractError.

Run through `python3 -m tools.catalogs` (tools/catalogs/README.md); the data file's
"generated_by" records the command and every release's source.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from tools.catalogs.cpp import ExtractError, cexpr, close_of, find_function_body, join_continuations, split_top
from tools.catalogs.cpp import strip_comments as _strip_comments
from tools.catalogs.document import ReleaseData
from tools.catalogs.sources import Source

FAMILY = "dense-gemm"


# --------------------------------------------------------------------------------------------
# cutlass_gemm_configs.h: enums and CutlassGemmConfig constructors


def strip_comments(text: str) -> str:
    """Comments removed and macro line continuations joined (the dense templates' regexes read lines whole)."""
    return _strip_comments(join_continuations(text))


@dataclass(frozen=True)
class EnumVal:
    """`Type::Member` as written in the source."""

    type: str
    name: str


@dataclass
class Ctor:
    params: list[tuple[str, str, Optional[str]]]  # (type, name, default expr)
    inits: dict[str, str]  # field -> expression (a param name or a constant)


@dataclass
class ConfigHeader:
    enums: dict[str, dict[str, int]]
    ctors: list[Ctor]


def parse_config_header(text: str) -> ConfigHeader:
    """Enums (member -> value) and CutlassGemmConfig's constructors from cutlass_gemm_configs.h."""
    t = strip_comments(text)
    enums: dict[str, dict[str, int]] = {}
    for m in re.finditer(r"enum\s+class\s+(\w+)\s*(?::\s*[\w:]+\s*)?\{", t):
        body = t[m.end():close_of(t, m.end() - 1)]
        members, nxt = {}, 0
        for item in split_top(body):
            if not item:
                continue
            name, _, val = item.partition("=")
            if val.strip():
                nxt = int(val.strip(), 0)
            members[name.strip()] = nxt
            nxt += 1
        enums[m.group(1)] = members
    sm = re.search(r"struct\s+CutlassGemmConfig\s*\{", t)
    if not sm:
        raise ExtractError("cutlass_gemm_configs.h: no struct CutlassGemmConfig")
    struct = t[sm.end():close_of(t, sm.end() - 1)]
    ctors = []
    for m in re.finditer(r"\bCutlassGemmConfig\s*\(", struct):
        close = close_of(struct, m.end() - 1)
        params_txt = struct[m.end():close].strip()
        rest = struct[close + 1:].lstrip()
        if not rest.startswith(":"):
            continue  # `= default` or a declaration without initializers
        init_end = rest.index("{")
        params = []
        for p in split_top(params_txt):
            decl, _, default = p.partition("=")
            words = decl.split()
            params.append((" ".join(words[:-1]), words[-1], default.strip() or None))
        inits = {}
        for it in split_top(rest[1:init_end]):
            im = re.fullmatch(r"(\w+)\s*\((.*)\)", it.strip(), re.S)
            if not im:
                raise ExtractError(f"cutlass_gemm_configs.h: cannot read initializer {it!r}")
            inits[im.group(1)] = im.group(2).strip()
        ctors.append(Ctor(params, inits))
    if not ctors:
        raise ExtractError("cutlass_gemm_configs.h: no CutlassGemmConfig constructors found")
    return ConfigHeader(enums, ctors)


# --------------------------------------------------------------------------------------------
# A tiny interpreter for getConfigs() bodies


class Interp:
    """Runs the statement forms FlashInfer's getConfigs() use; raises ExtractError on anything else."""

    def __init__(self, header: ConfigHeader, where: str):
        self.h = header
        self.where = where
        self.env: dict[str, Any] = {}
        self.result: Optional[list] = None

    # values --------------------------------------------------------------------------------
    def value(self, expr: str) -> Any:
        e = expr.strip()
        m = re.fullmatch(r"CutlassGemmConfig\s*\((.*)\)", e, re.S)
        if m:
            return self.construct(split_top(m.group(1)))
        m = re.fullmatch(r"(\w+)::(\w+)", e)
        if m:
            if m.group(1) not in self.h.enums or m.group(2) not in self.h.enums[m.group(1)]:
                raise ExtractError(f"{self.where}: unknown enum value {e}")
            return EnumVal(m.group(1), m.group(2))
        if re.fullmatch(r"-?\d+", e):
            return int(e)
        if e in ("true", "false"):
            return e == "true"
        m = re.fullmatch(r"(\w+)\s*\[(.+)\]", e)
        if m:
            return self.var(m.group(1))[self.value(m.group(2))]
        if re.fullmatch(r"\w+", e):
            return self.var(e)
        raise ExtractError(f"{self.where}: cannot evaluate {e!r}")

    def var(self, name: str) -> Any:
        if name not in self.env:
            raise ExtractError(f"{self.where}: unknown name {name!r}")
        return self.env[name]

    def condition(self, expr: str) -> bool:
        """A C++ boolean expression over ints and vectors, by the shared evaluator (cpp.cexpr) after
        rewriting the member calls it has no syntax for: v.size(), std::find(...) against v.end()."""
        e = re.sub(r"static_cast<[\w:]+>\s*", "", expr)
        find = r"std::find\(\s*(\w+)\.begin\(\)\s*,\s*\1\.end\(\)\s*,\s*(\w+)\s*\)\s*"
        e = re.sub(find + r"==\s*\1\.end\(\)", r"!contains(\1, \2)", e)
        e = re.sub(find + r"!=\s*\1\.end\(\)", r"contains(\1, \2)", e)
        e = re.sub(r"(\w+)\.size\(\)", r"size(\1)", e)
        scope = {**self.env, "size": len, "contains": lambda v, x: x in v}
        try:
            return bool(cexpr(e, scope))
        except ExtractError as ex:
            raise ExtractError(f"{self.where}: cannot read condition {expr!r} ({ex})") from ex

    def construct(self, args: list[str]) -> dict[str, Any]:
        """Build a config dict the way the matching CutlassGemmConfig constructor would."""
        vals = [self.value(a) for a in args if a]
        first = vals[0] if vals else None
        for ctor in self.h.ctors:
            if not ctor.params:
                continue
            required = sum(1 for p in ctor.params if p[2] is None)
            if not (required <= len(vals) <= len(ctor.params)):
                continue
            t0 = ctor.params[0][0].split("::")[-1]
            if isinstance(first, EnumVal) and first.type != t0:
                continue
            if not isinstance(first, EnumVal):
                continue
            pvals = {}
            for i, (_, pname, default) in enumerate(ctor.params):
                pvals[pname] = vals[i] if i < len(vals) else self.value(default)  # type: ignore[arg-type]
            cfg: dict[str, Any] = {}
            for fld, expr in ctor.inits.items():
                cfg[fld] = pvals[expr] if expr in pvals else self.value(expr)
            return cfg
        raise ExtractError(f"{self.where}: no CutlassGemmConfig constructor takes ({', '.join(args)})")

    # statements ----------------------------------------------------------------------------
    def run(self, body: str) -> list:
        self.block(body)
        if self.result is None:
            raise ExtractError(f"{self.where}: getConfigs() returned nothing")
        return self.result

    def block(self, s: str) -> None:
        i = 0
        while i < len(s) and self.result is None:
            while i < len(s) and s[i].isspace():
                i += 1
            if i >= len(s):
                break
            m = re.match(r"(for|if)\s*\(", s[i:])
            if m:
                open_i = i + m.end() - 1
                close = close_of(s, open_i)
                head = s[open_i + 1:close]
                j = close + 1
                while s[j].isspace():
                    j += 1
                if s[j] == "{":
                    end = close_of(s, j)
                    body = s[j + 1:end]
                    i = end + 1
                else:
                    end = self._stmt_end(s, j)
                    body = s[j:end + 1]
                    i = end + 1
                if re.match(r"\s*else\b", s[i:]):
                    raise ExtractError(f"{self.where}: `else` is not supported")
                if m.group(1) == "for":
                    self.for_loop(head, body)
                elif self.condition(head):
                    self.block(body)
                continue
            if s[i] == "{":
                end = close_of(s, i)
                self.block(s[i + 1:end])
                i = end + 1
                continue
            end = self._stmt_end(s, i)
            self.simple(s[i:end].strip())
            i = end + 1

    @staticmethod
    def _stmt_end(s: str, i: int) -> int:
        depth = 0
        while i < len(s):
            c = s[i]
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
            elif c == ";" and depth == 0:
                return i
            i += 1
        raise ExtractError("statement without `;`")

    def for_loop(self, head: str, body: str) -> None:
        m = re.fullmatch(r"\s*(?:const\s+)?auto\s*(?:const\s*)?&?\s*(\w+)\s*:\s*(\w+)\s*", head)
        if m:
            for v in list(self.var(m.group(2))):
                self.env[m.group(1)] = v
                self.block(body)
            return
        m = re.fullmatch(
            r"\s*(?:int|int64_t|size_t|int32_t|auto)\s+(\w+)\s*=\s*(\d+)\s*;\s*\1\s*<\s*(.+?)\s*;\s*(?:\1\+\+|\+\+\1)\s*",
            head, re.S,
        )
        if m:
            var, start, bound = m.group(1), int(m.group(2)), m.group(3)
            bound = re.sub(r"static_cast<[\w:]+>\s*\((.*)\)", r"\1", bound)
            bm = re.fullmatch(r"(\w+)\.size\(\)", bound.strip())
            if not bm:
                raise ExtractError(f"{self.where}: unsupported loop bound {bound!r}")
            for k in range(start, len(self.var(bm.group(1)))):
                self.env[var] = k
                self.block(body)
            return
        raise ExtractError(f"{self.where}: unsupported for-loop ({head.strip()})")

    def simple(self, st: str) -> None:
        st = " ".join(st.split())
        if not st:
            return
        m = re.fullmatch(r"(?:static )?(?:const )?std::vector<\s*([\w:]+)\s*> (\w+)(?: = \{(.*)\}| \{(.*)\})?", st)
        if m:
            items = m.group(3) if m.group(3) is not None else m.group(4)
            self.env[m.group(2)] = [self.value(x) for x in split_top(items)] if items else []
            return
        m = re.fullmatch(r"CutlassGemmConfig (\w+)\s*\((.*)\)", st)
        if m:
            self.env[m.group(1)] = self.construct(split_top(m.group(2)))
            return
        m = re.fullmatch(r"(?:const )?([\w:]+) (\w+) = (.+)", st)
        if m and m.group(1) not in ("return",):
            self.env[m.group(2)] = self.value(m.group(3))
            return
        m = re.fullmatch(r"(\w+)\.push_back\s*\((.*)\)", st)
        if m:
            v = self.value(m.group(2))
            self.var(m.group(1)).append(dict(v) if isinstance(v, dict) else v)
            return
        m = re.fullmatch(r"(\w+)\.emplace_back\s*\((.*)\)", st)
        if m:
            self.var(m.group(1)).append(self.construct(split_top(m.group(2))))
            return
        if re.fullmatch(r"\w+\.reserve\s*\(.*\)", st):
            return
        m = re.fullmatch(r"return (\w+)", st)
        if m:
            self.result = list(self.var(m.group(1)))
            return
        raise ExtractError(f"{self.where}: unsupported statement {st!r}")


# --------------------------------------------------------------------------------------------
# Dispatch switches: enum -> CTA shape (elements), cluster -> (dims, 2-SM)

_INT3_RE = re.compile(
    r"(?:cute::)?(?:Int<\s*(\d+)\s*>|\b(\d+)\b)\s*,\s*(?:cute::)?(?:Int<\s*(\d+)\s*>|\b(\d+)\b)\s*,\s*(?:cute::)?(?:Int<\s*(\d+)\s*>|\b(\d+)\b)"
)


@dataclass
class CaseInfo:
    body: str
    tile: Optional[tuple[int, int, int]]
    throws: Optional[str]


def parse_switch(text: str, subject: str) -> list[tuple[dict[str, CaseInfo], Optional[CaseInfo]]]:
    """Every `switch (<subject>)` in text: ({enum member: case}, default case)."""
    out = []
    for m in re.finditer(r"switch\s*\(\s*" + re.escape(subject) + r"\s*\)\s*\{", text):
        body = text[m.end():close_of(text, m.end() - 1)]
        parts = re.split(r"\b(case\s+[\w:]+\s*:|default\s*:)", body)
        cases: dict[str, CaseInfo] = {}
        default: Optional[CaseInfo] = None
        pending: list[str] = []
        for k in range(1, len(parts), 2):
            label, code = parts[k], parts[k + 1]
            pending.append(label)
            if not code.strip():
                continue  # fall-through label
            info = _case_info(code)
            for lab in pending:
                if lab.startswith("default"):
                    default = info
                else:
                    cases[lab.split()[1].rstrip(":").split("::")[-1]] = info
            pending = []
        out.append((cases, default))
    return out


def _case_info(code: str) -> CaseInfo:
    tm = re.search(r'throw\s+std::\w+\(\s*((?:"(?:\\.|[^"\\])*"\s*)+)', code)
    throws = "".join(re.findall(r'"((?:\\.|[^"\\])*)"', tm.group(1))) if tm else None
    mm = _INT3_RE.search(code)
    tile = None
    if mm:
        g = mm.groups()
        tile = tuple(int(g[i] or g[i + 1]) for i in (0, 2, 4))
    if throws and code.strip().startswith("throw"):
        tile = None
    return CaseInfo(code, tile, throws)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Runner specs: which files hold one runner's list, and which archs use it


@dataclass(frozen=True)
class RunnerSpec:
    op: str
    runner: str
    archs: tuple[str, ...]  # archs whose module is built from this header (gemm_base.py routing)
    header: str
    binding: str
    jit_fn: str
    launchers: tuple[str, ...] = ()  # kernel templates: SMTypeAdapter (2-SM scale, schedule), stage policy
    requirement: str = ""  # gemm_base.py's backend check, whose @supported_compute_capability names the archs


G = "include/flashinfer/gemm/"
# Arch routing read from flashinfer/gemm/gemm_base.py: get_cutlass_fp4_gemm_module sends 10.3 to the
# SM103 module, 12.x to SM120 and every other 10.x/11.x to SM100; the MXFP8/FP8/BF16 SM100 modules
# serve the 10.x/11.x parts their @supported_compute_capability lists name.
RUNNERS: tuple[RunnerSpec, ...] = (
    RunnerSpec("fp4_gemm", "CutlassFp4GemmRunner", ("sm100", "sm110"), G + "fp4_gemm_cutlass_template.h",
               "csrc/fp4_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_fp4", (G + "fp4_gemm_template_sm100.h",), "_cutlass_gemm_fp4_requirement"),
    RunnerSpec("fp4_gemm", "CutlassFp4GemmRunner", ("sm103",), G + "fp4_gemm_cutlass_template_sm103.h",
               "csrc/fp4_gemm_cutlass_sm103.cu", "gen_gemm_sm103_module_cutlass_fp4",
               (G + "fp4_gemm_template_sm103.h", G + "fp4_gemm_template_sm100.h")),
    RunnerSpec("fp4_gemm", "CutlassFp4GemmRunner", ("sm120",), G + "fp4_gemm_cutlass_template_sm120.h",
               "csrc/fp4_gemm_cutlass_sm120.cu", "gen_gemm_sm120_module_cutlass_fp4", (G + "fp4_gemm_template_sm120.h",)),
    RunnerSpec("mxfp8_gemm", "CutlassMxfp8GemmRunner", ("sm100", "sm103", "sm110"), G + "mxfp8_gemm_cutlass_template.h",
               "csrc/mxfp8_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_mxfp8", (G + "mxfp8_gemm_template_sm100.h",),
               "_cutlass_gemm_mxfp8_requirement"),
    RunnerSpec("mxfp8_gemm", "CutlassMxfp8GemmRunner", ("sm120",), G + "mxfp8_gemm_cutlass_template_sm120.h",
               "csrc/mxfp8_gemm_cutlass_sm120.cu", "gen_gemm_sm120_module_cutlass_mxfp8", (G + "mxfp8_gemm_template_sm120.h",)),
    RunnerSpec("fp8_gemm", "CutlassFp8GemmRunner", ("sm100", "sm103", "sm110"), G + "fp8_gemm_cutlass_template.h",
               "csrc/fp8_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_fp8", (G + "fp8_gemm_template_sm100.h",),
               "_cutlass_bmm_fp8_requirement"),
    RunnerSpec("bf16_gemm", "CutlassBf16GemmRunner", ("sm100", "sm103"), G + "bf16_gemm_cutlass_template.h",
               "csrc/bf16_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_bf16", (G + "bf16_gemm_template_sm100.h",),
               "_cutlass_mm_bf16_requirement"),
)


def jit_cta_lists(core_py: Optional[str]) -> dict[str, list[tuple[int, int, int]]]:
    """flashinfer/jit/gemm/core.py: generator function -> the CTA (m, n, k) tuples it instantiates."""
    if not core_py:
        return {}
    out: dict[str, list[tuple[int, int, int]]] = {}
    for node in ast.parse(core_py).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        ctas: list[tuple[int, int, int]] = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.endswith("cta_m_n_k_list") for t in sub.targets
            ):
                ctas += [tuple(x) for x in ast.literal_eval(sub.value)]
        if ctas:
            out[node.name] = ctas
    return out


@dataclass
class KernelTemplates:
    """What the kernel launch templates say: per SM-adapter type its 2-SM scale and mainloop
    schedule, and the stage-count policy (fixed StageCount<N>, conditional, or auto carveout)."""

    texts: tuple[str, ...]  # comment-stripped launcher headers, the runner's own first

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    def adapter(self, token: str) -> tuple[Optional[int], Optional[str]]:
        """(2-SM scale, mainloop schedule) of SMTypeAdapter<token>. The schedule is taken only from
        the runner's own launcher: a borrowed adapter (SM103's generic K256 path) may not be the one used."""
        for i, text in enumerate(self.texts):
            m = re.search(r"struct\s+SMTypeAdapter\w*<\s*" + re.escape(token) + r"\s*>\s*\{(.*?)\};", text, re.S)
            if not m:
                continue
            sc = re.search(r"Scale\s*=\s*(\d+)", m.group(1))
            sched = re.findall(r"using\s+MainloopSchedule\s*=\s*([\w:]+)", m.group(1))
            unique = sched[0].split("::")[-1] if len(set(sched)) == 1 and i == 0 else None
            return (int(sc.group(1)) if sc else None), unique
        return None, None

    def sm120_schedule(self) -> Optional[str]:
        """The schedule argument of the mainloop CollectiveBuilder (`..., <schedule>>::CollectiveOp`)."""
        text = self.texts[0] if self.texts else ""
        found = set()
        for name in re.findall(r"([\w:]+)\s*>\s*::\s*CollectiveOp", text):
            short = name.split("::")[-1]
            if short == "MainloopSchedule":
                alias = set(re.findall(r"using\s+MainloopSchedule\s*=\s*([\w:]+)", text))
                short = alias.pop().split("::")[-1] if len(alias) == 1 else ""
            if short.startswith("Kernel"):
                found.add(short)
        return found.pop() if len(found) == 1 else None

    def stages(self, tile: Sequence[int], header: "ConfigHeader", where: str) -> Optional[int]:
        """Explicit stage count for this CTA tile, or None for StageCountAutoCarveout."""
        cond = re.search(r"conditional_t<\s*([^,]+?)\s*,\s*(?:cutlass::gemm::collective::)?StageCount<\s*(\d+)\s*>", self.text)
        if cond:
            it = Interp(header, where + " stage policy")
            it.env.update({"CTA_M_": tile[0], "CTA_N_": tile[1], "CTA_K_": tile[2]})
            return int(cond.group(2)) if it.condition(cond.group(1)) else None
        fixed = set(re.findall(r"StageCount<\s*(\d+)\s*>", self.text))
        if fixed and "StageCountAutoCarveout" not in self.text:
            if len(fixed) > 1:
                raise ExtractError(f"{where}: several fixed stage counts {sorted(fixed)}")
            return int(fixed.pop())
        return None


def _cluster_switches(text: str) -> Optional[dict[str, Any]]:
    """{function name: (cases, default)} for every function holding a cluster_shape switch."""
    out: dict[str, Any] = {}
    for m in re.finditer(r"\b(\w+)\s*\([^;{]*?\)\s*\{", text):
        if m.group(1) in ("if", "for", "while", "switch", "catch"):
            continue
        body = text[m.end():close_of(text, m.end() - 1)]
        sw = parse_switch(body, "gemmConfig.cluster_shape")
        if sw and m.group(1) not in out:
            out[m.group(1)] = sw[0]
    return out or None


def _cluster_switch_for(case_body: str, clusters: dict[str, Any]) -> Any:
    """The cluster switch of the function a tile case calls (SM103 routes K768 tiles elsewhere)."""
    for name in re.findall(r"\b(\w+)\s*<", case_body):
        if name in clusters:
            return clusters[name]
    if len(clusters) == 1:
        return next(iter(clusters.values()))
    raise ExtractError(f"cannot tell which cluster dispatch this tile case calls: {case_body.strip()[:80]!r}")


def _cluster_dims(e: EnumVal) -> tuple[int, int, int]:
    m = re.fullmatch(r"ClusterShape_(\d+)x(\d+)x(\d+)", e.name)
    if not m:
        raise ExtractError(f"cluster enum {e.name} does not name its shape")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def _tile_field(cfg: dict[str, Any]) -> str:
    fields = [f for f in cfg if f.startswith("tile_config_sm") and isinstance(cfg[f], EnumVal)]
    if len(fields) != 1:
        raise ExtractError(f"config sets {len(fields)} tile fields: {sorted(cfg)}")
    return fields[0]


def _enum_text(v: Any) -> Optional[str]:
    return v.name if isinstance(v, EnumVal) else None


def extract_runner(src: Any, spec: RunnerSpec, header: ConfigHeader, jit: dict) -> Optional[dict[str, Any]]:
    """One runner's list in one release as a catalog `lists` entry, or None if the release lacks it."""
    raw_header = src.read(spec.header)
    binding = src.read(spec.binding)
    if raw_header is None or binding is None:
        return None
    where = f"{src.ref}:{spec.header}"
    text = strip_comments(raw_header)
    body = find_function_body(text, "getConfigs")
    if body is None:
        raise ExtractError(f"{where}: no getConfigs() definition")
    configs = Interp(header, where + " getConfigs").run(body)
    if not configs:
        raise ExtractError(f"{where}: getConfigs() produced an empty list")
    field_name = _tile_field(configs[0])

    # dispatch: the tile switch with the most cases is the unconditional one (SM103 also has an
    # alignment-fallback switch over its K768 tiles)
    tile_switches = parse_switch(text, "gemmConfig." + field_name)
    if not tile_switches:
        raise ExtractError(f"{where}: no switch over gemmConfig.{field_name}")
    cases, default = max(tile_switches, key=lambda cd: len(cd[0]))
    instead = conditional_tiles(raw_header, text, field_name, where)
    clusters = _cluster_switches(text)
    kt = KernelTemplates(tuple(strip_comments(src.read(p) or "") for p in spec.launchers))
    jit_ctas = jit.get(spec.jit_fn)

    out_cfgs = []
    for cfg in configs:
        if _tile_field(cfg) != field_name:
            raise ExtractError(f"{where}: configs mix tile fields")
        out_cfgs.append(_config_json(cfg, field_name, cases, default, clusters, kt, header, jit_ctas, where))
        alt = instead.get(cfg[field_name].name)
        if alt is not None:
            # the K256 kernel is dispatched over the same cluster: a cluster it has no case for would throw
            cluster_e = cfg.get("cluster_shape")
            if clusters is not None and isinstance(cluster_e, EnumVal) and cluster_e.name not in _cluster_switch_for(alt["_body"], clusters)[0]:
                raise ExtractError(f"{where}: {cfg[field_name].name} {cluster_e.name}: the tile it runs when {alt['when']} "
                                   "has no case for this cluster")
            out_cfgs[-1]["runs_instead"] = {k: v for k, v in alt.items() if k != "_body"}

    fallback, fallback_config = _fallback(strip_comments(binding), header, configs, field_name, cases,
                                          default, clusters, kt, jit_ctas, f"{src.ref}:{spec.binding}")
    return {
        "source_file": spec.header,
        "function": "getConfigs",
        "dispatch_file": spec.header,
        "binding_file": spec.binding,
        "jit_generator": f"flashinfer/jit/gemm/core.py:{spec.jit_fn}" if jit_ctas else None,
        "fallback": fallback,
        "fallback_config": fallback_config,
        "index_offset": 0,
        "configs": out_cfgs,
    }


# The run-time guards a secondary tile switch may sit under, as read in the release (SM103 FP4,
# 0.6.16 on): guard text (whitespace dropped) -> (the helper whose body must say it, what the
# guard means in words). Any other guard is an ExtractError: its meaning was never read.
_GUARDS = {
    "D!=nullptr&&!isStore256OutputAligned(D,n)": (
        "isStore256OutputAligned",
        "the output is not 32-byte aligned (its address or N x sizeof(output) is not a multiple of 32 bytes)"),
}


def conditional_tiles(raw: str, text: str, field_name: str, where: str) -> dict[str, dict[str, Any]]:
    """Tiles the dispatch runs INSTEAD of the configured one under a run-time condition: a tile
    switch inside `if (<guard>) { switch (gemmConfig.<field>) {...} }` before the unconditional
    one (SM103 FP4: K768 tiles run a 128x128x256 kernel when the output is not 32-byte aligned).
    enum member -> {"tile", "when", "source" (file:line of the guard)}."""
    out: dict[str, dict[str, Any]] = {}
    for m in re.finditer(r"\bif\s*\(", text):
        close = close_of(text, m.end() - 1)
        after = re.match(r"\s*\{\s*switch\s*\(\s*gemmConfig\." + re.escape(field_name) + r"\s*\)", text[close + 1:])
        if not after:
            continue
        guard = re.sub(r"\s+", "", text[m.end():close])
        if guard not in _GUARDS:
            raise ExtractError(f"{where}: a tile switch runs under the condition ({text[m.end():close].strip()}), "
                               "which this extractor has not read")
        helper, meaning = _GUARDS[guard]
        body = find_function_body(text, helper)
        if body is None or not re.search(r"kStoreAlignmentBytes\s*=\s*32\s*;[\s\S]*%\s*kStoreAlignmentBytes\s*==\s*0\s*&&"
                                         r"[\s\S]*\*\s*sizeof\(T\)\s*%\s*kStoreAlignmentBytes\s*==\s*0", body):
            raise ExtractError(f"{where}: {helper}() no longer checks the address and N x sizeof(T) against 32 bytes")
        block_open = close + 1 + after.start() + after.group(0).index("{")
        block = text[block_open:close_of(text, block_open) + 1]
        (alt_cases, _default), = parse_switch(block, "gemmConfig." + field_name)
        d_guard = re.search(r"if\s*\(\s*D\s*!=\s*nullptr\s*&&\s*!\s*" + helper, raw)
        if d_guard is None:
            raise ExtractError(f"{where}: no `if (D != nullptr && !{helper}(...))` guard")
        line = raw.count("\n", 0, d_guard.start()) + 1
        for name, case in alt_cases.items():
            if case.tile is None:
                raise ExtractError(f"{where}: cannot read the tile {name} runs when {meaning}")
            out[name] = {"tile": list(case.tile), "when": meaning, "source": f"{where.split(':', 1)[-1]}:{line}",
                         "_body": case.body}
    return out


def _config_json(cfg, field_name, cases, default, clusters, kt, header, jit_ctas, where) -> dict[str, Any]:
    tile_enum: EnumVal = cfg[field_name]
    known: list[str] = []
    case = cases.get(tile_enum.name)
    if case is None:
        if default is not None and default.tile is not None:
            case = default
            known.append(f"no dispatch case for {tile_enum.name}: the default case runs "
                         f"{'x'.join(map(str, default.tile))} instead")
        else:
            msg = default.throws if default is not None and default.throws else "no dispatch case"
            raise ExtractError(f"{where}: {tile_enum.name} has no dispatch case ({msg}); tile unknown")
    if case.tile is None:
        raise ExtractError(f"{where}: cannot read the CTA shape dispatched for {tile_enum.name}")
    tile = list(case.tile)
    swap_dispatch = bool(re.search(r"\(\s*B\s*,\s*A\s*,", case.body))  # fp8/bf16 SM100 run D^T = B^T A^T
    cluster_e = cfg.get("cluster_shape")
    cluster = list(_cluster_dims(cluster_e)) if isinstance(cluster_e, EnumVal) else [1, 1, 1]
    mma_tile = None
    schedule = kt.sm120_schedule() if clusters is None else None
    if clusters is not None and isinstance(cluster_e, EnumVal):
        cswitch = _cluster_switch_for(case.body, clusters)
        ccases, cdefault = cswitch
        cc = ccases.get(cluster_e.name)
        if cc is None:
            known.append(f"no dispatch case for cluster {cluster_e.name}: throws "
                         f"{(cdefault.throws if cdefault and cdefault.throws else 'an error')!r}")
        else:
            tok = re.search(r"\b(_[12]SM\w*)\b", cc.body)
            if not tok:
                raise ExtractError(f"{where}: cluster case {cluster_e.name} names no SM adapter (_1SM/_2SM)")
            scale, schedule = kt.adapter(tok.group(1))
            if tok.group(1).startswith("_2SM"):
                if scale is None:
                    raise ExtractError(f"{where}: 2-SM cluster but no SMTypeAdapter<{tok.group(1)}>::Scale found")
                mma_tile = [tile[0] * scale, tile[1], tile[2]]
    if jit_ctas is not None and tuple(tile) not in {tuple(c) for c in jit_ctas}:
        known.append(f"CTA {'x'.join(map(str, tile))} is not in the JIT generator's list: the module has no such kernel")
    return {
        "tile": tile,
        "name": tile_enum.name,
        "cluster": cluster,
        "swap_ab": bool(cfg.get("swap_ab", False)) != swap_dispatch,
        "stream_k": bool(cfg.get("use_stream_k", False)),
        # the CUTLASS kernel schedule the launcher instantiates when the source pins one down,
        # else the config's own MainloopScheduleType member (e.g. "AUTO")
        "mainloop_schedule": schedule or _enum_text(cfg.get("mainloop_schedule")),
        "epilogue_schedule": _enum_text(cfg.get("epilogue_schedule")),
        "epilogue_fusion": None,
        "stages": kt.stages(tile, header, where),
        "style": "tma_ws" if cfg.get("is_tma_warp_specialized") else "sm80",
        "mma_tile": mma_tile,
        "known_failure": "; ".join(known) or None,
    }


def _fallback(binding, header, configs, field_name, cases, default, clusters, kt, jit_ctas, where):
    """What tactic -1 runs: (index into configs, None) or (None, explicit config json)."""
    m = re.search(r"if\s*\(\s*tactic\s*==\s*-1\s*\)\s*\{?\s*tactic\s*=\s*(\d+)\s*;", binding)
    if m:
        idx = int(m.group(1))
        if idx >= len(configs):
            raise ExtractError(f"{where}: tactic -1 -> {idx}, beyond the {len(configs)} configs")
        return idx, None
    m = re.search(r"\(\s*tactic\s*>=\s*0\s*\)\s*\?\s*[^:]+?:\s*CutlassGemmConfig\s*\(", binding)
    if m:
        open_i = m.end() - 1
        args = split_top(binding[open_i + 1:close_of(binding, open_i)])
        cfg = Interp(header, where + " default config").construct(args)
        for i, c in enumerate(configs):
            if c == cfg:
                return i, None
        return None, _config_json(cfg, field_name, cases, default, clusters, kt, header, jit_ctas, where)
    raise ExtractError(f"{where}: cannot find what tactic -1 runs")


def extract_fp8_sm120(src: Any) -> Optional[dict[str, Any]]:
    """SM120 CutlassFp8GemmRunner: the Python runner offers only tactic -1 (one groupwise kernel)."""
    py = src.read("flashinfer/gemm/gemm_base.py")
    if py is None:
        return None
    fn = re.search(r"def get_gemm_sm120_module_cutlass_fp8\(.*?(?=\n@|\ndef )", py, re.S)
    if not fn or "class CutlassFp8GemmRunner" not in fn.group(0):
        return None
    tactics = re.search(r"def get_valid_tactics\(.*?\)\s*->\s*List\[int\]:(.*?)\n\s*def ", fn.group(0), re.S)
    if not tactics or not re.search(r"return\s*\[\s*-1\s*\]", tactics.group(1)):
        raise ExtractError(f"{src.ref}:flashinfer/gemm/gemm_base.py: SM120 CutlassFp8GemmRunner offers tactics other than [-1]")
    kpath = G + "gemm_groupwise_sm120.cuh"
    ktext = src.read(kpath)
    if ktext is None:
        raise ExtractError(f"{src.ref}: {kpath} missing")
    km = re.search(r"MmaTileShape_MNK\s*=\s*Shape<\s*_(\d+)\s*,\s*_(\d+)\s*,\s*_(\d+)\s*>", strip_comments(ktext))
    cm = re.search(r"ClusterShape_MNK\s*=\s*Shape<\s*_(\d+)\s*,\s*_(\d+)\s*,\s*_(\d+)\s*>", strip_comments(ktext))
    sm = re.search(r"cutlass::gemm::(KernelScheduleSm120\w*)", ktext)
    if not km or not cm:
        raise ExtractError(f"{src.ref}:{kpath}: cannot read MmaTileShape_MNK / ClusterShape_MNK")
    return {
        "source_file": kpath,
        "function": "gemm_groupwise_sm120 (Python get_valid_tactics returns [-1])",
        "binding_file": "flashinfer/gemm/gemm_base.py",
        "jit_generator": None,
        "fallback": None,
        "fallback_config": {
            "tile": [int(x) for x in km.groups()], "name": "groupwise 128-block-scaled FP8 (only tactic -1)",
            "cluster": [int(x) for x in cm.groups()], "swap_ab": False, "stream_k": False,
            "mainloop_schedule": sm.group(1) if sm else None, "epilogue_schedule": None,
            "epilogue_fusion": None, "stages": None, "style": "tma_ws", "mma_tile": None,
            "known_failure": None,
        },
        "index_offset": 0,
        "configs": [],
    }


# --------------------------------------------------------------------------------------------
# Whole releases -> the data file


def extract_release(src: Any) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(catalog rows, lists by id) for one release."""
    htext = src.read(G + "cutlass_gemm_configs.h")
    if htext is None:
        raise ExtractError(f"{src.ref}: {G}cutlass_gemm_configs.h missing")
    header = parse_config_header(htext)
    jit = jit_cta_lists(src.read("flashinfer/jit/gemm/core.py"))
    rows: list[dict[str, Any]] = []
    lists: dict[str, dict[str, Any]] = {}

    def add(op: str, runner: str, archs: Sequence[str], lst: dict[str, Any]) -> None:
        lid = list_id(op, archs[0], lst)
        lists[lid] = lst
        for arch in archs:
            rows.append({"op": op, "runner": runner, "arch": arch, "variant": {}, "list": lid})

    gemm_base = src.read("flashinfer/gemm/gemm_base.py") or ""
    for spec in RUNNERS:
        lst = extract_runner(src, spec, header, jit)
        if lst is None:
            continue
        archs = spec.archs
        # SM107 (0.6.16 on): its compute capability is 10.x, which gemm_base.py routes to the SM100 module
        if "sm100" in archs and spec.requirement and 107 in supported_capabilities(gemm_base, spec.requirement):
            archs = archs + ("sm107",)
        add(spec.op, spec.runner, archs, lst)
        for op in ops_tuned_with(gemm_base, spec):
            add(op, spec.runner, archs, lst)
    fp8 = extract_fp8_sm120(src)
    if fp8 is not None:
        add("fp8_gemm", "CutlassFp8GemmRunner", ("sm120",), fp8)
    svd = extract_svdquant(src)
    if svd is not None:
        lst, archs = svd
        add("nvfp4_svdquant_gemm", "Nvfp4SvdquantGemmRunner", archs, lst)
    from tools.catalogs import svdquant_sm120, tgv  # (they read this module's helpers)

    svdquant_sm120.add_rows(src, add)
    tgv.add_rows(src, add)
    return rows, lists


def _function_sources(py: str) -> dict[str, str]:
    """Top-level function name -> its source text, for a Python module's text."""
    try:
        tree = ast.parse(py)
    except SyntaxError as e:
        raise ExtractError(f"flashinfer/gemm/gemm_base.py: not Python ({e})") from e
    lines = py.splitlines()  # (ast.get_source_segment re-splits the module per call: quadratic here)
    return {n.name: "\n".join(lines[n.lineno - 1:n.end_lineno]) for n in tree.body if isinstance(n, ast.FunctionDef)}


def supported_capabilities(py: str, function: str) -> set[int]:
    """The compute capabilities `@supported_compute_capability([...])` lists on `function` ({} when none)."""
    m = re.search(r"@supported_compute_capability\(\s*\[([\d,\s]*)\]\s*\)\s*\ndef\s+" + re.escape(function) + r"\(", py)
    return {int(x) for x in re.findall(r"\d+", m.group(1))} if m else set()


def ops_tuned_with(py: str, spec: RunnerSpec) -> list[str]:
    """Further autotuner op names a release tunes this runner under: 0.7.4's bf16 mm tunes the
    CUTLASS runner (with the PDL variants of other backends) as "bf16_gemm_pdl_auto" when pdl=None."""
    if spec.runner != "CutlassBf16GemmRunner" or not py:
        return []
    out = []
    for text in _function_sources(py).values():
        if "get_gemm_sm100_module_cutlass_bf16().cutlass_bf16_gemm_runner()" not in text:
            continue
        for op in re.findall(r"custom_op\s*=\s*\"(bf16_gemm_\w+)\"", text):
            if re.search(r"tuner\.choose_one\(\s*custom_op\s*,\s*runners\s*,", text) and op not in out:
                out.append(op)
    return out


SVD = "nvfp4_svdquant_gemm"


def extract_svdquant(src: Any) -> Optional[tuple[dict[str, Any], tuple[str, ...]]]:
    """The NVFP4 SVDQuant GEMM (0.6.16 on): its tactic is a `Nvfp4SvdquantGemmTactic` value, which
    `resolve_tactic()` maps to a kernel shape and a runtime cluster (with its fallback); the kernel
    shape names the `SvdquantGemmConfig<MmaTileShape, EpilogueSchedule, MainloopSchedule>` the
    launcher runs (the .cu's switch). -1 runs tactic 0 (the binding). None before 0.6.16."""
    hpath, tpath, cpath = G + SVD + "_cutlass.h", G + SVD + "_template_sm100.h", "csrc/" + SVD + "_cutlass_sm100.cu"
    htext, ttext, ctext = (src.read(p) for p in (hpath, tpath, cpath))
    if htext is None:
        return None
    if ttext is None or ctext is None:
        raise ExtractError(f"{src.ref}: {hpath} without {tpath} / {cpath}")
    h, t, c = strip_comments(htext), strip_comments(ttext), strip_comments(ctext)
    em = re.search(r"enum\s+class\s+Nvfp4SvdquantGemmTactic\s*:\s*int\s*\{", h)
    nm = re.search(r"kNvfp4SvdquantGemmNumTactics\s*=\s*(\d+)\s*;", h)
    if not em or not nm:
        raise ExtractError(f"{src.ref}:{hpath}: tactic enum or tactic count not found")
    tactics: dict[int, str] = {}
    for item in split_top(h[em.end():close_of(h, em.end() - 1)]):
        im = re.fullmatch(r"(\w+)\s*=\s*(\d+)", item)
        if not im:
            raise ExtractError(f"{src.ref}:{hpath}: tactic {item!r} has no explicit value")
        tactics[int(im.group(2))] = im.group(1)
    count = int(nm.group(1))
    if sorted(tactics) != list(range(count)):
        raise ExtractError(f"{src.ref}:{hpath}: tactic values are not 0..{count - 1}")
    configs = {m.group(1): m for m in re.finditer(
        r"using\s+(\w+)\s*=\s*SvdquantGemmConfig<\s*Shape<\s*_(\d+)\s*,\s*_(\d+)\s*,\s*_(\d+)\s*>\s*,\s*"
        r"cutlass::epilogue::(\w+)\s*,\s*cutlass::gemm::(\w+)\s*(?:,\s*Shape<\s*_(\d+)\s*,\s*_(\d+)\s*>\s*)?>\s*;", t)}
    resolve = function_body_of(t, "resolve_tactic", f"{src.ref}:{tpath}")
    runtime = {m.group(1): (m.group(2), [int(m.group(i)) for i in (3, 4, 5)], [int(m.group(i)) for i in (6, 7, 8)])
               for m in re.finditer(r"case\s+Nvfp4SvdquantGemmTactic::(\w+)\s*:\s*return\s*\{\s*KernelShape::(\w+)\s*,"
                                    r"\s*dim3\((\d+),\s*(\d+),\s*(\d+)\)\s*,\s*dim3\((\d+),\s*(\d+),\s*(\d+)\)\s*\}\s*;", resolve)}
    run = function_body_of(c, "nvfp4_svdquant_gemm_run", f"{src.ref}:{cpath}")
    shape_cfg = dict(re.findall(r"case\s+KernelShape::(\w+)\s*:\s*return\s+svdquant_detail::run_tactic<\s*svdquant_detail::(\w+)\s*>", run))
    if not re.search(r"int\s+const\s+tacticId\s*=\s*tactic\s*<\s*0\s*\?\s*0\s*:", c):
        raise ExtractError(f"{src.ref}:{cpath}: what tactic -1 runs is not 'tactic < 0 ? 0'")
    out = []
    for i in range(count):
        name = tactics[i]
        if name not in runtime:
            raise ExtractError(f"{src.ref}:{tpath}: resolve_tactic() has no case for {name}")
        shape, cluster, fallback = runtime[name]
        cm = configs.get(shape_cfg.get(shape, ""))
        if cm is None:
            raise ExtractError(f"{src.ref}: kernel shape {shape} runs no SvdquantGemmConfig this extractor can read")
        mma = [int(cm.group(k)) for k in (2, 3, 4)]
        two_sm = cm.group(6).startswith("KernelTmaWarpSpecialized2Sm")
        if two_sm != cm.group(5).endswith("2Sm"):
            raise ExtractError(f"{src.ref}:{tpath}: {cm.group(1)} mixes 1-SM and 2-SM schedules")
        tile = [mma[0] // 2, mma[1], mma[2]] if two_sm else mma
        cfg = {"tile": tile, "name": name, "cluster": cluster, "swap_ab": False, "stream_k": False,
               "mainloop_schedule": cm.group(6), "epilogue_schedule": cm.group(5), "epilogue_fusion": None,
               "stages": None, "style": "tma_ws", "mma_tile": mma if two_sm else None, "known_failure": None,
               "fallback_cluster": "x".join(map(str, fallback))}
        if cm.group(7):
            cfg["epilogue_tile"] = [int(cm.group(7)), int(cm.group(8))]
        out.append(cfg)
    archs = tuple(f"sm{cc}" for cc in sorted(supported_capabilities(src.read("flashinfer/gemm/gemm_svdquant.py") or "",
                                                                     "_cutlass_nvfp4_svdquant_requirement")))
    if not archs:
        raise ExtractError(f"{src.ref}:flashinfer/gemm/gemm_svdquant.py: no supported compute capabilities found")
    return {
        "source_file": tpath,
        "function": "resolve_tactic (Nvfp4SvdquantGemmTactic -> kernel shape, runtime cluster)",
        "dispatch_file": cpath,
        "binding_file": cpath,
        "jit_generator": None,
        "fallback": 0,
        "fallback_config": None,
        "index_offset": 0,
        "configs": out,
    }, archs


def function_body_of(text: str, name: str, where: str) -> str:
    body = find_function_body(text, name)
    if body is None:
        raise ExtractError(f"{where}: no definition of {name}()")
    return body


def list_id(op: str, arch: str, lst: dict[str, Any]) -> str:
    """Content-addressed id, so identical lists across releases are stored once."""
    digest = hashlib.sha1(json.dumps(lst, sort_keys=True).encode()).hexdigest()[:10]
    return f"{op}/{arch}/{len(lst['configs'])}/{digest}"


def extract(src: Source) -> ReleaseData:
    """What the dense-GEMM catalogs hold for one release."""
    rows, lists = extract_release(src)
    return ReleaseData(source=src.describe(), catalogs=rows, lists=lists)
