#pragma once
// @brief The calling thread's place in a one-dimensional grid, for the grid-stride loops of every
// layer's kernels. 64-bit on purpose: blocks * threads overflows 32 bits on large grids. The
// index type is a parameter because signedness changes the loop's code: the tensor kernels
// compare against an int64 element count, the random kernels against uint64 counters (an int64
// index there changed the machine code of every random kernel).

#include <cstdint>

namespace cudakit {

template <class Index = std::int64_t>
__device__ __forceinline__ Index grid_thread_index() {
  return static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
}

template <class Index = std::int64_t>
__device__ __forceinline__ Index grid_thread_count() {
  return static_cast<Index>(gridDim.x) * blockDim.x;
}

}  // namespace cudakit
