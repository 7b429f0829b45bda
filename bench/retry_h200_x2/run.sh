#!/usr/bin/env bash
# The two-GPU H200 session for `tiletune retry` (FlashInfer engine): bf16_gemm through mm_bf16's
# cuBLASLt and tinygemm2 runners, fp8_gemm (bmm_fp8 cuBLASLt) spread over both GPUs, and the
# Blackwell-only CUTLASS fp4_gemm / mxfp8_gemm refused on SM90. Run from the repo root on the
# GPU machine with the trimmed wheels in .whl/fi2 (trim_wheel.py); everything lands in $OUT.
# Steps are independent: a failing step is logged and the next one still runs; later steps are
# skipped once BUDGET seconds have passed.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
t0=$(date +%s)
BUDGET=${BUDGET:-220}
step() { echo; echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
room() { [ $(( $(date +%s) - t0 )) -lt "$BUDGET" ] || { echo "(skipped: over the ${BUDGET} s budget)"; return 1; }; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/fi2/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=32 PYTHONUNBUFFERED=1
L="$OUT/ledger.jsonl"; TT="python3 -m tiletune retry --ledger $L"

step "environment"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,compute_cap,driver_version --format=csv
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
python3 -c "import torch, flashinfer; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'devices', torch.cuda.device_count(), 'flashinfer', flashinfer.__version__)"

step "a. fp4_gemm and mxfp8_gemm (CUTLASS, Blackwell only) on SM90: refused, nothing built"
room && timeout 60 $TT --op fp4_gemm --tactic 0,1 --shape 16x7168x4608; echo "exit=$?"
room && timeout 60 $TT --op mxfp8_gemm --tactic 0 --shape 16x4096x4096; echo "exit=$?"
ls /tmp/fiws/.cache/flashinfer/*/*/cached_ops 2>/dev/null || echo "(no JIT module built so far)"

step "b. bf16_gemm, CublasltBf16GemmRunner: build mm_bf16_cublaslt once, tactics 0-5 and 150"
room && timeout 100 $TT --allow-jit-build --op bf16_gemm --tactic 0-5,150 --shape 128x4096x4096; echo "exit=$?"

step "c. fp8_gemm over both GPUs (one worker per GPU): build gemm once, tactics 0-7 at two shapes"
room && timeout 110 $TT --allow-jit-build --op fp8_gemm --tactic 0-7 --shape 128x4096x4096 --shape 16x8192x8192; echo "exit=$?"

step "d. bf16_gemm, TinyGemmBf16GemmRunner: build tinygemm2, tactic 0 and 1, N=4096 and N=4100"
room && timeout 80 $TT --allow-jit-build --op bf16_gemm --runner TinyGemmBf16GemmRunner --tactic 0,1 --shape 8x4096x4096 --shape 8x4100x4096; echo "exit=$?"

step "e. summary of the whole ledger"
$TT --no-run --op bf16_gemm --tactic 0 --shape 1x1x1 --blocklist "$OUT/blocklist_h200_x2.json"; echo "exit=$?"
python3 bench/retry_h200_x2/summarize.py "$L" > "$OUT/summary.txt"; cat "$OUT/summary.txt"
cp /tmp/fiws/.cache/flashinfer/*/*/flashinfer_jit.log "$OUT/flashinfer_jit.log" 2>/dev/null
step "done"; ls -la "$OUT"
