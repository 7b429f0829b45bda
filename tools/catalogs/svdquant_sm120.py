"""The SM120 NVFP4 SVDQuant GEMM's tactic table (FlashInfer 0.7.4 on), read from the release's C++
and Python.

A tactic of `nvfp4_svdquant_gemm_sm120_v<ABI>[_r<rank>]` (runner `Nvfp4SvdquantGemmRunner`) is a
row of `kRuntimeTacticTableSm120` (`nvfp4_svdquant_gemm_template_sm120.h`): which compiled kernel
(`KernelShapeSm120`, dispatched by `SVDQ_SM120_DISPATCH` in `csrc/nvfp4_svdquant_gemm_cutlass_sm120.cu`
to a `SvdquantGemmConfigSm120<Shape<M, N, K>, SwapAB, TileScheduler>`) and which scheduler
parameters (forced Split-K splits, raster order, swizzle). What is read:

- the table, by running `make_runtime_tactic_table()` with a small interpreter of the statement
  forms it uses (counted for-loops, if, `table[i] = {...}`, `table[row++] = {...}`), with
  `kernel_is_streamk_sm120()` evaluated from its own return expression; every `static_assert` the
  header makes about table rows is then checked against the result (a changed table fails here);
- each kernel's config: its tile, SwapAB and scheduler tag, and whether it is the production row80
  (whose mainloop has `StageCount<4>`, every other one the auto carveout);
- the LoRA rank a kernel can stage (`kLoRaStageCapacity = TileK / 4`): a module built for rank 64
  never selects a K128 kernel (its can_implement rejects the rank), recorded as a known failure of
  that op's list;
- the op names: `_svdquant_op_name("sm120", rank)` (flashinfer/gemm/svdquant_sm120_cutlass.py), for
  each rank of `SM120_CUTLASS_LORA_RANKS`, and the "auto" backend's names
  (`..._auto_v1_pdl{0,1}_cute{0,1}_cutlass1`, runner `_CutlassAutoRunner`,
  flashinfer/gemm/svdquant_sm120_auto.py), whose tactic is a row of the same table;
- what -1 runs: the first row `can_implement` admits for the shape, chosen at run time by
  `nvfp4_svdquant_gemm_fallback_tactic` (the .cu): no fixed index, recorded with file and line.

Not read: the fused linear route (`svdquant_linear_sm120_routes_v*`), whose tactic packs a row of
this table with a producer variant.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Optional

from tools.catalogs.cpp import ExtractError, cexpr, close_of, find_function_body, split_top
from tools.catalogs.dense import strip_comments, supported_capabilities

G = "include/flashinfer/gemm/"
TEMPLATE = G + "nvfp4_svdquant_gemm_template_sm120.h"
BINDING = "csrc/nvfp4_svdquant_gemm_cutlass_sm120.cu"
OP_NAMES_PY = "flashinfer/gemm/svdquant_sm120_cutlass.py"
ROUTES_PY = "flashinfer/gemm/svdquant_sm120_routes.py"
AUTO_PY = "flashinfer/gemm/svdquant_sm120_auto.py"
REQUIREMENT_PY = "flashinfer/gemm/gemm_svdquant.py"
RUNNER = "Nvfp4SvdquantGemmRunner"
AUTO_RUNNER = "_CutlassAutoRunner"
OP_FAMILY = "nvfp4_svdquant_gemm_sm120"


def _line_of(text: str, pattern: str) -> int:
    m = re.search(pattern, text)
    if not m:
        raise ExtractError(f"cannot find {pattern!r}")
    return text.count("\n", 0, m.start()) + 1


def _constants(text: str) -> dict[str, int]:
    """`inline constexpr int NAME = <int>;` definitions."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(?:inline\s+)?constexpr\s+int\s+(\w+)\s*=\s*(\d+)\s*;", text)}


def _enum(text: str, name: str, where: str) -> dict[str, int]:
    m = re.search(r"enum\s+class\s+" + name + r"\s*(?::\s*\w+\s*)?\{", text)
    if not m:
        raise ExtractError(f"{where}: no enum class {name}")
    out, nxt = {}, 0
    for item in split_top(text[m.end():close_of(text, m.end() - 1)]):
        if not item.strip():
            continue
        key, _, val = item.partition("=")
        if val.strip():
            nxt = int(val.strip())
        out[key.strip()] = nxt
        nxt += 1
    return out


