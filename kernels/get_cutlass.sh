#!/usr/bin/env bash
# Puts the CUTLASS headers FlashInfer 0.7.2.post1 bundles (CUTLASS 4.5.0) into .cutlass/ at the
# checkout root, where tiletune's CUTLASS engine looks for them (after $TILETUNE_CUTLASS_DIR).
# Only include/ and tools/util/include/ are unpacked (about 29 MB); the wheel (62 MB) is deleted.
#   kernels/get_cutlass.sh [FLASHINFER_VERSION]      (default 0.7.2.post1)
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-0.7.2.post1}"
dest=.cutlass
if [ -f "$dest/include/cutlass/version.h" ]; then
  echo "$dest: CUTLASS headers already present ($(cat "$dest/SOURCE" 2>/dev/null || echo unknown source))"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps "flashinfer-python==$version" -d "$tmp"
python3 - "$tmp" "$dest" "$version" <<'EOF'
import pathlib, shutil, sys, zipfile
tmp, dest, version = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
wheel = next(tmp.glob("flashinfer_python-*.whl"))
prefixes = ("flashinfer/data/cutlass/include/", "flashinfer/data/cutlass/tools/util/include/")
staging = dest.with_name(dest.name + ".partial")
shutil.rmtree(staging, ignore_errors=True)
n = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefixes) and not name.endswith("/"):
            out = staging / name[len("flashinfer/data/cutlass/"):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
            n += 1
(staging / "SOURCE").write_text(f"flashinfer-python=={version} flashinfer/data/cutlass\n")
shutil.rmtree(dest, ignore_errors=True)
staging.rename(dest)  # whole tree or nothing
print(f"{dest}: {n} CUTLASS header files from {wheel.name}")
EOF
