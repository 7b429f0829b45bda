"""How fast `tiletune inspect` is, as ratios to a bare `json.load` of the same file in the same run.

    python3 bench/inspect_speed/run.py                      # every workload, 3 runs each
    python3 bench/inspect_speed/run.py --runs 5 --out bench/inspect_speed/results/RUN/results.md

Machines of this kind differ 2-3x in absolute time (and a shared machine's load moves it too), so
every figure is divided by the floor any JSON reader pays: `python -c 'json.load(open(FILE))'` on
the same file, timed in the same run. Absolute seconds are printed only beside the machine they
came from (first lines of the output).

Workloads (caches from tests/readers/big_caches.py, written to a temp dir):
- mixed-2k, mixed-50k: SM120 FP4 GEMMs over 20 real (N, K) pairs and CUTLASS fused-MoE keys,
  repeated over M buckets (many entries share one modelled case);
- fp4-distinct-2k, fp4-distinct-50k: distinct SM120 fp4_gemm CUTLASS keys, one per shape, every
  tactic of the 32-entry list: every entry is decoded and modelled on its own;
- fp4-terse-50k: the same keys with values `[runner, tactic]` only (no profiling policy): the
  smallest file per entry, so the hardest ratio (issue 21's workload).
For each: `tiletune inspect FILE --format json` and `tiletune inspect FILE` (the terminal table),
each in a fresh child process with stdout to /dev/null, process start included.
And: `tiletune --help` against a bare `python -c 'import typer'`.

Paired rounds: after one untimed warm-up of each command, every round runs the `json.load` child
and then each command once (the order rotates from round to round), and each command's ratio in
that round is its wall time over that round's `json.load`. A shared machine's speed drifts by up
to 1.5x over minutes; a ratio taken within one round cancels the drift, where medians taken over
separate blocks of runs did not (rounds 1-4 measured that way). The ratio printed is the median
of the --runs per-round ratios; the ratio of the fastest runs (min over min, as timeit advises) is
printed beside it. CPU seconds (user+sys of the child) are printed too (they stay meaningful when
other jobs load the machine); peak RSS is the child's own (wait4 rusage), in MB. Goals (issue 21
item 6, GOALS below): the terse 50,000 fp4 keys within 6x of json.load, every other 50,000-entry
workload within 5x, 2,000 entries within 3x, peak memory within 2x of json.load's; --help within
2x of importing typer. The verdicts use the median per-round ratio.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "readers"))  # the workload generators the tests also read

from big_caches import make_cache, make_fp4_distinct, make_fp4_terse  # noqa: E402

# Children run as on a normal install: bytecode caching on (some sandboxes set
# PYTHONDONTWRITEBYTECODE, which makes every start recompile typer/click/tiletune from source).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CHILD_ENV["PYTHONPATH"] = str(REPO)

WORKLOADS = {
    "mixed-2k": (make_cache, 2000),
    "mixed-50k": (make_cache, 50000),
    "fp4-distinct-2k": (make_fp4_distinct, 2000),
    "fp4-distinct-50k": (make_fp4_distinct, 50000),
    "fp4-terse-50k": (make_fp4_terse, 50000),
}
# Issue 21 item 6: ratio to json.load, per workload (2,000 entries 3x; the terse 50k 6x; every other 5x);
# peak memory within 2x of json.load's
GOALS = {"mixed-2k": 3.0, "fp4-distinct-2k": 3.0, "mixed-50k": 5.0, "fp4-distinct-50k": 5.0, "fp4-terse-50k": 6.0}
MEMORY_GOAL = 2.0


def child(argv: list[str]) -> tuple[float, float, float]:
    """Run argv with stdout to /dev/null; (wall s, CPU s = user+sys, peak RSS MB) of that child alone."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, cwd=REPO, env=CHILD_ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if code not in (0, 1):  # 1: findings; 2 would mean the input was not read
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err.strip()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


Sample = tuple[float, float, float]  # (wall s, CPU s, peak RSS MB) of one child


