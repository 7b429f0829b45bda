"""H200 tile campaign: build the SM90 reproducer once per kernel config, run each over real model
shapes, warm and cold L2, and write one JSON line per measurement.

Three steps, all in this file (stdlib only, so it runs on the bare device machine):

  python3 campaign.py plan                      # the configs, problems and nvcc lines (no GPU)
  python3 campaign.py device --out DIR ...      # on the GPU machine: parallel builds, ptxas/SASS
                                                #   facts, then every run with nvidia-smi sampling
  python3 campaign.py collate DIR -o FILE       # raw lines + clock log -> results.jsonl

One binary per kernel config (tile, schedule, cluster, mainloop, scheduler, swap-AB, epilogue);
M, N, K are run-time arguments (`--problems=MxNxK,...`), so 24 builds give 24 x 4 x 10 problems,
each timed with warm and with cold L2.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import json
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent

# (N, K) of real models' linear layers, from their published config.json files (see README.md).
FAMILIES: List[Dict[str, Any]] = [
    {"name": "llama3-70b.qkv_proj", "n": 10240, "k": 8192,
     "why": "Llama-3-70B: (64 + 2 x 8 KV heads) x head_dim 128 = 10240 outputs, hidden 8192"},
    {"name": "llama3-70b.down_proj", "n": 8192, "k": 28672,
     "why": "Llama-3-70B: hidden 8192 outputs, intermediate 28672"},
    {"name": "deepseek-v3.fused_qkv_a_proj", "n": 2112, "k": 7168,
     "why": "DeepSeek-V3: q_lora_rank 1536 + kv_lora_rank 512 + qk_rope_head_dim 64 = 2112, hidden 7168"},
    {"name": "qwen3-32b.o_proj", "n": 5120, "k": 8192,
     "why": "Qwen3-32B: hidden 5120 outputs, 64 heads x head_dim 128 = 8192 inputs"},
]
M_VALUES = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]

# One build per entry: dtype, tile, schedule (cooperative / pingpong), cluster, fp8 mainloop
# (fast accumulation or not), tile scheduler, swap-AB, epilogue (tma / no_smem).
def _cfg(dtype: str, tile: Tuple[int, int, int], schedule: str = "cooperative", cluster=(1, 1), fast: bool = False,
         stream_k: bool = False, swap_ab: bool = False, epilogue: str = "tma", note: str = "") -> Dict[str, Any]:
    return {"dtype": dtype, "tile": list(tile), "schedule": schedule, "cluster": [cluster[0], cluster[1], 1],
            "fast_accum": fast, "stream_k": stream_k, "swap_ab": swap_ab, "epilogue": epilogue, "note": note}


CONFIGS: List[Dict[str, Any]] = [
    # bf16 (K tile 64 = 128 B)
    _cfg("bf16", (128, 128, 64)),
    _cfg("bf16", (128, 256, 64)),
    _cfg("bf16", (256, 128, 64)),
    _cfg("bf16", (128, 128, 64), "pingpong"),
    _cfg("bf16", (64, 128, 64), "pingpong"),
    _cfg("bf16", (64, 256, 64), "pingpong"),
    _cfg("bf16", (128, 256, 64), cluster=(2, 1)),
    _cfg("bf16", (128, 128, 64), cluster=(1, 2)),
    _cfg("bf16", (128, 128, 64), stream_k=True),
    _cfg("bf16", (128, 128, 64), swap_ab=True),
    _cfg("bf16", (128, 128, 128), cluster=(2, 1), epilogue="no_smem",
         note="tile, cluster and epilogue of FlashInfer's SM90 bf16 CUTLASS GEMM (group_gemm_sm90.cuh), dense"),
    # fp8 e4m3 (K tile 128 = 128 B): plain and FP8FastAccum mainloops side by side
    _cfg("fp8", (128, 128, 128)),
    _cfg("fp8", (128, 128, 128), fast=True),
    _cfg("fp8", (128, 256, 128)),
    _cfg("fp8", (128, 256, 128), fast=True),
    _cfg("fp8", (256, 128, 128)),
    _cfg("fp8", (256, 128, 128), fast=True),
    _cfg("fp8", (64, 128, 128), "pingpong", fast=True),
    _cfg("fp8", (64, 256, 128), "pingpong", fast=True),
    _cfg("fp8", (128, 128, 128), "pingpong", fast=True),
    _cfg("fp8", (128, 256, 128), cluster=(2, 1), fast=True),
    _cfg("fp8", (128, 128, 128), fast=True, stream_k=True),
    _cfg("fp8", (128, 128, 128), fast=True, swap_ab=True),
    _cfg("fp8", (256, 128, 128), cluster=(2, 2), fast=True, epilogue="no_smem",
         note="tile, cluster, mainloop and epilogue of FlashInfer's SM90 fp8 CUTLASS GEMM (group_gemm_sm90.cuh), dense"),
]

# Blackwell run builds: compiled on the device (16 cores) to show the run path compiles; they
# cannot run on an H200 (their binaries report no_kernel_image), so they are not run.
COMPILE_ONLY: List[Dict[str, Any]] = [
    {"source": "blockscaled_gemm.cu", "arch": "120a", "label": "sm120 mxfp8 256x128x128 StageCount<2> auto swap-AB",
     "defines": {"TT_FORMAT": 1, "TT_ARCH": 120, "TT_TILE_M": 256, "TT_TILE_N": 128, "TT_TILE_K": 128,
                 "TT_STAGES": 2, "TT_SCHEDULE": 2, "TT_SWAP_AB": 1}},
    {"source": "sm100_gemm.cu", "arch": "100a", "label": "sm100 fp8 2sm 128x256x128 c2x1 swap-AB",
     "defines": {"TT_DTYPE": 1, "TT_TILE_M": 128, "TT_TILE_N": 256, "TT_TILE_K": 128, "TT_2SM": 1,
                 "TT_CLUSTER_M": 2, "TT_SWAP_AB": 1}},
]

# Type-only (--query) builds: the exact shared memory and stage count of Blackwell kernel families,
# run with --query (no GPU code runs). Labels say which FlashInfer runner each one mirrors.
def _q(label: str, source: str, arch: str, **defs: int) -> Dict[str, Any]:
    return {"label": label, "source": source, "arch": arch, "defines": defs}


QUERIES: List[Dict[str, Any]] = [
    _q("sm120 mxfp8 256x128x128 StageCount<2> auto (FlashInfer 0.6.8-0.6.18.post1)", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=1, TT_ARCH=120, TT_TILE_M=256, TT_TILE_N=128, TT_TILE_K=128, TT_STAGES=2, TT_SCHEDULE=2),
    _q("sm120 mxfp8 128x256x128 StageCount<2> auto (FlashInfer 0.6.8-0.6.18.post1)", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=1, TT_ARCH=120, TT_TILE_M=128, TT_TILE_N=256, TT_TILE_K=128, TT_STAGES=2, TT_SCHEDULE=2),
    _q("sm120 mxfp8 256x128x128 StageCount<2> cooperative", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=1, TT_ARCH=120, TT_TILE_M=256, TT_TILE_N=128, TT_TILE_K=128, TT_STAGES=2, TT_SCHEDULE=0),
    _q("sm120 mxfp8 256x128x128 auto carveout auto", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=1, TT_ARCH=120, TT_TILE_M=256, TT_TILE_N=128, TT_TILE_K=128, TT_STAGES=0, TT_SCHEDULE=2),
    _q("sm120 mxfp8 128x128x128 auto carveout auto (FlashInfer 0.7.x)", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=1, TT_ARCH=120, TT_TILE_M=128, TT_TILE_N=128, TT_TILE_K=128, TT_STAGES=0, TT_SCHEDULE=2),
    _q("sm120 mxfp8 128x32x128 auto carveout auto swap-AB (FlashInfer 0.7.x)", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=1, TT_ARCH=120, TT_TILE_M=128, TT_TILE_N=32, TT_TILE_K=128, TT_STAGES=0, TT_SCHEDULE=2, TT_SWAP_AB=1),
    _q("sm120 nvfp4 128x128x256 cooperative swap-AB stream-K (FlashInfer 0.7.x)", "blockscaled_gemm.cu", "120a",
       TT_FORMAT=0, TT_ARCH=120, TT_TILE_M=128, TT_TILE_N=128, TT_TILE_K=256, TT_SWAP_AB=1, TT_STREAM_K=1),
    _q("sm100 mxfp8 1sm 128x128x256", "blockscaled_gemm.cu", "100a",
       TT_FORMAT=1, TT_ARCH=100, TT_TILE_M=128, TT_TILE_N=128, TT_TILE_K=256),
    _q("sm100 mxfp8 2sm 128x256x128 c2x1", "blockscaled_gemm.cu", "100a",
       TT_FORMAT=1, TT_ARCH=100, TT_TILE_M=128, TT_TILE_N=256, TT_TILE_K=128, TT_2SM=1, TT_CLUSTER_M=2),
    _q("sm100 bf16 1sm 128x128x128 swap-AB", "sm100_gemm.cu", "100a",
       TT_DTYPE=0, TT_TILE_M=128, TT_TILE_N=128, TT_TILE_K=128, TT_SWAP_AB=1),
    _q("sm100 bf16 2sm 128x128x128 c2x1 swap-AB", "sm100_gemm.cu", "100a",
       TT_DTYPE=0, TT_TILE_M=128, TT_TILE_N=128, TT_TILE_K=128, TT_2SM=1, TT_CLUSTER_M=2, TT_SWAP_AB=1),
    _q("sm100 fp8 1sm 128x256x128 swap-AB", "sm100_gemm.cu", "100a",
       TT_DTYPE=1, TT_TILE_M=128, TT_TILE_N=256, TT_TILE_K=128, TT_SWAP_AB=1),
    _q("sm90 fp8 128x256x128 cooperative plain", "sm90_gemm.cu", "90a",
       TT_DTYPE=1, TT_TILE_M=128, TT_TILE_N=256, TT_TILE_K=128, TT_FAST_ACCUM=0),
    _q("sm90 fp8 128x256x128 cooperative FP8FastAccum", "sm90_gemm.cu", "90a",
       TT_DTYPE=1, TT_TILE_M=128, TT_TILE_N=256, TT_TILE_K=128, TT_FAST_ACCUM=1),
]


def config_id(c: Dict[str, Any]) -> str:
    t = "x".join(map(str, c["tile"]))
    parts = [c["dtype"], t, c["schedule"], f"c{c['cluster'][0]}x{c['cluster'][1]}"]
    if c["dtype"] == "fp8":
        parts.append("fastaccum" if c["fast_accum"] else "plain")
    if c["stream_k"]:
        parts.append("streamk")
    if c["swap_ab"]:
        parts.append("swapab")
    if c["epilogue"] != "tma":
        parts.append(c["epilogue"])
    return "-".join(parts)


def defines(c: Dict[str, Any]) -> Dict[str, int]:
    return {"TT_DTYPE": 1 if c["dtype"] == "fp8" else 0, "TT_TILE_M": c["tile"][0], "TT_TILE_N": c["tile"][1],
            "TT_TILE_K": c["tile"][2], "TT_CLUSTER_M": c["cluster"][0], "TT_CLUSTER_N": c["cluster"][1],
            "TT_STAGES": 0, "TT_SCHEDULE": 1 if c["schedule"] == "pingpong" else 0,
            "TT_FAST_ACCUM": int(c["fast_accum"]), "TT_STREAM_K": int(c["stream_k"]),
            "TT_SWAP_AB": int(c["swap_ab"]), "TT_EPILOGUE": 1 if c["epilogue"] == "no_smem" else 0}


def nvcc_line(source: str, arch: str, defs: Dict[str, int], out: str, kernels: str, cutlass: str) -> List[str]:
    """The engine's run-build line (tiletune/tuner/cutlass_engine.nvcc_command) plus -Xptxas -v,
    which only prints ptxas's register and spill counts."""
    return (["nvcc", "-std=c++17", "-O3", f"-gencode=arch=compute_{arch},code=sm_{arch}", "--expt-relaxed-constexpr",
             "-diag-suppress=20012", "-Xptxas", "-v"] + [f"-D{k}={v}" for k, v in defs.items()] +
            [f"-I{cutlass}/include", f"-I{cutlass}/tools/util/include", f"-I{kernels}", f"{kernels}/{source}",
             "-o", out])


