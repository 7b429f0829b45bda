"""Fused-MoE extractor (`tiletune/catalogs/data/fused-moe.json`): the CUTLASS fused-MoE tactic lists of every FlashInfer release.

FlashInfer's `cutlass_fused_moe` autotunes `trtllm::fused_moe::gemm1/gemm2` (runner `MoERunner`)
with a tactic that indexes `getTactics(GEMM_1) ++ getTactics(GEMM_2)`, a C++ list no binding
exposes. This module rebuilds that list from the release's own C++ source:

- data (tile lists, cluster choices, pruned tiles, stage ranges, dispatcher cases) is read out of
  the function bodies with the shared C++ scanner and expression evaluator (tools/catalogs/cpp.py);
- the control flow that combines them (getTmaWarpSpecializedConfigs: candidates, SM103 FP4 append,
  FINALIZE duplication minus NO_SMEM, swap_ab duplication, SM80/SM89 configs appended) is modelled
  in Python, and each function body it models is checked against the structures this file was
  written from (a hash of the body with its data lists masked). A release whose code changed shape
  raises `ExtractError` naming the function and file instead of producing a wrong list.

Facts the model rests on (checked in the source of every covered release):
- tactic = index into mAllProfiles = getTactics(GEMM_1) ++ getTactics(GEMM_2) (the binding), so a
  GEMM2 list has `index_offset` = len(GEMM1). Python's `get_tactic_occupancy(t) > 0` pre-filter
  (fused_moe/core.py get_valid_tactics) keeps the surviving global indices `t`; it never renumbers.
- -1 runs the first GEMM1 entry for GEMM1 and the first GEMM2 entry for GEMM2 (`fallback` 0).
- GEMM2's list has the FINALIZE copies when mayHaveFinalizeFused(): TMA-WS possible, sm >= 90 and
  use_fused_finalize_. Releases whose binding enumerates tactics before setting that member
  (v0.6.7..v0.6.14) always get them; both `finalize` variants are emitted either way.
- TMA-WS tile K is the enum's bytes converted to activation elements (KtileBytes * 8 / bits(T)).
- known_failure: the TMA-WS tile switch has no case for the tile, or (SM120) the constexpr
  are_tile_shapes_supported_sm120 rejects the (M, N, K-elements) combination.
- SM90 weight-only: bf16/fp16 x int4 and bf16 x fp8 (also what DeepSeek FP8 block scaling builds)
  are no Hopper TMA-WS specialisation, so only getAmpereConfigs' weight-only SM80-style list applies
  (K = 128 * 8 / bits(T) in the weight-only dispatcher), ending with the heuristic's "cuda kernel"
  entry (tiles[0] at min_stages; the MoE dispatcher ignores enableCudaKernel).
- SM90 mixed input (fp8 x int4 W4A8, bf16/fp16 x mxfp4 W4A16, humming fp8 x mxfp4): the heuristic's
  weight-only grouped branch (v0.6.3..v0.6.9: the set {PINGPONG} plus COOPERATIVE where the tile
  supports it, in enum order), swap_ab copies only, humming single-warpgroup configs appended; the
  enum's K number is the tile K in elements (the mixed-input dispatcher's Shape<TILE_M, TILE_N,
  TILE_K>). The older dispatcher (v0.6.3..v0.6.15, v0.6.16.post3..v0.6.17) instantiates K 128 and,
  for the 64x128 enum, N 64 for MXFP4 weights (read from its constexpr Ntile / Ktile), but picks
  the K of INT4 weights (W4A8) from the GEMM's K at run time: that list is left out and the
  release's `not_extracted` says why. FP16 x MXFP4 is the BF16 list where the binding builds
  CutlassMoeFCRunner<half, Fp4>, and a `not_extracted` note quoting its ICHECK where it refuses FP16.
- MXFP8 activations (use_mxfp8_act_scaling): MXFP8 x MXFP8 builds the FP8 x FP8 runner with
  IsMXFPX (0.6.6 on), whose getTactics() drops the SM80-style configs (filterMxfp8Tactics, 0.6.15
  on); MXFP4 x MXFP8 builds the very runner FP8 x MXFP4 does. Extracted on the Blackwell archs.
- Archs: those `get_cutlass_fused_moe_module` builds a module for (sm89, sm90, sm100, sm103, sm110,
  sm120, and sm107 from 0.6.16), each with its own SM number in the heuristics: sm110 has its own
  get_candidate_configs_sm110, sm107 runs the SM100 one with sm = 107 (different FP4 lists), sm89
  gets SM80-style configs (and their swap_ab copies: getTmaWarpSpecializedConfigs has no early
  return below SM90), without FP4 variants (its module is built without ENABLE_FP4). Weight-only
  bf16/fp16 x int4 and bf16 x fp8 have SM80-style lists on every arch.
- A variant whose lists come out empty (getTactics() gives no tactics) is recorded under
  `not_extracted` with that reason, so decode says why instead of "no catalog".
- DeepSeek FP8 block scaling: the binding's setRunnerProfiles() ignores the tactic and sets one
  fixed config; recorded under `not_extracted` (variant scaling "deepseek-block"), no list.
Not extracted: W4A8 (fp8 x int4) on SM90 before 0.6.16 (run-time K), MXFP8 on SM89/SM90.

Run through `python3 -m tools.catalogs` (tools/catalogs/README.md). Nothing here runs at tiletune
run time; the output JSON is package data read by `tiletune.catalogs.lookup`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER
from tools.catalogs import sources
from tools.catalogs.cpp import ExtractError, clean, close_of, enum_shape, function_body, scan
from tools.catalogs.cpp import cexpr as _cexpr
from tools.catalogs.cpp import run_function as _run_function
from tools.catalogs.cpp import run_items as _run_items
from tools.catalogs.document import ReleaseData

FAMILY = "fused-moe"
OPS = FUSED_MOE_OPS  # the op names and runner of the data rows: tiletune's one vocabulary
RUNNER = MOE_RUNNER

HEUR = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/cutlass_heuristic.cpp"
DISPATCH = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_gemm_template_dispatch.h"
DISPATCH_TMA = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_gemm_template_dispatch_tma_ws.h"
TRAITS = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_tma_warp_specialized_traits.h"
MOE_KERNELS = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/include/moe_kernels.h"
BINDING = "csrc/fused_moe/cutlass_backend/flashinfer_cutlass_fused_moe_binding.cu"
DISPATCH_MIXED = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_gemm_template_dispatch_tma_ws_mixed_dtype.h"
GEMM_KERNELS = "csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/include/moe_gemm_kernels.h"
GEMM_CONFIGS = "csrc/nv_internal/tensorrt_llm/cutlass_extensions/include/cutlass_extensions/gemm_configs.h"
SOURCE_FILES = (HEUR, DISPATCH, DISPATCH_TMA, TRAITS, MOE_KERNELS, BINDING)
MIXED_SOURCE_FILES = SOURCE_FILES + (DISPATCH_MIXED, GEMM_KERNELS)

# Element widths (bits) of the canonical dtype names used in variant keys.
BITS = {"bf16": 16, "fp16": 16, "fp8": 8, "mxfp8": 8, "nvfp4": 4, "mxfp4": 4, "int4": 4}

# (act, weight) variants extracted per arch, for the archs a release's fused_moe/core.py builds a
# module for (`get_cutlass_fused_moe_module`'s backends; sm107 from 0.6.16). The C++ sees the
# device's own SM (89, 107, 110, ...), so each arch runs the heuristics with its number. A variant
# whose lists come out empty is one the binding builds no runner for there ("No valid tactics").
# Hopper has no FP4 activations; SM120 TMA-WS exists only for FP4 x FP4 and FP8 x FP4, everything
# else there gets SM80/SM89-style configs only; SM89 has SM80-style configs only (its module is
# built without ENABLE_FP4: no FP4 variant).
_WEIGHT_ONLY: list[tuple[str, ...]] = [("bf16", "int4"), ("fp16", "int4"), ("bf16", "fp8")]  # SM80-style weight-only kernels
# MXFP8 activations (use_mxfp8_act_scaling): MXFP8 x MXFP8 builds CutlassMoeFCRunner<fp8, fp8, ...,
# IsMXFPX=true> (the FP8 list less its SM80-style configs: filterMxfp8Tactics); MXFP4 x MXFP8
# builds the very runner FP8 x MXFP4 does
_MXFP8: list[tuple[str, ...]] = [("mxfp8", "mxfp8"), ("mxfp8", "mxfp4")]
_BLACKWELL: list[tuple[str, ...]] = [("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("nvfp4", "nvfp4"), ("fp8", "mxfp4"), *_MXFP8,
              *_WEIGHT_ONLY]
VARIANTS: dict[str, list[tuple[str, ...]]] = {
    "sm89": [("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), *_WEIGHT_ONLY, ("fp8", "int4")],
    # SM90 also: weight-only with SM80-style kernels (bf16/fp16 x int4, bf16 x fp8 which DeepSeek
    # FP8 block scaling also builds), mixed-input TMA-WS (fp8 x int4 = W4A8, bf16/fp16 x mxfp4 =
    # W4A16 MXFP4) and humming fp8 x mxfp4 (act, weight, scaling)
    "sm90": [("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("bf16", "int4"), ("fp16", "int4"), ("bf16", "fp8"),
             ("fp8", "int4"), ("bf16", "mxfp4"), ("fp16", "mxfp4"), ("fp8", "mxfp4", "humming")],
    "sm100": _BLACKWELL,
    "sm103": _BLACKWELL,
    "sm107": _BLACKWELL,
    "sm110": _BLACKWELL,
    "sm120": [("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("nvfp4", "nvfp4"), ("fp8", "mxfp4"), *_MXFP8,
              *_WEIGHT_ONLY],
}  # sm121 decodes with the sm120 lists (tiletune.core.archs.arch_family); the C++ treats 120/121 alike
SM_OF = {"sm89": 89, "sm90": 90, "sm100": 100, "sm103": 103, "sm107": 107, "sm110": 110, "sm120": 120}
CORE_PY = "flashinfer/fused_moe/core.py"
JIT_PY = "flashinfer/jit/fused_moe.py"


def module_archs(release: sources.Source) -> list[str]:
    """The archs whose device this release builds a CUTLASS fused-MoE module for: the backends
    `get_cutlass_fused_moe_module(backend)` (fused_moe/core.py) accepts, each the device's SM."""
    import ast

    text = release.need(CORE_PY)
    fn = next((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef)
               and n.name == "get_cutlass_fused_moe_module"), None)
    if fn is None:
        raise ExtractError(f"{release.ref}:{CORE_PY}: no get_cutlass_fused_moe_module()")
    backends: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "backend":
            for comp in node.comparators:
                for c in ([comp] if isinstance(comp, ast.Constant) else getattr(comp, "elts", [])):
                    if isinstance(c, ast.Constant) and isinstance(c.value, str):
                        backends.add(c.value)
    archs = [a for a, sm in SM_OF.items() if str(sm) in backends]
    if "sm100" not in archs or "sm90" not in archs:
        raise ExtractError(f"{release.ref}:{CORE_PY}: get_cutlass_fused_moe_module backends {sorted(backends)} "
                           "do not look like the ones this extractor read")
    return archs


