"""Dense-GEMM tactic catalog extractor: reads FlashInfer's own C++ (a git tag or a release wheel)
and writes `tiletune/catalogs/data/dense-gemm.json` (schema in `tiletune.catalogs`).

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
  missing there is recorded as a known failure).

Run: python -m tiletune.catalogs.extract --git <flashinfer bare git dir> --wheel <dir of wheels>
     [--installed [SITE_PACKAGES]] -o tiletune/catalogs/data/dense-gemm.json
(the exact command that wrote the shipped file is its "generated_by").
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from packaging.version import Version

from tiletune.catalogs import SCHEMA

FAMILY = "dense-gemm"

# Releases read from git tags: the pre-JSON-cache lists the issue names (v0.6.3 with 1 SM120 FP4
# tactic, v0.6.4-v0.6.6 with 6), then every final and .postN tag v0.6.7..v0.6.17, and v0.6.18rcN.
_GIT_TAG_RE = re.compile(r"^v0\.6\.(?:[3-6]|7|8|9|1[0-7])(?:\.post\d+)?$|^v0\.6\.18rc\d+$")


class ExtractError(Exception):
    """The extractor met source it does not understand (or a source is missing)."""


# --------------------------------------------------------------------------------------------
# Sources: a git tag or a wheel, read by repository path


@dataclass
class GitTag:
    """One release as a tag of a bare FlashInfer git directory."""

    gitdir: Path
    tag: str
    kind: str = "git-tag"

    @property
    def ref(self) -> str:
        return self.tag

    @property
    def commit(self) -> str:
        out = subprocess.run(
            ["git", "-C", str(self.gitdir), "rev-parse", f"{self.tag}^{{commit}}"],
            check=True, capture_output=True, text=True,
        )
        return out.stdout.strip()

    @property
    def version(self) -> str:
        return str(Version(self.tag.lstrip("v")))

    def read(self, path: str) -> Optional[str]:
        r = subprocess.run(
            ["git", "-C", str(self.gitdir), "show", f"{self.tag}:{path}"], capture_output=True
        )
        return r.stdout.decode("utf-8", "replace") if r.returncode == 0 else None


@dataclass
class Wheel:
    """One release as a flashinfer-python wheel (C++ sources ship under flashinfer/data/)."""

    path: Path
    kind: str = "wheel"
    _zip: Any = field(default=None, repr=False)

    def _z(self) -> zipfile.ZipFile:
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.path)
        return self._zip

    @property
    def ref(self) -> str:
        return self.path.name

    @property
    def version(self) -> str:
        m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", self.read("flashinfer/_build_meta.py") or "")
        if not m:
            raise ExtractError(f"{self.path}: no __version__ in flashinfer/_build_meta.py")
        return str(Version(m.group(1)))

    @property
    def commit(self) -> Optional[str]:
        m = re.search(r"__git_commit__\s*=\s*['\"]([0-9a-f]+)", self.read("flashinfer/_build_meta.py") or "")
        return m.group(1) if m else None

    def read(self, path: str) -> Optional[str]:
        # Repository layout -> wheel layout: include/ and csrc/ live under flashinfer/data/.
        name = "flashinfer/data/" + path if path.startswith(("include/", "csrc/")) else path
        try:
            return self._z().read(name).decode("utf-8", "replace")
        except KeyError:
            return None


@dataclass
class Installed(Wheel):
    """An installed flashinfer-python package: the same layout as the wheel, on disk.
    `path` is the directory that holds the `flashinfer/` package (site-packages)."""

    kind: str = "installed"

    @property
    def ref(self) -> str:
        return str(self.path / "flashinfer")

    def read(self, path: str) -> Optional[str]:
        name = "flashinfer/data/" + path if path.startswith(("include/", "csrc/")) else path
        f = self.path / name
        return f.read_text(encoding="utf-8", errors="replace") if f.is_file() else None


def find_installed() -> Optional[Path]:
    """Where `import flashinfer` would load from, without importing it (find_spec runs no package code)."""
    import importlib.util

    spec = importlib.util.find_spec("flashinfer")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent


# --------------------------------------------------------------------------------------------
# C++ text helpers

_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


def strip_comments(text: str) -> str:
    """Remove // and /* */ comments (not inside string literals); keep line structure."""

    def repl(m: re.Match) -> str:
        s = m.group(0)
        if s.startswith(("//", "/*")):
            return "\n" * s.count("\n") or " "
        return s

    text = text.replace("\\\n", " ")  # macro line continuations
    return _TOKEN_RE.sub(repl, text)


