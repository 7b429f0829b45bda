"""What the streamed route of docs/bounded_memory.md would hold: a v1 cache read in pieces, decoded
and modelled in batches, nothing kept but counts. Prints peak RSS and CPU seconds.

    python3 bench/hostile_round2/streaming_prototype.py --cache-mb 200 [--batch 2000] [--one-port]

The cache is tests/readers/big_caches.make_cache (the memory bench's), made in a child process so
that this one's peak is its own (see run.py). With a fresh ModelPort per batch the model's memo holds
one batch's cases; --one-port keeps one for the whole file, as `inspect` does today.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _peak_mb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmHWM"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache-mb", type=float, default=200)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--one-port", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cache = Path(d) / "big.json"
        n = int(args.cache_mb * 1e6 / 310)
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "from tests.readers.big_caches import make_cache; from pathlib import Path; "
                        "make_cache(int(sys.argv[2]), Path(sys.argv[3]))", str(REPO), str(n), str(cache)], check=True)
        gc.disable()  # (as the CLI runs)
        from tiletune.analysis.model_port import ModelPort
        from tiletune.core.records import TuningRecord
        from tiletune.decode import decode_all
        from tiletune.readers import flashinfer_v1
        from tiletune.readers.interface import ReadContext

        start = _peak_mb()
        t0 = time.process_time()
        records = (r for r in flashinfer_v1.read(cache, ReadContext()) if isinstance(r, TuningRecord))
        port = ModelPort.default(None)
        entries = modelled = 0
        while True:
            batch = list(itertools.islice(records, args.batch))
            if not batch:
                break
            if not args.one_port:
                port = ModelPort.default(None)
            analyzed = port.analyze_entries(decode_all(batch))
            entries += len(analyzed)
            modelled += sum(1 for a in analyzed if a.analysis is not None)
        print(f"{cache.stat().st_size / 1e6:,.0f} MB cache, {entries:,} entries, {modelled:,} modelled; batch {args.batch:,}, "
              f"{'one ModelPort' if args.one_port else 'a ModelPort per batch'}: peak RSS {_peak_mb()} MB "
              f"({start} MB after imports), {time.process_time() - t0:.1f} s CPU")


if __name__ == "__main__":
    main()