def paired(base: list[str], commands: dict[str, list[str]], runs: int) -> tuple[list[Sample], dict[str, list[Sample]]]:
    """Each argv once untimed (page cache and .pyc files in place), then `runs` rounds; in each
    round the base and every command run once, in an order that rotates from round to round."""
    argvs = {"": base, **commands}
    for argv in argvs.values():
        child(argv)
    got: dict[str, list[Sample]] = {name: [] for name in argvs}
    names = list(argvs)
    for r in range(runs):
        for name in names[r % len(names):] + names[:r % len(names)]:
            got[name].append(child(argvs[name]))
    return got.pop(""), got


def summary(base: list[Sample], samples: list[Sample]) -> tuple[float, float, float, float, float, float]:
    """(median per-round wall ratio, min-over-min wall ratio, median per-round CPU ratio, peak MB,
    median wall s, median base wall s)."""
    ratios = [s[0] / b[0] for s, b in zip(samples, base)]
    cpu = [s[1] / b[1] for s, b in zip(samples, base)]
    return (statistics.median(ratios), min(s[0] for s in samples) / min(b[0] for b in base),
            statistics.median(cpu), max(s[2] for s in samples), statistics.median(s[0] for s in samples),
            statistics.median(b[0] for b in base))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--out", type=Path, help="also write the output (Markdown) here")
    args = ap.parse_args()
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory(prefix="tiletune-bench-") as tmp:
        for name in args.workloads:
            make, n = WORKLOADS[name]
            path = Path(tmp) / f"{name}.json"
            make(n, path)
            base, res = paired([py, "-c", "import json, sys; json.load(open(sys.argv[1]))", str(path)], {
                "inspect --format json": [py, "-m", "tiletune", "inspect", str(path), "--format", "json"],
                "inspect (table)": [py, "-m", "tiletune", "inspect", str(path)],
            }, args.runs)
            rows.append((name, n, path.stat().st_size / 1e6, base, res))
            print(f"{name} done", file=sys.stderr)
        typer, helps = paired([py, "-c", "import typer"], {"--help": [py, "-m", "tiletune", "--help"]}, args.runs)

    load = os.getloadavg()[0]
    lines = [
        f"Machine: {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the end; {args.runs} paired rounds after one warm-up, "
        "process start included, bytecode caching on.",
        "",
        "Ratio = the command's wall time / a bare `json.load` of the same file run in the same round, median over the",
        "rounds (`fastest`: the fastest command run / the fastest json.load run); CPU ratio likewise, median.",
        "MB = peak RSS of the child. Absolute seconds (this machine only, medians) in the last columns.",
        "",
        "| workload | entries | file MB | command | wall ratio | fastest | cpu ratio | MB | MB ratio | wall s "
        "| json.load wall s |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    for name, n, mb, base, res in rows:
        base_mb = max(b[2] for b in base)
        for cmd, samples in res.items():
            ratio, fastest, cpu, mem, wall, base_wall = summary(base, samples)
            lines.append(f"| {name} | {n:,} | {mb:.1f} | {cmd} | {ratio:.1f}x | {fastest:.1f}x | {cpu:.1f}x | {mem:.0f} "
                         f"| {mem / base_mb:.1f}x | {wall:.2f} | {base_wall:.2f} |")
            goal = GOALS.get(name)
            if goal is not None:
                mem_ratio = mem / base_mb
                verdicts.append(f"{name}, {cmd}: {ratio:.1f}x (fastest {fastest:.1f}x, cpu {cpu:.1f}x); goal {goal:g}x: "
                                f"{'met' if ratio <= goal else 'NOT met'}; memory {mem_ratio:.1f}x, goal {MEMORY_GOAL:g}x: "
                                f"{'met' if mem_ratio <= MEMORY_GOAL else 'NOT met'}")
    ratio, fastest, cpu, mem, wall, base_wall = summary(typer, helps["--help"])
    lines.append(f"| --help | | | `tiletune --help` vs `python -c 'import typer'` | {ratio:.1f}x | {fastest:.1f}x "
                 f"| {cpu:.1f}x | {mem:.0f} | {mem / max(t[2] for t in typer):.1f}x | {wall:.2f} | "
                 f"(typer {base_wall:.2f}) |")
    verdicts.append(f"--help: {ratio:.1f}x of importing typer (fastest {fastest:.1f}x); goal 2x: "
                    f"{'met' if ratio <= 2 else 'NOT met'}")
    lines += ["", *verdicts]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