def problems_for(family: Dict[str, Any], m_values: Optional[List[int]] = None) -> str:
    return ",".join(f"{m}x{family['n']}x{family['k']}" for m in (m_values or M_VALUES))


def parse_families(text: str) -> List[Dict[str, Any]]:
    """'name:N:K,name:N:K' (--families) -> family dicts; empty -> the campaign's FAMILIES."""
    if not text:
        return FAMILIES
    fams = []
    for part in text.split(","):
        name, n, k = part.split(":")
        fams.append({"name": name, "n": int(n), "k": int(k), "why": "given with --families"})
    return fams


# ----------------------------------------------------------------------------- device step

_PTXAS_FN = re.compile(r"Function properties for (\S+)")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REGS = re.compile(r"Used (\d+) registers")


def ptxas_facts(log: str) -> Dict[str, Any]:
    """Registers and spills of the GEMM kernel (the device_kernel<GemmUniversal...> entry), and
    whether ptxas serialized its wgmma instructions (warning C7510)."""
    facts: Dict[str, Any] = {"c7510_wgmma_serialized": "C7510" in log}
    fn = None
    for line in log.splitlines():
        m = _PTXAS_FN.search(line)
        if m:
            fn = m.group(1)
            continue
        if fn and "GemmUniversal" in fn:
            s = _PTXAS_SPILL.search(line)
            if s:
                facts.update(stack_bytes=int(s.group(1)), spill_store_bytes=int(s.group(2)),
                             spill_load_bytes=int(s.group(3)))
            r = _PTXAS_REGS.search(line)
            if r:
                facts["registers"] = int(r.group(1))
                fn = None
    return facts