class _Table:
    """make_runtime_tactic_table() run over its own statements."""

    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.consts = _constants(text)
        self.kernels = _enum(text, "KernelShapeSm120", where)
        self.raster = _enum(text, "RasterOrderSm120", where)
        body = find_function_body(text, "kernel_is_streamk_sm120")
        ret = re.fullmatch(r"\s*return\s+([^;]*);\s*", body or "")
        if not ret:
            raise ExtractError(f"{where}: kernel_is_streamk_sm120() is not one return expression")
        self.streamk_expr = self._plain(ret.group(1))
        self.rows: dict[int, tuple[int, int, int, int]] = {}

    def _plain(self, expr: str) -> str:
        """Enum constants as their numbers, casts dropped: what cpp.cexpr evaluates."""
        e = re.sub(r"static_cast<int>\(\s*KernelShapeSm120::(\w+)\s*\)", lambda m: str(self.kernels[m.group(1)]), expr)
        e = re.sub(r"RasterOrderSm120::(\w+)", lambda m: str(self.raster[m.group(1)]), e)
        return re.sub(r"static_cast<\w+>\s*", "", e)

    def streamk(self, kid: int) -> bool:
        return bool(cexpr(self.streamk_expr, {**self.consts, "kernel_id": kid}))

    def value(self, expr: str, env: dict[str, Any]) -> Any:
        return cexpr(self._plain(expr), {**self.consts, **env, "kernel_is_streamk_sm120": self.streamk})

    def run(self, body: str) -> list[tuple[int, int, int, int]]:
        env: dict[str, Any] = {}
        self._block(body, env)
        size = self.consts.get("kNvfp4SvdquantGemmSm120NumTactics")
        if size is None or sorted(self.rows) != list(range(size)):
            raise ExtractError(f"{self.where}: make_runtime_tactic_table() fills rows {sorted(self.rows)[:5]}.., "
                               f"not 0..{size}")
        return [self.rows[i] for i in range(size)]

    def _block(self, s: str, env: dict[str, Any]) -> None:
        i = 0
        while i < len(s):
            while i < len(s) and s[i].isspace():
                i += 1
            if i >= len(s):
                return
            m = re.match(r"(for|if)\s*\(", s[i:])
            if m:
                close = close_of(s, i + m.end() - 1)
                head = s[i + m.end():close]
                j = close + 1
                while s[j].isspace():
                    j += 1
                if s[j] != "{":
                    raise ExtractError(f"{self.where}: {m.group(1)} without braces")
                end = close_of(s, j)
                body = s[j + 1:end]
                i = end + 1
                if re.match(r"\s*else\b", s[i:]):
                    raise ExtractError(f"{self.where}: `else` in make_runtime_tactic_table()")
                if m.group(1) == "if":
                    if self.value(head, env):
                        self._block(body, env)
                    continue
                fm = re.fullmatch(r"\s*int\s+(\w+)\s*=\s*(\w+)\s*;\s*\1\s*<\s*(\w+)\s*;\s*\+\+\1\s*", head)
                if not fm:
                    raise ExtractError(f"{self.where}: unsupported loop ({head.strip()})")
                v = fm.group(1)
                for k in range(self.value(fm.group(2), env), self.value(fm.group(3), env)):
                    env[v] = k
                    self._block(body, env)
                continue
            end = s.index(";", i)
            self._statement(" ".join(s[i:end].split()), env)
            i = end + 1

    def _statement(self, st: str, env: dict[str, Any]) -> None:
        m = re.fullmatch(r"(?:constexpr )?int (\w+) = (.+)", st)
        if m:
            env[m.group(1)] = self.value(m.group(2), env)
            return
        if re.fullmatch(r"std::array<RuntimeTacticSm120, kNvfp4SvdquantGemmSm120NumTactics> table\{\}", st):
            return
        m = re.fullmatch(r"table\[(\w+)(\+\+)?\] = \{(.*)\}", st)
        if m:
            idx = env[m.group(1)] if m.group(1) in env else self.value(m.group(1), env)
            if m.group(2):
                env[m.group(1)] = idx + 1
            fields = [self.value(x, env) for x in split_top(m.group(3))]
            if len(fields) != 4 or idx in self.rows:
                raise ExtractError(f"{self.where}: table row {idx} set twice or not {{kernel, splits, raster, swizzle}}")
            self.rows[idx] = tuple(fields)
            return
        if st == "return table":
            return
        raise ExtractError(f"{self.where}: unsupported statement {st!r} in make_runtime_tactic_table()")

    def check_asserts(self, text: str, table: list[tuple[int, int, int, int]]) -> int:
        """Every static_assert about kRuntimeTacticTableSm120 rows, evaluated on `table`."""
        fields = {"kernel_id": 0, "splits": 1, "raster": 2, "swizzle": 3}
        n = 0
        for m in re.finditer(r"static_assert\(", text):
            args = split_top(text[m.end():close_of(text, m.end() - 1)])
            if not args or "kRuntimeTacticTableSm120[" not in args[0]:
                continue
            expr = re.sub(r"kRuntimeTacticTableSm120\[(\w+)\]\.(\w+)",
                          lambda mm: str(table[int(self.value(mm.group(1), {}))][fields[mm.group(2)]]), args[0])
            if not self.value(expr, {}):
                raise ExtractError(f"{self.where}: the extracted table fails the header's own static_assert({args[0][:80]}...)")
            n += 1
        if not n:
            raise ExtractError(f"{self.where}: no static_assert about kRuntimeTacticTableSm120 to check the table with")
        return n