def sm89_has_fp4(release: sources.Source) -> bool:
    """Whether the SM89 module is compiled with ENABLE_FP4 (its binding's FP4 runners exist only then)."""
    text = release.need(JIT_PY)
    m = re.search(r"def\s+gen_cutlass_fused_moe_sm89_module\([^)]*\)[^:]*:(.*?)\n(?:def |@)", text, re.S)
    if not m:
        raise ExtractError(f"{release.ref}:{JIT_PY}: no gen_cutlass_fused_moe_sm89_module()")
    return "-DENABLE_FP4" in m.group(1)


class NotExtracted(ExtractError):
    """A variant whose C++ in this release has a shape tiletune does not model: the variant is left
    out of that release (decode says "no catalog") and the reason is recorded in the data."""


# CandidateConfigTypeParam flags: only their distinctness matters to the evaluator.
FLAGS = {
    "NONE": 0, "WEIGHT_ONLY": 1, "SIMT_ONLY": 2, "INT8_ONLY": 4, "HOPPER": 8, "BLACKWELL": 16,
    "GROUPED_GEMM": 32, "FP8_ONLY": 64, "FP4_ONLY": 128, "FP8FP4_MIXED": 256,
}


def shape_hash(body: str) -> str:
    """Hash of a function body with its data masked: tile/cluster enum lists collapse to one token."""
    s = re.sub(r"\s+", "", body)
    s = re.sub(r"(?:Tile::|CutlassTileConfig\w*::)CtaShape\w+", "TILE", s)
    s = re.sub(r"ClusterShape::ClusterShape_\w+", "CLUSTER", s)
    s = re.sub(r"TILE(?:,TILE)*,?", "TILES", s)
    s = re.sub(r"\{TILES,cluster[12]sm\}(?:,\{TILES,cluster[12]sm\})*,?", "PAIRS", s)
    return hashlib.sha256(s.encode()).hexdigest()[:12]


def cexpr(expr: str, env: dict[str, Any]) -> Any:
    """cpp.cexpr with the CandidateConfigTypeParam flags the heuristic's conditions test."""
    return _cexpr(expr, env, FLAGS)


def run_items(items: list, env: dict[str, Any], where: str) -> list[str]:
    return _run_items(items, env, where, FLAGS)


def run_function(items: list, env: dict[str, Any], where: str) -> Any:
    return _run_function(items, env, where, FLAGS)


_DECL = re.compile(r"\A(?:auto|bool)\s+const\s[\s\S]*;\Z")


# --------------------------------------------------------------------------------------------
# Which function shapes this extractor was checked against (hash of the body, data masked)
# --------------------------------------------------------------------------------------------

# Every entry was read by hand in the release named in the comment; an unknown hash means the
# C++ changed in a way nobody checked, and extraction stops for that release.
KNOWN_SHAPES: dict[str, dict[str, str]] = {
    "getAmpereConfigs": {"3fb1618bb07a": "v0.6.7"},
    "getConfigs": {"434e5874ce07": "v0.6.7"},
    # v0.6.16: SM90 humming WFP4AFP8 block and use_sm90_mixed_input_gemm rename (not our variants)
    "getTmaWarpSpecializedConfigs": {"52c6e1a82a0a": "v0.6.7", "62dcd5ad4441": "v0.6.16"},
    "get_candidate_configs": {"bd4e58f7ef8a": "v0.6.7"},
    "get_candidate_configs_sm100": {"39af3183397b": "v0.6.7"},
    "get_candidate_configs_sm100_dynamic_cluster_shape": {"f5c2dfb271aa": "v0.6.7"},
    # the same shape in every release 0.6.3 .. 0.7.4 (read in 0.7.4)
    "get_candidate_configs_sm110": {"c0b2479a15b0": "0.7.4"},
    # v0.6.7: grouped FP4 push_backs; v0.6.8: all_tiles[] array; 0.7.1: never_dispatches prune
    "get_candidate_configs_sm120": {"b954e24d7572": "v0.6.7", "7681f68d6c65": "v0.6.8", "f4df22dbbc4a": "0.7.1"},
    # v0.6.10 / v0.6.16: only the weight-only (w4afp8) branch changed
    "get_candidate_configs_sm90": {"0b69beebf1f7": "v0.6.7", "d95146e4e284": "v0.6.10", "8add32cd38e7": "v0.6.16"},
    "get_candidate_tiles": {"77759af5563c": "v0.6.7"},
    "get_candidate_tiles_sm90": {"a2bacc5f82b0": "v0.6.7"},
    "isValidAmpereMOESpecialisation": {"023fc8670b8e": "v0.6.7"},
    # 0.7.2.post1: early returns for EpilogueFusion::ACTIVATION only (default Fusion is NONE)
    "isValidBlackwellMOESpecialisation": {"1a9a0caf53bd": "v0.6.7", "e5c809bd79e6": "0.7.2.post1"},
    "isValidHopperMOESpecialisation": {"76e192ca0a5c": "v0.6.7", "832e5c3e72ae": "v0.6.16", "e278ef228c66": "0.7.2.post1"},
    "isValidSM120MOESpecialisation": {"1b81e6c9eae4": "v0.6.7", "4b288ad7dfec": "0.7.2.post1"},
    "mayHaveFinalizeFused": {"dd12e76e50b1": "v0.6.7", "c60434bc3219": "v0.6.16"},
    # set membership (v0.6.7) vs shape predicate (v0.6.16); both are evaluated from the source
    # weight-only (mixed-input) schedule choice: COOPERATIVE for these (M, N, K) else PINGPONG
    "sm90_supports_coop": {"57daf3dd68a7": "v0.6.18rc7", "b81411fb17b2": "v0.6.12 (std::set membership, as the mcast predicates)"},
    "sm90_supports_mcast_along_m": {"b81411fb17b2": "v0.6.7", "eacf2506532b": "v0.6.16"},
    "sm90_supports_mcast_along_n": {"b81411fb17b2": "v0.6.7", "ab58fee157b0": "v0.6.16"},
}


class Checker:
    """Collects structure hashes; raises for a function whose shape is not in KNOWN_SHAPES."""

    def __init__(self, release: sources.Source, record_only: bool = False) -> None:
        self.release = release
        self.record_only = record_only
        self.seen: dict[str, str] = {}
        self.skipped: list[dict[str, Any]] = []
        self.gemm2_relative = False

    def check(self, path: str, func: str, body: str) -> None:
        h = shape_hash(body)
        self.seen[func] = h
        if self.record_only:
            return
        known = KNOWN_SHAPES.get(func, {})
        if h not in known:
            raise ExtractError(
                f"{self.release.ref}:{path}: {func}() has a structure this extractor was not checked "
                f"against (shape {h}; known: {', '.join(sorted(known)) or 'none'}); read the C++ and "
                "extend tools/catalogs/moe.py"
            )


# --------------------------------------------------------------------------------------------
# The C++ functions, each read from one release
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cfg:
    """One CutlassGemmConfig as the C++ builds it (enum names; converted to JSON at the end)."""

    style: str  # "tma_ws" | "sm80"
    tile: str  # enum value name, e.g. CtaShape128x16x128B or CtaShape32x128x64_WarpShape32x32x64
    sm: int
    cluster: str = "ClusterShape_1x1x1"
    dynamic_cluster: Optional[str] = None
    fallback_cluster: Optional[str] = None
    mainloop: str = "AUTO"
    epilogue: str = "AUTO"
    fusion: str = "NONE"
    swap_ab: bool = False
    stages: Optional[int] = None
    mixed: bool = False  # SM90 mixed-input grouped GEMM: the enum's K number is the tile K in elements
    cuda_kernel: bool = False  # enableCudaKernel set (the MoE dispatch ignores it: runs this tile)