def sass_facts(binary: str) -> Dict[str, Any]:
    try:
        sass = subprocess.run(["cuobjdump", "-sass", binary], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"sass_error": str(e)}
    return {"sass_gmma": len(re.findall(r"\b[HQ]GMMA\.", sass)), "sass_local_loads": len(re.findall(r"\bLDL\b", sass)),
            "sass_local_stores": len(re.findall(r"\bSTL\b", sass)),
            "sass_warpgroup_depbar": len(re.findall(r"WARPGROUP\.DEPBAR", sass))}


def _build(job: Dict[str, Any], bindir: Path, kernels: str, cutlass: str) -> Dict[str, Any]:
    out = bindir / job["id"]
    cmd = nvcc_line(job["source"], job["arch"], job["defines"], str(out), kernels, cutlass)
    if job.get("query"):  # the engine's query build: -O1, type only
        cmd = [a for a in cmd if a not in ("-Xptxas", "-v")]
        cmd[cmd.index("-O3")] = "-O1"
        cmd.insert(1, "-DTILETUNE_QUERY_ONLY")
    rec = {"id": job["id"], "command": shlex.join(cmd), "compile_only": job.get("compile_only", False),
           "query": job.get("query", False), "label": job.get("label")}
    if out.is_file():
        rec.update(rc=0, seconds=0.0, cached=True)
        log_file = bindir / f"{job['id']}.ptxas.log"
        log = log_file.read_text() if log_file.is_file() else ""
    else:
        t = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        log = p.stdout + p.stderr
        (bindir / f"{job['id']}.ptxas.log").write_text(log)
        rec.update(rc=p.returncode, seconds=round(time.monotonic() - t, 1), cached=False)
        if p.returncode:
            rec["error"] = next((ln for ln in log.splitlines() if "error" in ln.lower()), log[-400:])[:600]
    if rec["rc"] == 0 and job.get("query"):
        q = subprocess.run([str(out), "--query", "--m=16", "--n=7168", "--k=4096"], capture_output=True, text=True)
        line = next((ln for ln in q.stdout.splitlines() if ln.startswith("{")), None)
        rec["query_result"] = json.loads(line) if line else {"error": q.stderr[-400:]}
    elif rec["rc"] == 0:
        rec.update(ptxas_facts(log))
        rec.update(sass_facts(str(out)))
    return rec


