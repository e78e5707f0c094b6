#!/usr/bin/env bash
# fetch-cutlass.sh [DIR]: CUTLASS's headers (include/cutlass, include/cute) for the tunable layer's
# Hopper GEMM candidates (CMake option CUDAKIT_CUTLASS), from the `nvidia-cutlass` wheel on PyPI,
# into DIR (default ~/.cache/cudakit/cutlass-$CUDAKIT_CUTLASS_VERSION; CMake looks there, or in
# CUDAKIT_CUTLASS_DIR). Idempotent: headers already there are kept without touching the network,
# so builds work offline once this has run. Nothing of CUTLASS goes into the repository.
# Exits 0 without headers when the wheel cannot be had (no network, no pip): the build then
# leaves the CUTLASS candidates out and says so.
set -euo pipefail
version=${CUDAKIT_CUTLASS_VERSION:-4.2.0.0}
dir=${1:-${CUDAKIT_CUTLASS_DIR:-$HOME/.cache/cudakit/cutlass-$version}}
if [ -f "$dir/include/cutlass/cutlass.h" ] && [ -f "$dir/include/cute/tensor.hpp" ]; then
  exit 0
fi
python=${CUDAKIT_PYTHON:-python3}
wheels=$dir/wheel
mkdir -p "$wheels"
echo "fetch-cutlass: nvidia-cutlass==$version into $dir"
if ! "$python" -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "nvidia-cutlass==$version"; then
  echo "fetch-cutlass: could not download nvidia-cutlass==$version; building without CUTLASS" >&2
  exit 0
fi
# The wheel keeps CUTLASS's source tree under cutlass_library/source/; only its include/ is used.
# A wheel without it (another layout in a later version) leaves the build without CUTLASS too.
if ! "$python" - "$wheels" "$dir" <<'PY'
import pathlib, shutil, sys, tempfile, zipfile
wheels, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = sorted(wheels.glob("nvidia_cutlass-*.whl"))[-1]
prefix = "cutlass_library/source/include/"
with tempfile.TemporaryDirectory(dir=out) as tmp, zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            z.extract(name, tmp)
    staged = pathlib.Path(tmp) / prefix
    if not (staged / "cutlass/cutlass.h").is_file():
        sys.exit(f"fetch-cutlass: {wheel.name} has no {prefix}cutlass/cutlass.h")
    shutil.rmtree(out / "include", ignore_errors=True)
    shutil.move(str(staged), str(out / "include"))  # whole or not at all: the check above looks for it
PY
then
  echo "fetch-cutlass: nvidia-cutlass==$version could not be unpacked; building without CUTLASS" >&2
  rm -rf "$wheels"
  exit 0
fi
rm -rf "$wheels"
echo "fetch-cutlass: headers in $dir/include"
