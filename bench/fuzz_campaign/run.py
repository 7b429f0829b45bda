"""The hostile-input campaign's figures: cases run, tracebacks (must be 0), peak memory on a 1 GB log.

    python3 bench/fuzz_campaign/run.py                       # 400 cases per fuzz target, 1 GB log
    python3 bench/fuzz_campaign/run.py --examples 2000 --log-gb 1 --out bench/fuzz_campaign/RESULTS.md

Three parts, each printed as it ends:
1. In-process: tests/test_fuzz.py (every reader, the key parser, resume, the CLI end to end) with
   TILETUNE_FUZZ_EXAMPLES=N instead of CI's small budget; hypothesis's own statistics give the cases
   run per target. A failing property fails the campaign.
2. Recorded CLI runs: `python -m tiletune inspect|report` in fresh processes on the hostile corpus
   (tests/test_hostile_inputs.py HOSTILE_FILES: deep JSON, 5,000-digit numbers, ...) and on special
   files (a FIFO, /dev/zero): counts exit statuses and tracebacks (stderr containing "Traceback").
3. Peak memory: a DEBUG warm-up log of --log-gb GB (the bundled sample's lines repeated with
   changing timestamps, tactics and timings) read by `python -m tiletune inspect LOG --format json`
   in a child; its peak RSS (wait4 rusage). Log streaming is the log reader's job (issue 13 item 4,
   another change); this only measures what the reader does at the commit it runs on.
Nothing is written outside a temp directory unless --out is given.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def in_process(examples: int) -> tuple[int, int, dict[str, int]]:
    """(cases, failed targets, cases per target) from hypothesis's statistics."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
           str(REPO / "tests" / "test_fuzz.py")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**ENV, "TILETUNE_FUZZ_EXAMPLES": str(examples)}, cwd=REPO)
    per: dict[str, int] = {}
    target = None
    for line in proc.stdout.splitlines():
        m = re.match(r"tests/test_fuzz\.py::(\w+):", line.strip())
        if m:
            target = m.group(1)
        m = re.search(r"(\d+) passing examples?, (\d+) failing examples?", line)
        if m and target:
            per[target] = per.get(target, 0) + int(m.group(1)) + int(m.group(2))
    failed = len(re.findall(r"^FAILED ", proc.stdout, re.M))
    if proc.returncode not in (0, 1):
        print(proc.stdout[-3000:], proc.stderr[-3000:])
    return sum(per.values()), failed, per


def recorded_runs(tmp: Path) -> tuple[int, int, dict[int, int]]:
    """(runs, tracebacks, {exit status: runs}) of fresh `tiletune` processes on the hostile corpus."""
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO))
    from test_hostile_inputs import GOOD, HOSTILE_FILES  # the corpus the tests use

    files = []
    for name, (content, _fragment) in sorted(HOSTILE_FILES.items()):
        p = tmp / name
        p.write_text(content)
        files.append(p)
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    files += [fifo, Path("/dev/zero")]
    commands = [["inspect"], ["inspect", "--format", "json"], ["inspect", "--format", "markdown"], ["report", "--no-plot"]]
    runs, tracebacks, statuses = 0, 0, {}
    for f in files:
        for c in commands:
            proc = subprocess.run([sys.executable, "-m", "tiletune", c[0], str(f), str(GOOD), *c[1:]], capture_output=True,
                                  text=True, env=ENV, timeout=300, stdin=subprocess.DEVNULL)
            runs += 1
            tracebacks += "Traceback" in proc.stderr
            statuses[proc.returncode] = statuses.get(proc.returncode, 0) + 1
    return runs, tracebacks, statuses


def write_log(path: Path, gigabytes: float) -> int:
    """A DEBUG log of about `gigabytes` GB from the bundled sample's lines, varied so lines are not identical."""
    lines = (REPO / "cache_samples" / "logs" / "sm120_0.6.17_warmup_debug.log").read_text().splitlines()
    target = int(gigabytes * 1e9)
    written, n = 0, 0
    with open(path, "w") as f:
        while written < target:
            block = []
            for line in lines:
                n += 1
                line = line.replace("10:00:12", f"{10 + n // 3_600_000 % 14:02d}:{n // 60_000 % 60:02d}:{n // 1000 % 60:02d}")
                line = re.sub(r"avg_time [0-9.]+", f"avg_time 0.0{n % 97 + 1}{n % 13}", line)
                block.append(line)
            text = "\n".join(block) + "\n"
            f.write(text)
            written += len(text)
    return written


def peak_rss_mb(cmd: list[str]) -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit status) of a child (wait4: its own maximum resident set)."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=null, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024, time.perf_counter() - t0, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=400, help="cases per in-process fuzz target")
    ap.add_argument("--log-gb", type=float, default=1.0, help="size of the DEBUG log for the memory figure (0: skip)")
    ap.add_argument("--out", type=Path, help="also write the figures here (Markdown)")
    args = ap.parse_args()
    out = [f"# Hostile-input campaign at {_commit()}", "",
           f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
           f"load average {os.getloadavg()[0]:.1f}. Command: `python3 bench/fuzz_campaign/run.py --examples {args.examples} "
           f"--log-gb {args.log_gb:g}`", ""]

    def say(line: str) -> None:
        print(line, flush=True)
        out.append(line)

    t0 = time.perf_counter()
    cases, failed, per = in_process(args.examples)
    say(f"- in-process fuzz cases: {cases:,} over {len(per)} targets ({', '.join(f'{k[5:]} {v}' for k, v in sorted(per.items()))}); "
        f"failed targets: {failed}; {time.perf_counter() - t0:.0f} s")
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        runs, tracebacks, statuses = recorded_runs(Path(d))
        say(f"- recorded CLI runs: {runs}; tracebacks: {tracebacks}; exit statuses: "
            f"{', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))}; {time.perf_counter() - t0:.0f} s")
        if args.log_gb > 0:
            log = Path(d) / "warmup_debug.log"
            size = write_log(log, args.log_gb)
            rss, wall, code = peak_rss_mb([sys.executable, "-m", "tiletune", "inspect", str(log), "--format", "json"])
            say(f"- {size / 1e9:.2f} GB DEBUG log, `inspect --format json`: peak RSS {rss:,.0f} MB, {wall:.0f} s, exit {code} "
                f"(this process's own peak: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB)")
            rss, wall, code = peak_rss_mb([sys.executable, "-m", "tiletune", "inspect", str(log)])
            say(f"- the same log, default table: peak RSS {rss:,.0f} MB, {wall:.0f} s, exit {code}")
    if args.out:
        args.out.write_text("\n".join(out) + "\n")
    sys.exit(1 if failed or tracebacks else 0)


if __name__ == "__main__":
    main()
