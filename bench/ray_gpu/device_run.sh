#!/usr/bin/env bash
# The device call for bench/ray_gpu (one `run` of the device tool, from the repo root, carry [".whl/raygpu"]):
#   OUT=$OUT bash bench/ray_gpu/device_run.sh
# .whl/raygpu/site.tar.xz: Ray 2.60.0 + its dependencies + msgspec/typer for Python 3.12, trimmed by
# trim_site.py; .whl/raygpu/cutlass.tar.xz: .cutlass/ as kernels/get_cutlass.sh makes it (CUTLASS 4.5.0
# headers from FlashInfer 0.7.2.post1). Writes $OUT/run.log, $OUT/summary.json, $OUT/results.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/res"
exec > >(tee -a "$OUT/run.log") 2>&1
t0=$(date +%s)
echo "== machine"; python3 --version; which python3 nvcc; nproc; free -g | head -2; df -h /dev/shm /tmp | tail -2
echo "== unpack"
mkdir -p /tmp/rg && tar -C /tmp/rg -xJf .whl/raygpu/site.tar.xz && tar -C /tmp/rg -xJf .whl/raygpu/cutlass.tar.xz || exit 1
echo "unpacked in $(( $(date +%s) - t0 )) s"
export PYTHONPATH=/tmp/rg/site:$PWD TILETUNE_CUTLASS_DIR=/tmp/rg/.cutlass PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0
python3 -c 'import ray, msgspec, click, tiletune; print("ray", ray.__version__, ray.__file__, "tiletune", tiletune.__file__)' || exit 1
echo "== run"
timeout "${RUN_LIMIT:-470}" python3 "${RUN_PY:-bench/ray_gpu/run.py}" "$OUT/res"; echo "run.py exit $?"
cp "$OUT/res/summary.json" "$OUT/summary.json" 2>/dev/null
# Ray's own logs, for whatever went wrong (the session folder; small)
tar -C /tmp/ray -czf "$OUT/res/ray_logs.tgz" session_latest/logs 2>/dev/null
tar -C "$OUT" -czf "$OUT/results.tgz" res && rm -rf "$OUT/res"
echo "== done in $(( $(date +%s) - t0 )) s"; ls -la "$OUT"
