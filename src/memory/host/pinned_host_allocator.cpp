// The pinned host caching allocator. The policy (size classes, the cache, the pending list) comes
// first and reaches memory and events only through PinnedMemoryProvider and PinnedEventSource;
// the CUDA implementations of those two, the only CUDA calls here, are at the end of the file.
#include "cudakit/memory/host/pinned_host_allocator.hpp"

#include <cuda_runtime_api.h>

#include <bit>
#include <chrono>
#include <limits>
#include <source_location>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/allocator_config.hpp"

namespace cudakit::memory {
namespace {

void grow(PinnedHostStat& stat, std::size_t bytes) noexcept {
  stat.current += bytes;
  if (stat.current > stat.peak) stat.peak = stat.current;
}

void shrink(PinnedHostStat& stat, std::size_t bytes) noexcept { stat.current -= bytes; }

std::size_t size_class_index(std::size_t size) noexcept {
  return static_cast<std::size_t>(std::countr_zero(size));
}

using Clock = std::chrono::steady_clock;

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

}  // namespace

PinnedHostAllocator::PinnedHostAllocator()
    : PinnedHostAllocator(make_pinned_memory_provider(AllocatorConfig::from_environment()),
                          make_cuda_pinned_event_source()) {}

PinnedHostAllocator::PinnedHostAllocator(std::unique_ptr<PinnedMemoryProvider> provider,
                                         std::unique_ptr<PinnedEventSource> events)
    : provider_(std::move(provider)), events_(std::move(events)) {
  if (provider_ == nullptr || events_ == nullptr) {
    throw InvalidArgumentError("PinnedHostAllocator",
                               provider_ == nullptr ? "the memory provider is null"
                                                    : "the event source is null");
  }
}

PinnedHostAllocator::~PinnedHostAllocator() {
  // The GPU may still be copying from or into pending blocks: freeing them first would let the
  // copy touch memory the process no longer owns.
  for (Block* block : pending_) {
    for (const PendingEvent& event : block->events) {
      try {
        events_->synchronize(event.handle);
      } catch (...) {
        // Nothing better to do in a destructor: a failing synchronize means the context is gone,
        // and with it the work that could have used the block.
      }
      events_->destroy(event.handle);
    }
  }
  for (auto& [device, pool] : event_pool_) {
    for (PinnedEventHandle handle : pool) events_->destroy(handle);
  }
  for (auto& [address, block] : blocks_) provider_->free(block->ptr);
}

std::size_t PinnedHostAllocator::size_class(std::size_t bytes) {
  if (bytes <= kMinBlockSize) return kMinBlockSize;
  constexpr std::size_t kLargest = std::size_t{1} << (std::numeric_limits<std::size_t>::digits - 1);
  if (bytes > kLargest) {
    throw OutOfMemoryError("PinnedHostAllocator::allocate",
                           detail::concat("cannot allocate ", bytes,
                                          " bytes of pinned host memory: the largest size class is ",
                                          kLargest, " bytes"),
                           bytes);
  }
  return std::bit_ceil(bytes);
}

void* PinnedHostAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t size = size_class(bytes);
  {
    std::lock_guard lock(mutex_);
    process_events_locked();
    if (void* ptr = take_cached(size)) return ptr;
  }
  // Outside the lock: cudaHostAlloc maps and locks pages, which takes milliseconds for large
  // blocks, and other threads may meanwhile be served from the cache.
  double provider_us = 0;
  auto from_provider = [&] {
    const auto start = Clock::now();
    void* block = provider_->allocate(size);
    provider_us = microseconds_since(start);
    return block;
  };
  void* ptr = from_provider();
  if (ptr == nullptr) {
    std::vector<Block> freed;
    {
      std::lock_guard lock(mutex_);
      process_events_locked();
      // Another thread may have returned a block of this class while the provider ran.
      if (void* cached = take_cached(size)) return cached;
      freed = detach_cached();
    }
    free_blocks(freed);
    ptr = from_provider();
    if (ptr == nullptr) {
      std::size_t freed_bytes = 0;
      for (const Block& block : freed) freed_bytes += block.size;
      std::lock_guard lock(mutex_);
      ++stats_.num_ooms;
      throw OutOfMemoryError(
          "PinnedHostAllocator::allocate",
          detail::concat("cannot allocate ", bytes, " bytes of pinned host memory (size class ",
                         size, " bytes): ", provider_->name(), " failed even after freeing ",
                         freed_bytes, " cached bytes (", freed.size(),
                         " blocks) and retrying; the allocator still holds ",
                         stats_.allocated_bytes.current, " bytes allocated (",
                         stats_.allocated_blocks, " blocks) and ", stats_.pending_bytes,
                         " bytes pending (", stats_.pending_blocks,
                         " blocks, deallocated but awaiting GPU work)"),
          bytes);
    }
  }
  std::lock_guard lock(mutex_);
  return insert_new_block(ptr, size, provider_us);
}