class SmiLogger:
    """nvidia-smi sampled every 100 ms in the background: time, SM clock, power, power limits, temperature."""

    # (throttle reasons are in nvidia-smi-q*.txt, before and after: their field name differs by driver)
    FIELDS = "timestamp,clocks.sm,clocks.mem,power.draw,power.limit,enforced.power.limit,temperature.gpu"

    def __init__(self, path: Path):
        self.path = path
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self):
        self.fh = open(self.path, "a")  # a later call of the same run appends
        self.proc = subprocess.Popen(["nvidia-smi", f"--query-gpu={self.FIELDS}", "--format=csv,nounits", "-lms", "100"],
                                     stdout=self.fh, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.fh.close()


def device(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bindir = Path(args.bindir)
    bindir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    deadline = t0 + args.budget_s
    log = open(out / "campaign.log", "a")

    def say(msg: str) -> None:
        line = f"[{time.monotonic() - t0:7.1f}s] {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    for name, cmd in (("nvidia-smi-q.txt", ["nvidia-smi", "-q", "-d", "CLOCK,POWER,PERFORMANCE,TEMPERATURE"]),
                      ("nvidia-smi.txt", ["nvidia-smi"]), ("nvcc-version.txt", ["nvcc", "--version"])):
        (out / name).write_text(subprocess.run(cmd, capture_output=True, text=True).stdout)
    jobs = [{"id": config_id(c), "source": "sm90_gemm.cu", "arch": "90a", "defines": defines(c), "config": c}
            for c in CONFIGS]
    only = set(args.only.split(",")) if args.only else None
    if only:
        jobs = [j for j in jobs if j["id"] in only]
    extra = "none" if args.skip_compile_only else args.extra
    if extra != "none":
        # the long run builds are submitted first, the quick type-only queries fill in behind them
        if extra == "all":
            jobs += [{"id": "compile-only-" + re.sub(r"[^A-Za-z0-9]+", "-", c["label"]).strip("-"),
                      "compile_only": True, **c} for c in COMPILE_ONLY]
        jobs += [{"id": "query-" + re.sub(r"[^A-Za-z0-9]+", "-", c["label"]).strip("-"), "compile_only": True,
                  "query": True, **c} for c in QUERIES]
    say(f"building {len(jobs)} binaries, {args.jobs} at a time")
    builds: Dict[str, Dict[str, Any]] = {}
    with open(out / "builds.jsonl", "a") as bf, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(_build, j, bindir, args.kernels, args.cutlass): j for j in jobs}
        for f in concurrent.futures.as_completed(futs):
            rec = f.result()
            builds[rec["id"]] = rec
            bf.write(json.dumps(rec) + "\n")
            bf.flush()
            if rec.get("query"):
                q = rec.get("query_result") or {}
                say(f"query {rec['label']}: rc {rec['rc']} stages {q.get('stages')} smem {q.get('smem_bytes')} "
                    f"limit {q.get('smem_limit')} {rec.get('error', '')}")
            else:
                say(f"built {rec['id']}: rc {rec['rc']} in {rec.get('seconds')} s regs {rec.get('registers')} "
                    f"spills {rec.get('spill_store_bytes')} C7510 {rec.get('c7510_wgmma_serialized')} {rec.get('error', '')}")
    families = parse_families(args.families)
    m_values = [int(m) for m in args.m_values.split(",")] if args.m_values else M_VALUES
    runs = [(j, fam) for fam in families for j in jobs if not j.get("compile_only") and builds[j["id"]]["rc"] == 0]
    say(f"running {len(runs)} invocations ({len(m_values)} problems each, L2 {args.l2})")
    done = 0
    with SmiLogger(out / "smi.csv"), open(out / "raw.jsonl", "a") as raw:
        for j, fam in runs:
            if time.monotonic() > deadline:
                say(f"budget reached: {len(runs) - done} invocations not run")
                break
            argv = [str(bindir / j["id"]), f"--problems={problems_for(fam, m_values)}", f"--l2={args.l2}",
                    f"--warmup={args.warmup}", f"--iters={args.iters}", f"--samples={args.samples}"]
            start = time.time()
            prev = start
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            killer = threading.Timer(args.timeout_s, proc.kill)
            killer.start()
            assert proc.stdout is not None
            for line in proc.stdout:
                now = time.time()
                line = line.strip()
                if not line.startswith("{"):
                    continue
                raw.write(json.dumps({"config_id": j["id"], "config": j["config"], "family": fam["name"],
                                      "argv": argv, "window": [prev, now], "result": json.loads(line)}) + "\n")
                prev = now
            proc.wait()
            killer.cancel()
            err = proc.stderr.read() if proc.stderr else ""
            if proc.returncode:
                raw.write(json.dumps({"config_id": j["id"], "config": j["config"], "family": fam["name"], "argv": argv,
                                      "window": [start, time.time()], "exit_code": proc.returncode,
                                      "stderr_tail": err[-1500:]}) + "\n")
            raw.flush()
            done += 1
            say(f"ran {j['id']} on {fam['name']}: exit {proc.returncode} ({time.time() - start:.1f} s)")
    (out / "nvidia-smi-q-after.txt").write_text(
        subprocess.run(["nvidia-smi", "-q", "-d", "CLOCK,POWER,PERFORMANCE,TEMPERATURE"], capture_output=True,
                       text=True).stdout)
    say(f"done: {done} of {len(runs)} invocations")
    return 0


