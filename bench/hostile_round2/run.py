"""The second hostile-input campaign (issue 24): defects per class, memory on big inputs, report time.

    python3 bench/hostile_round2/run.py --cases all --out bench/hostile_round2/results/<name>.md
    python3 bench/hostile_round2/run.py --cases fast              # what CI runs (tests/test_hostile_round2.py)
    python3 bench/hostile_round2/run.py --cases none --memory --cache-mb 200 --ledger-gb 1
    python3 bench/hostile_round2/run.py --cases none --report-speed

1. Cases (tests/hostile_round2.py, one class per item of the issue): each builds its hostile input
   from the bundled samples, runs the CLI in a fresh process (or sweeps a reader in this one), and
   counts defects. `fast` is CI's subset; `all` adds the slow ones (10,000-row tile map, `yes | tiletune
   inspect -`, 1 GB of short lines, every byte offset of every v1 sample cut, SIGTERM mid-write).
2. --memory: peak RSS (wait4) of every command the issue names on a --cache-mb MB v1 cache (the bench
   workload's entries, repeated with distinct N) and a --ledger-gb GB ledger (the bundled ledger's
   lines repeated with distinct tactics), plus one ledger line of --line-mb MB.
3. --report-speed: `report` and `inspect` wall time on the bench's 6k/18k-entry caches and a 30 MB one.
Nothing is written outside a temp directory unless --out is given.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
ENV = {**os.environ, "PYTHONPATH": str(REPO)}

from tests import hostile_round2 as H  # noqa: E402 - after the path
from tests.readers.big_caches import make_cache  # noqa: E402


def _commit() -> str:
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def run_cases(which: str, say) -> Counter:  # noqa: ANN001
    defects: Counter = Counter()
    runs: Counter = Counter()
    for c in H.CASES:
        if which == "fast" and not c.fast:
            continue
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            try:
                found = c.fn(Path(d))
            except Exception as e:  # noqa: BLE001 - a case that cannot run is a defect of its class
                found = [H.Finding(c.cls, c.name, True, f"case raised {type(e).__name__}: {e}")]
        for f in found:
            runs[f.cls] += 1
            defects[f.cls] += f.defect
            say(f"  - class {f.cls} {f.case}: {'DEFECT' if f.defect else 'ok'} ({f.detail})")
        say(f"    ({c.name}: {time.perf_counter() - t0:.1f} s)")
    say("")
    say("| class | findings | defects |")
    say("|---|---:|---:|")
    for cls in sorted(runs, key=int):
        say(f"| {cls} | {runs[cls]} | {defects[cls]} |")
    return defects


# A child's address space is capped (the machine is shared): a command that needs more fails with
# MemoryError, and its row says so, instead of taking the machine's memory from everyone else.
CHILD_AS_CAP_GB = 8.0


def _cap_memory() -> None:
    cap = int(CHILD_AS_CAP_GB * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


LAST_CPU_S = 0.0


def peak(cmd: list[str], stdin_path: Path | None = None) -> tuple[float, float, int, str]:
    """(peak RSS MB, wall s, exit status, last stderr line) of a child process (address space capped)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as null:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        proc = subprocess.Popen(cmd, stdout=null, stderr=err, stdin=stdin, env=ENV, preexec_fn=_cap_memory)
        _, status, usage = os.wait4(proc.pid, 0)
        if stdin_path:
            stdin.close()
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    global LAST_CPU_S
    LAST_CPU_S = usage.ru_utime + usage.ru_stime  # (CPU seconds: comparable on a loaded machine, wall time is not)
    return usage.ru_maxrss / 1024, time.perf_counter() - t0, os.waitstatus_to_exitcode(status), (lines[-1][:140] if lines else "")


def big_cache(path: Path, mb: float) -> int:
    """A v1 cache of about `mb` MB: make_cache's entries (the bench's mixed workload), as many as fit."""
    n = int(mb * 1e6 / 310)  # make_cache writes about 310 bytes per entry (indent=2)
    make_cache(n, path)
    return n


