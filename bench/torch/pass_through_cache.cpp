// The floor of torch's pluggable-allocator path, for bench/python_bench.py: the least a caching
// allocator can do behind torch.cuda.memory.CUDAPluggableAllocator. Freed blocks wait in a list
// per exact size and are handed back to the next request of that size; a miss calls cudaMalloc.
// No streams, no splitting, no statistics: what torch.empty + del costs through the pluggable
// path with an allocator that does next to nothing, so that cudakit's figure there can be read
// against the path's own cost on the machine at hand.

#include <cuda_runtime_api.h>
#include <sys/types.h>

#include <mutex>
#include <unordered_map>
#include <vector>

namespace {
std::mutex g_mutex;
std::unordered_map<ssize_t, std::vector<void*>> g_free_blocks;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* pass_through_alloc(ssize_t size, int device, cudaStream_t) {
  {
    const std::lock_guard lock(g_mutex);
    auto& blocks = g_free_blocks[size];
    if (!blocks.empty()) {
      void* ptr = blocks.back();
      blocks.pop_back();
      return ptr;
    }
  }
  void* ptr = nullptr;
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || (current != device && cudaSetDevice(device) != cudaSuccess)) return nullptr;
  if (cudaMalloc(&ptr, static_cast<size_t>(size)) != cudaSuccess) ptr = nullptr;
  if (current != device) (void)cudaSetDevice(current);
  return ptr;
}

__attribute__((visibility("default"))) void pass_through_free(void* ptr, ssize_t size, int, cudaStream_t) {
  const std::lock_guard lock(g_mutex);
  g_free_blocks[size].push_back(ptr);
}
}
