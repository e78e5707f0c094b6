// cudakit's caching allocator as PyTorch's CUDA allocator: the two C functions that
// torch.cuda.memory.CUDAPluggableAllocator finds with dlsym in this extension's file
// (cudakit.torch.use_cudakit_allocator()).
//
// torch calls them from C++ without the GIL, on any thread: they touch nothing of Python. An
// allocation happens on the stream torch passes, on that stream's device; a free returns the
// block to the cache in the order of the stream it was allocated on (torch passes that same
// stream), which is torch's own allocator's rule. Errors must not cross into torch as C++
// exceptions: an allocation that fails returns null, which torch reports as out of memory, and the
// reason goes to cudakit's log.

#include <cuda_runtime_api.h>
#include <sys/types.h>

#include <exception>

#include "cudakit/core/log.hpp"
#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/device_allocator.hpp"

extern "C" {

__attribute__((visibility("default"))) void* cudakit_torch_malloc(ssize_t size, int device,
                                                                   cudaStream_t stream) noexcept {
  try {
    return cudakit::memory::allocate(static_cast<std::size_t>(size), cudakit::StreamRef(stream, device));
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "torch allocation of ", size, " bytes on cuda:", device, " failed: ", e.what());
  } catch (...) {
    CUDAKIT_LOG(warning, "torch allocation of ", size, " bytes on cuda:", device, " failed");
  }
  return nullptr;
}

__attribute__((visibility("default"))) void cudakit_torch_free(void* ptr, ssize_t, int device,
                                                                cudaStream_t) noexcept {
  try {
    cudakit::memory::deallocate(ptr);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(error, "torch free on cuda:", device, " failed: ", e.what());
  } catch (...) {
    CUDAKIT_LOG(error, "torch free on cuda:", device, " failed");
  }
}

}  // extern "C"
