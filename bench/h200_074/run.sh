#!/usr/bin/env bash
# One H200 session (one call of the device tool), run from the repo root:
#   bash bench/h200_074/run.sh
# with .whl/fi074 carried (see README.md: the trimmed flashinfer-python 0.7.4 wheel,
# apache-tvm-ffi and msgspec for the machine's Python 3.12). Everything lands in $OUT.
# Steps run in order of value; each is independent, and a step that would pass the budget is
# skipped (the device share is 30 minutes a session, 10 a call).
set -u
FINAL=${OUT:-/tmp/out}; OUT=/tmp/h200_074_run; rm -rf "$OUT"; mkdir -p "$OUT"
# everything goes to one folder, packed into $FINAL/h200_074_run.tar.gz at the end (the device
# tool brings back at most 8 files)
exec > >(tee -a "$OUT/run.log") 2>&1
t0=$(date +%s)
BUDGET=${BUDGET:-500}
step() { echo; echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
room() { [ $(( $(date +%s) - t0 )) -lt "$BUDGET" ] || { echo "(skipped: over the ${BUDGET} s budget)"; return 1; }; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/fi074/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16 PYTHONUNBUFFERED=1
L="$OUT/ledger.jsonl"; TT="python3 -m tiletune retry --ledger $L"; C="$OUT/fp8_gemm_cache_074.json"

step "environment"
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -2
python3 -c "import torch, flashinfer, msgspec; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'flashinfer', flashinfer.__version__, 'msgspec', msgspec.__version__)"

step "1. FlashInfer 0.7.4's own autotuner on the H200: bmm_fp8 (cuBLASLt) cache + DEBUG log"
room && FLASHINFER_LOGGING_LEVEL=debug timeout 240 python3 bench/retry_h200/autotune_fp8.py "$C" 2> "$OUT/autotune_074_debug.log"; echo "exit=$?"
tail -3 "$OUT/autotune_074_debug.log"

step "2. tiletune reads what 0.7.4 wrote"
python3 -m tiletune inspect "$C" "$OUT/autotune_074_debug.log"; echo "exit=$?"
python3 -m tiletune inspect "$C" "$OUT/autotune_074_debug.log" --format json -o "$OUT/inspect_074.json"; echo "exit=$?"

step "3. retry every tactic of the real 0.7.4 cache, then pin it and export the blocklist"
room && timeout 150 $TT "$C" --all --pin-cache "$OUT/fp8_gemm_cache_074_pinned.json" --blocklist "$OUT/blocklist_074.json"; echo "exit=$?"

step "4. FlashInfer 0.7.4 loads the pinned cache tiletune wrote (same machine): kept or ignored?"
room && FLASHINFER_LOGGING_LEVEL=debug timeout 60 python3 bench/h200_074/reload_pinned.py "$OUT/fp8_gemm_cache_074_pinned.json" 2> "$OUT/reload_pinned_debug.log"; echo "exit=$?"
grep -E 'Ignoring|different environment|load' "$OUT/reload_pinned_debug.log" | head -5
room && python3 -m tiletune inspect "$OUT/reload_pinned_debug.log"; echo "exit=$?"

step "5. tactics in and out of cuBLASLt's range (tuner after the layout moves)"
room && timeout 200 $TT --op fp8_gemm --tactic 0-5,99,150 --shape 128x4096x4096; echo "exit=$?"

step "6. the SM90 CUTLASS grid through CutlassEngine (CUTLASS headers from the 0.7.4 wheel)"
room && timeout 240 python3 bench/cutlass_sm90_grid/run_grid.py --out "$OUT/grid" --jobs 15 > "$OUT/grid.log" 2>&1; echo "exit=$?"; tail -25 "$OUT/grid.log"

step "7. live CUDA faults classified (tests/tuner/test_faulty_kernels.py, GPU tests included)"
room && timeout 120 python3 -m pytest -q -p no:cacheprovider tests/tuner/test_faulty_kernels.py 2>&1 | tail -5

step "8. provoked failures: fp16 overflow, out of memory, timeout"
room && timeout 40 $TT --op fp8_gemm --tactic 0 --shape 128x4096x4096 --dtype-out float16 --input-amplitude 1000; echo "exit=$?"
room && timeout 40 $TT --op fp8_gemm --tactic 0 --shape 4194304x4096x65536; echo "exit=$?"
room && timeout 40 $TT --op fp8_gemm --tactic 0 --shape 16384x16384x16384 --iters 5000 --timeout 15; echo "exit=$?"

cp /tmp/fiws/.cache/flashinfer/*/*/flashinfer_jit.log "$OUT/flashinfer_jit.log" 2>/dev/null
step "done"; ls -la "$OUT" "$OUT/grid" 2>/dev/null
exec >&- 2>&-; wait; sleep 1; tar -C /tmp -czf "$FINAL/h200_074_run.tar.gz" h200_074_run
