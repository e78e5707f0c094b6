#pragma once
// @brief CUDAKIT_HD marks functions compiled for both the host (g++) and the device (nvcc), so
// that the CPU reference paths and the kernels run the same source. Under a host-only compiler the
// CUDA qualifiers do not exist and expand to nothing.

#if defined(__CUDACC__)
#define CUDAKIT_HD __host__ __device__
#define CUDAKIT_HD_INLINE __host__ __device__ __forceinline__
#else
// Marks a function for both the host and the device: `__host__ __device__` under nvcc, nothing
// under a host-only compiler.
#define CUDAKIT_HD
// As CUDAKIT_HD, for small functions that should be inlined: `__host__ __device__
// __forceinline__` under nvcc, `inline` under a host-only compiler.
#define CUDAKIT_HD_INLINE inline
#endif
