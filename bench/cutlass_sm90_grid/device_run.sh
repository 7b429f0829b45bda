#!/usr/bin/env bash
# The whole H200 session for the SM90 CUTLASS grid, as run (one call of the device tool):
#   bash bench/cutlass_sm90_grid/device_run.sh "$OUT"
# with .cutlass/ (CUTLASS 4.5 headers, kernels/get_cutlass.sh) and .ttcache/ (builds made on the
# CPU machine; any that do not start there are dropped and rebuilt) carried along.
# Writes at most 8 files to OUT: raw.jsonl attempts.jsonl builds.jsonl env.json grid.log
# repro.log nvidia-smi.txt sass.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:?usage: device_run.sh OUTDIR}"
mkdir -p "$out"
export TILETUNE_CACHE_DIR="$PWD/.ttcache" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
  > "$out/nvidia-smi.txt" 2>&1
nvcc --version >> "$out/nvidia-smi.txt" 2>&1

# The reproducer a ticket would carry, for a config that fails (8 stages: smem over the limit),
# built and run from its own build.sh / run.sh while the grid builds.
(
  python3 -c "
import sys; sys.path.insert(0, '.')
from pathlib import Path
from tiletune.core.records import TileConfig
from tiletune.tuner.cutlass_engine import write_reproducer
write_reproducer(TileConfig(tile=(128, 256, 64), stages=8), 'sm90', 'bf16', Path('/tmp/repro'))
" && cd /tmp/repro && cat build.sh run.sh && time ./build.sh && ./run.sh; echo "run.sh exit status $?"
) > "$out/repro.log" 2>&1 &

python3 bench/cutlass_sm90_grid/run_grid.py --out "$out" --jobs 15 2>&1 | tee "$out/grid.log"
wait

# Are the Hopper tensor-core instructions there? (HGMMA for bf16, QGMMA for fp8; sm_90a only)
for b in .ttcache/cutlass-builds/*/run; do
  echo "$b $(cuobjdump --dump-sass "$b" 2>/dev/null | grep -cE 'HGMMA|QGMMA') gmma-instructions"
done > "$out/sass.txt" 2>&1
tail -2 "$out/repro.log"
