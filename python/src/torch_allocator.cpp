// cudakit's caching allocator as PyTorch's CUDA allocator: the C functions that
// torch.cuda.memory.CUDAPluggableAllocator finds with dlsym in this extension's file, and the
// hooks cudakit.torch.use_cudakit_allocator() sets on it (empty_cache, the memory fraction,
// record_stream, and the graph pools' begin / end / release) by address, through
// _torch_allocator_hooks().
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

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/mem_pool.hpp"

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

// Note [Graph pools under torch]
// torch.cuda.graph keeps a capture's memory apart: it calls the allocator's beginAllocateToPool
// (device, pool id, filter) at capture_begin, so that every allocation on a stream the filter
// accepts (the capturing one) comes from the graph's private pool, endAllocateToPool at
// capture_end, and releasePool when the graph is reset, which drops one use of the pool (graphs
// given pool=other.pool() share one). Without it, memory freed inside the capture went back to
// the shared cache and eager work after the capture got blocks that every replay writes: torch's
// test_graph_make_graphed_callables_same_pool computed wrong gradients. cudakit keeps the same
// books here: torch's pool id maps to a cudakit pool of the device's allocator (created at the
// first begin, counted per begin, released at the last release), and while any route is open
// each allocation asks the routes, newest first, whether its stream belongs to one. Outside a
// capture the routes are empty and the check is one relaxed load.
using TorchPoolId = std::pair<unsigned long long, unsigned long long>;  // c10::cuda::MempoolId_t
using StreamFilter = std::function<bool(cudaStream_t)>;

struct GraphPools {
  struct Route {
    int device;
    TorchPoolId id;
    StreamFilter filter;
  };
  struct Pool {
    cudakit::memory::PoolId pool;
    int uses = 0;
  };
  std::mutex mutex;
  std::atomic<int> open_routes{0};
  std::vector<Route> routes;
  std::map<std::pair<int, TorchPoolId>, Pool> pools;

  // The pool `stream`'s allocations on `device` go to now; the default pool when none.
  cudakit::memory::PoolId route_of(int device, cudaStream_t stream) {
    std::lock_guard lock(mutex);
    for (auto it = routes.rbegin(); it != routes.rend(); ++it) {
      if (it->device != device || !it->filter(stream)) continue;
      // A pool torch released while its capture was still open serves nothing more.
      const auto pool = pools.find({device, it->id});
      return pool == pools.end() ? cudakit::memory::PoolId{} : pool->second.pool;
    }
    return {};
  }
};

GraphPools& graph_pools() {
  static GraphPools* pools = new GraphPools;  // never destroyed: torch may free at exit
  return *pools;
}

void begin_allocate_to_pool(int device, TorchPoolId id, StreamFilter filter) noexcept {
  logging_failures("torch beginAllocateToPool", [&] {
    GraphPools& g = graph_pools();
    std::lock_guard lock(g.mutex);
    GraphPools::Pool& pool = g.pools[{device, id}];
    if (pool.uses == 0) {
      pool.pool = cudakit::memory::CachingAllocator::new_pool_id();
      cudakit::memory::CachingAllocator& allocator = cudakit::memory::device_allocator(device);
      allocator.create_pool(pool.pool);
      // torch.cuda.graph empties the cache before each capture: See Note [A graph's pool keeps
      // its free memory] (src/memory/detail/memory_supply.hpp).
      allocator.hold_pool(pool.pool);
    }
    ++pool.uses;
    g.routes.push_back({device, id, std::move(filter)});
    g.open_routes.store(static_cast<int>(g.routes.size()), std::memory_order_relaxed);
  });
}

void end_allocate_to_pool(int device, TorchPoolId id) noexcept {
  logging_failures("torch endAllocateToPool", [&] {
    GraphPools& g = graph_pools();
    std::lock_guard lock(g.mutex);
    for (auto it = g.routes.rbegin(); it != g.routes.rend(); ++it) {
      if (it->device == device && it->id == id) {
        g.routes.erase(std::next(it).base());
        break;
      }
    }
    g.open_routes.store(static_cast<int>(g.routes.size()), std::memory_order_relaxed);
  });
}

void release_pool(int device, TorchPoolId id) noexcept {
  logging_failures("torch releasePool", [&] {
    GraphPools& g = graph_pools();
    std::lock_guard lock(g.mutex);
    const auto it = g.pools.find({device, id});
    if (it == g.pools.end()) return;  // torch releases pools it never began allocating to
    if (--it->second.uses > 0) return;
    // Its cached memory goes back now; blocks still live (tensors the graph's outputs) free
    // into it later, and it disappears with the last.
    cudakit::memory::CachingAllocator& allocator = cudakit::memory::device_allocator(device);
    allocator.release_pool_hold(it->second.pool);
    allocator.release_pool(it->second.pool);
    g.pools.erase(it);
  });
}

}  // namespace

extern "C" {

// Not noexcept: See Note [Failed allocations throw into torch].
__attribute__((visibility("default"))) void* cudakit_torch_malloc(ssize_t size, int device, cudaStream_t stream) {
  try {
    const cudakit::StreamRef on(stream, device);
    GraphPools& g = graph_pools();
    if (g.open_routes.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      // See Note [Graph pools under torch]. The thread's pool routing (what use_mem_pool and
      // cudakit's own captures set) sends this one allocation there, through memory::allocate
      // as every other, so that the trace hooks (the sanitizer, the history) see it.
      if (const cudakit::memory::PoolId pool = g.route_of(device, stream); !pool.is_default()) {
        struct Routed {
          int device;
          cudakit::memory::PoolId before;
          ~Routed() { cudakit::memory::exchange_current_pool(device, before); }
        } routed{device, cudakit::memory::exchange_current_pool(device, pool)};
        return cudakit::memory::allocate(static_cast<std::size_t>(size), on);
      }
    }
    return cudakit::memory::allocate(static_cast<std::size_t>(size), on);
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
        {"set_begin_allocate_to_pool", reinterpret_cast<std::uintptr_t>(&begin_allocate_to_pool)},
        {"set_end_allocate_to_pool_fn", reinterpret_cast<std::uintptr_t>(&end_allocate_to_pool)},
        {"set_release_pool", reinterpret_cast<std::uintptr_t>(&release_pool)},
    };
  });
}

}  // namespace cudakit::python