# ----------------------------------------------------------------------------- collate


def _smi_samples(path: Path) -> List[Tuple[float, Dict[str, str]]]:
    # nvidia-smi names its columns its own way (clocks.sm -> clocks.current.sm): go by position.
    rows: List[Tuple[float, Dict[str, str]]] = []
    header = SmiLogger.FIELDS.split(",")
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if line.startswith("timestamp") or len(cells) != len(header):
            continue
        try:
            t = time.mktime(dt.datetime.strptime(cells[0], "%Y/%m/%d %H:%M:%S.%f").timetuple()) + \
                int(cells[0].rsplit(".", 1)[1]) / 1000.0
        except ValueError:
            continue
        rows.append((t, dict(zip(header, cells))))
    return rows


def _num(v: Optional[str]) -> Optional[float]:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def collate(args: argparse.Namespace) -> int:
    run = Path(args.run)
    smi = _smi_samples(run / "smi.csv") if (run / "smi.csv").is_file() else []
    builds = {}
    for line in (run / "builds.jsonl").read_text().splitlines():
        b = json.loads(line)
        builds[b["id"]] = b
    out_lines = []
    for line in (run / "raw.jsonl").read_text().splitlines():
        rec = json.loads(line)
        r = rec.get("result")
        if r is None:
            continue
        lo, hi = rec["window"]
        inside = [s for t, s in smi if lo <= t <= hi]
        if not inside and smi:  # a window shorter than the 100 ms sampling: the nearest sample, if near
            t_near, s_near = min(smi, key=lambda ts: abs(ts[0] - hi))
            inside = [s_near] if abs(t_near - hi) <= 0.5 else []
        clocks = [c for c in (_num(s.get("clocks.sm")) for s in inside) if c is not None]
        power = [p for p in (_num(s.get("power.draw")) for s in inside) if p is not None]
        limits = [p for p in (_num(s.get("enforced.power.limit")) for s in inside) if p is not None]
        c = rec["config"]
        b = builds.get(rec["config_id"], {})
        # inside the clock log's span: timed while nvidia-smi was sampling (run1: the second call)
        logged = bool(smi) and smi[0][0] - 1 <= lo and hi <= smi[-1][0] + 1
        passed = r.get("error") is None and r.get("time_ms") is not None
        out_lines.append({
            "config_id": rec["config_id"], "family": rec["family"],
            "dtype": "fp8_e4m3" if c["dtype"] == "fp8" else "bf16", "tile": c["tile"], "cluster": c["cluster"],
            "schedule": c["schedule"], "mainloop": r.get("mainloop"), "tile_scheduler": r.get("tile_scheduler"),
            "swap_ab": r.get("swap_ab"), "epilogue": r.get("epilogue"), "stages": r.get("stages"),
            "smem_bytes": r.get("smem_bytes"), "registers": b.get("registers"),
            "spill_store_bytes": b.get("spill_store_bytes"), "c7510_wgmma_serialized": b.get("c7510_wgmma_serialized"),
            "problem": r.get("problem"), "kernel_problem": r.get("kernel_problem"), "l2": r.get("l2"),
            "flush_bytes": r.get("flush_bytes"),
            "median_us": round(r["time_ms"] * 1e3, 3) if r.get("time_ms") is not None else None,
            "samples_us": [round(t * 1e3, 3) for t in r.get("times_ms") or []],
            "tflops": r.get("tflops"),
            "clock_mhz": statistics.median(clocks) if clocks else None,
            "clock_mhz_range": [min(clocks), max(clocks)] if clocks else None,
            "power_w": statistics.median(power) if power else None,
            "power_limit_w": statistics.median(limits) if limits else None,
            "clock_samples": len(clocks),
            "clock_logged": logged,
            "passed": passed,
            "diagnosis": "passed" if passed else (r.get("error") or "no timing"),
            "rel_error": r.get("rel_error"), "error_bound": r.get("error_bound"),
            "device": r.get("device"), "driver_version": r.get("driver_version"),
            "cutlass_version": r.get("cutlass_version"),
            "argv": [Path(rec["argv"][0]).name] + rec["argv"][1:],
        })
    with open(args.output, "w") as fh:
        for o in out_lines:
            fh.write(json.dumps(o) + "\n")
    print(f"{len(out_lines)} measurements -> {args.output} ({sum(o['passed'] for o in out_lines)} passed)")
    return 0


