#!/usr/bin/env bash
# setup-python.sh [VENV]: the Python module's build and test tools in a project-local virtual
# environment (default .venv at the repository root, which git ignores): nanobind and
# scikit-build-core to build `cudakit._cudakit`, pytest and NumPy to test it. Idempotent: a venv
# that has them already is left alone without touching the network.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$root/.venv}
python=${CUDAKIT_PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-python: creating $venv"
  if ! "$python" -m venv "$venv"; then
    # Debian's python3 keeps venv (ensurepip) in a package of its own.
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv
    rm -rf "$venv"
    "$python" -m venv "$venv"
  fi
fi
# Version floors: nanobind 2.2 has `python -m nanobind.stubgen` and the DLPack-free nb::capsule
# API used here; scikit-build-core 0.10 reads the [tool.scikit-build] keys in pyproject.toml.
requirements=("nanobind>=2.2" "scikit-build-core>=0.10" "pytest>=7" "numpy>=1.26")
if ! "$venv/bin/python" - "${requirements[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version, PackageNotFoundError
def parse(v):
    return tuple(int(x) for x in v.split(".")[:2] if x.isdigit())
for req in sys.argv[1:]:
    name, floor = req.split(">=")
    try:
        if parse(version(name)) < parse(floor):
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
  echo "setup-python: installing ${requirements[*]} into $venv"
  "$venv/bin/python" -m pip install -q "${requirements[@]}"
fi