def match_close(text: str, i: int) -> int:
    """Index of the bracket closing the one at text[i] ((, {, [), skipping string literals."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == '"':
            j = text.index('"', j + 1) if '"' in text[j + 1:] else len(text)
            while text[j - 1] == "\\":
                j = text.index('"', j + 1)
        elif c in pairs:
            stack.append(pairs[c])
        elif c in ")}]":
            if c != stack.pop():
                raise ExtractError(f"unbalanced {c!r} at offset {j}")
            if not stack:
                return j
        j += 1
    raise ExtractError(f"no closing bracket for {text[i]!r} at offset {i}")


def split_top(s: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside (), {}, [] and string literals."""
    out, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = s.index('"', i + 1)
            cur.append(s[i:j + 1])
            i = j + 1
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur))
    return [x.strip() for x in out]


def function_body(text: str, name_re: str) -> Optional[str]:
    """Body (between the braces) of the first function whose head matches `name_re` + `{`."""
    m = re.search(name_re + r"\s*\{", text)
    if not m:
        return None
    open_i = m.end() - 1
    return text[open_i + 1:match_close(text, open_i)]


# --------------------------------------------------------------------------------------------
# cutlass_gemm_configs.h: enums and CutlassGemmConfig constructors


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
        body = t[m.end():match_close(t, m.end() - 1)]
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
    struct = t[sm.end():match_close(t, sm.end() - 1)]
    ctors = []
    for m in re.finditer(r"\bCutlassGemmConfig\s*\(", struct):
        close = match_close(struct, m.end() - 1)
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
        """C++ boolean expression over ints and vectors -> bool, by rewriting to a checked Python AST."""
        e = re.sub(r"static_cast<[\w:]+>\s*", "", expr)
        e = re.sub(
            r"std::find\(\s*(\w+)\.begin\(\)\s*,\s*\1\.end\(\)\s*,\s*(\w+)\s*\)\s*==\s*\1\.end\(\)",
            r"(\2 not in \1)", e,
        )
        e = re.sub(
            r"std::find\(\s*(\w+)\.begin\(\)\s*,\s*\1\.end\(\)\s*,\s*(\w+)\s*\)\s*!=\s*\1\.end\(\)",
            r"(\2 in \1)", e,
        )
        e = re.sub(r"(\w+)\.size\(\)", r"len(\1)", e)
        e = e.replace("&&", " and ").replace("||", " or ")
        e = re.sub(r"!(?!=)", " not ", e)
        try:
            tree = ast.parse(e.strip(), mode="eval")
        except SyntaxError as ex:
            raise ExtractError(f"{self.where}: cannot read condition {expr!r}") from ex
        allowed = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Compare,
                   ast.Name, ast.Load, ast.Constant, ast.Call, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
                   ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.USub)
        for node in ast.walk(tree):
            if not isinstance(node, allowed):
                raise ExtractError(f"{self.where}: unsupported construct in condition {expr!r}")
            if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id == "len"):
                raise ExtractError(f"{self.where}: unsupported call in condition {expr!r}")
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"len"}
        scope = {n: self.var(n) for n in names}
        return bool(eval(compile(tree, "<cond>", "eval"), {"__builtins__": {}, "len": len}, scope))  # noqa: S307 (checked AST of ints/lists only)

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
                close = match_close(s, open_i)
                head = s[open_i + 1:close]
                j = close + 1
                while s[j].isspace():
                    j += 1
                if s[j] == "{":
                    end = match_close(s, j)
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
                end = match_close(s, i)
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
        body = text[m.end():match_close(text, m.end() - 1)]
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
        tile = tuple(int(g[i] or g[i + 1]) for i in (0, 2, 4))  # type: ignore[assignment]
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


