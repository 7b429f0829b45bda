"""Run tiletune's CUTLASS engine over a grid of SM90 tiles (bf16, fp8) plus configs that really fail.

Each config goes through the same path `tiletune retry` uses: `CutlassEngine.prepare` (nvcc builds,
cached by config hash, `--jobs` in parallel), `isolation.run_child` (fresh process, time limit),
`CutlassEngine.interpret` (JSON line -> Attempt with a Diagnosis). Raw JSON lines, attempts,
build records and the environment fingerprint are written under --out.

    python3 bench/cutlass_sm90_grid/run_grid.py --out OUT --jobs 16 [--build-only] [--cache DIR]

The failing configs are deliberate: explicit stage counts whose shared storage overflows the
232,448 B SM90 limit, a K that breaks TMA's 16-byte alignment (can_implement), an SM120-only
(sm_120a) NVFP4 binary launched on SM90 (no kernel image), and a tile the builder cannot give
two stages (compile error).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "kernels"))  # the grid lives beside the test that replays its runs

from h200_grid_targets import grid  # noqa: E402  (the grid: kept apart so tests replay the same targets)

from tiletune.tuner import cutlass_build as cb  # noqa: E402
from tiletune.tuner import cutlass_engine as ce  # noqa: E402
from tiletune.tuner.isolation import run_child  # noqa: E402


def check_carried_cache(cache: Path) -> None:
    """Binaries built on another machine may not start here (other system libraries): run each
    cached binary's --query (no GPU needed) and drop the builds that do not answer."""
    import shutil
    import subprocess

    for b in sorted(cache.glob("*/run")):
        try:
            ok = subprocess.run([str(b), "--query"], capture_output=True, timeout=30).returncode == 0
        except OSError:
            ok = False
        if not ok:
            print(f"dropping carried build {b.parent.name}: its binary does not run here", flush=True)
            shutil.rmtree(b.parent, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=None, help="build cache (default: $TILETUNE_CACHE_DIR or ~/.cache)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", default="", help="comma-separated substrings of keys to run")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/tiletune-grid-scratch"),
                    help="per-attempt logs (kept out of --out so --out holds only the result files)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    check_carried_cache(a.cache or cb.cache_dir())
    targets = grid()
    if a.only:
        targets = [t for t in targets if any(s in t.key for s in a.only.split(","))]
    engine = ce.CutlassEngine(cache=a.cache)
    t0 = time.monotonic()
    engine.prepare(targets, jobs=a.jobs)
    with open(a.out / "builds.jsonl", "w") as f:
        for t in targets:
            b = engine._builds.get(t.key)
            if b is None:
                continue
            f.write(json.dumps({"key": t.key, "ok": b.ok, "cached": b.cached, "seconds": round(b.seconds, 1),
                                "error": b.error, "command": list(b.command), "cutlass_version": b.cutlass_version,
                                "cutlass_origin": b.cutlass_origin}) + "\n")
    print(f"builds: {sum(1 for t in targets if engine._builds.get(t.key) and engine._builds[t.key].ok)}/{len(targets)} ok "
          f"in {time.monotonic() - t0:.0f} s", flush=True)
    if a.build_only:
        return 0
    try:
        from tiletune.tuner import fingerprint
        (a.out / "env.json").write_text(json.dumps(fingerprint.collect(), indent=1))
    except Exception as e:  # the grid's results matter more than the fingerprint
        (a.out / "env.json").write_text(json.dumps({"error": repr(e)}))
    rows = []
    with open(a.out / "raw.jsonl", "w") as raw, open(a.out / "attempts.jsonl", "w") as att:
        for t in targets:
            scratch = a.scratch / t.key
            spec = engine.child_spec(t, scratch)
            child = run_child(spec, timeout_s=a.timeout, scratch=scratch)
            attempt = engine.interpret(t, child)
            raw.write(json.dumps({"key": t.key, "argv": list(child.argv), "exit_code": child.exit_code,
                                  "signal": child.signal, "timed_out": child.timed_out, "result": child.result,
                                  "stderr_tail": child.stderr_tail[-1500:]}) + "\n")
            att.write(json.dumps({"key": t.key, "expect": t.source, "diagnosis": attempt.diagnosis.value,
                                  "message": attempt.message, "time_s": attempt.time_s, "times_s": list(attempt.times_s),
                                  "tflops": attempt.tflops, "rel_error": attempt.rel_error,
                                  "error_bound": attempt.error_bound, "smem_bytes": attempt.smem_bytes,
                                  "smem_limit": attempt.smem_limit, "env": dict(attempt.env)}) + "\n")
            raw.flush()
            att.flush()
            rows.append((t.key, attempt.diagnosis.value, attempt.time_s, attempt.tflops, attempt.rel_error,
                         attempt.smem_bytes))
    print(f"{'config':42} {'diagnosis':18} {'ms':>8} {'TFLOP/s':>8} {'rel_err':>9} {'smem B':>8}")
    for key, d, ts, tf, re_, sm in rows:
        print(f"{key:42} {d:18} {ts * 1e3 if ts else float('nan'):8.4f} {tf or float('nan'):8.1f} "
              f"{re_ if re_ is not None else float('nan'):9.2e} {sm or 0:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
