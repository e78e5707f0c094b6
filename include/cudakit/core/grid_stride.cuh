#pragma once
// @brief The calling thread's place in a one-dimensional grid, for the grid-stride loops of every
// layer's kernels. 64-bit on purpose: blocks * threads overflows 32 bits on large grids. The
// index type is a parameter because signedness changes the loop's code: the tensor kernels
// compare against an int64 element count, the random kernels against uint64 counters (an int64
// index there changed the machine code of every random kernel).

#include <cstdint>

namespace cudakit {

template <class Index = std::int64_t>
// The calling thread's index in the whole one-dimensional grid (blockIdx.x * blockDim.x +
// threadIdx.x), computed in `Index`. Device code only.
// @tparam Index the index type (int64 by default; an unsigned type for unsigned loop counters).
// @return the thread's global index: the first item of its grid-stride loop.
__device__ __forceinline__ Index grid_thread_index() {
  return static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
}

template <class Index = std::int64_t>
// The number of threads in the one-dimensional grid (gridDim.x * blockDim.x): the stride of a
// grid-stride loop. Device code only.
// @tparam Index the index type, as grid_thread_index's.
// @return the grid's thread count.
__device__ __forceinline__ Index grid_thread_count() {
  return static_cast<Index>(gridDim.x) * blockDim.x;
}

}  // namespace cudakit