void* PinnedHostAllocator::insert_new_block(void* ptr, std::size_t size, double provider_us) {
  auto block = std::make_unique<Block>();
  block->ptr = ptr;
  block->size = size;
  try {
    blocks_.emplace(reinterpret_cast<std::uintptr_t>(ptr), std::move(block));
  } catch (...) {
    provider_->free(ptr);
    throw;
  }
  ++stats_.num_host_allocs;
  stats_.host_alloc_time.add(provider_us);
  ++stats_.num_allocations;
  ++stats_.allocated_blocks;
  grow(stats_.reserved_bytes, size);
  grow(stats_.allocated_bytes, size);
  return ptr;
}

void* PinnedHostAllocator::take_cached(std::size_t size) {
  std::vector<Block*>& cache = cached_[size_class_index(size)];
  if (cache.empty()) return nullptr;
  // The most recently returned block: its pages are the likeliest to be in the CPU caches/TLB.
  Block& block = *cache.back();
  cache.pop_back();
  --stats_.cached_blocks;
  stats_.cached_bytes -= block.size;
  ++stats_.num_cache_hits;
  make_allocated(block);
  return block.ptr;
}

void PinnedHostAllocator::make_allocated(Block& block) {
  block.state = BlockState::allocated;
  block.streams.clear();
  ++stats_.num_allocations;
  ++stats_.allocated_blocks;
  grow(stats_.allocated_bytes, block.size);
}

PinnedHostAllocator::Block* PinnedHostAllocator::find_block_containing(const void* ptr) const {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  auto it = blocks_.upper_bound(address);
  if (it == blocks_.begin()) return nullptr;
  --it;
  return address < it->first + it->second->size ? it->second.get() : nullptr;
}

void PinnedHostAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(mutex_);
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  auto it = blocks_.find(address);
  if (it == blocks_.end()) {
    if (const Block* inner = find_block_containing(ptr)) {
      throw InvalidArgumentError(
          "PinnedHostAllocator::deallocate",
          detail::concat("pointer ", ptr, " lies inside the pinned block at ", inner->ptr, " (",
                         inner->size,
                         " bytes) but is not its start: pass the pointer allocate() returned"));
    }
    throw InvalidArgumentError(
        "PinnedHostAllocator::deallocate",
        detail::concat("pointer ", ptr, " was not allocated by this PinnedHostAllocator"));
  }
  Block& block = *it->second;
  if (block.state != BlockState::allocated) {
    throw InvalidArgumentError(
        "PinnedHostAllocator::deallocate",
        detail::concat("pointer ", ptr, " was already deallocated (double free)"));
  }

  if (block.streams.empty()) {
    cached_[size_class_index(block.size)].push_back(&block);
    block.state = BlockState::cached;
    --stats_.allocated_blocks;
    shrink(stats_.allocated_bytes, block.size);
    ++stats_.cached_blocks;
    stats_.cached_bytes += block.size;
    return;
  }

  // All or nothing: if one record fails (a destroyed stream, a sticky error), the events already
  // recorded go back to the pool and the block stays allocated, so the caller may retry.
  std::vector<PendingEvent> recorded;
  recorded.reserve(block.streams.size());
  try {
    pending_.reserve(pending_.size() + 1);
    for (const StreamRef stream : block.streams) {
      std::vector<PinnedEventHandle>& pool = event_pool_[stream.device()];
      PendingEvent event{nullptr, stream.device()};
      if (pool.empty()) {
        event.handle = events_->create(stream.device());
        ++stats_.num_events_created;
      } else {
        event.handle = pool.back();
        pool.pop_back();
      }
      recorded.push_back(event);  // cannot throw: reserved above
      events_->record(event.handle, stream);
    }
  } catch (...) {
    // Re-recording an event that was recorded before is fine, so these may be reused as is.
    for (const PendingEvent& event : recorded) release_event(event);
    throw;
  }
  stats_.num_events_recorded += recorded.size();
  block.events = std::move(recorded);
  block.streams.clear();
  block.state = BlockState::pending;
  pending_.push_back(&block);  // cannot throw: reserved above
  --stats_.allocated_blocks;
  shrink(stats_.allocated_bytes, block.size);
  ++stats_.pending_blocks;
  stats_.pending_bytes += block.size;
}

