#include "graphs/detail/graph_pool.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"

namespace cudakit::graphs::detail {
namespace {

// See Note [Graph pools]: cudaMalloc under the relaxed capture mode, the rest as the device's
// own provider.
class CaptureSafeSegmentProvider final : public memory::SegmentProvider {
 public:
  explicit CaptureSafeSegmentProvider(int device) : cuda_(device) {}
  std::string name() const override { return cuda_.name() + " (graph pool)"; }
  void* allocate_segment(std::size_t bytes, memory::StreamKey stream) override {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CUDAKIT_CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
    struct Restore {
      cudaStreamCaptureMode mode;
      ~Restore() { CUDAKIT_WARN_CUDA(cudaThreadExchangeStreamCaptureMode(&mode)); }
    } restore{mode};
    return cuda_.allocate_segment(bytes, stream);
  }
  void free_segment(void* ptr, std::size_t bytes, memory::StreamKey stream) noexcept override {
    cuda_.free_segment(ptr, bytes, stream);
  }
  void synchronize(memory::StreamKey stream) override { cuda_.synchronize(stream); }
  std::pair<std::size_t, std::size_t> memory_info() const override { return cuda_.memory_info(); }

 private:
  memory::CudaSegmentProvider cuda_;
};

struct Registry {
  std::mutex mutex;
  std::map<std::pair<int, memory::PoolId>, std::weak_ptr<GraphPoolLease>> leases;
};

Registry& registry() {
  // Never destroyed: graphs held by static objects release their pools at exit.
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

struct GraphPoolLease::Token {};

GraphPoolLease::GraphPoolLease(Token, int device, memory::PoolId id, bool owns_pool)
    : device_(device), id_(id), owns_pool_(owns_pool) {}

std::shared_ptr<GraphPoolLease> GraphPoolLease::acquire(int device, memory::PoolId pool) {
  if (pool.is_default()) pool = memory::CachingAllocator::new_pool_id();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto& slot = r.leases[{device, pool}];
  if (auto lease = slot.lock()) return lease;
  memory::CachingAllocator& allocator = memory::device_allocator(device);
  // A pool that exists without a lease belongs to someone else (a MemPool): use, never release.
  const bool exists = allocator.has_pool(pool);
  if (!exists) allocator.create_pool(pool, std::make_shared<CaptureSafeSegmentProvider>(device));
  // The graph's replays use what its capture freed: See Note [A graph's pool keeps its free
  // memory] (memory/detail/memory_supply.hpp).
  allocator.hold_pool(pool);
  auto lease = std::make_shared<GraphPoolLease>(Token{}, device, pool, !exists);
  slot = lease;
  return lease;
}

GraphPoolLease::~GraphPoolLease() {
  Registry& r = registry();
  // Released under the registry's lock, so that a concurrent acquire of the same id either
  // finds this lease alive or finds the pool gone and creates a fresh one.
  std::lock_guard lock(r.mutex);
  auto it = r.leases.find({device_, id_});
  if (it != r.leases.end() && it->second.expired()) r.leases.erase(it);
  try {
    memory::CachingAllocator& allocator = memory::device_allocator(device_);
    allocator.release_pool_hold(id_);
    if (!owns_pool_) return;  // a MemPool's: its cached memory goes at the next empty_cache()
    allocator.release_pool(id_);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "releasing a graph's memory pool failed: ", e.what());
  }
}

}  // namespace cudakit::graphs::detail
