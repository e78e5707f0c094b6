#pragma once
// TrackedBackend: what the backends that hand each allocation to an underlying allocator
// (cudaMallocAsync, cudaMalloc, a PluggableAllocator) share — the table of live allocations with
// their streams, exact statistics, the per-process memory limit, the out-of-memory report, and
// the ordering of a free behind the streams that record_stream() named. A subclass only obtains
// and releases memory.
//
// Thread safety: one lock guards the table and the statistics; the underlying allocator is
// called outside it.

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "memory/detail/allocator_backend.hpp"

namespace cudakit::memory::detail {

// The pointer an allocation call returned with `status`: nullptr when the device is out of
// memory (that error cleared, so that the caller can say so itself), the call's CudaError for any
// other failure. `call` names the API in the error.
#define CUDAKIT_ALLOCATED_OR_NULL(call, ptr)                          \
  ([&]() -> void* {                                                   \
    const ::cudaError_t cudakit_allocation_status_ = (call);          \
    if (cudakit_allocation_status_ == ::cudaErrorMemoryAllocation) {  \
      (void)::cudaGetLastError();                                     \
      return nullptr;                                                 \
    }                                                                 \
    CUDAKIT_CHECK_CUDA(cudakit_allocation_status_);                   \
    return (ptr);                                                     \
  }())

class TrackedBackend : public AllocatorBackend {
 public:
  explicit TrackedBackend(AllocatorConfig config) : config_(std::move(config)) {}

  [[nodiscard]] void* allocate(std::size_t bytes, StreamRef stream) final;
  [[nodiscard]] bool deallocate_if_owned(void* ptr) final;
  [[nodiscard]] bool record_stream_if_owned(void* ptr, StreamRef stream) final;
  [[nodiscard]] std::optional<LiveAllocation> find(const void* ptr) const final;

  [[nodiscard]] MemoryStats stats(int device) const override;
  void reset_peak_stats(int device) override;
  void reset_accumulated_stats(int device) override;
  void empty_cache() override;
  void set_memory_fraction(double fraction, int device) override;
  [[nodiscard]] double memory_fraction(int device) const override;
  [[nodiscard]] std::string summary(int device) const final;
  [[nodiscard]] MemorySnapshot snapshot(int device) const final;

 protected:
  struct Allocation {
    std::size_t bytes = 0;
    int device = 0;
    StreamRef stream{nullptr, 0};     // the allocating stream
    std::vector<StreamRef> usage;     // other streams record_stream() named
  };

  // Memory from the underlying allocator; nullptr when it has none.
  [[nodiscard]] virtual void* obtain(std::size_t bytes, int device, StreamRef stream) = 0;
  // Gives `ptr` back, ordered after the work of a.stream and a.usage queued so far.
  virtual void release(void* ptr, const Allocation& a) = 0;
  // Whether a free must wait while a graph capture may record it (CUDA calls on a capturing
  // stream, or device-wide ones during a capture, would break the capture): it is then done at
  // the next call once no capture is under way. torch's Note [Avoid freeing uncaptured ptrs
  // during CUDA graph capture].
  [[nodiscard]] virtual bool defers_during_capture() const noexcept { return true; }
  // Whether release() touches the allocation's streams, which then are asked whether a capture
  // (begun with raw CUDA calls, unseen by the graph layer) records them. A backend that does not
  // touch them is spared the question: the program may have destroyed them.
  [[nodiscard]] virtual bool releases_on_streams() const noexcept { return true; }
  // record_stream() of a live allocation: true when cudakit is to order the free behind `stream`
  // itself (false when a hook of the underlying allocator took it). Called without the lock.
  [[nodiscard]] virtual bool keep_usage_stream(void* ptr, StreamRef stream) {
    (void)ptr, (void)stream;
    return true;
  }
  // empty_cache()'s own work, after the deferred frees.
  virtual void trim() {}
  // Bytes of `device` that a memory fraction applies to.
  [[nodiscard]] virtual std::size_t total_memory(int device) const;
  // The out-of-memory report's line on the device's own free and total memory ("" for none).
  [[nodiscard]] virtual std::string device_memory_report(int device) const;

  // For subclasses' release(): makes `target` wait for the work queued so far on `streams`.
  void order_after(StreamRef target, std::span<const StreamRef> streams);
  // The allocation's own stream and its usage streams.
  [[nodiscard]] static std::vector<StreamRef> all_streams(const Allocation& a);
  [[nodiscard]] const AllocatorConfig& config() const noexcept { return config_; }

 private:
  struct DeviceState {
    MemoryStats stats;
    double fraction = 1.0;
    std::size_t limit = static_cast<std::size_t>(-1);
  };
  static void check_device(int device, const char* api);
  void count_release(int device, std::size_t bytes);
  // release() and its statistics.
  void release_now(void* ptr, const Allocation& a);
  // Frees deferred during a capture, once none is under way.
  void release_deferred();
  [[nodiscard]] bool must_defer(const Allocation& a);
  [[nodiscard]] CudaStreamEvents& events(int device);

  AllocatorConfig config_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Allocation> live_;
  std::vector<std::pair<void*, Allocation>> deferred_;
  std::array<DeviceState, kMaxDevices> devices_{};
  std::mutex events_mutex_;
  std::array<std::unique_ptr<CudaStreamEvents>, kMaxDevices> events_{};
};

// Number of graph captures begun on `device` by cudakit's graph layer that have not ended
// (seen through a CaptureHook the memory layer registers).
[[nodiscard]] int captures_under_way(int device) noexcept;

}  // namespace cudakit::memory::detail
