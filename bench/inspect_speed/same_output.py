"""Does a speed change leave `tiletune inspect`'s output byte-identical? Hash it before and after.

    python3 bench/inspect_speed/same_output.py --save /tmp/before.txt           # on the old commit
    python3 bench/inspect_speed/same_output.py --check /tmp/before.txt          # on the new one
    python3 bench/inspect_speed/same_output.py --quick --save ...               # skip the 50k workloads
    python3 bench/inspect_speed/same_output.py --quick --check /tmp/before.txt  # a full save, quick check

A speed trick must not change what the tool says. This runs `tiletune inspect` in JSON, the terminal
table and Markdown over the bench workloads (tests/readers/big_caches.py, 2,000 and 50,000 entries)
and over every file and folder under cache_samples/, in this process (typer's test runner; the
memos persist between runs, as they would not in a real one, which is itself a check that they
only ever give the plain answer), and prints one sha256 per output with its exit status. The
inputs are copied under a temp dir (its path replaced by a placeholder before hashing), so
checkouts at different paths compare. --check prints each output that differs and
exits 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "readers"))  # the workload generators run.py and the tests read
sys.path.insert(0, str(REPO))  # this checkout's tiletune, whatever is installed

from big_caches import make_cache, make_fp4_distinct  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from tiletune.cli.typer_app import app  # noqa: E402

FORMATS = (("json", ["--format", "json"]), ("table", []), ("markdown", ["--format", "markdown"]))


def _inputs(tmp: Path, quick: bool) -> list[tuple[str, Path]]:
    out = []
    sizes = (2000,) if quick else (2000, 50000)
    for n in sizes:
        for name, make in (("mixed", make_cache), ("fp4-distinct", make_fp4_distinct)):
            path = tmp / f"{name}-{n // 1000}k.json"
            make(n, path)
            out.append((f"bench:{path.name}", path))
    # copied under the temp dir: the table shortens long paths, so every checkout must put the inputs
    # at paths of the same length (a temp dir's name has a fixed length) for the hashes to compare
    samples = tmp / "cache_samples"
    shutil.copytree(REPO / "cache_samples", samples, symlinks=True)
    for p in sorted(samples.rglob("*")):
        if p.is_file() or (p.is_dir() and p != samples):
            out.append((str(p.relative_to(tmp)), p))
    return out


def hashes(quick: bool) -> list[str]:
    runner = CliRunner()
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in _inputs(Path(tmp), quick):
            for fmt, flags in FORMATS:
                res = runner.invoke(app, ["inspect", str(path), *flags])
                # Markdown escapes a `_` not between letters (`tmpab1c_/` -> `tmpab1c\_/`): match both forms
                text = re.sub(re.escape(tmp).replace("_", r"\\?_"), "<TMP>", res.stdout).replace(str(REPO), "<REPO>")
                digest = hashlib.sha256(text.encode()).hexdigest()[:16]
                crash = "" if res.exception is None or isinstance(res.exception, SystemExit) else \
                    f" CRASH {type(res.exception).__name__}"
                lines.append(f"{label} {fmt} exit={res.exit_code} {digest}{crash}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip the 50,000-entry workloads")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--save", type=Path, help="write the hashes here")
    what.add_argument("--check", type=Path, help="compare with hashes saved by --save")
    args = ap.parse_args()
    got = hashes(args.quick)
    if args.save:
        args.save.write_text("\n".join(got) + "\n")
        print(f"{len(got)} outputs hashed into {args.save}")
        return
    want = args.check.read_text().splitlines()
    if args.quick and len(want) > len(got):  # a full save checked with --quick: compare the outputs made
        made = {line.split(" exit=")[0] for line in got}  # "label format"
        want = [line for line in want if line.split(" exit=")[0] in made]
    if len(want) != len(got):
        sys.exit(f"{args.check}: {len(want)} outputs saved, {len(got)} now (different inputs or --quick)")
    diff = [(w, g) for w, g in zip(want, got) if w != g]
    for w, g in diff:
        print(f"differs: {w}\n    now: {g}")
    print(f"{len(got) - len(diff)} of {len(got)} outputs identical")
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