class Heuristic:
    """cutlass_heuristic.cpp of one release: get_candidate_configs and its helpers."""

    def __init__(self, release: sources.Source, checker: Checker) -> None:
        self.release = release
        self.where = f"{release.ref}:{HEUR}"
        self.text = clean(release.need(HEUR))
        self.ck = checker
        self.bodies: dict[str, str] = {}

    def body(self, name: str) -> str:
        if name not in self.bodies:
            b = function_body(self.text, name, self.where)
            self.ck.check(HEUR, name, b)
            self.bodies[name] = b
        return self.bodies[name]

    # -- SM90 --------------------------------------------------------------------------------
    def sm90_tiles(self, flags: int) -> list[str]:
        items = scan(self.body("get_candidate_tiles_sm90"), re.compile(r"CutlassTileConfigSM90::(CtaShape\w+)"))
        return [t.split("::")[-1] for t in run_items(items, {"config": flags}, self.where + ": get_candidate_tiles_sm90")]

    def sm90_predicate(self, name: str, tile: str) -> bool:
        body = self.body(name)
        m = re.search(r"std::set<\w+>\s*valid_tiles\s*\{([^}]*)\}\s*;\s*return\s+valid_tiles\.count\(tile\)\s*==\s*1\s*;", body)
        if m:
            return tile in re.findall(r"CutlassTileConfigSM90::(CtaShape\w+)", m.group(1))
        return bool(run_function(scan(body, _DECL), {"tile": tile}, f"{self.where}: {name}"))

    def sm90_configs(self, flags: int) -> list[Cfg]:
        body = self.body("get_candidate_configs_sm90")
        if flags & FLAGS["WEIGHT_ONLY"]:
            return self._sm90_weight_only(flags, body)
        items = scan(body, re.compile(r"ClusterShape::(ClusterShape_\w+)"))
        out: list[Cfg] = []
        for tile in self.sm90_tiles(flags):
            env = {
                "config": flags,
                "has_w4afp8": False,
                "has_m_mcast": self.sm90_predicate("sm90_supports_mcast_along_m", tile),
                "has_n_mcast": self.sm90_predicate("sm90_supports_mcast_along_n", tile),
            }
            clusters = run_items(items, env, self.where + ": get_candidate_configs_sm90")
            out.extend(Cfg("tma_ws", tile, 90, cluster=c.split("::")[-1]) for c in clusters)
        return out

    def _sm90_weight_only(self, flags: int, body: str) -> list[Cfg]:
        """The grouped weight-only (mixed-input) branch of get_candidate_configs_sm90: per tile one
        mainloop schedule (COOPERATIVE where sm90_supports_coop, else PINGPONG), optionally a tile
        skipped, then the cluster shapes in source order, epilogue AUTO."""
        where = f"{self.where}: get_candidate_configs_sm90 (weight-only)"
        if not flags & FLAGS["GROUPED_GEMM"]:
            raise ExtractError(f"{where}: only grouped weight-only configs are modelled")
        m = re.search(r"if\s*\(\s*has_w4afp8\s*\)\s*\{", body)
        if not m or not re.search(r"bool\s+const\s+has_w4afp8\s*=\s*\(config\s*&\s*CutlassGemmConfig::WEIGHT_ONLY\)\s*&&"
                                  r"\s*\(config\s*&\s*CutlassGemmConfig::GROUPED_GEMM\)\s*;", body):
            raise ExtractError(f"{where}: has_w4afp8 branch not recognised")
        block = body[m.end() - 1 : close_of(body, m.end() - 1) + 1]
        # v0.6.3..v0.6.9 start the std::set with PINGPONG and add COOPERATIVE where the tile
        # supports it: one or two schedules per tile, in the set's (enum value) order
        two = re.search(r"std::set<MainloopScheduleType>\s+mainloop_schedules\s*\{\s*MainloopScheduleType::(\w+)\s*\}\s*;"
                        r"\s*if\s*\(\s*has_coop_supported\s*\)\s*\{\s*mainloop_schedules\.insert\(\s*MainloopScheduleType::(\w+)"
                        r"\s*\)\s*;\s*\}", block)
        if two:
            return self._sm90_weight_only_set(flags, block, two.group(1), two.group(2), where)
        if not re.search(r"std::set<MainloopScheduleType>\s+mainloop_schedules\s*;", block):
            raise NotExtracted(f"{where}: the schedule set is neither empty nor {{PINGPONG}} at the start")
        branch = re.search(
            r"if\s*\(\s*has_coop_supported\s*\)\s*\{([^{}]*)\}\s*else\s*\{\s*mainloop_schedules\.insert\("
            r"MainloopScheduleType::(\w+)\)\s*;\s*\}", block)
        if not branch or not re.search(r"bool\s+const\s+has_coop_supported\s*=\s*sm90_supports_coop\(tile_config\)\s*;", block):
            raise ExtractError(f"{where}: schedule choice not recognised")
        coop_body, other = branch.group(1), branch.group(2)
        coop = re.findall(r"mainloop_schedules\.insert\(MainloopScheduleType::(\w+)\)", coop_body)
        skip = re.findall(r"if\s*\(\s*tile_config\s*==\s*CutlassTileConfigSM90::(\w+)\s*\)\s*continue\s*;", coop_body)
        rest = re.sub(r"if\s*\([^)]*\)\s*continue\s*;|mainloop_schedules\.insert\([^)]*\)\s*;", "", coop_body).strip()
        if len(coop) != 1 or rest:
            raise ExtractError(f"{where}: cooperative branch not recognised")
        tail = block[branch.end():]
        loop = re.search(r"for\s*\(auto\s+const&\s+mainloop_schedule\s*:\s*mainloop_schedules\)\s*\{", tail)
        if not loop:
            raise ExtractError(f"{where}: schedule loop not recognised")
        inner = tail[loop.end() - 1 : close_of(tail, loop.end() - 1) + 1]
        clusters = re.findall(r"(?:CutlassGemmConfig|CutlassGemmConfig\s+candidate)\(tile_config,\s*mainloop_schedule,"
                              r"\s*epilogue_schedule,\s*ClusterShape::(ClusterShape_\w+)\)", inner)
        if len(clusters) != inner.count("push_back(candidate)") or not clusters:
            raise ExtractError(f"{where}: cluster list not recognised")
        if not re.search(r"auto\s+const\s+epilogue_schedule\s*=\s*EpilogueScheduleType::AUTO\s*;", tail):
            raise ExtractError(f"{where}: epilogue schedule is not AUTO")
        out: list[Cfg] = []
        for tile in self.sm90_tiles(flags):
            if self.sm90_predicate("sm90_supports_coop", tile):
                if tile in skip:
                    continue
                schedule = coop[0]
            else:
                schedule = other
            out.extend(Cfg("tma_ws", tile, 90, cluster=c, mainloop=schedule, mixed=True) for c in clusters)
        return out

    def _sm90_weight_only_set(self, flags: int, block: str, first: str, coop: str, where: str) -> list[Cfg]:
        """The v0.6.3..v0.6.9 form: per tile the set {first} (plus `coop` where sm90_supports_coop),
        iterated in enum order, each schedule at the cluster shapes in source order."""
        if not re.search(r"bool\s+const\s+has_coop_supported\s*=\s*sm90_supports_coop\(tile_config\)\s*;", block):
            raise ExtractError(f"{where}: has_coop_supported is not sm90_supports_coop(tile_config)")
        if not re.search(r"auto\s+const\s+epilogue_schedule\s*=\s*EpilogueScheduleType::AUTO\s*;", block):
            raise ExtractError(f"{where}: epilogue schedule is not AUTO")
        loop = re.search(r"for\s*\(auto\s+const&\s+mainloop_schedule\s*:\s*mainloop_schedules\)\s*\{", block)
        if not loop:
            raise ExtractError(f"{where}: schedule loop not recognised")
        inner = block[loop.end() - 1 : close_of(block, loop.end() - 1) + 1]
        clusters = re.findall(r"(?:CutlassGemmConfig|CutlassGemmConfig\s+candidate)\(tile_config,\s*mainloop_schedule,"
                              r"\s*epilogue_schedule,\s*ClusterShape::(ClusterShape_\w+)\)", inner)
        if len(clusters) != inner.count("push_back(candidate)") or not clusters:
            raise ExtractError(f"{where}: cluster list not recognised")
        order = self.schedule_order()
        out: list[Cfg] = []
        for tile in self.sm90_tiles(flags):
            schedules = {first} | ({coop} if self.sm90_predicate("sm90_supports_coop", tile) else set())
            for schedule in sorted(schedules, key=lambda x: order[x]):  # std::set<MainloopScheduleType>
                out.extend(Cfg("tma_ws", tile, 90, cluster=c, mainloop=schedule, mixed=True) for c in clusters)
        return out

    def schedule_order(self) -> dict[str, int]:
        """MainloopScheduleType member -> its value (gemm_configs.h), the order a std::set keeps."""
        text = clean(self.release.need(GEMM_CONFIGS))
        m = re.search(r"enum\s+class\s+MainloopScheduleType\s*\{([^}]*)\}", text)
        if not m:
            raise ExtractError(f"{self.release.ref}:{GEMM_CONFIGS}: no enum class MainloopScheduleType")
        out, nxt = {}, 0
        for item in m.group(1).split(","):
            name, _, val = item.strip().partition("=")
            if not name.strip():
                continue
            nxt = int(val.strip(), 0) if val.strip() else nxt
            out[name.strip()] = nxt
            nxt += 1
        return out

    # -- SM100 / SM103 -----------------------------------------------------------------------
    def sm100_configs(self, flags: int, sm: int) -> list[Cfg]:
        outer = self.body("get_candidate_configs_sm100")
        if not flags & FLAGS["GROUPED_GEMM"]:
            raise ExtractError(f"{self.where}: only grouped SM100 configs are modelled")
        sched = re.search(r"for\s*\(auto\s+schedule\s*:\s*\{([^}]*)\}\s*\)", outer)
        clus = re.search(r"auto\s+cluster_shapes\s*=\s*\{([^}]*)\}\s*;", outer)
        fb = re.search(r"auto\s+fallback_cluster_shape\s*=\s*([^;]*);", outer)
        tail = re.search(
            r"get_candidate_configs_sm100_dynamic_cluster_shape\(\s*sm\s*,\s*config\s*,\s*schedule\s*,\s*ClusterShape::Undefined\s*,\s*ClusterShape::Undefined\s*\)",
            outer,
        )
        if not (sched and clus and fb and tail):
            raise ExtractError(f"{self.where}: get_candidate_configs_sm100() loop not recognised")
        schedules = [s.split("::")[-1] for s in re.findall(r"EpilogueScheduleType::\w+", sched.group(1))]
        clusters = [s.split("::")[-1] for s in re.findall(r"ClusterShape::\w+", clus.group(1))]
        out: list[Cfg] = []
        for schedule in schedules:
            for dyn in clusters + ["Undefined"]:
                fallback = cexpr(fb.group(1), {"cluster_shape": dyn}) if dyn != "Undefined" else "Undefined"
                out.extend(self._sm100_dynamic(flags, sm, schedule, dyn, fallback))
        return out

    def _sm100_dynamic(self, flags: int, sm: int, schedule: str, dyn: str, fallback: str) -> list[Cfg]:
        name = "get_candidate_configs_sm100_dynamic_cluster_shape"
        body = self.body(name)
        env: dict[str, Any] = {"sm": sm, "config": flags, "schedule": schedule, "dynamic_cluster_shape": dyn}
        m = re.search(r"bool\s+supports_2sm\s*=\s*([^;]*);", body)
        if not m:
            raise ExtractError(f"{self.where}: {name}(): no supports_2sm")
        env["supports_2sm"] = bool(cexpr(m.group(1), env))
        items = scan(body, re.compile(r"CutlassTileConfigSM100::(CtaShape\w+)\s*,\s*(?:MainloopScheduleType::AUTO\s*,\s*schedule\s*,\s*)?(cluster[12]sm)"))
        cl = {"cluster1sm": "ClusterShape_1x1x1", "cluster2sm": "ClusterShape_2x1x1"}
        for decl, want in (("cluster1sm", "ClusterShape_1x1x1"), ("cluster2sm", "ClusterShape_2x1x1")):
            if not re.search(rf"auto\s+{decl}\s*=\s*ClusterShape::{want}\s*;", body):
                raise ExtractError(f"{self.where}: {name}(): {decl} is not {want}")
        out = []
        for text in run_items(items, env, f"{self.where}: {name}"):
            mm = re.match(r"CutlassTileConfigSM100::(CtaShape\w+)[\s\S]*(cluster[12]sm)", text)
            assert mm
            out.append(
                Cfg("tma_ws", mm.group(1), sm, cluster=cl[mm.group(2)], dynamic_cluster=dyn,
                    fallback_cluster=fallback, epilogue=schedule)
            )
        return out

    # -- SM110 -------------------------------------------------------------------------------
    def sm110_configs(self, flags: int) -> list[Cfg]:
        """get_candidate_configs_sm110: for cluster M in 1..2 and N in 1..2, a base tile list (2-SM:
        plus two tiles at cluster N 1 and the M=256 tiles; 1-SM: plus a tile at cluster N 1, one more
        for FP8, and the M=64 tiles), each at that cluster with the TMA epilogue. Its shape is pinned
        by KNOWN_SHAPES; the tile and cluster names are read from the body."""
        name = "get_candidate_configs_sm110"
        where = f"{self.where}: {name}()"
        body = self.body(name)
        t = r"CutlassTileConfigSM100::(CtaShape\w+)"

        def tiles(text: str) -> list[str]:
            return re.findall(t, text)

        loops = re.match(r"\s*std::vector<CutlassGemmConfig>\s+candidate_configs\s*;\s*for\s*\(\s*int\s+cluster_m\s*=\s*1\s*;\s*"
                         r"cluster_m\s*<=\s*2\s*;\s*cluster_m\+\+\s*\)\s*\{\s*bool\s+Is2SM\s*=\s*cluster_m\s*==\s*2\s*;\s*"
                         r"for\s*\(\s*int\s+cluster_n\s*=\s*1\s*;\s*cluster_n\s*<=\s*2\s*;\s*cluster_n\+\+\s*\)\s*\{", body)
        base = re.search(r"std::vector\s+base\s*=\s*\{([^}]*)\}\s*;", body)
        two = re.search(r"if\s*\(\s*Is2SM\s*\)\s*\{", body)
        if not (loops and base and two):
            raise ExtractError(f"{where}: loop over cluster M and N not recognised")
        two_block = body[two.end() - 1:close_of(body, two.end() - 1) + 1]
        rest = body[two.end() - 1 + len(two_block):]
        one = re.match(r"\s*else\s*\{", rest)
        if not one:
            raise ExtractError(f"{where}: no else (1-SM) block")
        one_block = rest[one.end() - 1:close_of(rest, one.end() - 1) + 1]
        tail = rest[one.end() - 1 + len(one_block):]
        two_n1 = re.search(r"if\s*\(\s*cluster_n\s*==\s*1\s*\)\s*\{([^{}]*)\}", two_block)
        two_more = re.search(r"std::vector\s+twosm\s*=\s*\{([^}]*)\}\s*;\s*std::copy\(\s*twosm\.begin\(\)", two_block)
        one_n1 = re.search(r"if\s*\(\s*cluster_n\s*==\s*1\s*\)\s*\{\s*base\.push_back\(\s*" + t + r"\s*\)\s*;\s*"
                           r"if\s*\(\s*\(\s*config\s*&\s*CutlassGemmConfig::FP8_ONLY\s*\)\s*!=\s*0\s*\)\s*\{\s*"
                           r"base\.push_back\(\s*" + t + r"\s*\)\s*;\s*\}\s*\}", one_block)
        one_more = re.search(r"std::vector\s+onesm\s*\{([^}]*)\}\s*;\s*std::copy\(\s*onesm\.begin\(\)", one_block)
        clusters = re.search(r"cluster_shapes\s*=\s*\{\s*std::array\s*\{([^}]*)\}\s*,\s*std::array\s*\{([^}]*)\}\s*\}\s*;"
                             r"\s*auto\s+cluster\s*=\s*cluster_shapes\[cluster_m\s*-\s*1\]\[cluster_n\s*-\s*1\]\s*;", tail)
        make = re.search(r"for\s*\(\s*auto\s+tile\s*:\s*base\s*\)\s*\{\s*CutlassGemmConfig\s+config\s*\{\s*tile\s*,\s*"
                         r"MainloopScheduleType::AUTO\s*,\s*EpilogueScheduleType::(\w+)\s*,\s*cluster\s*\}\s*;\s*"
                         r"candidate_configs\.push_back\(\s*config\s*\)\s*;", tail)
        if not (two_n1 and two_more and one_n1 and one_more and clusters and make):
            raise ExtractError(f"{where}: tile lists, cluster table or config construction not recognised")
        table = [[c.split("::")[-1] for c in re.findall(r"ClusterShape::ClusterShape_\w+", row)] for row in clusters.groups()]
        if [len(r) for r in table] != [2, 2]:
            raise ExtractError(f"{where}: the cluster table is not 2 x 2")
        out: list[Cfg] = []
        for cm in (1, 2):
            for cn in (1, 2):
                lst = tiles(base.group(1))
                if cm == 2:
                    lst += (tiles(two_n1.group(1)) if cn == 1 else []) + tiles(two_more.group(1))
                else:
                    if cn == 1:
                        lst += [one_n1.group(1)] + ([one_n1.group(2)] if flags & FLAGS["FP8_ONLY"] else [])
                    lst += tiles(one_more.group(1))
                # the 4-argument SM100-tile constructor: no dynamic cluster, sm_version 100 (its default)
                out.extend(Cfg("tma_ws", tile, 100, cluster=table[cm - 1][cn - 1], epilogue=make.group(1)) for tile in lst)
        return out

    # -- SM120 -------------------------------------------------------------------------------
    def sm120_configs(self, flags: int) -> list[Cfg]:
        name = "get_candidate_configs_sm120"
        body = self.body(name)
        prune: Optional[Callable[[str], bool]] = None
        k = body.find("never_dispatches")
        if k >= 0:
            start = body.rfind("if", 0, k)
            m = re.match(r"if\s*\(([^)]*)\)\s*\{", body[start:])
            if not m:
                raise ExtractError(f"{self.where}: {name}(): prune block not recognised")
            block_end = close_of(body, start + m.end() - 1) + 1
            block = body[start:block_end]
            cond = m.group(1)
            env: dict[str, Any] = {"config": flags}
            fm = re.search(r"bool\s+const\s+(\w+)\s*=\s*([^;]*);", block)
            if fm:
                env[fm.group(1)] = bool(cexpr(fm.group(2), env))
            sw = re.search(r"switch\s*\([^)]*tile_config_sm120\)\s*\{", block)
            if not sw:
                raise ExtractError(f"{self.where}: {name}(): prune switch not recognised")
            cases = block[sw.end() : close_of(block, sw.end() - 1)]
            verdict: dict[str, bool] = {}
            default: Optional[bool] = None
            labels: list[str] = []
            for tok in re.finditer(r"case\s+CutlassTileConfigSM120::(\w+)\s*:|default\s*:|return\s+([^;]*);", cases):
                if tok.group(1):
                    labels.append(tok.group(1))
                elif tok.group(0).startswith("default"):
                    labels.append("*")
                else:
                    v = bool(cexpr(tok.group(2), env))
                    for lab in labels:
                        if lab == "*":
                            default = v
                        else:
                            verdict[lab] = v
                    labels = []
            if default is None:
                raise ExtractError(f"{self.where}: {name}(): prune switch has no default")
            if cexpr(cond, env):
                prune = lambda t: verdict.get(t, default)  # noqa: E731
            body = body[:start] + body[block_end:]
        items = scan(body, re.compile(r"CutlassTileConfigSM120::(CtaShape\w+)"))
        tiles = [t.split("::")[-1] for t in run_items(items, {"config": flags}, f"{self.where}: {name}")]
        return [Cfg("tma_ws", t, 120) for t in tiles if not (prune and prune(t))]

    # -- SM80-style ("Ampere") ---------------------------------------------------------------
    def ampere_tiles(self, sm: int, flags: int) -> list[str]:
        name = "get_candidate_tiles"
        body = self.body(name)
        if flags & (FLAGS["SIMT_ONLY"] | FLAGS["INT8_ONLY"]):
            raise ExtractError(f"{self.where}: {name}(): only default, weight-only and FP8 gemm types are modelled")
        sw = body.find("switch (gemm_type)")
        if sw < 0:
            raise ExtractError(f"{self.where}: {name}(): no switch (gemm_type)")
        tile_re = re.compile(r"CutlassTileConfig::(CtaShape\w+)")
        env = {"sm": sm, "config_type_param": flags}
        base = [t.split("::")[-1] for t in run_items(scan(body[body.index("base_configs"):sw], tile_re), env, name)]
        # gemm_type: SIMT, else WEIGHT_ONLY, else INT8, else FP8, else default (checked below)
        if not re.search(r"if\s*\(config_type_param\s*&\s*CutlassGemmConfig::SIMT_ONLY\)[^}]*\}\s*else\s+if\s*\("
                         r"config_type_param\s*&\s*CutlassGemmConfig::WEIGHT_ONLY\)\s*\{\s*gemm_type\s*=\s*CutlassGemmType::WeightOnly;", body):
            raise ExtractError(f"{self.where}: {name}(): gemm_type selection not recognised")
        case = "WeightOnly" if flags & FLAGS["WEIGHT_ONLY"] else "Fp8" if flags & FLAGS["FP8_ONLY"] else None
        if case is None:
            if not re.search(r"default\s*:\s*return\s+base_configs\s*;", body[sw:]):
                raise ExtractError(f"{self.where}: {name}(): default case does not return base_configs")
            base_start = body.rfind("std::vector<CutlassTileConfig> base_configs", 0, sw)
            if base_start < 0:
                raise ExtractError(f"{self.where}: {name}(): base_configs not found")
            return base
        m = re.search(r"case\s+CutlassGemmType::" + case + r"\s*:", body[sw:])
        if not m:
            raise ExtractError(f"{self.where}: {name}(): no {case} case")
        seg_start = sw + m.end()
        nxt = re.search(r"case\s+CutlassGemmType::\w+\s*:|default\s*:", body[seg_start:])
        seg = body[seg_start : seg_start + (nxt.start() if nxt else len(body) - seg_start)]
        return [t.split("::")[-1] for t in run_items(scan(seg, tile_re), env, f"{self.where}: {name} {case}")]

    def dispatch(self, sm: int, flags: int) -> tuple[str, list[Cfg]]:
        """get_candidate_configs(sm, 1, flags): which branch, and its configs."""
        name = "get_candidate_configs"
        body = self.body(name)
        items = [it for it in scan(body, re.compile(r"(?!)")) if it.kind == "return"]
        env = {"sm": sm, "config_type_param": flags}
        for it in items:
            if not all(bool(cexpr(c, env)) == want for c, want in it.conds):
                continue
            t = it.text
            if re.fullmatch(r"return\s*\{\s*\}\s*;", t):
                return "none", []
            if "get_candidate_configs_sm90" in t:
                return "sm90", self.sm90_configs(flags)
            if "get_candidate_configs_sm110" in t:
                return "sm110", self.sm110_configs(flags)
            if "get_candidate_configs_sm100" in t:
                return "sm100", self.sm100_configs(flags, sm)
            if "get_candidate_configs_sm120" in t:
                return "sm120", self.sm120_configs(flags)
            if re.fullmatch(r"return\s+candidate_configs\s*;", t):
                return "sm80", self._ampere(sm, flags, body)
            raise ExtractError(f"{self.where}: {name}(): unrecognised return {t[:80]!r}")
        raise ExtractError(f"{self.where}: {name}(): no return reached")

    def _ampere(self, sm: int, flags: int, body: str) -> list[Cfg]:
        lo = re.search(r"int\s+const\s+min_stages\s*=\s*([^;]*);", body)
        hi = re.search(r"int\s+const\s+max_stages\s*=\s*([^;]*);", body)
        if not (lo and hi) or not re.search(r"for\s*\(\s*int\s+stages\s*=\s*min_stages\s*;\s*stages\s*<=\s*max_stages\s*;", body):
            raise ExtractError(f"{self.where}: get_candidate_configs(): stage loop not recognised")
        env = {"sm": sm, "int8_configs_only": bool(flags & FLAGS["INT8_ONLY"])}
        smin, smax = cexpr(lo.group(1), env), cexpr(hi.group(1), env)
        out = []
        tiles = self.ampere_tiles(sm, flags)
        for tile in tiles:
            for st in range(smin, smax + 1):
                out.append(Cfg("sm80", tile, sm, stages=st))
        if flags & FLAGS["WEIGHT_ONLY"] and tiles:
            # "add cuda kernel profiler to tactics for weight-only plugins": one more entry, tiles[0]
            # at min_stages with enableCudaKernel set
            if not re.search(r"if\s*\(config_type_param\s*&\s*CutlassGemmConfig::WEIGHT_ONLY\)\s*\{\s*if\s*\(tiles\.size\(\)\s*>\s*0\)\s*\{"
                             r"\s*CutlassGemmConfig\s+CudaKernelConfig\(tiles\[0\],\s*SplitKStyle::NO_SPLIT_K,\s*1,\s*min_stages\)\s*;"
                             r"\s*CudaKernelConfig\.enableCudaKernel\s*=\s*true\s*;\s*candidate_configs\.push_back\(CudaKernelConfig\)\s*;", body):
                raise ExtractError(f"{self.where}: get_candidate_configs(): weight-only CUDA-kernel entry not recognised")
            out.append(Cfg("sm80", tiles[0], sm, stages=smin, cuda_kernel=True))
        return out


