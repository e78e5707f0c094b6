#include "support/kernels.hpp"

namespace cudakit::testing {
namespace {

__global__ void spin_kernel(std::uint64_t nanoseconds) {
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= nanoseconds) break;
    __nanosleep(1000);
  }
}

__global__ void empty_kernel() {}

__global__ void fill_bytes_kernel(std::uint8_t* p, std::size_t n, std::uint8_t value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = value;
}

__global__ void count_mismatches_kernel(const std::uint8_t* p, std::size_t n, std::uint8_t value,
                                        unsigned long long* out) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += p[i] != value;
  if (local) atomicAdd(out, local);
}

unsigned grid_for(std::size_t n) {
  std::size_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

void launch_spin(cudaStream_t stream, std::uint64_t nanoseconds) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
}
void launch_empty(cudaStream_t stream) { empty_kernel<<<1, 1, 0, stream>>>(); }
void launch_fill_bytes(cudaStream_t stream, void* ptr, std::size_t bytes, std::uint8_t value) {
  fill_bytes_kernel<<<grid_for(bytes), 256, 0, stream>>>(static_cast<std::uint8_t*>(ptr), bytes,
                                                          value);
}
void launch_count_mismatches(cudaStream_t stream, const void* ptr, std::size_t bytes,
                             std::uint8_t value, unsigned long long* mismatches) {
  count_mismatches_kernel<<<grid_for(bytes), 256, 0, stream>>>(
      static_cast<const std::uint8_t*>(ptr), bytes, value, mismatches);
}

}  // namespace cudakit::testing
