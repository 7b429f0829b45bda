#!/bin/sh
# bench/ray_local/run.sh OUT_DIR: `tiletune retry --engine cutlass --ray` on a real two-node Ray cluster
# whose every socket is on 127.0.0.1: the whole run is inside a new network namespace holding only the
# loopback interface (Ray's servers bind all interfaces; here that is 127.0.0.1 alone) and a new PID
# namespace (every Ray process ends with the run; nothing outside is touched). Needs root (unshare),
# `pip install 'tiletune[ray]'`, nvcc and CUTLASS headers (TILETUNE_CUTLASS_DIR). See README.md.
set -eu
OUT=$(realpath "$1")
mkdir -p "$OUT"
PY=${PYTHON:-python3}
exec unshare --net --pid --fork --mount-proc sh -c "ip link set lo up && exec $PY $(dirname "$0")/run.py $OUT"
