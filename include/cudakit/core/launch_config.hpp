#pragma once
// @brief Grid sizes for the grid-stride kernels of every layer (tensor, random, Jiterator, ...).

#include <cstdint>

namespace cudakit {

inline constexpr int kBlockThreads = 256;

// The device's multiprocessor count, asked once per device.
int multiprocessor_count(int device);
// Blocks of kBlockThreads for `work_items` independent items handled grid-stride: enough to fill
// every SM with `blocks_per_sm` resident blocks, fewer when there is less work. At least 1.
unsigned grid_for(std::int64_t work_items, int device, int blocks_per_sm = 8);

}  // namespace cudakit
