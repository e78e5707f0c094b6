# Installed on PYTHONPATH by the recipe in cudakit/torch.py: with CUDAKIT_TORCH_ALLOCATOR=1, torch's
# CUDA allocator is cudakit's from interpreter start, before the program allocates anything.
import os

if os.environ.get("CUDAKIT_TORCH_ALLOCATOR") == "1":
    import cudakit.torch

    cudakit.torch.use_cudakit_allocator()
