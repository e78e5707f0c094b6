// The shared library the pluggable-allocator tests load by path (PluggableAllocator's dlopen
// form): torch's alloc/free signatures over host malloc, counting its calls, so that the
// pluggable backend runs on the host tier without a GPU. CUDA's headers give the stream's type;
// nothing of CUDA is called or linked.

#include <cuda_runtime_api.h>
#include <sys/types.h>

#include <atomic>
#include <cstdlib>

namespace {
std::atomic<long> g_alloc_calls{0};
std::atomic<long> g_free_calls{0};
std::atomic<long> g_live_bytes{0};
std::atomic<int> g_last_device{-1};
std::atomic<cudaStream_t> g_last_stream{nullptr};
std::atomic<bool> g_fail_next{false};
}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* cudakit_test_alloc(ssize_t size, int device, cudaStream_t stream) {
  g_alloc_calls.fetch_add(1);
  g_last_device.store(device);
  g_last_stream.store(stream);
  if (g_fail_next.exchange(false)) return nullptr;
  g_live_bytes.fetch_add(size);
  return std::malloc(static_cast<std::size_t>(size));
}

__attribute__((visibility("default"))) void cudakit_test_free(void* ptr, ssize_t size, int device, cudaStream_t stream) {
  g_free_calls.fetch_add(1);
  g_last_device.store(device);
  g_last_stream.store(stream);
  g_live_bytes.fetch_sub(size);
  std::free(ptr);
}

// What the tests read back.
__attribute__((visibility("default"))) long cudakit_test_alloc_calls() { return g_alloc_calls.load(); }
__attribute__((visibility("default"))) long cudakit_test_free_calls() { return g_free_calls.load(); }
__attribute__((visibility("default"))) long cudakit_test_live_bytes() { return g_live_bytes.load(); }
__attribute__((visibility("default"))) int cudakit_test_last_device() { return g_last_device.load(); }
__attribute__((visibility("default"))) void* cudakit_test_last_stream() { return g_last_stream.load(); }
// The next allocation returns null (out of memory).
__attribute__((visibility("default"))) void cudakit_test_fail_next() { g_fail_next.store(true); }
}
