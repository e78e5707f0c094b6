#pragma once
// @brief Device memory for the caching allocator: cudaMalloc'd segments, or address ranges backed on
// demand through the driver's virtual memory API (cuMemAddressReserve / cuMemCreate / cuMemMap /
// cuMemSetAccess, reached through the entry-point table).

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cudakit/memory/segment_provider.hpp"
#include "cudakit/memory/stream_events.hpp"

namespace cudakit::memory {

class CudaSegmentProvider : public SegmentProvider {
 public:
  // @throws InvalidArgumentError for a bad device.
  explicit CudaSegmentProvider(int device);
  ~CudaSegmentProvider() override;

  [[nodiscard]] std::string name() const override;
  void* allocate_segment(std::size_t bytes, StreamKey stream) override;
  void free_segment(void* ptr, std::size_t bytes, StreamKey stream) noexcept override;
  [[nodiscard]] std::size_t page_size() const override { return page_size_; }
  void* reserve_range(std::size_t bytes) override;
  void release_range(void* base, std::size_t bytes) noexcept override;
  bool map(void* addr, std::size_t bytes) override;
  void unmap(void* addr, std::size_t bytes) noexcept override;
  void synchronize(StreamKey stream) override;
  [[nodiscard]] std::pair<std::size_t, std::size_t> memory_info() const override;
  [[nodiscard]] std::size_t total_memory() const override { return total_; }
  // True while the chunks map() creates can be exported as POSIX file descriptors, for other
  // processes to map (See Note [Exportable chunks] in cuda_segment_provider.cpp).
  [[nodiscard]] bool exports_file_descriptors() const noexcept { return exportable_.load(std::memory_order_relaxed); }
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  int device_;
  std::atomic<bool> exportable_{false};
  std::size_t page_size_ = 0;  // 0 when the device has no virtual memory management
  std::size_t total_ = 0;
  std::mutex handles_mutex_;
  std::map<std::uintptr_t, unsigned long long> handles_;  // mapped address -> CUmemGenericAllocationHandle
};

// CUDA events from a pool, for stream-ordered frees.
class CudaStreamEvents : public StreamEvents {
 public:
  explicit CudaStreamEvents(int device) : device_(device) {}
  ~CudaStreamEvents() override;
  Token record(StreamKey stream) override;
  bool query(Token token) override;
  void synchronize(Token token) override;
  void make_wait(StreamKey waiter, Token token) override;
  bool idle(StreamKey stream) override;
  std::uint64_t stream_serial(StreamKey stream) override;
  void release(Token token) noexcept override;
  bool capturing(StreamKey stream) override;
  // Listens to the trace hooks for stream destruction while held (See Note [Frees during
  // capture] in src/memory/detail/pending_frees.hpp).
  void hold_destroy_watch() override;
  void release_destroy_watch() noexcept override;
  // What a destroyed stream had queued (opaque; defined in the source).
  struct FinalMark;

 private:
  // The mark of a destroyed stream, or null (under marks_mutex_).
  [[nodiscard]] std::shared_ptr<FinalMark> final_mark(StreamKey stream);
  void on_trace_event(int kind, int device, StreamKey stream);

  int device_;
  std::mutex mutex_;
  std::vector<void*> free_events_;
  std::vector<void*> all_events_;
  // Streams destroyed while the watch is held, and the work each had queued then.
  std::mutex marks_mutex_;
  std::map<StreamKey, std::shared_ptr<FinalMark>> destroyed_;
  std::atomic<bool> any_destroyed_{false};
  std::mutex watch_mutex_;  // never held by the listener: detaching waits for its calls
  int watch_holds_ = 0;
  std::uint64_t listener_ = 0;
};

}  // namespace cudakit::memory
