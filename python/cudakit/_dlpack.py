"""from_dlpack: any DLPack producer (PyTorch, CuPy, JAX, NumPy, cudakit itself) to cudakit.Array.

The consumer's side of the protocol lives in the extension (python/src/dlpack_bindings.cpp, Note
[DLPack streams]): ask the producer where its data lives, then for a capsule ordered after the
producer's work on the stream cudakit will use (the current stream of that device).
"""

from ._cudakit import from_dlpack

__all__ = ["from_dlpack"]