G = "include/flashinfer/gemm/"
# Arch routing read from flashinfer/gemm/gemm_base.py: get_cutlass_fp4_gemm_module sends 10.3 to the
# SM103 module, 12.x to SM120 and every other 10.x/11.x to SM100; the MXFP8/FP8/BF16 SM100 modules
# serve the 10.x/11.x parts their @supported_compute_capability lists name.
RUNNERS: tuple[RunnerSpec, ...] = (
    RunnerSpec("fp4_gemm", "CutlassFp4GemmRunner", ("sm100", "sm110"), G + "fp4_gemm_cutlass_template.h",
               "csrc/fp4_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_fp4", (G + "fp4_gemm_template_sm100.h",)),
    RunnerSpec("fp4_gemm", "CutlassFp4GemmRunner", ("sm103",), G + "fp4_gemm_cutlass_template_sm103.h",
               "csrc/fp4_gemm_cutlass_sm103.cu", "gen_gemm_sm103_module_cutlass_fp4",
               (G + "fp4_gemm_template_sm103.h", G + "fp4_gemm_template_sm100.h")),
    RunnerSpec("fp4_gemm", "CutlassFp4GemmRunner", ("sm120",), G + "fp4_gemm_cutlass_template_sm120.h",
               "csrc/fp4_gemm_cutlass_sm120.cu", "gen_gemm_sm120_module_cutlass_fp4", (G + "fp4_gemm_template_sm120.h",)),
    RunnerSpec("mxfp8_gemm", "CutlassMxfp8GemmRunner", ("sm100", "sm103", "sm110"), G + "mxfp8_gemm_cutlass_template.h",
               "csrc/mxfp8_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_mxfp8", (G + "mxfp8_gemm_template_sm100.h",)),
    RunnerSpec("mxfp8_gemm", "CutlassMxfp8GemmRunner", ("sm120",), G + "mxfp8_gemm_cutlass_template_sm120.h",
               "csrc/mxfp8_gemm_cutlass_sm120.cu", "gen_gemm_sm120_module_cutlass_mxfp8", (G + "mxfp8_gemm_template_sm120.h",)),
    RunnerSpec("fp8_gemm", "CutlassFp8GemmRunner", ("sm100", "sm103", "sm110"), G + "fp8_gemm_cutlass_template.h",
               "csrc/fp8_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_fp8", (G + "fp8_gemm_template_sm100.h",)),
    RunnerSpec("bf16_gemm", "CutlassBf16GemmRunner", ("sm100", "sm103"), G + "bf16_gemm_cutlass_template.h",
               "csrc/bf16_gemm_cutlass.cu", "gen_gemm_sm100_module_cutlass_bf16", (G + "bf16_gemm_template_sm100.h",)),
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
        body = text[m.end():match_close(text, m.end() - 1)]
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
    body = function_body(text, r"getConfigs\s*\(\s*\)\s*const\s*(?:override\s*)?")
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
    clusters = _cluster_switches(text)
    kt = KernelTemplates(tuple(strip_comments(src.read(p) or "") for p in spec.launchers))
    jit_ctas = jit.get(spec.jit_fn)

    out_cfgs = []
    for cfg in configs:
        if _tile_field(cfg) != field_name:
            raise ExtractError(f"{where}: configs mix tile fields")
        out_cfgs.append(_config_json(cfg, field_name, cases, default, clusters, kt, header, jit_ctas, where))

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
        args = split_top(binding[open_i + 1:match_close(binding, open_i)])
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

    for spec in RUNNERS:
        lst = extract_runner(src, spec, header, jit)
        if lst is not None:
            add(spec.op, spec.runner, spec.archs, lst)
    fp8 = extract_fp8_sm120(src)
    if fp8 is not None:
        add("fp8_gemm", "CutlassFp8GemmRunner", ("sm120",), fp8)
    return rows, lists


def list_id(op: str, arch: str, lst: dict[str, Any]) -> str:
    """Content-addressed id, so identical lists across releases are stored once."""
    digest = hashlib.sha1(json.dumps(lst, sort_keys=True).encode()).hexdigest()[:10]
    return f"{op}/{arch}/{len(lst['configs'])}/{digest}"


def git_sources(gitdir: Path) -> list[GitTag]:
    tags = subprocess.run(["git", "-C", str(gitdir), "tag"], check=True, capture_output=True, text=True).stdout.split()
    return [GitTag(gitdir, t) for t in sorted((t for t in tags if _GIT_TAG_RE.match(t)), key=lambda t: Version(t[1:]))]


def build(sources: Sequence[Any], generated_by: str, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """The whole data document for these sources (later sources of the same version win)."""
    releases: dict[str, Any] = {}
    lists: dict[str, Any] = {}
    for src in sources:
        rows, lsts = extract_release(src)
        version = src.version
        releases[version] = {"source": {"kind": src.kind, "ref": src.ref, "commit": src.commit}, "catalogs": rows}
        lists.update(lsts)
        log(f"{version:14s} {src.ref:44s} " + ", ".join(f"{r['op']}/{r['arch']}:{len(lsts[r['list']]['configs'])}" for r in rows))
    ordered = dict(sorted(releases.items(), key=lambda kv: Version(kv[0])))
    return {"schema": SCHEMA, "family": FAMILY, "generated_by": generated_by, "releases": ordered,
            "lists": dict(sorted(lists.items()))}


def dumps(doc: dict[str, Any]) -> str:
    """Compact but diffable: one line per config / catalog row."""
    lines = ["{", f'  "schema": {json.dumps(doc["schema"])},', f'  "family": {json.dumps(doc["family"])},',
             f'  "generated_by": {json.dumps(doc["generated_by"])},', '  "releases": {']
    rel_items = list(doc["releases"].items())
    for i, (v, rel) in enumerate(rel_items):
        lines.append(f'    {json.dumps(v)}: {{"source": {json.dumps(rel["source"])}, "catalogs": [')
        lines += [f"      {json.dumps(c)}" + ("," if j < len(rel["catalogs"]) - 1 else "") for j, c in enumerate(rel["catalogs"])]
        lines.append("    ]}" + ("," if i < len(rel_items) - 1 else ""))
    lines.append("  },")
    lines.append('  "lists": {')
    items = list(doc["lists"].items())
    for i, (lid, lst) in enumerate(items):
        head = {k: v for k, v in lst.items() if k != "configs"}
        lines.append(f"    {json.dumps(lid)}: {{" + json.dumps(head)[1:-1] + ', "configs": [')
        lines += [f"      {json.dumps(c)}" + ("," if j < len(lst["configs"]) - 1 else "") for j, c in enumerate(lst["configs"])]
        lines.append("    ]}" + ("," if i < len(items) - 1 else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tiletune.catalogs.extract", description=__doc__.splitlines()[0])
    ap.add_argument("--git", type=Path, help="bare FlashInfer git dir; reads tags " + _GIT_TAG_RE.pattern)
    ap.add_argument("--wheel", type=Path, action="append", default=[],
                    help="a flashinfer-python wheel, or a directory of them (repeatable)")
    ap.add_argument("--installed", nargs="?", const="", default=None, metavar="SITE_PACKAGES",
                    help="also read the installed flashinfer-python (or the one under SITE_PACKAGES)")
    ap.add_argument("-o", "--output", type=Path, required=True)
    a = ap.parse_args(argv)
    sources: list[Any] = git_sources(a.git) if a.git else []
    for w in a.wheel:
        sources += [Wheel(p) for p in (sorted(w.glob("flashinfer_python-*.whl")) if w.is_dir() else [w])]
    if a.installed is not None:
        root = Path(a.installed) if a.installed else find_installed()
        if root is None or not (root / "flashinfer" / "data" / "include").is_dir():
            ap.error("no installed flashinfer-python with its C++ sources (flashinfer/data/include) found")
        sources.append(Installed(root))
    if not sources:
        ap.error("give --git, --wheel and/or --installed")
    import shlex

    args = list(argv) if argv is not None else sys.argv[1:]
    cmd = "python3 -m tiletune.catalogs.extract " + shlex.join(args)
    wheels = [src for src in sources if src.kind == "wheel"]
    if wheels:
        versions = " ".join(w.version for w in wheels)
        d = sorted({str(w.path.parent) for w in wheels})[0]
        cmd = (f"for v in {versions}; do python3 -m pip download --no-deps flashinfer-python==$v -d {d}; done && {cmd}")
    try:
        doc = build(sources, cmd, log=lambda s: print(s, file=sys.stderr))
    except ExtractError as e:
        print(f"extract: {e}", file=sys.stderr)
        return 2
    from tiletune.fileio import write_atomic

    write_atomic(a.output, dumps(doc))
    print(f"wrote {a.output}: {len(doc['releases'])} releases, {len(doc['lists'])} distinct lists", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