# --------------------------------------------------------------------------------------------
# The MoE runner: getTmaWarpSpecializedConfigs ++ getAmpereConfigs, per GEMM
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeFlags:
    """MoeGemmRunner's constexpr type flags (moe_gemm_kernels.h) for one (act, weight) pair."""

    act: str
    weight: str
    scaling: Optional[str] = None  # "humming": SM90 MXFP4 x FP8 with pre-MMA E8M0 scales (Sm90Wfp4Afp8Mode)

    @property
    def act_fp8(self) -> bool:  # T = __nv_fp8_e4m3 (FP8 and MXFP8 activations alike)
        return self.act in ("fp8", "mxfp8")

    @property
    def mxfpx(self) -> bool:  # CutlassMoeFCRunner<fp8, fp8, ..., IsMXFPX=true>: the binding's MXFP8 x MXFP8
        return self.act == "mxfp8" and self.weight == "mxfp8"

    @property
    def use_w4afp8(self) -> bool:  # FP8 activations x INT4 weights (W4A8)
        return self.act == "fp8" and self.weight == "int4"

    @property
    def use_wfp4a16(self) -> bool:  # 16-bit activations x MXFP4 weights
        return self.act in ("bf16", "fp16") and self.fp4_weight

    @property
    def humming(self) -> bool:
        return self.scaling == "humming"

    @property
    def sm90_mixed(self) -> bool:  # use_sm90_mixed_input_gemm (use_w4_groupwise before v0.6.16)
        return self.use_w4afp8 or self.use_wfp4a16 or (self.use_wfp4afp8 and self.humming)

    @property
    def fp4_act(self) -> bool:
        return self.act in ("nvfp4", "mxfp4")

    @property
    def fp4_weight(self) -> bool:
        return self.weight in ("nvfp4", "mxfp4")

    @property
    def same(self) -> bool:  # std::is_same<T, WeightType>
        return self.act == self.weight or (self.fp4_act and self.fp4_weight)

    @property
    def use_fp8(self) -> bool:
        return self.act_fp8 and self.weight not in ("int4", "nvfp4", "mxfp4")

    @property
    def use_fp4(self) -> bool:
        return self.fp4_act

    @property
    def use_wfp4afp8(self) -> bool:
        return self.act_fp8 and self.fp4_weight

    def valid_hopper(self) -> bool:
        return (self.same or (self.weight == "int4" and self.act == "fp8") or self.fp4_weight) and not self.fp4_act

    def valid_blackwell(self) -> bool:
        return self.same or self.use_wfp4afp8

    def valid_sm120(self) -> bool:
        return (self.fp4_act and self.same) or self.use_wfp4afp8

    def valid_ampere(self) -> bool:
        return not self.fp4_act and not self.fp4_weight

    def supports_tma_ws(self, sm: int) -> bool:
        return (
            (sm == 90 and self.valid_hopper())
            or (100 <= sm < 120 and self.valid_blackwell())
            or (sm in (120, 121) and self.valid_sm120())
        )


