// The floor of torch's pluggable-allocator path, for bench/python_bench.py: the least a caching
// allocator can do behind torch.cuda.memory.CUDAPluggableAllocator. Freed blocks wait in a list
// per exact size and are handed back to the next request of that size; a miss calls cudaMalloc.
// No streams, no splitting, no statistics: what torch.empty + del costs through the pluggable
// path with an allocator that does next to nothing, so that cudakit's figure there can be read
// against the path's own cost on the machine at hand.
//
// The turns_ functions put this cache and another allocator's pair of functions (cudakit's, bound
// by address) behind one CUDAPluggableAllocator, so that one process can time both in alternate
// rounds (Note [The pluggable path's floor in turns] in bench/python_bench.py).

#include <cuda_runtime_api.h>
#include <sys/types.h>

#include <atomic>
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

using AllocFn = void* (*)(ssize_t, int, cudaStream_t);
using FreeFn = void (*)(void*, ssize_t, int, cudaStream_t);
struct Side {
  AllocFn alloc;
  FreeFn free;
  std::atomic<long> live{0};
};
// Side 0 this cache, side 1 the bound allocator; both reached through the same pointers.
Side g_sides[2] = {{pass_through_alloc, pass_through_free}, {nullptr, nullptr}};
std::atomic<int> g_side{0};

// Binds side 1 to another allocator's functions (the signatures torch's pluggable path calls).
__attribute__((visibility("default"))) void turns_bind(void* alloc, void* free) {
  g_sides[1].alloc = reinterpret_cast<AllocFn>(alloc);
  g_sides[1].free = reinterpret_cast<FreeFn>(free);
}

// Serves the next requests from `side`; refuses (returns -1) while the side now serving has live
// allocations, whose frees must reach it, or when `side` is not bound.
__attribute__((visibility("default"))) int turns_use(int side) {
  if (side < 0 || side > 1 || !g_sides[side].alloc) return -1;
  const int now = g_side.load(std::memory_order_relaxed);
  if (now != side && g_sides[now].live.load(std::memory_order_relaxed) != 0) return -1;
  g_side.store(side, std::memory_order_relaxed);
  return 0;
}

__attribute__((visibility("default"))) void* turns_alloc(ssize_t size, int device, cudaStream_t stream) {
  Side& side = g_sides[g_side.load(std::memory_order_relaxed)];
  void* ptr = side.alloc(size, device, stream);
  if (ptr) side.live.fetch_add(1, std::memory_order_relaxed);
  return ptr;
}

__attribute__((visibility("default"))) void turns_free(void* ptr, ssize_t size, int device, cudaStream_t stream) {
  Side& side = g_sides[g_side.load(std::memory_order_relaxed)];
  side.free(ptr, size, device, stream);
  side.live.fetch_sub(1, std::memory_order_relaxed);
}
}
