#!/usr/bin/env bash
# The H200 session for `tiletune retry` (FlashInfer engine, bmm_fp8's cuBLASLt tactics).
# Run from the repo root on the GPU machine with the trimmed wheels in .whl/fi (see README.md);
# everything it makes lands in $OUT (at most 8 files). Each step is independent: a failing step
# is logged and the next one still runs.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LOG="$OUT/run.log"; exec > >(tee -a "$LOG") 2>&1
t0=$(date +%s)
BUDGET=${BUDGET:-370}  # seconds: later steps are skipped rather than run past the device share
step() { echo; echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
room() { [ $(( $(date +%s) - t0 )) -lt "$BUDGET" ] || { echo "(skipped: over the ${BUDGET} s budget)"; return 1; }; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/fi/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16 PYTHONUNBUFFERED=1
L="$OUT/ledger.jsonl"; TT="python3 -m tiletune retry --ledger $L"
step "environment"; nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -2
python3 -c "import torch, flashinfer; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'flashinfer', flashinfer.__version__)"

step "a. JIT module missing and not allowed: must refuse (exit 2) without building"
room && timeout 60 $TT --op fp8_gemm --tactic 0 --shape 128x4096x4096; echo "exit=$?"

step "b. build once (--allow-jit-build), then tactics in and out of cuBLASLt's range"
room && timeout 200 $TT --allow-jit-build --op fp8_gemm --tactic 0-5,99,150 --shape 128x4096x4096; echo "exit=$?"

step "c. real autotune: fp8_gemm cache + DEBUG log"
room && FLASHINFER_LOGGING_LEVEL=debug timeout 150 python3 bench/retry_h200/autotune_fp8.py "$OUT/fp8_gemm_cache_h200.json" 2> "$OUT/autotune_debug.log"; echo "exit=$?"
tail -5 "$OUT/autotune_debug.log"

step "d. every tactic of the real cache (--all), timed"
room && timeout 120 $TT "$OUT/fp8_gemm_cache_h200.json" --all; echo "exit=$?"

step "f. fp16 output of inputs reaching +-1000: overflow"
room && timeout 40 $TT --op fp8_gemm --tactic 0 --shape 128x4096x4096 --dtype-out float16 --input-amplitude 1000; echo "exit=$?"

step "g. a problem that cannot fit in 141 GB"
room && timeout 40 $TT --op fp8_gemm --tactic 0 --shape 4194304x4096x65536; echo "exit=$?"

step "h. 5000 timed runs of a 16384^3 GEMM under a 15 s limit"
room && timeout 40 $TT --op fp8_gemm --tactic 0 --shape 16384x16384x16384 --iters 5000 --timeout 15; echo "exit=$?"

step "e. cuBLASLt workspace of 0 bytes (algorithms enumerated with FlashInfer's 40 MiB)"
room && timeout 80 $TT --op fp8_gemm --tactic 0-3 --shape 16x4096x16384 --workspace-bytes 0; echo "exit=$?"

step "i. exports from the whole ledger + JSON summary"
$TT "$OUT/fp8_gemm_cache_h200.json" --all --blocklist "$OUT/blocklist_h200.json" --pin-cache "$OUT/fp8_gemm_cache_h200_pinned.json" --format json -o "$OUT/retry_summary.json"; echo "exit=$?"
cp /tmp/fiws/.cache/flashinfer/*/*/flashinfer_jit.log "$OUT/flashinfer_jit.log" 2>/dev/null
step "done"; ls -la "$OUT"
