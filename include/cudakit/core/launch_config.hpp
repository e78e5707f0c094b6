#pragma once
// @brief Grid sizes for the grid-stride kernels of every layer (tensor, random, Jiterator, ...).

#include <cstdint>

namespace cudakit {

// Threads per block of cudakit's grid-stride kernels, the block size grid_for() counts in.
inline constexpr int kBlockThreads = 256;

// The device's multiprocessor count, asked once per device (then cached, lock-free).
// @param device the device ordinal (not -1).
// @return the device's SM count.
// @throws CudaError when the runtime cannot answer (an invalid ordinal among them).
int multiprocessor_count(int device);
// Blocks of kBlockThreads for `work_items` independent items handled grid-stride: enough to fill
// every SM with `blocks_per_sm` resident blocks, fewer when there is less work. At least 1.
// @param work_items the items the kernel handles; 0 or fewer still gives one block.
// @param device the device ordinal the kernel runs on (not -1).
// @param blocks_per_sm the resident blocks per SM to aim for.
// @return the grid size in blocks.
// @throws CudaError as multiprocessor_count().
unsigned grid_for(std::int64_t work_items, int device, int blocks_per_sm = 8);

}  // namespace cudakit
