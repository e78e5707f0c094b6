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

// The device provider: segments from cudaMalloc (run in the relaxed capture mode, so that a
// graph capture elsewhere is not invalidated), expandable ranges through the driver's virtual
// memory API where the device supports it. Thread-safe. Each device's default allocator uses one.
class CudaSegmentProvider : public SegmentProvider {
 public:
  // A provider of `device`'s memory; reads its total memory and, with virtual memory management,
  // its mapping granularity (page_size()).
  // @param device the device ordinal; -1 means the current device.
  // @throws InvalidArgumentError for a bad device.
  // @throws CudaError when no CUDA device is available or a driver query fails.
  explicit CudaSegmentProvider(int device);
  // Returns nothing itself: the allocator returns its memory first.
  ~CudaSegmentProvider() override;

  // @return "cuda:" and the device ordinal.
  [[nodiscard]] std::string name() const override;
  // cudaMalloc on the provider's device (synchronous; `stream` is not used).
  // @param bytes the segment's size.
  // @param stream unused.
  // @return the segment, or nullptr when the device is out of memory.
  // @throws CudaError for any other failure.
  void* allocate_segment(std::size_t bytes, StreamKey stream) override;
  // cudaFree (which may synchronize the device); failures are logged.
  // @param ptr the segment.
  // @param bytes unused.
  // @param stream unused.
  void free_segment(void* ptr, std::size_t bytes, StreamKey stream) noexcept override;
  // @return the driver's recommended allocation granularity, or 0 without virtual memory management.
  [[nodiscard]] std::size_t page_size() const override { return page_size_; }
  // cuMemAddressReserve.
  // @param bytes the range's size, a multiple of page_size().
  // @return the range's base, or nullptr when no address space is left.
  // @throws CudaError when the driver has no cuMemAddressReserve.
  void* reserve_range(std::size_t bytes) override;
  // cuMemAddressFree.
  // @param base the range's base.
  // @param bytes its size, as reserved.
  void release_range(void* base, std::size_t bytes) noexcept override;
  // cuMemCreate, cuMemMap and cuMemSetAccess for the device (exportable as POSIX file
  // descriptors where supported).
  // @param addr the start, page-aligned, inside a reserved range.
  // @param bytes the length, a multiple of page_size().
  // @return false when the device is out of memory.
  // @throws CudaError for any other failure of the driver.
  bool map(void* addr, std::size_t bytes) override;
  // cuMemUnmap and cuMemRelease of a range map() backed.
  // @param addr the start map() was given.
  // @param bytes the length map() was given.
  void unmap(void* addr, std::size_t bytes) noexcept override;
  // Synchronizes the whole device (cudaDeviceSynchronize), not the stream: cached blocks outlive
  // the streams they were used on. Blocks the host.
  // @param stream unused (it may no longer exist).
  // @throws CudaError when queued work failed.
  void synchronize(StreamKey stream) override;
  // cudaMemGetInfo on the device.
  // @return the pair {free bytes, total bytes}.
  [[nodiscard]] std::pair<std::size_t, std::size_t> memory_info() const override;
  // @return the device's total memory, read once at construction.
  [[nodiscard]] std::size_t total_memory() const override { return total_; }
  // True while the chunks map() creates can be exported as POSIX file descriptors, for other
  // processes to map (See Note [Exportable chunks] in cuda_segment_provider.cpp).
  // @return whether map()'s chunks can be exported as POSIX file descriptors.
  [[nodiscard]] bool exports_file_descriptors() const noexcept { return exportable_.load(std::memory_order_relaxed); }
  // @return the device ordinal (resolved at construction).
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  int device_;
  std::atomic<bool> exportable_{false};
  std::size_t page_size_ = 0;  // 0 when the device has no virtual memory management
  std::size_t total_ = 0;
  std::mutex handles_mutex_;
  std::map<std::uintptr_t, unsigned long long> handles_;  // mapped address -> CUmemGenericAllocationHandle
};

// CUDA events from a pool, for stream-ordered frees. Events are created without timing on first
// need and reused after release(). Thread-safe.
class CudaStreamEvents : public StreamEvents {
 public:
  // Events of `device` (created when first needed).
  // @param device the device ordinal the events are created on.
  explicit CudaStreamEvents(int device) : device_(device) {}
  // Destroys every event the pool created (failures are logged).
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
  // Ends one hold_destroy_watch(); the last one detaches the listener, waiting for its calls.
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