void PinnedHostAllocator::record_stream(void* ptr, StreamRef stream) {
  std::lock_guard lock(mutex_);
  Block* block = find_block_containing(ptr);
  if (block == nullptr) {
    throw InvalidArgumentError(
        "PinnedHostAllocator::record_stream",
        detail::concat("pointer ", ptr, " lies in no block allocated by this PinnedHostAllocator"));
  }
  if (block->state != BlockState::allocated) {
    throw InvalidArgumentError(
        "PinnedHostAllocator::record_stream",
        detail::concat("pointer ", ptr, " lies in the pinned block at ", block->ptr,
                       ", which was already deallocated"));
  }
  for (const StreamRef known : block->streams) {
    if (known == stream) return;
  }
  block->streams.push_back(stream);
}

std::size_t PinnedHostAllocator::process_events() {
  std::lock_guard lock(mutex_);
  return process_events_locked();
}

std::size_t PinnedHostAllocator::process_events_locked() {
  // Written so that an event query that throws leaves the books consistent: every step moves one
  // event or one block completely.
  std::size_t moved = 0;
  for (std::size_t i = 0; i < pending_.size();) {
    Block& block = *pending_[i];
    while (!block.events.empty() && events_->query(block.events.back().handle)) {
      release_event(block.events.back());
      block.events.pop_back();
    }
    if (!block.events.empty()) {
      ++i;
      continue;
    }
    cached_[size_class_index(block.size)].push_back(&block);
    block.state = BlockState::cached;
    pending_[i] = pending_.back();  // order among pending blocks does not matter
    pending_.pop_back();
    --stats_.pending_blocks;
    stats_.pending_bytes -= block.size;
    ++stats_.cached_blocks;
    stats_.cached_bytes += block.size;
    ++moved;
  }
  return moved;
}

void PinnedHostAllocator::release_event(const PendingEvent& event) {
  event_pool_[event.device].push_back(event.handle);
}

std::vector<PinnedHostAllocator::Block> PinnedHostAllocator::detach_cached() {
  std::vector<Block> detached;
  for (std::vector<Block*>& cache : cached_) {
    for (Block* block : cache) {
      const auto address = reinterpret_cast<std::uintptr_t>(block->ptr);
      detached.push_back(std::move(*block));
      blocks_.erase(address);
      --stats_.cached_blocks;
      stats_.cached_bytes -= detached.back().size;
      shrink(stats_.reserved_bytes, detached.back().size);
      ++stats_.num_host_frees;
    }
    cache.clear();
  }
  return detached;
}

void PinnedHostAllocator::free_blocks(const std::vector<Block>& blocks) noexcept {
  if (blocks.empty()) return;
  PinnedHostDuration took;
  for (const Block& block : blocks) {
    const auto start = Clock::now();
    provider_->free(block.ptr);
    took.add(microseconds_since(start));
  }
  std::lock_guard lock(mutex_);
  stats_.host_free_time.merge(took);
}

