#!/usr/bin/env bash
# A second H200 session (one device call): FlashInfer 0.7.4's mm_bf16 tuned by its own autotuner.
#   bash bench/h200_074/run_bf16.sh        (with .whl/fi074 carried, as run.sh)
# Everything is packed into $OUT/h200_074_bf16.tar.gz.
set -u
FINAL=${OUT:-/tmp/out}; OUT=/tmp/h200_074_bf16; rm -rf "$OUT"; mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/fi074/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16 PYTHONUNBUFFERED=1
C="$OUT/bf16_gemm_cache_074.json"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
FLASHINFER_LOGGING_LEVEL=debug timeout 300 python3 bench/h200_074/autotune_bf16.py "$C" 2> "$OUT/autotune_bf16_debug.log"; echo "exit=$?"
tail -20 "$OUT/autotune_bf16_debug.log"
python3 -m tiletune inspect "$C" "$OUT/autotune_bf16_debug.log"; echo "exit=$?"
cp /tmp/fiws/.cache/flashinfer/*/*/flashinfer_jit.log "$OUT/flashinfer_jit.log" 2>/dev/null
exec >&- 2>&-; sleep 1; tar -C /tmp -czf "$FINAL/h200_074_bf16.tar.gz" h200_074_bf16
