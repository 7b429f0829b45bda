"""The README's numbers and outputs, made by running the software, so they cannot go stale.

The README holds blocks between markers that this script writes:

    <!-- generated:NAME (tools/readme.py) -->
    ...
    <!-- /generated:NAME -->

- `quick-start`: the real output of the quick-start command (`tiletune inspect cache_samples/demo`,
  laid out for COLUMNS=100), as a text block;
- `tests`: how many tests `pytest --collect-only` finds, stated as "over N" (N rounded down to the
  hundred, so adding a test does not make the README wrong), and the durations measured when the
  block was last made (with the date and the machine: durations vary with load and are regenerated,
  never compared).

    python3 tools/readme.py --check                 # CI: exit 1 naming each block that differs
    python3 tools/readme.py --check --quick-output F  # ... with the quick start's output already in F
    python3 tools/readme.py --update                # rewrite the blocks (durations kept)
    python3 tools/readme.py --update --time         # ... and measure the durations again (minutes)

Run from the repository root (CI: `.ci/run`). Nothing here names a path of the machine it ran on.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
QUICK_COMMAND = ["tiletune", "inspect", "cache_samples/demo"]
COLUMNS = "100"
_BLOCK = re.compile(r"(<!-- generated:(?P<name>[\w-]+) \(tools/readme\.py\) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)",
                    re.S)


def quick_start_output() -> str:
    """The quick start's output as a user sees it at 100 columns (the console script when on PATH,
    else this interpreter's `python -m tiletune`)."""
    cmd = QUICK_COMMAND if shutil.which("tiletune") else [sys.executable, "-m", "tiletune", *QUICK_COMMAND[1:]]
    env = dict(os.environ, COLUMNS=COLUMNS, NO_COLOR="1")
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    if p.returncode != 0:
        raise SystemExit(f"readme.py: the quick start exited {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def quick_block(output: str) -> str:
    return f"```text\n$ {' '.join(QUICK_COMMAND)}\n{output.rstrip()}\n```\n"


def collected_tests() -> int:
    """How many tests pytest collects here (no test run)."""
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                       capture_output=True, text=True, timeout=900, check=False)
    m = re.search(r"(\d+) tests? collected", p.stdout) or re.search(r"^(\d+) tests?", p.stdout, re.M)
    if m is None:
        raise SystemExit(f"readme.py: pytest --collect-only said no count:\n{p.stdout[-500:]}{p.stderr[-500:]}")
    return int(m.group(1))


def tests_block(count: int, durations: str) -> str:
    over = count // 100 * 100
    return f"Over {over:,} tests (`pytest --collect-only` counts them; CI checks this figure). {durations}".rstrip() + "\n"


def measure() -> str:
    """Install in a fresh venv, the quick start, and the test suite: wall seconds, with when and where."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = venv / "bin" / "python"
        t0 = time.perf_counter()
        subprocess.run([str(py), "-m", "pip", "install", "-q", "-e", str(ROOT)], check=True)
        install = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([str(venv / "bin" / "tiletune"), *QUICK_COMMAND[1:]], cwd=ROOT, check=True, capture_output=True)
        quick = time.perf_counter() - t0
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=ROOT, check=False,
                       capture_output=True, text=True)
    suite = time.perf_counter() - t0
    print("readme.py: the test suite said: " + (p.stdout.strip().splitlines() or ["nothing"])[-1], file=sys.stderr)
    when = datetime.date.today().isoformat()
    where = f"{os.cpu_count()} CPU cores, Python {platform.python_version()}, no GPU"
    return (f"Measured {when} ({where}; a shared machine, so take them as orders of magnitude): `pip install -e .` "
            f"in a fresh venv {install:.0f} s, the quick start {quick:.1f} s, the whole test suite {suite / 60:.0f} min.")


def blocks(text: str) -> dict[str, str]:
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}


def replace(text: str, name: str, body: str) -> str:
    def sub(m: re.Match) -> str:
        return m.group(1) + body + m.group(4) if m.group("name") == name else m.group(0)

    return _BLOCK.sub(sub, text)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a generated block differs from what the software says now")
    ap.add_argument("--update", action="store_true", help="rewrite the generated blocks")
    ap.add_argument("--time", action="store_true", help="with --update: measure the durations again (minutes)")
    ap.add_argument("--quick-output", type=Path, help="the quick start's output, already made (CI's fresh venv)")
    args = ap.parse_args(argv)
    if args.check == args.update:
        ap.error("give --check or --update")
    text = README.read_text(encoding="utf-8")
    have = blocks(text)
    missing = {"quick-start", "tests"} - set(have)
    if missing:
        print(f"readme.py: README.md has no generated block(s) {', '.join(sorted(missing))}", file=sys.stderr)
        return 1
    output = args.quick_output.read_text(encoding="utf-8") if args.quick_output else quick_start_output()
    want = {"quick-start": quick_block(output)}
    count = collected_tests()
    durations = have["tests"].split(". ", 1)[1].strip() if ". " in have["tests"] else ""
    if args.update and args.time:
        durations = measure()
    want["tests"] = tests_block(count, durations)
    if args.update:
        for name, body in want.items():
            text = replace(text, name, body)
        README.write_text(text, encoding="utf-8")
        print(f"readme.py: README.md blocks written ({count:,} tests collected)")
        return 0
    stale = [name for name, body in want.items() if have[name] != body]
    for name in stale:
        print(f"readme.py: README.md's generated block '{name}' is stale; run `python3 tools/readme.py --update`",
              file=sys.stderr)
        if name == "quick-start":
            import difflib

            sys.stderr.writelines(difflib.unified_diff(have[name].splitlines(True), want[name].splitlines(True),
                                                       "README.md", "the quick start now", n=1))
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
