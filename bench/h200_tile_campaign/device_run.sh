#!/usr/bin/env bash
# The device side of the campaign: unpack the CUTLASS headers carried with the call, build every
# config in parallel, run them all, and leave a tarball of the run under $1 (the tool's $OUT).
#   carry: .dev/kernels   (made by bench/h200_tile_campaign/stage.sh: kernels/, campaign.py, cutlass.tar.gz)
#   bash .dev/kernels/device_run.sh "$OUT" [campaign.py device options...]
set -uo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/tt_campaign            # outside the checkout: the binaries stay while the machine does
mkdir -p "$work/bin" "$work/run"
[ -d "$work/cutlass/include" ] || { mkdir -p "$work/cutlass" && tar -xzf "$here/cutlass.tar.gz" -C "$work/cutlass"; }
export PYTHONUNBUFFERED=1
python3 "$here/campaign.py" device --out "$work/run" --bindir "$work/bin" --kernels "$here/kernels" \
  --cutlass "$work/cutlass" "$@" 2>&1 | tee -a "$work/run/stdout.txt"
cp "$work"/bin/*.ptxas.log "$work/run/" 2>/dev/null
tar -czf "$out/run.tar.gz" -C "$work" run
ls -la "$out"