def _kernel_configs(text: str, binding: str, kernels: dict[str, int], where: str) -> dict[int, dict[str, Any]]:
    """kernel id -> {tile, swap_ab, scheduler, row80} of the config SVDQ_SM120_DISPATCH runs for it."""
    tags = {m.group(1): m.group(2) for m in re.finditer(r"using\s+(\w+Tag)\s*=\s*cutlass::gemm::(\w+)\s*;", text)}
    configs = {m.group(1): m for m in re.finditer(
        r"using\s+(\w+)\s*=\s*SvdquantGemmConfigSm120<\s*Shape<\s*_(\d+)\s*,\s*_(\d+)\s*,\s*_(\d+)\s*>\s*,\s*(true|false)\s*,"
        r"\s*((?:cutlass::gemm::)?\w+)\s*>\s*;", text)}
    macro = re.search(r"#define\s+SVDQ_SM120_DISPATCH\(kernel_id,\s*EXPR\)(.*)", binding)
    if not macro:
        raise ExtractError(f"{where}: no SVDQ_SM120_DISPATCH macro in {BINDING}")
    cases = re.findall(r"case\s+sd::KernelShapeSm120::(\w+)\s*:\s*\{\s*using\s+C\s*=\s*sd::(\w+)\s*;\s*EXPR\s*;\s*\}", macro.group(1))
    out = {}
    for name, alias in cases:
        cm = configs.get(alias)
        if cm is None or name not in kernels:
            raise ExtractError(f"{where}: dispatch case {name} -> {alias} is no SvdquantGemmConfigSm120 this extractor reads")
        tag = cm.group(6).split("::")[-1]
        out[kernels[name]] = {"name": name, "tile": [int(cm.group(i)) for i in (2, 3, 4)], "swap_ab": cm.group(5) == "true",
                              "scheduler": tags.get(tag, tag)}
    if sorted(out) != sorted(kernels.values()):
        raise ExtractError(f"{where}: SVDQ_SM120_DISPATCH covers kernels {sorted(out)}, the enum has {len(kernels)}")
    return out


def _row80(text: str, cfg: dict[str, Any], where: str) -> bool:
    """SvdquantGemmConfigSm120::IsRow80 for this config (its mainloop then has StageCount<4>)."""
    small = re.search(r"static\s+constexpr\s+bool\s+SmallM\s*=\s*cute::size<0>\(MmaTileShape\{\}\)\s*==\s*(\d+)\s*;", text)
    row80 = re.search(r"static\s+constexpr\s+bool\s+IsRow80\s*=([^;]*);", text)
    stage = re.search(r"using\s+MainloopStageCount\s*=\s*cute::conditional_t<\s*IsProductionRow80\s*,\s*"
                      r"cutlass::gemm::collective::StageCount<\s*(\d+)\s*>\s*,\s*AutoMainloopStageCount\s*>\s*;", text)
    prod = re.search(r"static\s+constexpr\s+bool\s+IsProductionRow80\s*=\s*IsRow80\s*&&", text)
    if not (small and row80 and stage and prod and stage.group(1) == "4"):
        raise ExtractError(f"{where}: the row80 stage policy (IsRow80, IsProductionRow80, StageCount<4>) is not as read in 0.7.4")
    m, n, k = cfg["tile"]
    expr = row80.group(1)
    expr = re.sub(r"cute::size<(\d)>\(MmaTileShape\{\}\)", lambda mm: str((m, n, k)[int(mm.group(1))]), expr)
    expr = re.sub(r"cute::is_same_v<TileSchedulerTag,\s*cutlass::gemm::(\w+)>",
                  lambda mm: "true" if mm.group(1) == cfg["scheduler"] else "false", expr)
    return bool(cexpr(expr, {"SmallM": m == int(small.group(1)), "SwapAB": cfg["swap_ab"]}))