void PinnedHostAllocator::empty_cache() {
  std::vector<Block> freed;
  {
    std::lock_guard lock(mutex_);
    process_events_locked();
    freed = detach_cached();
  }
  // Outside the lock: cudaFreeHost synchronizes the device and may take long.
  free_blocks(freed);
}

bool PinnedHostAllocator::owns(const void* ptr) const {
  std::lock_guard lock(mutex_);
  const Block* block = find_block_containing(ptr);
  return block != nullptr && block->state == BlockState::allocated;
}

PinnedHostStats PinnedHostAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void PinnedHostAllocator::reset_peak_stats() {
  std::lock_guard lock(mutex_);
  stats_.allocated_bytes.peak = stats_.allocated_bytes.current;
  stats_.reserved_bytes.peak = stats_.reserved_bytes.current;
}

void PinnedHostAllocator::reset_accumulated_stats() {
  std::lock_guard lock(mutex_);
  stats_.num_allocations = 0;
  stats_.num_cache_hits = 0;
  stats_.num_host_allocs = 0;
  stats_.num_host_frees = 0;
  stats_.num_events_recorded = 0;
  stats_.num_ooms = 0;
  stats_.host_alloc_time = {};
  stats_.host_free_time = {};
}

PinnedHostAllocator& pinned_host_allocator() {
  // Leaked on purpose: pinned buffers may be returned from other static destructors, after the
  // point where a function-local static would already be gone.
  static PinnedHostAllocator* const instance = new PinnedHostAllocator();
  return *instance;
}

void* allocate_pinned(std::size_t bytes) { return pinned_host_allocator().allocate(bytes); }

void deallocate_pinned(void* ptr) { pinned_host_allocator().deallocate(ptr); }

void record_stream_pinned(void* ptr, StreamRef stream) {
  pinned_host_allocator().record_stream(ptr, stream);
}

// ---- The CUDA memory provider and event source ----------------------------------------------

namespace {

class CudaPinnedMemoryProvider final : public PinnedMemoryProvider {
 public:
  void* allocate(std::size_t bytes) override {
    void* ptr = nullptr;
    // cudaHostAllocDefault, as torch: with unified addressing (every 64-bit platform CUDA 13
    // supports) the block is usable by every device, whichever is current here.
    const cudaError_t status = cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;  // the allocator frees its cache and retries
    }
    if (status != cudaSuccess) {
      detail::throw_cuda_error(status, "cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault)",
                               std::source_location::current());
    }
    return ptr;
  }

  void free(void* ptr) noexcept override { CUDAKIT_WARN_CUDA(cudaFreeHost(ptr)); }

  [[nodiscard]] std::string_view name() const noexcept override { return "cudaHostAlloc"; }
};

class CudaPinnedEventSource final : public PinnedEventSource {
 public:
  PinnedEventHandle create(int device) override {
    DeviceGuard guard(device);
    cudaEvent_t event = nullptr;
    CUDAKIT_CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }

  void record(PinnedEventHandle event, StreamRef stream) override {
    // The legacy and per-thread default stream handles mean "of the current device".
    DeviceGuard guard(stream.device());
    CUDAKIT_CHECK_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(event), stream.handle()));
  }

  bool query(PinnedEventHandle event) override {
    return CUDAKIT_QUERY_CUDA(cudaEventQuery(static_cast<cudaEvent_t>(event)));
  }

  void synchronize(PinnedEventHandle event) override {
    CUDAKIT_CHECK_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }

  void destroy(PinnedEventHandle event) noexcept override {
    CUDAKIT_WARN_CUDA(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  }
};

}  // namespace

std::unique_ptr<PinnedMemoryProvider> make_cuda_pinned_memory_provider() {
  return std::make_unique<CudaPinnedMemoryProvider>();
}

std::unique_ptr<PinnedEventSource> make_cuda_pinned_event_source() {
  return std::make_unique<CudaPinnedEventSource>();
}

}  // namespace cudakit::memory
