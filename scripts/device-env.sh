# Sourced by the scripts that run on the GPU machine: `source device-env.sh BUNDLE_DIR`. Puts the
# staged bundle's libraries and CUDA's on the library path, and NCCL, which cudakit loads at run
# time: the system's, else the one PyTorch's wheel brings (nvidia-nccl). stage-gpu-bundle.sh
# copies this file into the bundle beside gpu-tier.sh, which runs from there alone.
device_env_bundle=$(cd "${1:?device-env.sh: the bundle directory}" && pwd)
export LD_LIBRARY_PATH="$device_env_bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2; then
  device_env_nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
  if [ -n "$device_env_nccl" ]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$device_env_nccl"; fi
fi
unset device_env_bundle device_env_nccl
