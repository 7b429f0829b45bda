"""bench/fleet_scale: `tiletune inspect --fleet` over a synthetic fleet, against `json.load` of the same files.

Writes a fleet of HOSTS host folders x RANKS vLLM rank files (`autotune_configs_dp0_rank{r}.json`), each
one of three files FlashInfer 0.7.4's own autotuner wrote (tests/data/engine_loaders/{synced,independent}/
vllm: provenance there), chosen per host and rank by a fixed rule, with two edits: `_metadata.cuda_version`
set to "12.9" or "13.0" (two groups) and each entry's `time_ms` scaled by a per-unit factor (1.00-1.04;
every 97th host x1.5, the slow outliers). Then, each in a fresh child process, in paired rounds whose
order alternates:

    json.load   python3 -c: walk the fleet, json.load every file, keep nothing
    fleet-json  python3 -m tiletune inspect --fleet FLEET -f json   (stdout to /dev/null)
    fleet-table python3 -m tiletune inspect --fleet FLEET            (stdout to /dev/null)

and prints wall time and peak RSS (the child's ru_maxrss) as ratios to json.load's in the same round
(median over rounds), with the absolute figures beside them. Run at two sizes (--small hosts too) to show
that peak memory does not grow with the number of hosts.

    python3 bench/fleet_scale/run.py --hosts 1000 --ranks 8 --small 100 --rounds 3 --out FILE.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = [ROOT / "tests/data/engine_loaders/synced/vllm/autotune_configs_dp0_rank0.json",
             ROOT / "tests/data/engine_loaders/independent/vllm/autotune_configs_dp0_rank0.json",
             ROOT / "tests/data/engine_loaders/independent/vllm/autotune_configs_dp0_rank1.json"]
JSON_LOAD = ("import json, os, sys\n"
             "for d, _s, fs in os.walk(sys.argv[1]):\n"
             "    for f in fs:\n"
             "        with open(os.path.join(d, f)) as fh: json.load(fh)\n")


def make_fleet(root: Path, hosts: int, ranks: int) -> tuple[int, int]:
    """The fleet under root; (files, bytes)."""
    docs = [json.loads(t.read_text()) for t in TEMPLATES]
    files = size = 0
    for h in range(hosts):
        d = root / f"host{h:04d}"
        d.mkdir(parents=True)
        for r in range(ranks):
            # 1 unit in 10 tuned alone (templates 1 and 2 chose other tiles for most keys), the rest synced
            base = docs[0] if (h * ranks + r) % 10 else docs[1 + (h + r) % 2]
            doc = {"_metadata": dict(base["_metadata"], cuda_version="12.9" if h % 2 else "13.0")}
            factor = (1.0 + 0.01 * ((h * 7 + r * 3) % 5)) * (1.5 if h % 97 == 96 else 1.0)
            for k, v in base.items():
                if k.startswith("(") and isinstance(v, list) and len(v) > 3 and isinstance(v[3], dict):
                    v = [v[0], v[1], v[2], dict(v[3], time_ms=round(v[3]["time_ms"] * factor, 6))]
                if k != "_metadata":
                    doc[k] = v
            text = json.dumps(doc, indent=2)
            (d / f"autotune_configs_dp0_rank{r}.json").write_text(text)
            files += 1
            size += len(text.encode())
    return files, size


def child(cmd: list[str]) -> tuple[float, float, int]:
    """(wall s, peak RSS MiB, exit status) of one child process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _pid, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"{' '.join(cmd)}: exit {code}\n{err[-2000:]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024.0, code


def measure(fleet: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    cmds = {"json.load": [sys.executable, "-c", JSON_LOAD, str(fleet)],
            "fleet-json": [sys.executable, "-m", "tiletune", "inspect", "--fleet", str(fleet), "-f", "json"],
            "fleet-table": [sys.executable, "-m", "tiletune", "inspect", "--fleet", str(fleet)]}
    out: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
    names = list(cmds)
    for i in range(rounds):
        for name in (names if i % 2 == 0 else names[::-1]):
            wall, rss, code = child(cmds[name])
            if code != 0:
                raise SystemExit(f"{name} failed")
            out[name].append((wall, rss))
    return out


def table(label: str, files: int, size: int, runs: dict[str, list[tuple[float, float]]]) -> list[str]:
    base = runs["json.load"]
    lines = [f"### {label}: {files} files, {size / 2**20:.1f} MiB", "",
             "| command | wall (ratio to json.load, median of rounds) | peak RSS (ratio) | wall s (median) | peak RSS MiB (max) |",
             "|---|---:|---:|---:|---:|"]
    for name, rs in runs.items():
        wr = statistics.median(w / b[0] for (w, _), b in zip(rs, base))
        mr = statistics.median(m / b[1] for (_, m), b in zip(rs, base))
        lines.append(f"| {name} | {wr:.2f}x | {mr:.2f}x | {statistics.median(w for w, _ in rs):.2f} | "
                     f"{max(m for _, m in rs):.1f} |")
    return lines + [""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--small", type=int, default=100, help="hosts of the second, smaller fleet (0: none)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, help="also write the Markdown here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fleet_scale-"))
    lines = ["# bench/fleet_scale results", "",
             f"Command: `python3 bench/fleet_scale/run.py --hosts {args.hosts} --ranks {args.ranks} --small {args.small} "
             f"--rounds {args.rounds}`", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
             f"load average at start {os.getloadavg()[0]:.1f}", ""]
    try:
        for hosts in ([args.small] if args.small else []) + [args.hosts]:
            fleet = work / f"fleet-{hosts}"
            files, size = make_fleet(fleet, hosts, args.ranks)
            runs = measure(fleet, args.rounds)
            lines += table(f"{hosts} hosts x {args.ranks} ranks", files, size, runs)
            lines.append("raw (wall s, peak RSS MiB) per round: " + json.dumps(
                {k: [[round(w, 3), round(m, 1)] for w, m in v] for k, v in runs.items()}))
            lines.append("")
            print("\n".join(lines[-8:]), flush=True)
            shutil.rmtree(fleet)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.1f}")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
