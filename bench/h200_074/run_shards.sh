#!/usr/bin/env bash
# `tiletune retry --shard I/N` on the H200: two shards of one target list run as separate processes
# (as two Slurm array tasks would), each with its own ledger; then inspect, --blocklist and
# --pin-cache read both ledgers. Run from the repo root with .whl/fi074 carried:
#   bash bench/h200_074/run_shards.sh      (everything packed into $OUT/h200_074_shards.tar.gz)
set -u
FINAL=${OUT:-/tmp/out}; OUT=/tmp/h200_074_shards; rm -rf "$OUT"; mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/fi074/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16 PYTHONUNBUFFERED=1
C=cache_samples/h200_074/fp8_gemm_cache_074.json
mkdir -p "$OUT/ledgers"
for i in 0 1; do
  echo "=== shard $i/2 (as a Slurm array task: SLURM_ARRAY_TASK_ID=$i, --shard auto)"
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=2 \
    timeout 200 python3 -m tiletune retry "$C" --all --allow-jit-build --shard auto --ledger "$OUT/ledgers/retry-{shard}.jsonl"; echo "exit=$?"
done
ls -la "$OUT/ledgers"
echo "=== the ledgers read together"
python3 -m tiletune inspect "$OUT/ledgers/"; echo "exit=$?"
python3 -m tiletune retry "$OUT/ledgers/" --no-run --blocklist "$OUT/block.json" --pin-cache "$OUT/pinned.json" "$C"; echo "exit=$?"
bash bench/h200_074/run_bf16.sh
exec >&- 2>&-; sleep 1; tar -C /tmp -czf "$FINAL/h200_074_shards.tar.gz" h200_074_shards
