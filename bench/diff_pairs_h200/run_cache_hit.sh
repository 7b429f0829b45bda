#!/usr/bin/env bash
# A restart that reuses warm-up a/'s saved cache (see README): INFO log with cache hits.
set -u
OUT=${OUT:-/tmp/out}; WHL=${WHL:?}; SCRIPTS=${SCRIPTS:?}; CACHE=${CACHE:?}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl || exit 1
export PYTHONPATH=/tmp/site:$SCRIPTS FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16 PYTHONUNBUFFERED=1
mkdir -p /tmp/restart && cp "$CACHE" /tmp/restart/autotune_config.json
timeout 300 python3 "$SCRIPTS/cache_hit.py" /tmp/restart/autotune_config.json 2> "$OUT/restart_info.log"; echo "exit=$?"
grep -c "Config cache hit" "$OUT/restart_info.log"; tail -4 "$OUT/restart_info.log"
