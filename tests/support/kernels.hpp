#pragma once
// Small kernels the GPU tier uses to keep a stream busy or to check memory.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cudakit::testing {

// One thread that spins for about `nanoseconds` of GPU time.
void launch_spin(cudaStream_t stream, std::uint64_t nanoseconds);
// A kernel that does nothing: for launch-latency measurements.
void launch_empty(cudaStream_t stream);
// Writes `value` into every byte of [ptr, ptr + bytes).
void launch_fill_bytes(cudaStream_t stream, void* ptr, std::size_t bytes, std::uint8_t value);
// Counts bytes != value in [ptr, ptr + bytes) into *mismatches (device memory, accumulated).
void launch_count_mismatches(cudaStream_t stream, const void* ptr, std::size_t bytes,
                             std::uint8_t value, unsigned long long* mismatches);

}  // namespace cudakit::testing
