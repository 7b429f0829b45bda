#!/usr/bin/env bash
# Copies what the device call needs into DEST (a git-ignored folder of the checkout the device tool
# sends, named in its `carry`): the kernels/ sources, campaign.py, device_run.sh and a tarball of
# the CUTLASS headers the engine builds with (include/ and tools/util/include/).
#   bench/h200_tile_campaign/stage.sh DEST CUTLASS_DIR
set -euo pipefail
dest=$1; cutlass=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dest/kernels"
cp "$root"/kernels/*.cu "$root"/kernels/*.hpp "$dest/kernels/"
cp "$root"/bench/h200_tile_campaign/campaign.py "$root"/bench/h200_tile_campaign/device_run.sh "$dest/"
[ -f "$dest/cutlass.tar.gz" ] || tar -czf "$dest/cutlass.tar.gz" -C "$cutlass" include tools/util/include
du -sh "$dest"
