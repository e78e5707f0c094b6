#!/usr/bin/env bash
# Installs what the project needs from Debian's registry, once (idempotent: installed packages
# are skipped without touching the network).
set -euo pipefail
packages=(cmake g++ make libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
          zlib1g-dev chromium python3 ccache clang-14 libclang-rt-14-dev ${CUDAKIT_EXTRA_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA 13 toolkit is expected under /usr/local/cuda" >&2
  exit 1
fi
# CUTLASS's headers for the Hopper GEMM candidates (optional: the build goes on without them).
"$(dirname "$0")/fetch-cutlass.sh"