def _stageable_rank(text: str, where: str) -> tuple[int, int]:
    """(TileK divisor, default rank): a config stages min(TileK / divisor) LoRA columns."""
    cap = re.search(r"kLoRaStageCapacity\s*=\s*cute::size<2>\(MmaTileShape\{\}\)\s*/\s*(\d+)\s*;", text)
    rank = re.search(r"LoRaRank\s*=\s*kSvdqSm120ModuleLoRaRank\s*<=\s*kLoRaStageCapacity\s*\?\s*kSvdqSm120ModuleLoRaRank\s*:\s*(\d+)\s*;", text)
    if not (cap and rank):
        raise ExtractError(f"{where}: kLoRaStageCapacity / LoRaRank are not TileK / N and 'rank <= capacity ? rank : 32'")
    return int(cap.group(1)), int(rank.group(1))


def _py_constant(src: Any, path: str, name: str) -> Any:
    text = src.need(path)
    for node in ast.parse(text).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == name and value is not None:
            return ast.literal_eval(value)
    raise ExtractError(f"{src.ref}:{path}: no constant {name}")


def op_names(src: Any) -> tuple[list[tuple[str, int]], list[str]]:
    """([(op name, LoRA rank)], auto-backend op name suffixes) as the release's Python names them."""
    where = f"{src.ref}:{OP_NAMES_PY}"
    py = src.need(OP_NAMES_PY)
    if not re.search(r'return\s+f"nvfp4_svdquant_gemm_sm120_v\{_SM120_TACTIC_ABI_VERSION\}\{rank_tag\}"', py) or not re.search(
            r'""\s+if\s+lora_rank\s*==\s*SVDQUANT_LORA_RANK_GRANULARITY\s+else\s+f"_r\{lora_rank\}"', py):
        raise ExtractError(f"{where}: _svdquant_op_name('sm120', rank) is not 'nvfp4_svdquant_gemm_sm120_v<ABI>[_r<rank>]'")
    abi = _py_constant(src, ROUTES_PY, "SM120_TACTIC_ABI_VERSION")
    ranks = _py_constant(src, ROUTES_PY, "SM120_CUTLASS_LORA_RANKS")
    base = _py_constant(src, REQUIREMENT_PY, "SVDQUANT_LORA_RANK_GRANULARITY")
    names = [(f"{OP_FAMILY}_v{abi}" + ("" if r == base else f"_r{r}"), int(r)) for r in ranks]
    auto = src.read(AUTO_PY) or ""
    suffixes: list[str] = []
    if auto:
        if not re.search(r"name\s*=\s*f\"\{cutlass\._svdquant_op_name\('sm120',\s*inputs\[5\]\.shape\[1\]\)\}_auto_v1_pdl\{int\(enable_pdl\)\}"
                         r"_cute\{int\('cute-dsl'\s+in\s+backends\)\}_cutlass\{int\(native\)\}\"", auto):
            raise ExtractError(f"{src.ref}:{AUTO_PY}: mm_auto's op name is not '<op>_auto_v1_pdl<0|1>_cute<0|1>_cutlass<0|1>'")
        # _CutlassAutoRunner is among the runners only when native (cutlass1)
        suffixes = [f"_auto_v1_pdl{p}_cute{c}_cutlass1" for p in (0, 1) for c in (0, 1)]
    return names, suffixes