class MoeRunnerSource:
    """The MoE-level C++ of one release: the list-building steps, the finalize gate and the
    TMA-WS dispatcher's tile cases."""

    def __init__(self, release: sources.Source, heur: Heuristic, ck: Checker) -> None:
        self.release = release
        self.heur = heur
        self.ck = ck
        self.where = f"{release.ref}:{DISPATCH}"
        text = clean(release.need(DISPATCH))
        self.tma_body = function_body(text, "getTmaWarpSpecializedConfigs", self.where)
        ck.check(DISPATCH, "getTmaWarpSpecializedConfigs", self.tma_body)
        self.amp_body = function_body(text, "getAmpereConfigs", self.where)
        ck.check(DISPATCH, "getAmpereConfigs", self.amp_body)
        if not re.search(r"int\s+const\s+max_split_k\s*=\s*1\s*;", self.amp_body):
            raise ExtractError(f"{self.where}: getAmpereConfigs() max_split_k is not 1")
        # getConfigs = TMA-WS list then the Ampere list, in that order
        defs = [m.start() for m in re.finditer(r"::getConfigs\(\s*int\s+sm", text)]
        if not defs:
            raise ExtractError(f"{self.where}: getConfigs(int sm, ...) not found")
        full = text[defs[0] :]
        body = full[full.index("{") + 1 : close_of(full, full.index("{"))]
        ck.check(DISPATCH, "getConfigs", body)
        if not re.search(r"getTmaWarpSpecializedConfigs[\s\S]*getAmpereConfigs[\s\S]*back_inserter\(candidate_configs\)", body):
            raise ExtractError(f"{self.where}: getConfigs() no longer appends Ampere configs after TMA-WS")
        traits = clean(release.need(TRAITS)).replace("__nv_fp4_e2m1", "Fp4Type")
        for fn in ("isValidSM120MOESpecialisation", "isValidBlackwellMOESpecialisation",
                   "isValidHopperMOESpecialisation", "isValidAmpereMOESpecialisation"):
            ck.check(TRAITS, fn, function_body(traits, fn, f"{release.ref}:{TRAITS}"))
        kern = clean(release.need(MOE_KERNELS))
        may = re.search(r"bool\s+mayHaveFinalizeFused\(\)\s*const\s*\{([^}]*)\}", kern)
        if not may:
            raise ExtractError(f"{release.ref}:{MOE_KERNELS}: mayHaveFinalizeFused() not found")
        ck.check(MOE_KERNELS, "mayHaveFinalizeFused", may.group(1))
        if not re.search(r"getConfigs\(\s*gemm_id\s*==\s*MoeGemmId::GEMM_2\s*&&\s*mayHaveFinalizeFused\(\)\s*\)", kern):
            raise ExtractError(f"{release.ref}:{MOE_KERNELS}: getTactics() is not getConfigs(GEMM_2 && mayHaveFinalizeFused())")
        default = re.search(r"bool\s+use_fused_finalize_\s*=\s*(true|false)\s*;", kern)
        if not default:
            raise ExtractError(f"{release.ref}:{MOE_KERNELS}: no default for use_fused_finalize_")
        self.finalize_default = default.group(1) == "true"
        if not re.search(r"use_fused_finalize_\s*&&\s*!(?:use_sm90_mixed_input_gemm|use_w4_groupwise)\s*;", may.group(1)):
            raise ExtractError(f"{release.ref}:{MOE_KERNELS}: mayHaveFinalizeFused() no longer excludes the SM90 mixed-input GEMM")
        self.gemm_kernels = clean(release.need(GEMM_KERNELS))
        binding = clean(release.need(BINDING))
        g1 = binding.find("getTactics(kernels::MoeGemmId::GEMM_1)")
        if g1 < 0 or not re.search(
            r"mAllProfiles\s*=\s*gemm1_tactics\s*;\s*mAllProfiles\.insert\(\s*mAllProfiles\.end\(\)\s*,\s*gemm2_tactics\.begin\(\)", binding
        ):
            raise ExtractError(f"{release.ref}:{BINDING}: mAllProfiles is not GEMM1 ++ GEMM2")
        # DeepSeek FP8 block scaling builds the bf16 x fp8 runner, but setRunnerProfiles() ignores
        # the profile ids for it and sets one fixed config on both GEMMs: its tactic selects nothing.
        fixed = re.search(r"void\s+setRunnerProfiles\([^)]*\)\s*\{\s*if\s*\(\s*mUseDeepSeekFP8BlockScaling\s*\)\s*\{"
                          r"\s*auto\s+config\s*=\s*tensorrt_llm::cutlass_extensions::CutlassGemmConfig\(\s*"
                          r"tensorrt_llm::cutlass_extensions::CutlassTileConfigSM90::(\w+)\s*,[^;]*;\s*"
                          r"mKernelRunner->setTactic\(config,\s*config\)\s*;\s*return\s*;", binding)
        self.deepseek_fixed = fixed.group(1) if fixed else None
        self._read_binding_runners(binding)
        self.mxfp8_filter = self._mxfp8_filter(kern)
        setter = binding.rfind("use_fused_finalize_ = ", 0, g1)
        # Before the fix that set it first, tactics were enumerated with the member's default.
        self.finalize_gated = setter >= 0
        self.gemm2_relative = self._gemm2_ids_relative(binding)
        self.cases = self._dispatch_cases(release)
        self.sm80_mixed_k, self.sm80_mixed_cases = self._sm80_mixed_cases(text)
        self.mixed_why = ""
        self.mixed_fp4_old: dict[str, tuple[int, int, int]] = {}
        self.mixed_cases = self._mixed_cases(release)

    def _read_binding_runners(self, binding: str) -> None:
        """Which runners FusedMoeRunner's constructor builds for MXFP8 activations and for FP16 x
        MXFP4 (flashinfer_cutlass_fused_moe_binding.cu), each checked against the statement read."""
        where = f"{self.release.ref}:{BINDING}"
        fp4 = r"(?:kernels::Fp4Type|__nv_fp4_e2m1)"
        # MXFP8 x MXFP8 (0.6.6 on): CutlassMoeFCRunner<fp8, fp8, ..., IsMXFPX=true>
        self.mxfp8_runner = bool(re.search(
            r"if\s*\(\s*isWMxfp8AMxfp8Quant\(\)\s*\)\s*\{\s*mKernelRunner\s*=\s*switch_output_type<\s*__nv_fp8_e4m3\s*,"
            r"\s*__nv_fp8_e4m3\s*,\s*false\s*,\s*true\s*>", binding))
        # MXFP4 x MXFP8 shares FP8 x MXFP4's branch and runner: switch_output_type<fp8, Fp4Type>
        self.mxfp4_mxfp8_runner = bool(re.search(
            r"isWMxfp4AMxfp8Quant\(\)\s*\|\|\s*isWMxfp4AFp8Quant\(\)\s*\)+\s*\{\s*mInnerDimMultiplier\s*=\s*16\s*;"
            r"[^{}]*?mKernelRunner\s*=\s*switch_output_type<\s*__nv_fp8_e4m3\s*,\s*" + fp4 + r"\s*>\(", binding))
        if not self.mxfp4_mxfp8_runner:
            raise ExtractError(f"{where}: the MXFP4 x (MX)FP8 runner is not built the way this extractor read it")
        # FP16 x MXFP4 (W4A16): CutlassMoeFCRunner<half, Fp4Type> where built, else refused (ICHECK BF16)
        m = re.search(r"if\s*\(\s*isWFP4A16Quant\(\)\s*\)\s*\{", binding)
        if not m:
            raise ExtractError(f"{where}: no isWFP4A16Quant() branch in FusedMoeRunner's constructor")
        block = binding[m.end() - 1:close_of(binding, m.end() - 1) + 1]
        self.fp16_wfp4a16_refused: Optional[str] = None
        if re.search(r"mActivationDtype\s*==\s*dl_float16\s*\)\s*\{\s*mKernelRunner\s*=\s*std::make_shared<\s*"
                     r"kernels::CutlassMoeFCRunner<\s*half\s*,\s*" + fp4 + r"\s*>\s*>", block):
            pass
        elif re.search(r"TVM_FFI_ICHECK_EQ\(\s*mActivationDtype\s*,\s*dl_bfloat16\s*\)", block):
            check = re.search(r'TVM_FFI_ICHECK_EQ\(\s*mActivationDtype\s*,\s*dl_bfloat16\s*\)((?:\s*(?:<<\s*)?"(?:\\.|[^"\\])*")+)\s*;', block)
            said = "".join(re.findall(r'"((?:\\.|[^"\\])*)"', check.group(1))) if check else ""
            self.fp16_wfp4a16_refused = (f"the binding builds no FP16 x MXFP4 runner: FusedMoeRunner's constructor "
                                         f"checks for BF16 activations ('{said}', {BINDING})")
        else:
            raise ExtractError(f"{where}: the isWFP4A16Quant() branch neither builds <half, Fp4Type> nor refuses FP16")

    def _mxfp8_filter(self, kern: str) -> bool:
        """Whether getTactics() drops the SM80-style configs of an MXFP8 x MXFP8 runner
        (filterMxfp8Tactics, 0.6.15 on; use_mxfp8 = use_fp8 && IsMXFPX)."""
        if "filterMxfp8Tactics" not in kern:
            return False
        where = f"{self.release.ref}:{MOE_KERNELS}"
        calls = re.search(r"getTactics\(\s*MoeGemmId\s+gemm_id\s*\)\s*override\s*\{\s*return\s+filterMxfp8Tactics\(\s*"
                          r"moe_gemm_runner_\.getConfigs\(", kern)
        body = re.search(r"filterMxfp8Tactics\([^)]*\)\s*\{\s*if\s+constexpr\s*\(\s*use_mxfp8\s*\)\s*\{\s*configs\.erase\("
                         r"[\s\S]*?return\s*!config\.is_tma_warp_specialized\s*;", kern)
        flag = re.search(r"use_mxfp8\s*=\s*use_fp8\s*&&\s*IsMXFPX\s*;", kern)
        if not (calls and body and flag):
            raise ExtractError(f"{where}: filterMxfp8Tactics is not 'MXFP8 runners drop the non-TMA-WS configs' as read in 0.6.15")
        return True

    def _gemm2_ids_relative(self, binding: str) -> bool:
        """Whether setRunnerProfiles() reads a stored GEMM2 id below mGemm2TacticCount as relative to
        the GEMM2 list (v0.6.3 .. v0.6.14) while runGemmProfile() profiled mAllProfiles[id], the
        absolute entry; False where both read the id as absolute (v0.6.15 and later)."""
        where = f"{self.release.ref}:{BINDING}"
        body = function_body(binding, "setRunnerProfiles", where)
        relative = re.search(r"if\s*\(\s*id2\s*>=\s*0\s*&&\s*id2\s*<\s*mGemm2TacticCount\s*\)\s*\{\s*"
                             r"absolute_id2\s*=\s*mGemm1TacticCount\s*\+\s*id2\s*;", body)
        absolute = re.search(r"id2\s*>=\s*mGemm1TacticCount\s*&&\s*id2\s*<\s*mGemm1TacticCount\s*\+\s*mGemm2TacticCount"
                             r"[\s\S]*?best_gemm2_profile\s*=\s*mAllProfiles\.at\(\s*id2\s*\)", body)
        if relative and not absolute:
            if not re.search(r"profile_id\s*==\s*-1\s*\?\s*mAllProfiles\.front\(\)\s*:\s*mAllProfiles\[\s*profile_id\s*\]", binding):
                raise ExtractError(f"{where}: runGemmProfile() no longer profiles mAllProfiles[profile_id]")
            return True
        if absolute and not relative:
            return False
        raise ExtractError(f"{where}: setRunnerProfiles() reads the GEMM2 id in a way this extractor does not know")

    def _sm80_mixed_cases(self, text: str) -> tuple[str, set[str]]:
        """The SM80-style dispatcher overload for T != WeightType (weight-only GEMMs): its tile K
        expression and the tile cases it has."""
        i = text.find("Config is invalid for mixed type tensorop GEMM")
        start = text.rfind("void dispatchMoeGemmToCutlass(", 0, i)
        if i < 0 or start < 0:
            raise ExtractError(f"{self.where}: weight-only SM80 dispatcher not found")
        body = text[start:i]
        k = re.search(r"constexpr\s+int\s+tile_shape_k\s*=\s*128\s*\*\s*8\s*/\s*cutlass::sizeof_bits<T>::value\s*;", body)
        cases = set(re.findall(r"case\s+cutlass_extensions::CutlassTileConfig::(CtaShape\w+)\s*:", body))
        if not k or not cases or "GemmShape<16, 128, tile_shape_k>" not in body.replace("\n", " "):
            raise ExtractError(f"{self.where}: weight-only SM80 dispatcher not recognised (tile K)")
        return "128 * 8 / bits(T)", cases

    def _mixed_cases(self, release: sources.Source) -> Optional[dict[str, str]]:
        """Tile enum -> macro of the SM90 mixed-input dispatcher (sm90_dispatch_moe_mixed_dtype_gemm_to_cutlass),
        or None when this release's dispatcher derives K from the weight packing instead of the
        enum (v0.6.7 .. v0.6.15, v0.6.16.post3 .. v0.6.17): those lists are not extracted."""
        where = f"{release.ref}:{DISPATCH_MIXED}"
        text = clean(release.need(DISPATCH_MIXED))
        body = function_body(text, "sm90_dispatch_moe_mixed_dtype_gemm_to_cutlass", where)
        if re.search(r"constexpr\s+int\s+Ktile\s*=", body):
            self.mixed_fp4_old = self._old_mixed_fp4_tiles(body, where)
            if self.mixed_fp4_old:  # MXFP4 weights get constant tiles: only INT4's K is chosen at run time
                self.mixed_why = (f"{where}: for INT4 weights (W4A8) the mixed-input dispatcher instantiates Ktile = "
                                  "128 * PackedScalesNum / sizeof(T), PackedScalesNum chosen from the GEMM's K at run time: "
                                  "the tile a tactic runs is not a function of the tactic alone, so this list is not extracted")
            else:
                self.mixed_why = (f"{where}: the mixed-input dispatcher instantiates a Ktile chosen from the GEMM's K at "
                                  "run time: the tile a tactic runs is not a function of the tactic alone, so these lists "
                                  "are not extracted")
            return None
        macros = {}
        for name in ("DISPATCH_MIXED_DTYPE_MOE_TILE", "DISPATCH_MIXED_DTYPE_MOE_TILE_WITH_SMALL_K", "DISPATCH_MIXED_DTYPE_MOE_SMALL_K_TILE"):
            d = re.search(r"#define\s+" + name + r"\(ENUM_NAME,\s*TILE_M,\s*TILE_N,\s*TILE_K\)([\s\S]*?)break", body)
            if d and "Shape<Int<TILE_M>, Int<TILE_N>, Int<TILE_K>>" not in re.sub(r"\s*\\\n\s*", " ", d.group(1)):
                raise ExtractError(f"{where}: {name} does not instantiate Shape<TILE_M, TILE_N, TILE_K>")
            if d:
                macros[name] = d.group(1)
        if "DISPATCH_MIXED_DTYPE_MOE_TILE" not in macros:
            raise ExtractError(f"{where}: mixed-input tile macro not recognised")
        cases: dict[str, str] = {}
        for m in re.finditer(r"(DISPATCH_MIXED_DTYPE_MOE_\w+)\((CtaShape(\d+)x(\d+)x(\d+)B),\s*(\d+),\s*(\d+),\s*(\d+)\)\s*;", body):
            if m.group(1) not in macros:
                raise ExtractError(f"{where}: unknown dispatch macro {m.group(1)}")
            if m.group(3, 4, 5) != m.group(6, 7, 8):
                raise ExtractError(f"{where}: {m.group(2)} dispatched with a different shape {m.group(6, 7, 8)}")
            cases[m.group(2)] = m.group(1)
        if not cases:
            raise ExtractError(f"{where}: no mixed-input tile cases found")
        return cases

    @staticmethod
    def _old_mixed_fp4_tiles(body: str, where: str) -> dict[str, tuple[int, int, int]]:
        """The older mixed-input dispatcher (v0.6.3 .. v0.6.15, v0.6.16.post3 .. v0.6.17) for MXFP4
        weights: each enum's case instantiates Shape<M, N or _Ntile, _Ktile>, with Ntile and Ktile
        constants when WeightType is FP4 (`is_same_v<WeightType, fp4> ? a : b`). enum -> (M, N, K)."""
        fp4 = r"\(?\s*std::is_same_v<\s*WeightType\s*,\s*__nv_fp4_e2m1\s*>\s*\)?"
        ifdef = re.search(r"#if\s+defined\(ENABLE_FP4\)([\s\S]*?)#else", body)
        if not ifdef:
            return {}
        consts = {}
        for name in ("Ntile", "Ktile"):
            m = re.search(r"constexpr\s+int\s+" + name + r"\s*=\s*" + fp4 + r"\s*\?\s*(\d+)\s*:", ifdef.group(1))
            if not m:
                return {}  # no constant FP4 tile this extractor reads: the list stays out (mixed_why says so)
            consts[name] = int(m.group(1))
        out = {}
        for m in re.finditer(r"case\s+tkc::CutlassTileConfigSM90::(CtaShape\w+)\s*:\s*sm90_dispatch_moe_mixed_dtype_gemm_config<"
                             r"\s*T\s*,\s*WeightType\s*,\s*GemmOutputType\s*,\s*EpilogueTag\s*,\s*Shape<\s*_(\w+)\s*,\s*_(\w+)\s*,"
                             r"\s*_(\w+)\s*>\s*>", body):
            dims = [int(t) if t.isdigit() else consts.get(t) for t in m.group(2, 3, 4)]
            a, b, c = dims
            if a is None or b is None or c is None:
                raise ExtractError(f"{where}: case {m.group(1)} instantiates Shape<_{m.group(2)}, _{m.group(3)}, _{m.group(4)}>")
            out[m.group(1)] = (a, b, c)
        if not out:
            raise ExtractError(f"{where}: no tile cases found in the mixed-input dispatcher")
        return out

    def _dispatch_cases(self, release: sources.Source) -> dict[int, set[tuple[int, int, int]]]:
        where = f"{release.ref}:{DISPATCH_TMA}"
        text = clean(release.need(DISPATCH_TMA))
        body = function_body(text, "dispatchMoeGemmSelectTileShapeTmaWarpSpecialized", where)
        cases: dict[int, set[tuple[int, int, int]]] = {}
        for sw in re.finditer(r"switch\s*\(\s*gemm_config\.tile_config_sm(\d+)\s*\)\s*\{", body):
            block = body[sw.end() : close_of(body, sw.end() - 1)]
            for m in re.finditer(r"SHAPE_CASE\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", block):
                cases.setdefault(int(m.group(1)), set()).add((int(m.group(2)), int(m.group(3)), int(m.group(4))))
        if not cases.get(90) or not cases.get(100) or not cases.get(120):
            raise ExtractError(f"{where}: tile-shape switch cases for SM90/SM100/SM120 not found")
        if not re.search(r"Unsupported tile shape config %d for MoE gemm", text):
            raise ExtractError(f"{where}: default-case message changed")
        # SM120 kernels are only instantiated for the (M, N, K-in-elements) combinations this
        # constexpr check lists; any other combination throws at dispatch time.
        sm120 = function_body(text, "are_tile_shapes_supported_sm120", where)
        ret = re.findall(r"return\s+([^;]*TileK[^;]*);", sm120)
        if len(ret) != 1 or not re.search(r"size<0>\(ClusterShape\{\}\)\s*!=\s*1", sm120):
            raise ExtractError(f"{where}: are_tile_shapes_supported_sm120() not recognised")
        self.sm120_supported = ret[0]
        return cases

    def _check_mixed(self, tf: "TypeFlags") -> None:
        """The SM90 mixed-input steps getTmaWarpSpecializedConfigs applies: only swap_ab copies
        kept, then (humming, v0.6.16+) single-warpgroup configs appended; and a dispatcher that
        instantiates each tile with a K fixed by the tactic: the enum's K number in elements
        (v0.6.16+), or, in the older dispatcher, K 128 (and N 64 for the 64x128 enum) for MXFP4
        weights, while INT4 weights (W4A8) there get a K chosen from the GEMM's K at run time."""
        b, where = self.tma_body, self.where
        if self.mixed_cases is None and not (tf.use_wfp4a16 and self.mixed_fp4_old):
            raise NotExtracted(self.mixed_why)
        if self.mixed_cases is None:  # the older dispatcher: use_w4_groupwise = use_w4afp8 || use_wfp4a16
            if not re.search(r"use_w4_groupwise\s*=\s*use_w4afp8\s*\|\|\s*use_wfp4a16\s*;", self.gemm_kernels):
                raise ExtractError(f"{self.release.ref}:{GEMM_KERNELS}: use_w4_groupwise is not use_w4afp8 || use_wfp4a16")
            return
        if not re.search(r"if\s*\(\s*use_sm90_mixed_input_gemm\s*\)\s*\{\s*tma_ws_configs\.erase\([\s\S]*?return\s*!config\.swap_ab\s*;", b):
            raise NotExtracted(f"{where}: getTmaWarpSpecializedConfigs() has no use_sm90_mixed_input_gemm swap_ab-only step")
        if not re.search(r"use_sm90_mixed_input_gemm\s*=\s*use_w4afp8\s*\|\|\s*use_wfp4a16\s*\|\|\s*use_sm90_wfp4afp8\s*;", self.gemm_kernels):
            raise ExtractError(f"{self.release.ref}:{GEMM_KERNELS}: use_sm90_mixed_input_gemm is not w4afp8 || wfp4a16 || sm90_wfp4afp8")
        if not re.search(r"fp4_only_flag\s*=\s*\(\s*use_fp4\s*\|\|\s*\(\s*use_wfp4afp8\s*&&\s*!use_sm90_humming_pre_mma\s*\)\s*\)", b):
            raise ExtractError(f"{where}: fp4_only_flag is not use_fp4 || (use_wfp4afp8 && !humming)")

    def _humming(self) -> list[Cfg]:
        """The single-warpgroup configs the humming mode appends on SM90 (tiles x schedules, swap_ab)."""
        m = re.search(r"if\s+constexpr\s*\(\s*use_wfp4afp8\s*&&\s*Sm90Wfp4Afp8Mode\s*==\s*Sm90Wfp4Afp8ScaleMode::kHummingPreMmaE8M0\s*\)\s*\{"
                      r"\s*if\s*\(\s*sm\s*==\s*90\s*\)\s*\{", self.tma_body)
        if not m:
            raise ExtractError(f"{self.where}: humming block not recognised")
        block = self.tma_body[m.end() - 1 : close_of(self.tma_body, m.end() - 1) + 1]
        tiles = re.search(r"for\s*\(Tile\s+tile\s*:\s*\{([^}]*)\}\)", block)
        scheds = re.search(r"for\s*\(Schedule\s+schedule\s*:\s*\{([^}]*)\}\)", block)
        if not (tiles and scheds and re.search(r"CutlassGemmConfig\s+config\(tile,\s*schedule,\s*cutlass_extensions::EpilogueScheduleType::AUTO,"
                                              r"\s*cutlass_extensions::ClusterShape::ClusterShape_1x1x1\)\s*;\s*config\.swap_ab\s*=\s*true\s*;", block)):
            raise ExtractError(f"{self.where}: humming configs not recognised")
        return [Cfg("tma_ws", t, 90, mainloop=sc, swap_ab=True, mixed=True)
                for t in re.findall(r"Tile::(CtaShape\w+)", tiles.group(1))
                for sc in re.findall(r"Schedule::(\w+)", scheds.group(1))]

    def tma_ws(self, sm: int, tf: TypeFlags, finalize: bool) -> list[Cfg]:
        """getTmaWarpSpecializedConfigs(sm, finalize) for this type pair."""
        mixed = sm == 90 and tf.sm90_mixed
        if tf.humming and "kHummingPreMmaE8M0" not in self.tma_body:
            raise NotExtracted(f"{self.where}: this release has no humming MXFP4 x FP8 mode "
                               "(no Sm90Wfp4Afp8ScaleMode::kHummingPreMmaE8M0 in getTmaWarpSpecializedConfigs)")
        if tf.humming and sm != 90:
            return []  # humming is SM90's only
        if tf.use_wfp4afp8 and sm == 90 and not tf.humming:
            raise ExtractError("SM90 FP8xFP4 without humming scales: the binding builds no runner for it")
        if mixed:
            self._check_mixed(tf)
        flags = FLAGS["GROUPED_GEMM"]
        if not tf.same:
            flags |= FLAGS["WEIGHT_ONLY"]
        if sm >= 100:
            flags |= FLAGS["BLACKWELL"]
        if sm == 90:
            flags |= FLAGS["HOPPER"]
        if tf.use_fp8:
            flags |= FLAGS["FP8_ONLY"]
        if tf.use_fp4 or (tf.use_wfp4afp8 and not tf.humming):
            flags |= FLAGS["FP4_ONLY"]
        if tf.use_wfp4afp8:
            flags |= FLAGS["FP8FP4_MIXED"]
        b = self.tma_body
        if re.search(r"sm\s*=\s*use_wfp4afp8\s*&&\s*sm\s*==\s*103\s*\?\s*100\s*:\s*sm\s*;", b) and tf.use_wfp4afp8 and sm == 103:
            sm = 100
        if 100 <= sm < 120 and not tf.valid_blackwell():
            return []
        if sm in (120, 121) and not tf.valid_sm120():
            return []
        if sm == 90 and not tf.valid_hopper():
            return []
        # (no return below SM90: on SM89 the heuristic's SM80-style branch answers, and its
        # configs get the swap_ab copies below like any other)
        _, configs = self.heur.dispatch(sm, flags)
        if re.search(r"if\s*\(\s*sm\s*==\s*103\s*&&\s*use_fp4\s*\)", b) and sm == 103 and tf.use_fp4:
            configs = configs + self.heur.dispatch(100, flags)[1]
        if finalize:
            if not re.search(r"if\s*\(\s*supports_finalize_fusion\s*\)[\s\S]*EpilogueFusionType::FINALIZE[\s\S]*EpilogueScheduleType::NO_SMEM", b):
                raise ExtractError(f"{self.where}: finalize duplication step not recognised")
            configs = configs + [_replace(c, fusion="FINALIZE") for c in configs]
            configs = [c for c in configs if not (c.fusion == "FINALIZE" and c.epilogue == "NO_SMEM")]
        if not re.search(r"auto\s+swap_ab_configs\s*=\s*tma_ws_configs\s*;[\s\S]*config\.swap_ab\s*=\s*true", b):
            raise ExtractError(f"{self.where}: swap_ab duplication step not recognised")
        configs = configs + [_replace(c, swap_ab=True) for c in configs]
        if tf.sm90_mixed:  # use_sm90_mixed_input_gemm is a type flag: swap_ab copies only, on any SM (SM89 W4A8)
            if not re.search(r"if\s*\(\s*(?:use_sm90_mixed_input_gemm|use_w4_groupwise)\s*\)\s*\{\s*tma_ws_configs\.erase\("
                             r"[\s\S]*?return\s*!config\.swap_ab\s*;", b):
                raise ExtractError(f"{self.where}: getTmaWarpSpecializedConfigs() has no swap_ab-only step for the mixed-input types")
            configs = [c for c in configs if c.swap_ab]
            if mixed and tf.humming:
                configs = configs + self._humming()
        return configs

    def ampere(self, sm: int, tf: TypeFlags) -> list[Cfg]:
        """getAmpereConfigs(sm) for this type pair (SM80/SM89-style multistage kernels)."""
        if not tf.valid_ampere() or (tf.use_w4afp8 and sm != 89) or tf.use_wfp4a16:
            return []
        if not re.search(r"\(use_w4afp8\s*&&\s*sm\s*!=\s*89\)\s*\|\|\s*use_wfp4a16\)\s*\{\s*return\s*\{\s*\}\s*;", self.amp_body):
            raise ExtractError(f"{self.where}: getAmpereConfigs() no longer returns {{}} for w4afp8 (sm != 89) / wfp4a16")
        flags = FLAGS["GROUPED_GEMM"]
        if not tf.same:
            flags |= FLAGS["WEIGHT_ONLY"]
        if tf.use_fp8:
            flags |= FLAGS["FP8_ONLY"]
        return self.heur.dispatch(sm, flags)[1]

    def lists(self, sm: int, tf: TypeFlags, use_fused_finalize: bool) -> tuple[list[Cfg], list[Cfg]]:
        """(GEMM1 list, GEMM2 list) exactly as getTactics(GEMM_1/GEMM_2) returns them."""
        if tf.mxfpx and not self.mxfp8_runner:
            raise NotExtracted(f"the binding builds no MXFP8 x MXFP8 runner in this release ({BINDING}: no isWMxfp8AMxfp8Quant branch)")
        if tf.act == "fp16" and tf.use_wfp4a16 and self.fp16_wfp4a16_refused:
            raise NotExtracted(self.fp16_wfp4a16_refused)
        effective = use_fused_finalize if self.finalize_gated else self.finalize_default
        # mayHaveFinalizeFused(): ... && !use_sm90_mixed_input_gemm (!use_w4_groupwise before v0.6.16)
        may_finalize = tf.supports_tma_ws(sm) and sm >= 90 and effective and not tf.sm90_mixed
        amp = self.ampere(sm, tf)
        g1 = self.tma_ws(sm, tf, False) + amp
        g2 = self.tma_ws(sm, tf, may_finalize) + amp
        if tf.mxfpx and self.mxfp8_filter:  # filterMxfp8Tactics: SM80-style kernels cannot block-scale
            g1 = [c for c in g1 if c.style == "tma_ws"]
            g2 = [c for c in g2 if c.style == "tma_ws"]
        return g1, g2