def plan(args: argparse.Namespace) -> int:
    for c in CONFIGS:
        print(json.dumps({"id": config_id(c), "defines": defines(c),
                          "nvcc": shlex.join(nvcc_line("sm90_gemm.cu", "90a", defines(c), config_id(c), "kernels",
                                                       "$CUTLASS_DIR"))}))
    for fam in FAMILIES:
        print(json.dumps({"family": fam["name"], "problems": problems_for(fam)}))
    n = len(CONFIGS) * len(FAMILIES) * len(M_VALUES)
    print(json.dumps({"builds": len(CONFIGS), "problems": n, "measurements_warm_and_cold": 2 * n}))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("plan")
    d = sub.add_parser("device")
    d.add_argument("--out", required=True)
    d.add_argument("--bindir", required=True, help="where the binaries go (kept between calls when the machine is)")
    d.add_argument("--kernels", required=True, help="folder holding sm90_gemm.cu and tt_common.hpp")
    d.add_argument("--cutlass", required=True, help="CUTLASS tree (include/, tools/util/include)")
    d.add_argument("--jobs", type=int, default=16)
    d.add_argument("--budget-s", type=float, default=420, help="no new invocation after this many seconds")
    d.add_argument("--timeout-s", type=float, default=90)
    d.add_argument("--l2", default="both")
    d.add_argument("--warmup", type=int, default=5)
    d.add_argument("--iters", type=int, default=40)
    d.add_argument("--samples", type=int, default=256)
    d.add_argument("--only", default="", help="comma-separated config ids")
    d.add_argument("--families", default="", help="name:N:K,... instead of the campaign's four families")
    d.add_argument("--m-values", default="", help="comma-separated M values instead of 1..8192")
    d.add_argument("--skip-compile-only", action="store_true", help="same as --extra none")
    d.add_argument("--extra", choices=("all", "queries", "none"), default="all",
                   help="Blackwell builds besides the SM90 runs: run builds and type-only queries, queries only, none")
    c = sub.add_parser("collate")
    c.add_argument("run")
    c.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    return {"plan": plan, "device": device, "collate": collate}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
