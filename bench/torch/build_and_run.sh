#!/usr/bin/env bash
# On the GPU machine: builds torch_alloc_bench against the installed PyTorch and runs it.
# Usage: bench/torch/build_and_run.sh BUNDLE_DIR OUT_BINARY [trace-label trace-path]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bundle=$1; out=$2; shift 2
torch_dir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
abi=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
g++ -O2 -std=c++20 -D_GLIBCXX_USE_CXX11_ABI=$abi -I"$torch_dir/include" -I/usr/local/cuda/include \
    -I"$root/include" -I"$root/bench" "$here/torch_alloc_bench.cpp" -o "$out" \
    -L"$torch_dir/lib" -lc10_cuda -lc10 -L"$bundle/lib" -lcudakit -L/usr/local/cuda/lib64 -lcudart \
    -Wl,-rpath,"$torch_dir/lib:$bundle/lib:/usr/local/cuda/lib64"
"$out" "$@"