def _replace(c: Cfg, **kw: Any) -> Cfg:
    return dataclasses.replace(c, **kw)


# --------------------------------------------------------------------------------------------
# Config -> catalog JSON
# --------------------------------------------------------------------------------------------


def to_json(c: Cfg, act: str, cases: dict[int, set[tuple[int, int, int]]], sm120_supported: str = "true",
            moe: Optional["MoeRunnerSource"] = None, weight_only: bool = False, humming: bool = False) -> dict[str, Any]:
    """Catalog config object; K of a TMA-WS tile converted from bytes to elements of the activation
    (SM90 mixed-input tiles: the enum's number is already elements; SM80-style weight-only tiles:
    K = 128 * 8 / bits(activation), the dispatcher's tile_shape_k)."""
    shp = enum_shape(c.tile)
    assert shp is not None
    cluster = enum_shape(c.cluster) or (1, 1, 1)
    d: dict[str, Any] = {"name": c.tile, "swap_ab": c.swap_ab, "stream_k": False}
    if c.style == "sm80":
        tile = list(shp)
        failure = None
        if weight_only:
            assert moe is not None
            tile[2] = 128 * 8 // BITS[act]
            if c.tile not in moe.sm80_mixed_cases:
                failure = ("dispatcher has no case for this tile: moe_gemm_template_dispatch.h throws "
                           "'Config is invalid for mixed type tensorop GEMM.'")
        d.update(tile=tile, cluster=[1, 1, 1], stages=c.stages, style="sm80", mainloop_schedule=None,
                 epilogue_schedule=None, epilogue_fusion=None, mma_tile=None, known_failure=failure)
        if c.cuda_kernel:
            d["enable_cuda_kernel"] = True  # set by the heuristic; the MoE dispatcher runs the tile anyway
        return d
    m, n, kbytes = shp
    if c.mixed:
        assert moe is not None
        d.update(tile=[m, n, kbytes], cluster=list(cluster), stages=None, style="tma_ws", mainloop_schedule=c.mainloop,
                 epilogue_schedule=c.epilogue, epilogue_fusion=c.fusion, mma_tile=None, sm_version=c.sm,
                 known_failure=None)
        if moe.mixed_cases is None:  # the older dispatcher, MXFP4 weights: the case's own Shape<M, N, K>
            shape = moe.mixed_fp4_old.get(c.tile)
            if shape is None:
                d["known_failure"] = (f"mixed-input dispatcher has no case for this tile: "
                                      f"moe_gemm_template_dispatch_tma_ws_mixed_dtype.h throws for {c.tile}")
            else:
                d["tile"] = list(shape)
            return d
        macro = moe.mixed_cases.get(c.tile)
        if macro is None:
            d["known_failure"] = (f"mixed-input dispatcher has no case for this tile: "
                                  f"moe_gemm_template_dispatch_tma_ws_mixed_dtype.h throws for {c.tile}")
        elif macro == "DISPATCH_MIXED_DTYPE_MOE_TILE" and c.mainloop.startswith("SINGLE_WARPGROUP"):
            d["known_failure"] = ("single-warpgroup schedule on a tile without a small-K kernel: "
                                  "moe_gemm_template_dispatch_tma_ws_mixed_dtype.h throws (mainloop schedule invalid)")
        elif macro == "DISPATCH_MIXED_DTYPE_MOE_SMALL_K_TILE" and not humming:
            d["known_failure"] = ("single-warpgroup small-K tile outside humming mode: moe_gemm_template_dispatch_tma_ws_mixed_dtype.h "
                                  "throws 'Single-warpgroup small-K tile is only valid for Humming pre-MMA scale.'")
        return d
    k = kbytes * 8 // BITS[act]
    dyn = enum_shape(c.dynamic_cluster) if c.dynamic_cluster else None
    d.update(
        tile=[m, n, k],
        # the runtime cluster is the dynamic one when set; the static one then only picks 1SM/2SM
        cluster=list(dyn or cluster),
        stages=None,
        style="tma_ws",
        mainloop_schedule=c.mainloop,
        epilogue_schedule=c.epilogue,
        epilogue_fusion=c.fusion,
        mma_tile=[m * 2, n, k] if c.sm >= 100 and c.sm < 120 and cluster[0] == 2 else None,
        sm_version=c.sm,
        known_failure=None,
    )
    if c.dynamic_cluster is not None:
        d["static_cluster"] = list(cluster)
        d["dynamic_cluster"] = c.dynamic_cluster.replace("ClusterShape_", "")
        d["fallback_cluster"] = (c.fallback_cluster or "").replace("ClusterShape_", "")
    handled = cases.get(c.sm, set())
    if c.sm == 103:
        handled = handled | cases.get(100, set())
    if 100 < c.sm < 120 and c.sm != 103:
        handled = cases.get(100, set())
    if c.sm == 121:
        handled = cases.get(120, set())
    if (m, n, kbytes) not in handled:
        d["known_failure"] = (
            f"dispatcher has no case for this tile: moe_gemm_template_dispatch_tma_ws.h throws "
            f"'Unsupported tile shape config {m * 1000000 + n * 1000 + kbytes} for MoE gemm.'"
        )
    elif c.sm in (120, 121) and not cexpr(sm120_supported, {"TileM": m, "TileN": n, "TileK": k}):
        d["known_failure"] = (
            f"no kernel for this tile with {act} activations (are_tile_shapes_supported_sm120): "
            f"moe_gemm_template_dispatch_tma_ws.h throws 'Unsupported tile ({m}, {n}, {k}) and cluster "
            f"(1, 1, 1) shape combination for arch 120.'"
        )
    return d