def big_ledger(path: Path, gb: float) -> int:
    """The bundled ledger's attempts re-run over and over (a long retry campaign): each line with its
    own started_at and time_s, the attempts themselves (key, outcome, environment) repeating."""
    lines = [json.loads(line) for line in H.LEDGER.read_text().splitlines()]
    target, written, n = int(gb * 1e9), 0, 0
    with open(path, "w") as f:
        while written < target:
            block = []
            for d in lines:
                n += 1
                d = dict(d, started_at=f"2026-12-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{n // 60 % 60:02d}Z",
                         time_s=(d.get("time_s") or 1e-5) * (1 + (n % 97) / 1000))
                block.append(json.dumps(d, separators=(",", ":")))
            text = "\n".join(block) + "\n"
            f.write(text)
            written += len(text)
    return n


def one_line_ledger(path: Path, mb: float) -> int:
    """The bundled ledger's first line with a message of `mb` MB, then the line as it is: 2 lines."""
    first = H.LEDGER.read_text().splitlines()[0]
    head = json.dumps(dict(json.loads(first), message="@@"))
    before, after = head.split('"@@"')
    with open(path, "w") as f:
        f.write(before + '"')
        for _ in range(int(mb)):
            f.write("x" * 1_000_000)
        f.write('"' + after + "\n" + first + "\n")
    return 2


def _made(what: str, path: Path, size: float) -> int:
    """Make a big input in a child process, so that this process stays small: Linux carries a process's
    peak RSS across fork and exec (into the child's ru_maxrss), so a child forked from a bench that
    held the generated cache would report the bench's peak instead of its own."""
    r = subprocess.run([sys.executable, __file__, "--make", what, str(path), str(size)], env=ENV, check=True,
                       capture_output=True, text=True)
    return int(r.stdout)


def memory(tmp: Path, cache_mb: float, diff_mb: float, ledger_gb: float, line_mb: float, say) -> None:  # noqa: ANN001
    py = [sys.executable, "-m", "tiletune"]
    cache = tmp / "big.json"
    n = _made("cache", cache, cache_mb)
    say(f"- cache: {cache.stat().st_size / 1e6:,.0f} MB, {n:,} entries")
    say("")
    say("| input | command | peak RSS MB | wall s | exit | last stderr line |")
    say("|---|---|---:|---:|---:|---|")
    rows = [
        ("cache", ["inspect", str(cache), "-f", "json"], None),
        ("cache", ["inspect", str(cache)], None),
        ("cache", ["inspect", str(cache), "-f", "markdown"], None),
        ("cache on stdin", ["inspect", "-", "-f", "json"], cache),
        ("cache", ["report", str(cache), "--no-plot", "-f", "json"], None),
        ("cache", ["report", str(cache), "--no-plot"], None),
        ("cache", ["check", str(cache)], None),
    ]
    if diff_mb > 0:  # the diff: a smaller cache against an identical copy of itself
        small = tmp / "diff.json"
        _made("cache", small, diff_mb)
        say(f"- diff cache: {small.stat().st_size / 1e6:,.0f} MB")
        small_copy = tmp / "diff-copy.json"
        shutil.copyfile(small, small_copy)
        rows.append(("diff cache", ["diff", str(small), str(small_copy), "-f", "json"], None))
    if ledger_gb > 0:
        ledger = tmp / "big.jsonl"
        n = _made("ledger", ledger, ledger_gb)
        say(f"- ledger: {ledger.stat().st_size / 1e9:.2f} GB, {n:,} lines")
        rows += [
            ("ledger", ["inspect", str(ledger), "-f", "json"], None),
            ("ledger", ["inspect", str(ledger)], None),
            ("ledger", ["retry", "--no-run", "--ledger", str(ledger), "--blocklist", str(tmp / "bl.json")], None),
            ("ledger", ["retry", str(H.CACHE), "--no-run", "--ledger", str(ledger), "--pin-cache", str(tmp / "pin.json")], None),
        ]
    if line_mb > 0:
        one = tmp / "one-line.jsonl"
        _made("line", one, line_mb)
        rows += [("one ledger line", ["inspect", str(one), "-f", "json"], None),
                 ("one ledger line", ["retry", "--no-run", "--ledger", str(one), "--blocklist", str(tmp / "bl2.json")], None)]
    say(f"(each child's address space capped at {CHILD_AS_CAP_GB:g} GB: a command over it ends in MemoryError)")
    say(f"(this bench's own peak RSS, which its children cannot go below: "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB)")
    for what, args, stdin in rows:
        for p in (tmp / "bl.json", tmp / "bl2.json", tmp / "pin.json"):
            p.unlink(missing_ok=True)
        rss, wall, code, last = peak(py + args, stdin)
        shown = " ".join("<tmp>/" + Path(a).name if a.startswith(str(tmp)) else
                         os.path.relpath(a, REPO) if a.startswith(str(REPO)) else a for a in args)
        say(f"| {what} | `{shown}` | {rss:,.0f} | {wall:.1f} | {code} | {last.replace('|', '/')} |")


