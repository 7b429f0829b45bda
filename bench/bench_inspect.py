"""How fast `tiletune inspect` reads big FlashInfer v1 caches, end to end, process start included.

    python3 bench/bench_inspect.py            # sizes 2k, 10k, 25k, 50k; 5 runs each
    python3 bench/bench_inspect.py --runs 3 --sizes 2000 50000 --out bench/bench_inspect.out.md

For each size it writes a v1 cache (FlashInfer `save_configs` layout: `_metadata` first, sorted
4-part keys, `json.dump(indent=2)`, 0.7.2-style policy element) in a temp dir, then times, each in a
fresh child process:
- `python -m tiletune inspect FILE --format json > /dev/null` (the whole pipeline: read, decode,
  model, format); while `inspect` is not wired, `read_inputs([FILE])` instead (the column says which);
- `python -m tiletune inspect FILE > /dev/null` (the same with the default terminal table: "table");
- `read_inputs([FILE])` alone (the reader stage);
- a bare `json.load(FILE)` (the floor any JSON reader pays).
Times are medians of `--runs` wall-clock runs in seconds after one untimed warm-up, plus the
child's CPU seconds (user+sys, which stay meaningful when other jobs load the machine); peak RSS
is the child's own maximum resident set (wait4 rusage), in MB. Goals: 2k entries < 0.3 s, 50k < 1.5 s and < 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Children run as on a normal install: bytecode caching on (some sandboxes set
# PYTHONDONTWRITEBYTECODE, which makes every start recompile typer/rich/tiletune from source).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# Real model GEMM shapes (N, K) and MoE shapes (E, H, I); keys repeat them over M buckets.
_DENSE = [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672), (7168, 2048), (2048, 7168), (4608, 7168),
          (7168, 18432), (24576, 1536), (32768, 512), (7168, 16384), (4096, 4096), (14336, 4096), (4096, 14336),
          (6144, 4096), (12288, 4096), (5120, 5120), (27648, 5120), (5120, 13824), (3072, 2048)]
_MOE = [(128, 2048, 768), (256, 7168, 2048), (512, 2560, 640), (64, 4096, 1408), (160, 5120, 1536), (8, 4096, 14336)]
_POLICY = ["cuda_graph_profile_replays", 1, "l2_cache_policy", "cold"]


def _buckets(max_m: int) -> list[int]:
    out, m = [], 1
    while m <= 256:
        out.append(m)
        m *= 2
    out += list(range(512, 2049, 256)) + list(range(2560, 4097, 512))
    m = 8192
    while m <= max_m:
        out.append(m)
        m *= 2
    return [b for b in out if b <= max_m]


def make_cache(n_entries: int, path: Path, seed: int = 0) -> None:
    """A v1 cache with exactly `n_entries` distinct realistic keys."""
    rng = random.Random(seed)
    entries: dict[str, list] = {}
    ms = _buckets(1 << 20)
    variant = 0
    while len(entries) < n_entries:
        for n, k in _DENSE:
            for m in ms:
                nv = n + variant  # later rounds: more layers' shapes (distinct N)
                shapes = ((m, k // 2), (k // 2, nv), (-1, k // 16), (k // 16, nv), (), (0,), (-1, nv), (0,), (0,), (-1,))
                entries[str(("fp4_gemm", "CutlassFp4GemmRunner", shapes)) [:-1] + ", ())"] = ["CutlassFp4GemmRunner", rng.randrange(32), _POLICY]
                if len(entries) >= n_entries:
                    break
            if len(entries) >= n_entries:
                break
        for e, h, i in _MOE:
            for m in ms[:21]:
                for op in ("trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"):
                    shapes = ((m, h), (e, 2 * i + variant, h), (0,), (e, h, i), (0,))
                    extras = ("(torch.bfloat16, torch.bfloat16, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, "
                              "False, False, False, True, 3, False, True)")
                    entries[str((op, "MoERunner", shapes))[:-1] + ", " + extras + ")"] = ["MoERunner", rng.randrange(60), _POLICY]
                    if len(entries) >= n_entries:
                        break
        variant += 16
    ordered = {"_metadata": {"flashinfer_version": "0.7.2.post1", "cuda_version": "13.0", "cublas_version": "13.1.0",
                             "cudnn_version": "91900", "cudnn_frontend_version": "1.14.1", "cutlass_dsl_version": "unknown",
                             "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}}
    for key in sorted(entries)[:n_entries]:
        ordered[key] = entries[key]
    with open(path, "w") as f:
        json.dump(ordered, f, indent=2)


def _child(argv: list[str]) -> tuple[float, float, float]:
    """Run argv with stdout to /dev/null; (wall s, CPU s = user+sys, peak RSS MB) of that child alone."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, cwd=REPO, env=CHILD_ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):  # 1: findings; 2 would mean the input was not read
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def have_inspect_cli() -> bool:
    r = subprocess.run([sys.executable, "-m", "tiletune", "inspect", "--help"], cwd=REPO, capture_output=True)
    return r.returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 25000, 50000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, help="also write the table (Markdown) here")
    args = ap.parse_args()
    cli = have_inspect_cli()
    py = sys.executable
    reader = "from tiletune.readers import read_inputs; from tiletune.readers.interface import ReadContext; import sys; " \
             "o = read_inputs([sys.argv[1]], ReadContext()); assert not o.problems, o.problems; print(len(o.records))"
    rows = []
    with tempfile.TemporaryDirectory(prefix="tiletune-bench-") as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"cache-{n}.json"
            make_cache(n, path)
            cmds = {
                "inspect": [py, "-m", "tiletune", "inspect", str(path), "--format", "json"] if cli else [py, "-c", reader, str(path)],
                "table": [py, "-m", "tiletune", "inspect", str(path)] if cli else [py, "-c", reader, str(path)],
                "read_inputs": [py, "-c", reader, str(path)],
                "json.load": [py, "-c", "import json, sys; json.load(open(sys.argv[1]))", str(path)],
            }
            res = {}
            for name, argv in cmds.items():
                _child(argv)  # untimed warm-up: page cache and .pyc files in place
                runs = [_child(argv) for _ in range(args.runs)]
                res[name] = (statistics.median(w for w, _, _ in runs), statistics.median(c for _, c, _ in runs),
                             max(r for _, _, r in runs))
            rows.append((n, path.stat().st_size / 1e6, res))
            print(f"{n} entries done", file=sys.stderr)
    mode = "`python -m tiletune inspect FILE --format json`" if cli else "`read_inputs` (inspect CLI not wired yet)"
    load = os.getloadavg()[0]
    lines = [
        f"tiletune inspect benchmark: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs (load average {load:.1f} at the end), median of {args.runs} runs, process start included",
        f"inspect column = {mode}; table column = the same with the default terminal table; "
        "one untimed warm-up run each; bytecode caching on",
        "wall = elapsed seconds; cpu = user+sys seconds of the child (robust when the machine is shared); MB = peak RSS",
        "",
        "| entries | file MB | inspect wall s | inspect cpu s | inspect MB | table wall s | table cpu s | table MB "
        "| read_inputs wall s | read_inputs cpu s | read_inputs MB "
        "| json.load wall s | json.load cpu s | json.load MB | read_inputs cpu ms per 1k entries |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, mb, res in rows:
        (ti, ci, ri), (tt, ct, rt) = res["inspect"], res["table"]
        (tr, cr, rr), (tj, cj, rj) = res["read_inputs"], res["json.load"]
        lines.append(f"| {n:,} | {mb:.1f} | {ti:.3f} | {ci:.3f} | {ri:.0f} | {tt:.3f} | {ct:.3f} | {rt:.0f} "
                     f"| {tr:.3f} | {cr:.3f} | {rr:.0f} | {tj:.3f} | {cj:.3f} | {rj:.0f} | {1000 * cr / (n / 1000):.1f} |")
    goals = {2000: (0.3, None), 50000: (1.5, 500)}
    lines.append("")
    for stage in ("inspect", "table", "read_inputs"):
        for n, _mb, res in rows:
            if n in goals:
                t_goal, m_goal = goals[n]
                t, c, rss = res[stage]
                mem_ok = m_goal is None or rss < m_goal
                verdict = ("met" if t < t_goal and mem_ok else
                           "met in CPU time only (wall inflated by other load)" if c < t_goal and mem_ok else "NOT met")
                lines.append(f"goal {n:,} entries, {stage}: < {t_goal} s" + (f" and < {m_goal} MB" if m_goal else "")
                             + f": {verdict} (wall {t:.3f} s, cpu {c:.3f} s, {rss:.0f} MB)")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