# --------------------------------------------------------------------------------------------
# Whole document
# --------------------------------------------------------------------------------------------


def release_catalogs(release: sources.Source, record_only: bool = False) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], Checker]:
    """Catalog entries and the lists they point to for one release (list ids are content hashes)."""
    ck = Checker(release, record_only)
    heur = Heuristic(release, ck)
    moe = MoeRunnerSource(release, heur, ck)
    entries: list[dict[str, Any]] = []
    lists: dict[str, dict[str, Any]] = {}
    skipped: list[dict[str, Any]] = []
    archs = module_archs(release)
    sm89_fp4 = "sm89" in archs and sm89_has_fp4(release)
    for arch in archs:
        sm = SM_OF[arch]
        for act, weight, *scaling in VARIANTS[arch]:
            tf = TypeFlags(act, weight, scaling[0] if scaling else None)
            if sm == 89 and not sm89_fp4 and (tf.fp4_act or tf.fp4_weight):
                continue  # the SM89 module is built without ENABLE_FP4: its binding has no FP4 runner
            extra = {"scaling": tf.scaling} if tf.scaling else {}
            files = MIXED_SOURCE_FILES if sm == 90 and tf.sm90_mixed else SOURCE_FILES
            for finalize in (True, False):
                try:
                    g1, g2 = moe.lists(sm, tf, finalize)
                except NotExtracted as e:
                    if finalize:  # the reason does not depend on finalize: record it once
                        skipped.append({"arch": arch, "variant": {"act": act, "weight": weight, **extra}, "why": str(e)})
                    continue
                if not g1 and not g2:
                    if finalize:  # no key can hold a tactic of it: say so, so decode never guesses why
                        skipped.append({"arch": arch, "variant": {"act": act, "weight": weight, **extra},
                                        "why": f"getTactics() gives this runner no tactics on {arch} in this release "
                                               "(no kernel specialisation for these types there)"})
                    continue
                for op, cfgs, offset, gemm in ((OPS[0], g1, 0, "GEMM_1"), (OPS[1], g2, len(g1), "GEMM_2")):
                    body = {
                        "source_file": DISPATCH,
                        "function": f"MoeGemmRunner::getConfigs via CutlassMoeFCRunner::getTactics({gemm})",
                        "source_files": list(files),
                        "fallback": 0 if cfgs else None,
                        "fallback_config": None,
                        "index_offset": offset,
                        "configs": [to_json(c, act, moe.cases, moe.sm120_supported, moe, not tf.same, tf.humming)
                                    for c in cfgs],
                    }
                    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]
                    tag = f"{act}x{weight}" + (f"-{tf.scaling}" if tf.scaling else "")
                    lid = f"{arch}-{tag}-{gemm.lower().replace('_', '')}-{digest}"
                    lists.setdefault(digest, {"id": lid, **body})
                    entries.append({
                        "op": op, "runner": RUNNER, "arch": arch,
                        "variant": {"act": act, "weight": weight, **extra, "finalize": finalize},
                        "list": digest,
                    })
    if moe.deepseek_fixed:
        for arch in archs:
            skipped.append({"arch": arch, "variant": {"act": "bf16", "weight": "fp8", "scaling": "deepseek-block"},
                            "why": f"the binding's setRunnerProfiles() ignores the tactic under DeepSeek FP8 block "
                                   f"scaling and sets {moe.deepseek_fixed} (SM90 enum) on both GEMMs, so the tactic selects "
                                   f"no config ({release.ref}:{BINDING})"})
    ck.skipped = skipped
    ck.gemm2_relative = moe.gemm2_relative
    return entries, lists, ck


def extract(src: sources.Source) -> ReleaseData:
    """What the fused-MoE catalogs hold for one release."""
    entries, lists, ck = release_catalogs(src)
    by_digest = {digest: body.pop("id") for digest, body in lists.items()}
    for e in entries:
        e["list"] = by_digest[e["list"]]
    # the release is the data's key: its name in a reason would only keep equal notes apart
    notes = [{**n, "why": n["why"].replace(f"{src.ref}:", "")} for n in ck.skipped]
    extra = {"gemm2_id_read_as_relative": f"{BINDING}: setRunnerProfiles()"} if ck.gemm2_relative else {}
    return ReleaseData(source=src.describe(), catalogs=entries,
                       lists={by_digest[d]: body for d, body in lists.items()},
                       not_extracted=notes, structure=dict(ck.seen), extra=extra)
