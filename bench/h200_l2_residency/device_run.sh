#!/usr/bin/env bash
# The device side of the L2-residency measurement (README.md): the read-bandwidth sweep, then the
# campaign's CUTLASS SM90 engine on shapes whose weights fit in / exceed the H200's L2, warm and cold.
#   carry: .dev/l2res   (bench/h200_tile_campaign/stage.sh .dev/l2res $CUTLASS_DIR; plus l2_bw.cu and this file)
#   bash .dev/l2res/device_run.sh "$OUT"
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > "$out/nvidia-smi-q-before.txt"
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a "$here/l2_bw.cu" -o /tmp/l2_bw && /tmp/l2_bw | tee "$out/l2_bw.jsonl"
configs=bf16-64x128x64-pingpong-c1x1,bf16-128x128x64-cooperative-c1x1-streamk,bf16-128x128x64-cooperative-c1x1-swapab
configs=$configs,fp8-64x128x128-pingpong-c1x1-fastaccum,fp8-128x128x128-cooperative-c1x1-fastaccum-streamk
configs=$configs,fp8-128x128x128-cooperative-c1x1-fastaccum-swapab
families=l2.7168x4608:7168:4608,l2.16384x2048:16384:2048,l2.7168x2048:7168:2048,l2.8192x3072:8192:3072
families=$families,l2.16384x8192:16384:8192
bash "$here/device_run_campaign.sh" "$out" --budget-s 260 --jobs 16 --iters 40 --warmup 5 --samples 256 --l2 both \
  --extra none --timeout-s 40 --only "$configs" --families "$families" --m-values 1,16,64,128,256