def extract_sm120(src: Any) -> Optional[tuple[list[tuple[str, str, dict[str, Any]]], tuple[str, ...]]]:
    """([(op, runner, list)], archs) of the SM120 SVDQuant tactic table, or None before 0.7.4."""
    raw = src.read(TEMPLATE)
    if raw is None:
        return None
    where = f"{src.ref}:{TEMPLATE}"
    text = strip_comments(raw)
    binding_raw = src.need(BINDING)
    binding = strip_comments(binding_raw)
    tbl = _Table(text, where)
    body = find_function_body(text, "make_runtime_tactic_table")
    if body is None:
        raise ExtractError(f"{where}: no make_runtime_tactic_table()")
    table = tbl.run(body)
    tbl.check_asserts(text, table)
    kernels = _kernel_configs(text, binding, tbl.kernels, where)
    schedule = re.search(r"cutlass::gemm::(KernelTmaWarpSpecialized\w*Sm120)>::CollectiveOp", text)
    epilogue = re.search(r"cutlass::epilogue::(TmaWarpSpecialized\w*),\s*FusionOperation>::CollectiveOp", text)
    cluster = re.search(r"using\s+ClusterShape\s*=\s*Shape<\s*_(\d+)\s*,\s*_(\d+)\s*,\s*_(\d+)\s*>\s*;", text)
    if not (schedule and epilogue and cluster):
        raise ExtractError(f"{where}: mainloop / epilogue schedule or ClusterShape not found")
    if not re.search(r"tactic\s*<\s*0\s*\?\s*flashinfer::gemm::nvfp4_svdquant_gemm_fallback_tactic\(", binding):
        raise ExtractError(f"{src.ref}:{BINDING}: tactic -1 no longer runs nvfp4_svdquant_gemm_fallback_tactic()")
    fb = find_function_body(binding, "nvfp4_svdquant_gemm_fallback_tactic") or ""
    first_admitted = (r"for\s*\(int\s+tactic\s*=\s*0\s*;[^)]*\)\s*\{\s*if\s*\("
                      r"nvfp4_svdquant_gemm_can_implement\(m,\s*n,\s*k,\s*lora_rank,\s*tactic\)\)\s*\{\s*return\s+tactic\s*;")
    if not re.search(first_admitted, fb):
        raise ExtractError(f"{src.ref}:{BINDING}: nvfp4_svdquant_gemm_fallback_tactic() is not 'the first row can_implement admits'")
    fb_line = _line_of(binding_raw, r"int\s+nvfp4_svdquant_gemm_fallback_tactic\(")
    divisor, default_rank = _stageable_rank(text, where)
    raster_names = {v: k.removeprefix("k") for k, v in tbl.raster.items()}
    names, auto = op_names(src)
    archs = tuple(f"sm{cc}" for cc in sorted(supported_capabilities(src.need(REQUIREMENT_PY), "_cutlass_sm120_nvfp4_svdquant_requirement")))
    if not archs:
        raise ExtractError(f"{src.ref}:{REQUIREMENT_PY}: _cutlass_sm120_nvfp4_svdquant_requirement lists no compute capability")
    out: list[tuple[str, str, dict[str, Any]]] = []
    for op, rank in names:
        configs = []
        for kid, splits, raster, swizzle in table:
            k = kernels[kid]
            stages = 4 if _row80(text, k, where) else None
            can_stage = max(k["tile"][2] // divisor, default_rank)
            params = ([f"splits={splits}"] if splits != 1 else []) + (
                [f"raster={raster_names[raster]}"] if raster_names[raster] != "Heuristic" else []) + (
                [f"swizzle={swizzle}"] if swizzle != 1 else [])
            configs.append({
                "tile": k["tile"], "name": k["name"] + (" " + " ".join(params) if params else ""),
                "cluster": [int(cluster.group(i)) for i in (1, 2, 3)], "swap_ab": k["swap_ab"],
                "stream_k": k["scheduler"] == "StreamKScheduler", "mainloop_schedule": schedule.group(1),
                "epilogue_schedule": epilogue.group(1), "epilogue_fusion": None, "stages": stages, "style": "tma_ws",
                "mma_tile": None, "tile_scheduler": k["scheduler"], "splits": splits, "raster": raster_names[raster],
                "swizzle": swizzle, "kernel_id": kid,
                "known_failure": None if rank <= can_stage else (
                    f"a {k['tile'][2]}-deep K tile stages LoRA rank {can_stage} (kLoRaStageCapacity = TileK / {divisor}): "
                    f"can_implement rejects rank {rank}, so this row is never offered for it"),
            })
        lst = {
            "source_file": TEMPLATE,
            "function": "make_runtime_tactic_table (kRuntimeTacticTableSm120 row -> KernelShapeSm120 + scheduler params)",
            "dispatch_file": BINDING,
            "binding_file": BINDING,
            "jit_generator": None,
            "fallback": None,
            "fallback_config": None,
            "fallback_rule": (f"tactic -1 runs the first row (from 0) whose can_implement(m, n, k, rank) holds for the "
                              f"shape: chosen at run time by nvfp4_svdquant_gemm_fallback_tactic ({BINDING}:{fb_line})"),
            "index_offset": 0,
            "configs": configs,
        }
        out.append((op, RUNNER, lst))
        for suffix in auto:
            out.append((op + suffix, AUTO_RUNNER, lst))
    return out, archs


def add_rows(src: Any, add: Any) -> None:
    """Add the SM120 SVDQuant lists of this release through dense.extract_release's `add(op, runner, archs, list)`."""
    got = extract_sm120(src)
    if got is None:
        return
    lists, archs = got
    for op, runner, lst in lists:
        add(op, runner, archs, lst)

