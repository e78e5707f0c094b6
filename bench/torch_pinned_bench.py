#!/usr/bin/env python3
"""torch's CachingHostAllocator beside bench/pinned_bench.cpp: the time of a fresh pinned block
(torch.empty(..., pin_memory=True) with the host cache emptied first) by size, with
cudaHostAlloc (torch's default) and with pinned_use_cuda_host_register and 8 and 16 faulting
threads. PYTORCH_CUDA_ALLOC_CONF is read once per process, so each configuration runs in a
process of its own."""
import os
import subprocess
import sys
import time

CONFIGS = [
    ('cudaHostAlloc', ''),
    ('register, 8 threads', 'pinned_use_cuda_host_register:True,pinned_num_register_threads:8'),
    ('register, 16 threads', 'pinned_use_cuda_host_register:True,pinned_num_register_threads:16'),
]
SIZES_MIB = [16, 256, 1024, 4096]


def empty_host_cache(torch):
    for owner, name in ((torch._C, '_host_emptyCache'), (getattr(torch, 'accelerator', None), 'empty_host_cache')):
        fn = getattr(owner, name, None) if owner is not None else None
        if fn is not None:
            fn()
            return
    raise RuntimeError('this torch has no way to empty its pinned host cache')


def measure(label):
    import torch
    torch.cuda.init()
    torch.empty(1, device='cuda')
    for mib in SIZES_MIB:
        reps = 3 if mib >= 1024 else 5
        times = []
        for _ in range(reps):
            empty_host_cache(torch)
            start = time.perf_counter()
            t = torch.empty(mib << 20, dtype=torch.uint8, pin_memory=True)
            times.append((time.perf_counter() - start) * 1e3)
            del t
        empty_host_cache(torch)
        times.sort()
        print(f'torch {label:<22} {mib:8d} {times[len(times) // 2]:14.2f}', flush=True)


def main():
    if len(sys.argv) > 1:
        measure(sys.argv[1])
        return
    import torch
    print(f'torch {torch.__version__}: a fresh pinned block, allocate ms (median)')
    for label, conf in CONFIGS:
        env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=conf)
        subprocess.run([sys.executable, __file__, label], env=env, check=True)


if __name__ == '__main__':
    main()
