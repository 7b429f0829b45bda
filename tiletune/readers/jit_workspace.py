"""Reader for a FlashInfer JIT workspace: `<cache>/flashinfer/<version>/<arch>/`.

Owns the workspace layout (flashinfer/jit/env.py, jit/cpp_ext.py, jit/gemm/core.py,
jit/fused_moe.py; same in v0.6.x and the 0.7.x wheels):

    <ws>/cached_ops/<module>/build.ninja      one `build <obj>: cuda_compile <source>` per TU
    <ws>/cached_ops/<module>/<parent>_<stem>.cuda.o   one object per compiled TU
    <ws>/cached_ops/<module>/<module>.so      linked only after every object compiled
    <ws>/cached_ops/<module>/.ninja_log       which outputs ninja finished, with build times
    <ws>/generated/gen_gemm_sm120_cutlass_fp4/fp4_gemm_cutlass_<dtype>_<M>_<N>_<K>.cu  (one CTA shape each)
    <ws>/generated/cutlass_instantiations/<arch>/gemm_grouped/<arch>/
        cutlass_kernel_file_gemm_grouped_sm<arch>_M<tileM>[_BS][_Mixed]_group<i>.generated.cu
        (up to 8 MoE kernel instantiations each; the file text names every full tile)
    <ws>/flashinfer_jit.log                   the autotuner log (read by logs.py)

`<arch>` is the sorted target archs joined by "_" (`90a`, `120f`, `90a_120f`), so version and
arch come from the path ("jit-path"). Records: COMPILED per tile instantiation whose object (or
whole module) exists, NOT_BUILT per module without its `.so` (saying what is missing) and per tile
whose object is missing there. Tactic is None: these are per tile, not per tactic; the tile is in
detail["tile"]. Nothing in the workspace is written or locked.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from msgspec import Struct

from tiletune.core import bounded_input
from tiletune.core.errors import ReaderError
from tiletune.core.records import Environment, InputProblem, Status, TuningRecord, freeze
from tiletune.core.vocabulary import FUSED_MOE_FAMILY, FUSED_MOE_OPS, MOE_RUNNER
from tiletune.readers.interface import ReadContext, ReadItem
from tiletune.readers.jit_identity import WorkspaceIdentity, slot_rank, workspace_identity  # noqa: F401 - re-exported (doctor, tests)

KIND = "jit-workspace"

MAX_MODULES = 2000  # a workspace holds tens; more means this is not one
MAX_GENERATED_BYTES = 1 << 20  # generated MoE TUs are a few KB; never read a huge file whole

def is_workspace(path: Path) -> bool:
    return path.is_dir() and ((path / "cached_ops").is_dir() or (path / "generated").is_dir())


def find_workspaces(root: Path, max_depth: int = 3) -> List[Path]:
    """Workspaces at `root` or up to three levels below it (`[../]flashinfer/<version>/<arch>`), sorted."""
    found: List[Path] = []

    def walk(p: Path, depth: int) -> None:
        if is_workspace(p):
            found.append(p)
            return
        if depth >= max_depth:
            return
        try:
            children = sorted(c for c in p.iterdir() if c.is_dir() and not c.is_symlink())
        except OSError:
            return
        for c in children[:500]:
            walk(c, depth + 1)

    walk(root, 0)
    return found


# --- module name -> (op, runner) --------------------------------------------------------------
_MODULE_OPS: Tuple[Tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"fp4_gemm_cutlass(_sm10[03]|_sm12[01])?$"), "fp4_gemm", "CutlassFp4GemmRunner"),
    (re.compile(r"mxfp8_gemm_cutlass(_sm12[01])?$"), "mxfp8_gemm", "CutlassMxfp8GemmRunner"),
    (re.compile(r"fp8_gemm_cutlass(_sm\d+)?$"), "fp8_gemm", "CutlassFp8GemmRunner"),
    (re.compile(r"bf16_gemm_cutlass(_sm\d+)?$"), "bf16_gemm", "CutlassBf16GemmRunner"),
    (re.compile(r"fused_moe_\d+\w*$"), FUSED_MOE_FAMILY, MOE_RUNNER),
    (re.compile(r"gemm$"), "fp8_gemm", "CublasFp8GemmRunner"),  # bmm_fp8 cuBLAS (+ segment GEMM)
    (re.compile(r"mm_bf16_cublaslt$"), "bf16_gemm", "CublasltBf16GemmRunner"),
    (re.compile(r"gemm_sm120$"), "fp8_gemm", "CutlassFp8GemmRunner"),  # SM120 groupwise FP8 GEMM module
)


def module_op(module: str) -> Tuple[str, str, Dict[str, Any]]:
    """(op, runner, extra detail) for a module name; ("", "", {"module_op": "unknown"}) if unknown."""
    if module.startswith("fused_moe_trtllm"):
        return "", "", {"module_op": "trtllm-gen MoE (cubins, no CUTLASS tiles)"}
    for pattern, op, runner in _MODULE_OPS:
        if pattern.fullmatch(module):
            extra: Dict[str, Any] = {"ops": list(FUSED_MOE_OPS)} if op == FUSED_MOE_FAMILY else {}
            return op, runner, extra
    return "", "", {"module_op": "unknown"}


# --- tiles from TU names and generated sources ------------------------------------------------------
_DENSE_TU = re.compile(r"(?P<family>[a-z0-9]+_gemm_cutlass(?:_sm\d+)?)_(?P<dtype>\w+?)_(?P<m>\d+)_(?P<n>\d+)_(?P<k>\d+)")
_MOE_TU = re.compile(r"cutlass_kernel_file_(?P<kind>\w+?)_sm(?P<arch>\d+)_M(?P<m>\d+)(?P<bs>_BS)?(?P<mixed>_Mixed)?_group(?P<group>\d+)\.generated")
_TMA_INST = re.compile(
    r"INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM\(\s*(?P<args>[^;]*?)\)\s*;", re.S)
_SM80_INST = re.compile(
    r"sm80_generic_fused_moe_gemm_kernelLauncher<\s*(?P<act>[\w:]+)\s*,\s*(?P<w>[\w:]+)\s*,\s*(?P<m>\d+)\s*,\s*(?P<n>\d+)\s*,\s*(?P<k>\d+)\s*,\s*(?P<stages>\d+)")


class Instantiation(Struct, frozen=True, gc=False):
    """One CUTLASS kernel a TU instantiates, as far as its name / text says."""

    tile: Optional[Tuple[int, int, int]]  # None when only tile M is known (MoE file without its .cu)
    detail: Tuple[Tuple[str, Any], ...]


def _dense_instantiation(stem: str) -> Optional[Instantiation]:
    m = _DENSE_TU.fullmatch(stem)
    if not m:
        return None
    return Instantiation((int(m["m"]), int(m["n"]), int(m["k"])),
                         freeze({"out_dtype": m["dtype"], "tile_from": "TU name"}))


def _moe_instantiations(stem: str, generated: Optional[Path]) -> List[Instantiation]:
    m = _MOE_TU.fullmatch(stem)
    if not m:
        return []
    base = {"kernel_file": stem + ".cu", "tile_m": int(m["m"]), "block_scaled": bool(m["bs"]),
            "mixed_input": bool(m["mixed"]), "group": int(m["group"]), "sm": int(m["arch"])}
    out: List[Instantiation] = []
    text = _read_small(generated) if generated is not None else None
    if text:
        for inst in _TMA_INST.finditer(text):
            args = [a.strip() for a in inst["args"].replace("\n", " ").split(",")]
            if len(args) < 17:
                continue
            try:
                tile = (int(args[7]), int(args[8]), int(args[9]))
                cluster = (int(args[10]), int(args[11]), int(args[12]))
            except ValueError:
                continue
            d = dict(base, tile_from="generated .cu", dtypes=[args[1], args[2], args[3]], epilogue_schedule=args[4],
                     epilogue_fusion=args[6], cluster=list(cluster), mx_fpx=args[13] == "true", swap_ab=args[16] == "true", style="tma_ws")
            out.append(Instantiation(tile, freeze(d)))
        for inst in _SM80_INST.finditer(text):
            d = dict(base, tile_from="generated .cu", dtypes=[inst["act"], inst["w"]], stages=int(inst["stages"]), style="sm80")
            out.append(Instantiation((int(inst["m"]), int(inst["n"]), int(inst["k"])), freeze(d)))
    if not out:
        note = "only tile M is in the file name" + ("" if text else "; the generated .cu was not found to read the full tiles")
        out.append(Instantiation(None, freeze(dict(base, tile_from="TU name", note=note))))
    return out


def _read_small(path: Path) -> Optional[str]:
    try:
        with bounded_input.open_input(path) as f:
            data = f.read(MAX_GENERATED_BYTES)
    except (OSError, ReaderError):  # unreadable, or not a regular file (a FIFO would block)
        return None
    return data.decode("utf-8", errors="replace")


# --- build.ninja / .ninja_log --------------------------------------------------------------------
_BUILD_LINE = re.compile(r"^build (?P<out>\S+): (?P<rule>\w+) (?P<src>\S+)")


def _ninja_builds(build_ninja: Path) -> List[Tuple[str, str, str]]:
    """(object name, rule, source path) for every compile step in build.ninja (streamed)."""
    out: List[Tuple[str, str, str]] = []
    try:
        with io.TextIOWrapper(bounded_input.open_input(build_ninja), encoding="utf-8", errors="replace") as f:
            for line in f:
                m = _BUILD_LINE.match(line)
                if m and m["rule"] in ("cuda_compile", "compile"):
                    out.append((os.path.basename(m["out"]), m["rule"], m["src"]))
    except (OSError, ReaderError):  # unreadable, or not a regular file (a FIFO would block)
        pass
    return out


def _ninja_log(path: Path) -> Dict[str, int]:
    """Output basename -> build milliseconds from a `.ninja_log` (v5: start, end, mtime, output, hash)."""
    done: Dict[str, int] = {}
    try:
        with io.TextIOWrapper(bounded_input.open_input(path), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 4:
                    try:
                        done[os.path.basename(parts[3])] = int(parts[1]) - int(parts[0])
                    except ValueError:
                        continue
    except (OSError, ReaderError):  # unreadable, or not a regular file (a FIFO would block)
        pass
    return done


# --- reading -----------------------------------------------------------------------------------
def _generated_index(ws: Path) -> Dict[str, Path]:
    """generated/ file stem -> path (the TUs whose names carry tiles)."""
    index: Dict[str, Path] = {}
    gen = ws / "generated"
    if not gen.is_dir():
        return index
    for root, _dirs, files in os.walk(gen):
        for name in files:
            if name.endswith(".cu") and ("_gemm_cutlass" in name or name.startswith("cutlass_kernel_file_")):
                index[name[:-3]] = Path(root) / name
        if len(index) > 20000:
            break
    return index


class _ModuleReader:
    def __init__(self, ws: Path, source: str, env: Environment, generated: Dict[str, Path]) -> None:
        self.ws, self.source, self.env, self.generated = ws, source, env, generated

    def records(self, mod_dir: Path) -> Iterator[Union[TuningRecord, InputProblem]]:
        module = mod_dir.name
        op, runner, op_detail = module_op(module)
        so = mod_dir / f"{module}.so"
        built = so.is_file()
        try:
            files = {p.name for p in mod_dir.iterdir()}
        except OSError as e:
            yield InputProblem(self.source, f"{mod_dir}: cannot list module directory ({e.strerror or e})",
                               fatal=False, loses_data=True)
            return
        objects = {f for f in files if f.endswith(".o")}
        ninja_done = _ninja_log(mod_dir / ".ninja_log") if ".ninja_log" in files else {}
        builds = _ninja_builds(mod_dir / "build.ninja") if "build.ninja" in files else []
        if not builds:  # no build.ninja: the objects present are all we know
            builds = [(o, "cuda_compile" if o.endswith(".cuda.o") else "compile", "") for o in sorted(objects)]
        missing: List[str] = []
        tiles_seen = 0
        base = dict(op_detail, module=module, module_built=built)
        for obj, _rule, src in builds:
            stem = Path(src).stem if src else self._stem_from_object(obj)
            have = obj in objects
            if not have:
                missing.append(obj)
            insts: List[Instantiation] = []
            dense = _dense_instantiation(stem)
            if dense:
                insts = [dense]
            elif _MOE_TU.fullmatch(stem):
                gen = self.generated.get(stem) or (Path(src) if src and Path(src).is_file() else None)
                insts = _moe_instantiations(stem, gen)
            for inst in insts:
                d = dict(base, **dict(inst.detail), object=obj)
                if inst.tile is not None:
                    d["tile"] = list(inst.tile)
                if obj in ninja_done:
                    d["compile_ms"] = ninja_done[obj]
                if have or built:
                    d["evidence"] = "object file" if have else "module .so (object file removed)"
                    status = Status.COMPILED
                else:
                    d["missing"] = f"object {obj} was never produced"
                    status = Status.NOT_BUILT
                tiles_seen += 1
                yield self._rec(op, runner, status, d)
        if built and not tiles_seen:
            # a module with no per-tile TUs (cuBLAS wrappers, attention, unknown ones): still listed
            yield self._rec(op, runner, Status.COMPILED, dict(base, objects=len(objects), module_only=True))
        if not built:
            d = dict(base, missing=[f"{module}.so"] + missing[:50], objects_built=len(objects & {b[0] for b in builds}) if builds else len(objects),
                     objects_expected=len(builds))
            if len(missing) > 50:
                d["missing_more"] = len(missing) - 50
            if "build.ninja" not in files:
                d["note"] = "no build.ninja: the module's build never started or was cleaned"
            yield self._rec(op, runner, Status.NOT_BUILT, d, error=f"module {module} never finished building: {module}.so is missing"
                            + (f" and {len(missing)} of {len(builds)} objects" if missing else ""))

    @staticmethod
    def _stem_from_object(obj: str) -> str:
        """`<source parent dir>_<source stem>.cuda.o` -> the source stem, for the TU names we know."""
        stem = obj[: -len(".cuda.o")] if obj.endswith(".cuda.o") else obj[:-2]
        i = stem.find("cutlass_kernel_file_")
        if i >= 0:
            return stem[i:]
        # parent dirs are gen_gemm_sm1xx_cutlass_<x>, which never contain "<x>_gemm_cutlass"
        m = re.search(r"[a-z0-9]+_gemm_cutlass\w*$", stem)
        return m.group(0) if m else stem

    def _rec(self, op: str, runner: str, status: Status, detail: Dict[str, Any], error: Optional[str] = None) -> TuningRecord:
        return TuningRecord(source=self.source, source_kind=KIND, op=op, runner=runner, tactic=None, status=status,
                            env=self.env, error=error, rank=slot_rank(self.ws),
                            detail=freeze({k: v for k, v in detail.items() if v is not None}))


def read_workspace(ws: Path, ctx: ReadContext) -> Iterator[ReadItem]:
    """Records from one workspace directory, then its flashinfer_jit.log."""
    source = str(ws)
    ident = workspace_identity(ws)
    if ident is not None:
        env = ctx.environment(flashinfer_version=ident.version, version_source="jit-path",
                              arch=ident.arch, arch_source="jit-path" if ident.arch else None)
        if ident.arch is None and len(ident.archs) > 1 and not ctx.arch:
            yield InputProblem(source, f"{source}: workspace built for several archs ({ident.arch_dir}); "
                               "arch unknown per record, pass --arch", fatal=False, loses_data=False)  # every record still read
    else:
        env = ctx.environment()
    generated = _generated_index(ws)
    mods = ws / "cached_ops"
    if mods.is_dir():
        try:
            module_dirs = sorted(p for p in mods.iterdir() if p.is_dir() and p.name != "tmp")
        except OSError as e:
            yield InputProblem(source, f"{mods}: cannot list ({e.strerror or e})", fatal=False, loses_data=True)
            module_dirs = []
        if len(module_dirs) > MAX_MODULES:
            # the modules past the cap are never read: a loss, whatever the wording
            yield InputProblem(source, f"{mods}: {len(module_dirs)} entries, reading the first {MAX_MODULES}",
                               fatal=False, loses_data=True)
            module_dirs = module_dirs[:MAX_MODULES]
        reader = _ModuleReader(ws, source, env, generated)
        for mod_dir in module_dirs:
            yield from reader.records(mod_dir)
    log = ws / "flashinfer_jit.log"
    if log.is_file():
        from tiletune.readers import logs  # here: routing a cache imports this module, not the log grammar

        yield from logs.read_log(log, ctx, env=env if ident is not None else None)


def sniff(path: Path, head: bytes) -> bool:
    """A workspace directory (`cached_ops/` or `generated/` inside). Cheap: the registry asks this of
    every directory it walks, and reaches workspaces below a cache or version directory itself
    (claiming `~/.cache/flashinfer` whole would hide the autotune/v2 store beside the workspaces)."""
    return is_workspace(path)


def read(path: Path, ctx: ReadContext) -> Iterator[ReadItem]:
    """Protocol entry point: one workspace, or every workspace under a version / cache directory."""
    path = Path(path)
    if not path.is_dir():
        yield InputProblem(str(path), f"{path}: not a directory (a JIT workspace is <cache>/flashinfer/<version>/<arch>/)",
                           fatal=True, loses_data=True)
        return
    workspaces = [path] if is_workspace(path) else find_workspaces(path)
    if not workspaces:
        yield InputProblem(str(path), f"{path}: no JIT workspace here (expected cached_ops/ or generated/)",
                           fatal=True, loses_data=True)
        return
    for ws in workspaces:
        yield from read_workspace(ws, ctx)
