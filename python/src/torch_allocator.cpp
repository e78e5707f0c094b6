// cudakit's caching allocator as PyTorch's CUDA allocator: the C functions that
// torch.cuda.memory.CUDAPluggableAllocator finds with dlsym in this extension's file, and the
// hooks cudakit.torch.use_cudakit_allocator() sets on it (empty_cache, the memory fraction,
// record_stream) by address, through _torch_allocator_hooks().
//
// torch calls them from C++ without the GIL, on any thread: they touch nothing of Python. An
// allocation happens on the stream torch passes, on that stream's device; a free returns the
// block to the cache in the order of the stream it was allocated on (torch passes that same
// stream), which is torch's own allocator's rule.
//
// Note [Failed allocations throw into torch]
// torch does not check what a pluggable allocation function returns: a null pointer becomes a
// tensor without memory, which the next kernel or copy writing to it crashes on. So a failed
// allocation throws, as torch's own allocator does: torch's bindings turn any std::exception that
// reaches them into a Python RuntimeError (torch's own OutOfMemoryError is one), and the message
// begins as torch's does ("CUDA out of memory. Tried to allocate ..."). The exception crosses
// torch's C++ frames only (this file and torch are C++ built against the same libstdc++); the
// type thrown is std::runtime_error, which torch's translation names for certain. The free, the
// cache release and the hooks never throw: they run in destructors and torch's noexcept paths,
// so their failures go to cudakit's log.

#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/map.h>
#include <sys/types.h>

#include <cstdint>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/device_allocator.hpp"

namespace {

// Runs `body`, logging what it throws as the failure of `what` (the hooks that must not throw).
template <class Body>
void logging_failures(const char* what, Body&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    CUDAKIT_LOG(error, what, " failed: ", e.what());
  } catch (...) {
    CUDAKIT_LOG(error, what, " failed");
  }
}

}  // namespace

extern "C" {

// Not noexcept: See Note [Failed allocations throw into torch].
__attribute__((visibility("default"))) void* cudakit_torch_malloc(ssize_t size, int device, cudaStream_t stream) {
  try {
    return cudakit::memory::allocate(static_cast<std::size_t>(size), cudakit::StreamRef(stream, device));
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what());
  }
}

__attribute__((visibility("default"))) void cudakit_torch_free(void* ptr, ssize_t, int, cudaStream_t) noexcept {
  logging_failures("torch free", [&] { cudakit::memory::deallocate(ptr); });
}

// torch.cuda.empty_cache().
__attribute__((visibility("default"))) void cudakit_torch_empty_cache() noexcept {
  logging_failures("torch empty_cache", [] { cudakit::memory::empty_cache(); });
}

// torch.cuda.set_per_process_memory_fraction(fraction, device).
__attribute__((visibility("default"))) void cudakit_torch_set_memory_fraction(double fraction, int device) noexcept {
  logging_failures("torch set_per_process_memory_fraction",
                   [&] { cudakit::memory::set_per_process_memory_fraction(fraction, device); });
}

// Tensor.record_stream(stream): the block's reuse waits for the work queued on `stream` so far.
// torch passes the stream's handle alone. Its device is taken to be the block's, never asked of
// the stream: cudaStreamGetDevice on a capturing stream invalidates the capture, and torch records
// every gradient's stream this way in a backward pass captured into a graph.
__attribute__((visibility("default"))) void cudakit_torch_record_stream(void* ptr, cudaStream_t stream) noexcept {
  logging_failures("torch record_stream", [&] {
    const cudakit::memory::CachingAllocator* owner = cudakit::memory::device_allocator_owning(ptr);
    const int device = owner ? owner->device() : cudakit::current_device();
    cudakit::memory::record_stream(ptr, cudakit::StreamRef(stream, device));
  });
}

}  // extern "C"

namespace cudakit::python {

void bind_torch_allocator(nb::module_& m) {
  // The hooks' addresses, by the name of the CUDAPluggableAllocator setter each goes to.
  m.def("_torch_allocator_hooks", [] {
    return std::map<std::string, std::uintptr_t>{
        {"set_reset_fn", reinterpret_cast<std::uintptr_t>(&cudakit_torch_empty_cache)},
        {"set_memory_fraction_fn", reinterpret_cast<std::uintptr_t>(&cudakit_torch_set_memory_fraction)},
        {"set_record_stream_fn", reinterpret_cast<std::uintptr_t>(&cudakit_torch_record_stream)},
    };
  });
}

}  // namespace cudakit::python
