#!/usr/bin/env bash
# Real warm-up pairs for `tiletune diff` and rank disagreement, on one H200, one device call.
# Run from the repo root on the GPU machine; WHL = folder with the trimmed flashinfer-python
# 0.7.2.post1 wheel (bench/retry_h200/trim_wheel.py) and apache-tvm-ffi; SCRIPTS = this folder.
#   a/  warm-up 1, default settings          b/  warm-up 2, same settings, a separate process
#   c/  warm-up 3, cuda_graph_profile_replays=20
#   ranks/  two processes at once, as two tensor-parallel ranks of one SGLang server would write
#           (SGLang's layout: flashinfer/autotune/<version>/sm90/<hash16>/rank_tp{t}_pp0_dp0.json)
set -u
OUT=${OUT:-/tmp/out}; WHL=${WHL:?}; SCRIPTS=${SCRIPTS:?}
mkdir -p "$OUT"; exec > >(tee -a "$OUT/run.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl || exit 1
export PYTHONPATH=/tmp/site FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16 PYTHONUNBUFFERED=1 FLASHINFER_LOGGING_LEVEL=debug
W=/tmp/pairs; rm -rf $W; mkdir -p $W/a $W/b $W/c
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $W/nvidia-smi.csv
python3 -c "import torch, flashinfer; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'flashinfer', flashinfer.__version__)"
t0=$(date +%s)
for side in a b; do
  timeout 300 python3 "$SCRIPTS/warmup.py" $W/$side/autotune_config.json 2> $W/$side/debug.log; echo "$side exit=$? at $(( $(date +%s) - t0 )) s"
done
timeout 200 python3 "$SCRIPTS/warmup.py" $W/c/autotune_config.json --replays 20 2> $W/c/debug.log; echo "c exit=$? at $(( $(date +%s) - t0 )) s"
R=$W/ranks/flashinfer/autotune/0.7.2.post1/sm90/5f3a9c1e07b2d4a8; mkdir -p $R
timeout 200 python3 "$SCRIPTS/warmup.py" $R/rank_tp0_pp0_dp0.json 2> $W/ranks/rank_tp0.debug.log & p0=$!
timeout 200 python3 "$SCRIPTS/warmup.py" $R/rank_tp1_pp0_dp0.json 2> $W/ranks/rank_tp1.debug.log & p1=$!
wait $p0; echo "rank0 exit=$?"; wait $p1; echo "rank1 exit=$? at $(( $(date +%s) - t0 )) s"
cp /tmp/fiws/.cache/flashinfer/*/*/flashinfer_jit.log $W/ 2>/dev/null
tar -C /tmp -czf "$OUT/pairs.tar.gz" pairs; ls -la "$OUT"; tail -3 $W/a/debug.log
