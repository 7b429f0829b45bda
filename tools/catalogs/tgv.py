"""FlashInfer's TGV BF16/FP16 GEMM (SM100 family): its two tactic tables, read from the release.

- The C++ kernel (csrc/tgv_gemm.cu): a tactic indexes `getAllTgvConfigs()` (include/flashinfer/
  gemm/tgv_gemm_configs.h), each `TGVGemmConfigSM100::CtaShape<M>x<N>_DMA<S>`, run as
  `tgv_gemm_host<..., CTA_M, CTA_N, <K>, DMA_STAGE, ...>` where `SUPPORTED_TGV_GEMM_CONFIGS`
  instantiates it (a config it lacks is a known failure); -1 runs the index the binding names.
  Runner TGVGemmRunner: op `<bf16|fp16>_tgv_gemm` (tgv_gemm_sm100), and `bf16_gemm` where mm_bf16
  appends that runner itself (before 0.6.15).
- The CuTe DSL kernel (flashinfer/gemm/kernels/tgv_gemm_cute_ext.py, 0.6.15 on): a tactic indexes
  `_TGV_CUTE_EXT_TACTIC_CONFIGS` (cta_m, cta_n, stages, use_2cta), K is `_TGV_CUTE_EXT_CTA_K`, -1
  runs `_TGV_CUTE_EXT_DEFAULT_TACTIC`; ids from `_TGV_CUTE_EXT_FIRST_SM107_TACTIC` on need SM107's
  shared memory (run_tgv_cute_ext raises elsewhere: a known failure off sm107). Runner TGVRunner:
  op `bf16_gemm`, and `bf16_gemm_pdl_auto` where mm_bf16 tunes the PDL runners under it (0.7.4).
  With gemm_base.py's debug switch `_TGV_DEBUG_USE_CPP` set, a 2-D call runs the C++ table instead:
  the list records that with the switch's file, line and value (`table_note`).

Both kernels take the weights as their first operand (the runner passes b.t(), a.t()): the tile's
M runs over the problem's N, recorded as swap_ab. Archs: tgv_gemm_sm100's `_match_sm_version` list
and mm_bf16's `_tgv_gemm_requirement` capabilities.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Optional

from tools.catalogs.cpp import ExtractError, find_function_body
from tools.catalogs.dense import G, _function_sources, strip_comments, supported_capabilities

CONFIGS_H = G + "tgv_gemm_configs.h"
CU = "csrc/tgv_gemm.cu"
BASE = "flashinfer/gemm/gemm_base.py"
CUTE = "flashinfer/gemm/kernels/tgv_gemm_cute_ext.py"


def _cpp_list(src: Any) -> Optional[dict[str, Any]]:
    """The C++ table as a catalog list, or None when the release has no TGV kernel."""
    htext, cutext = src.read(CONFIGS_H), src.read(CU)
    if htext is None or cutext is None:
        return None
    where = f"{src.ref}:{CONFIGS_H}"
    body = find_function_body(strip_comments(htext), "getAllTgvConfigs")
    items = re.findall(r"TGVGemmConfig\(\s*TGVGemmConfigSM100::(CtaShape(\d+)x(\d+)_DMA(\d+))\s*\)", body or "")
    if not body or not re.fullmatch(r"\s*return\s*\{[^{}]*\}\s*;\s*", body) or not items:
        raise ExtractError(f"{where}: getAllTgvConfigs() is not one braced list of TGVGemmConfig(TGVGemmConfigSM100::...)")
    cu = strip_comments(cutext)
    supported = {tuple(map(int, m)) for m in re.findall(r"TGV_GEMM_CONFIG\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", cu)}
    host = re.search(r"tgv_gemm_host<\s*TypeA\s*,\s*TypeB\s*,\s*TypeC\s*,\s*AccType\s*,\s*TypeBias\s*,\s*CTA_M\s*,\s*CTA_N\s*,"
                     r"\s*(\d+)\s*,\s*DMA_STAGE", cu)
    fb = re.search(r"if\s*\(\s*tactic\s*==\s*-1\s*\)\s*\{\s*tactic\s*=\s*(\d+)\s*;\s*\}", cu)
    if not supported or not host or not fb:
        raise ExtractError(f"{src.ref}:{CU}: SUPPORTED_TGV_GEMM_CONFIGS, tgv_gemm_host's K or what -1 runs not found")
    k = int(host.group(1))
    configs = []
    for name, m, n, s in items:
        m_, n_, s_ = int(m), int(n), int(s)
        configs.append(_config([m_, n_, k], name, s_, False, None if (m_, n_, s_) in supported else (
            f"{CU} instantiates no kernel for it: dispatch_kernel throws 'Unsupported tile configuration'")))
    if int(fb.group(1)) >= len(configs):
        raise ExtractError(f"{src.ref}:{CU}: tactic -1 runs {fb.group(1)}, beyond the {len(configs)} configs")
    return {"source_file": CONFIGS_H, "function": "getAllTgvConfigs (tgv_gemm.cu getTgvGemmConfig)",
            "dispatch_file": CU, "binding_file": CU, "jit_generator": None, "fallback": int(fb.group(1)),
            "fallback_config": None, "index_offset": 0, "configs": configs}


def _config(tile: list[int], name: str, stages: int, two_cta: bool, failure: Optional[str]) -> dict[str, Any]:
    return {"tile": tile, "name": name, "cluster": [2, 1, 1] if two_cta else [1, 1, 1], "swap_ab": True,
            "stream_k": False, "mainloop_schedule": None, "epilogue_schedule": None, "epilogue_fusion": None,
            "stages": stages, "style": "tma_ws", "mma_tile": [2 * tile[0], tile[1], tile[2]] if two_cta else None,
            "known_failure": failure}


def _constants(py: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in ast.parse(py).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id.startswith("_TGV_CUTE_EXT_") and value is not None:
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return out


def _cute_lists(src: Any, base: str) -> Optional[Callable[[str], dict[str, Any]]]:
    """arch -> the CuTe DSL table as a catalog list (ids needing SM107 fail elsewhere), or None."""
    py = src.read(CUTE)
    if py is None:
        return None
    where = f"{src.ref}:{CUTE}"
    c = _constants(py)
    table, k, default = c.get("_TGV_CUTE_EXT_TACTIC_CONFIGS"), c.get("_TGV_CUTE_EXT_CTA_K"), c.get("_TGV_CUTE_EXT_DEFAULT_TACTIC")
    if not (isinstance(table, list) and table and all(isinstance(t, tuple) and len(t) == 4 for t in table)
            and isinstance(k, int) and isinstance(default, int) and 0 <= default < len(table)):
        raise ExtractError(f"{where}: _TGV_CUTE_EXT_TACTIC_CONFIGS (cta_m, cta_n, stages, use_2cta), _CTA_K or _DEFAULT_TACTIC not read")
    first107 = c.get("_TGV_CUTE_EXT_FIRST_SM107_TACTIC")
    if first107 is not None and not re.search(r"if\s+tactic\s*>=\s*_TGV_CUTE_EXT_FIRST_SM107_TACTIC\s+and\s+not\s+_is_sm107\(", py):
        raise ExtractError(f"{where}: the SM107-only tactics are not refused the way this extractor read")
    switch = re.search(r"^_TGV_DEBUG_USE_CPP\s*:\s*bool\s*=\s*(True|False)\s*$", base, re.M)
    if not switch or not re.search(r"if\s+_TGV_DEBUG_USE_CPP\s+and\s+a\.dim\(\)\s*==\s*2\s*:", base):
        raise ExtractError(f"{src.ref}:{BASE}: the _TGV_DEBUG_USE_CPP switch is not as read in 0.6.15")
    line = base.count("\n", 0, switch.start()) + 1
    note = (f"tactics index the CuTe DSL table ({CUTE}); with the debug switch _TGV_DEBUG_USE_CPP set ({BASE}:{line}, "
            f"{switch.group(1)} in this release) a 2-D call indexes getAllTgvConfigs() ({CONFIGS_H}) instead")

    def build(arch: str) -> dict[str, Any]:
        configs = []
        for i, (m, n, stages, two_cta) in enumerate(table):
            failure = None
            if first107 is not None and i >= first107 and arch != "sm107":
                failure = (f"sized for SM107's shared memory: run_tgv_cute_ext raises 'TGV cute_ext tactic {i} needs SM107 "
                           f"SMEM.' on {arch}, whose get_tgv_cute_ext_valid_tactics offers ids below {first107}")
            configs.append(_config([m, n, k], f"cute_ext {m}x{n} {stages} stages" + (" 2cta" if two_cta else ""),
                                   stages, bool(two_cta), failure))
        return {"source_file": CUTE, "function": "_TGV_CUTE_EXT_TACTIC_CONFIGS", "dispatch_file": CUTE,
                "binding_file": BASE, "jit_generator": None, "fallback": default, "fallback_config": None,
                "index_offset": 0, "table_note": note, "configs": configs}

    return build


def add_rows(src: Any, add: Callable[[str, str, tuple[str, ...], dict[str, Any]], None]) -> None:
    """The TGV rows of one release, through dense.extract_release's `add(op, runner, archs, list)`."""
    cpp = _cpp_list(src)
    if cpp is None:
        return
    base = src.need(BASE)
    fns = _function_sources(base)
    sm100 = fns.get("tgv_gemm_sm100", "")
    match = re.search(r"_match_sm_version\(\s*a\.device\s*,\s*\[([^\]]*)\]\s*\)", sm100)
    if not match or not re.search(r'choose_one\(\s*f"\{dtype_str\}_tgv_gemm"', sm100):
        raise ExtractError(f"{src.ref}:{BASE}: tgv_gemm_sm100's arch check or op name is not as read")
    archs = tuple(f"sm{x}" for x in re.findall(r'"(\d+)"', match.group(1)))
    for dtype in ("bf16", "fp16"):  # dtype_str = "bf16" if a.dtype == torch.bfloat16 else "fp16"
        add(f"{dtype}_tgv_gemm", "TGVGemmRunner", archs, cpp)
    mm_archs = tuple(f"sm{cc}" for cc in sorted(supported_capabilities(base, "_tgv_gemm_requirement")))
    mm = next((t for t in fns.values() if re.search(r'tuner\.choose_one\(\s*(?:"bf16_gemm"|custom_op)', t)
               and ("_tgv_gemm_runner(" in t or "tgv_gemm_runner()" in t) and '"bf16_gemm"' in t), None)
    if mm is None or not mm_archs:
        raise ExtractError(f"{src.ref}:{BASE}: mm_bf16's TGV runner or _tgv_gemm_requirement not found")
    cute = _cute_lists(src, base)
    if "_tgv_gemm_runner(" in mm:  # the unified TGVRunner (0.6.15 on): the CuTe DSL table
        if cute is None:
            raise ExtractError(f"{src.ref}: mm_bf16 uses _tgv_gemm_runner but {CUTE} is missing")
        ops = ["bf16_gemm"] + (["bf16_gemm_pdl_auto"] if re.search(r"pdl_runners\.append\(\s*_tgv_gemm_runner\(", mm)
                               and 'custom_op = "bf16_gemm_pdl_auto"' in mm else [])
        for arch in mm_archs:
            for op in ops:
                add(op, "TGVRunner", (arch,), cute(arch))
    else:  # mm_bf16 appends the C++ runner itself
        add("bf16_gemm", "TGVGemmRunner", mm_archs, cpp)