def report_speed(tmp: Path, say) -> None:  # noqa: ANN001
    py = [sys.executable, "-m", "tiletune"]
    say("")
    say("CPU seconds (user + sys) of each command; wall seconds in brackets (the machine is shared).")
    say("")
    say("| cache | entries | inspect -f json s | report --no-plot s | report / inspect | report -f json s | report json / inspect |")
    say("|---|---:|---:|---:|---:|---:|---:|")
    for n in (6_000, 18_000, 100_000):
        cache = tmp / f"c{n}.json"
        _made("entries", cache, n)
        _, wi, _, _ = peak(py + ["inspect", str(cache), "-f", "json"])
        ti = LAST_CPU_S
        _, wr, code, _ = peak(py + ["report", str(cache), "--no-plot"])
        tr = LAST_CPU_S
        _, wj, code_j, _ = peak(py + ["report", str(cache), "--no-plot", "-f", "json"])
        tj = LAST_CPU_S
        say(f"| {cache.stat().st_size / 1e6:.0f} MB | {n:,} | {ti:.1f} ({wi:.0f}) | {tr:.1f} ({wr:.0f}) exit {code} | {tr / ti:.2f} "
            f"| {tj:.1f} ({wj:.0f}) exit {code_j} | {tj / ti:.2f} |")


def main() -> None:
    global CHILD_AS_CAP_GB
    if sys.argv[1:2] == ["--make"]:  # (a child of `memory`: make one big input, print its count)
        what, path, size = sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])
        makers = {"cache": big_cache, "ledger": big_ledger, "line": one_line_ledger,
                  "entries": lambda p, n: make_cache(int(n), p) or int(n)}
        print(makers[what](path, size))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", choices=("all", "fast", "none"), default="all")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--cache-mb", type=float, default=200)
    ap.add_argument("--diff-mb", type=float, default=30)
    ap.add_argument("--ledger-gb", type=float, default=1)
    ap.add_argument("--line-mb", type=float, default=1000)
    ap.add_argument("--report-speed", action="store_true")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--as-cap-gb", type=float, default=8.0,
                    help="address-space cap of each measured child (GB)")
    args = ap.parse_args()
    CHILD_AS_CAP_GB = args.as_cap_gb
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # (temp directories removed on the way out)
    out = [f"# Hostile inputs, round 2, at {_commit()}", "",
           f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
           f"load average {os.getloadavg()[0]:.1f} (shared with other sessions). Command: `python3 bench/hostile_round2/run.py "
           f"{' '.join(sys.argv[1:])}`", ""]

    def say(line: str) -> None:
        print(line, flush=True)
        out.append(line)

    defects: Counter = Counter()
    if args.cases != "none":
        defects = run_cases(args.cases, say)
    with tempfile.TemporaryDirectory() as d:
        if args.memory:
            memory(Path(d), args.cache_mb, args.diff_mb, args.ledger_gb, args.line_mb, say)
    with tempfile.TemporaryDirectory() as d:
        if args.report_speed:
            report_speed(Path(d), say)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(out) + "\n")
    sys.exit(1 if sum(defects.values()) else 0)


if __name__ == "__main__":
    main()
