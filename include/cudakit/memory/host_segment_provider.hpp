#pragma once
// @brief Host memory standing in for a device: the caching allocator's policy runs on it in the host
// test tier and in `cudakit alloc-replay --backend host`, with no GPU.

#include <atomic>
#include <cstddef>
#include <map>
#include <set>
#include <vector>
#include <mutex>

#include "cudakit/memory/segment_provider.hpp"
#include "cudakit/memory/stream_events.hpp"

namespace cudakit::memory {

// Address space comes from mmap(PROT_NONE, MAP_NORESERVE) and is made accessible on map(), so
// tests can write into every byte while untouched pages cost nothing; `capacity` bytes of
// "device memory" exist in all (segments + mapped ranges), beyond which allocation fails.
class HostSegmentProvider : public SegmentProvider {
 public:
  // A provider of `capacity` bytes, reserving nothing yet.
  // @param capacity the simulated device memory, in bytes.
  // @param page_size the expandable ranges' granularity, in bytes (a multiple of the system's page).
  explicit HostSegmentProvider(std::size_t capacity, std::size_t page_size = 2u << 20);
  // Returns nothing itself: the allocator returns its memory first.
  ~HostSegmentProvider() override;

  // @return "host".
  [[nodiscard]] std::string name() const override { return "host"; }
  // A readable and writable anonymous mapping, if the capacity allows.
  // @param bytes the segment's size.
  // @param stream unused.
  // @return the segment, or nullptr past the capacity or when the system refuses.
  void* allocate_segment(std::size_t bytes, StreamKey stream) override;
  // munmap, and the bytes count as free again.
  // @param ptr the segment.
  // @param bytes its size, as allocated.
  // @param stream unused.
  void free_segment(void* ptr, std::size_t bytes, StreamKey stream) noexcept override;
  // @return the page size given at construction.
  [[nodiscard]] std::size_t page_size() const override { return page_size_; }
  // Inaccessible address space (mmap PROT_NONE); costs no capacity.
  // @param bytes the range's size.
  // @return the range's base, or nullptr when the system refuses.
  void* reserve_range(std::size_t bytes) override;
  // munmap of a reserved range.
  // @param base the range's base.
  // @param bytes its size, as reserved.
  void release_range(void* base, std::size_t bytes) noexcept override;
  // Makes the pages accessible, if the capacity allows.
  // @param addr the start, inside a reserved range, page-aligned.
  // @param bytes the length, a multiple of page_size().
  // @return false past the capacity or when the system refuses.
  // @throws InvalidArgumentError when `bytes` is not a multiple of page_size().
  bool map(void* addr, std::size_t bytes) override;
  // Drops the pages and makes them inaccessible again; the reservation stays.
  // @param addr the start map() was given.
  // @param bytes the length map() was given.
  void unmap(void* addr, std::size_t bytes) noexcept override;
  // @return the pair {capacity - in_use(), capacity}.
  [[nodiscard]] std::pair<std::size_t, std::size_t> memory_info() const override;

  // @return the bytes of capacity in use (segments and mapped chunks).
  [[nodiscard]] std::size_t in_use() const noexcept { return in_use_.load(); }
  // Calls that obtained memory (allocate_segment + map) and returned it.
  // @return the successful allocate_segment() and map() calls so far.
  [[nodiscard]] std::size_t acquire_calls() const noexcept { return acquire_calls_.load(); }
  // @return the free_segment() and unmap() calls so far.
  [[nodiscard]] std::size_t release_calls() const noexcept { return release_calls_.load(); }
  // The errno of the last time the system refused address space or pages (mmap, mprotect: a
  // reservation past the address space or `ulimit -v`), 0 when it never did. Such a refusal
  // reaches the allocator as memory that cannot be provided, an OutOfMemoryError; this tells it
  // apart from the simulated capacity running out.
  // @return the errno, or 0.
  [[nodiscard]] int system_refusal() const noexcept { return system_refusal_.load(); }

 private:
  bool take(std::size_t bytes);
  std::size_t capacity_;
  std::size_t page_size_;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> acquire_calls_{0};
  std::atomic<std::size_t> release_calls_{0};
  std::atomic<int> system_refusal_{0};
};

// Events whose completion the test controls: record() returns a ticket per stream; a ticket is
// complete once complete_up_to(stream, ticket) (or complete_all()) has been called. With
// `auto_complete`, every event is complete at once (work "finishes" instantly). make_wait()
// orders streams as a GPU does: work on the waiting stream queued after the wait completes only
// after the awaited work, so completing it completes that work too.
class HostStreamEvents : public StreamEvents {
 public:
  // Simulated events; thread-safe.
  // @param auto_complete whether every event is complete as soon as recorded.
  explicit HostStreamEvents(bool auto_complete = true) : auto_complete_(auto_complete) {}
  Token record(StreamKey stream) override;
  bool query(Token token) override;
  void synchronize(Token token) override;
  void make_wait(StreamKey waiter, Token token) override;
  bool idle(StreamKey stream) override;
  // Every simulated stream exists until destroy_stream(): serial 1.
  // @param stream the stream.
  // @return 1, or 0 once destroy_stream() named it.
  std::uint64_t stream_serial(StreamKey stream) override;
  void release(Token token) noexcept override;
  bool capturing(StreamKey stream) override;
  // The highest ticket of `awaited` that work queued on `waiter` from now on runs after.
  // @param waiter the waiting stream.
  // @param awaited the stream waited for.
  // @return the ticket, 0 when `waiter` waits for nothing of `awaited`.
  [[nodiscard]] std::uint64_t waited_ticket(StreamKey waiter, StreamKey awaited);
  // The highest completed ticket of `stream`.
  // @param stream the stream.
  // @return the ticket, 0 when none completed.
  [[nodiscard]] std::uint64_t completed_ticket(StreamKey stream);
  // Simulates a graph capture in progress on `stream` (for tests of deferred frees).
  // @param stream the stream.
  // @param capturing whether it captures from now on.
  void set_capturing(StreamKey stream, bool capturing);
  // Simulates the program destroying `stream`: it stops capturing, and record() on it marks the
  // work queued before (its last ticket), as CudaStreamEvents does for a destroyed stream.
  // @param stream the stream.
  void destroy_stream(StreamKey stream);
  // Holds of the destroy watch not yet released.
  // @return hold_destroy_watch() calls minus release_destroy_watch() calls.
  [[nodiscard]] int destroy_watch_holds();
  void hold_destroy_watch() override;
  // Ends one hold (counted by destroy_watch_holds()).
  void release_destroy_watch() noexcept override;
  // The ticket the next record(stream) will return minus one: "all work queued so far".
  // @param stream the stream.
  // @return the last ticket issued on it, 0 when none.
  std::uint64_t last_ticket(StreamKey stream);
  // Completes the work of `stream` up to `ticket`, and what it waited for (make_wait()).
  // @param stream the stream.
  // @param ticket the last ticket to complete.
  void complete_up_to(StreamKey stream, std::uint64_t ticket);
  // Completes every ticket issued so far on every stream.
  void complete_all();
  // @return tokens recorded and not yet released (to check that the allocator releases them).
  [[nodiscard]] std::size_t live_tokens();

 private:
  struct Pending {
    StreamKey stream;
    std::uint64_t ticket;
  };
  // Work on `waiter` after its ticket `after` runs after `awaited` up to its ticket.
  struct Wait {
    StreamKey waiter;
    std::uint64_t after;
    StreamKey awaited;
    std::uint64_t ticket;
  };
  void complete_locked(StreamKey stream, std::uint64_t ticket);
  bool auto_complete_;
  std::mutex mutex_;
  std::map<StreamKey, std::uint64_t> issued_;
  std::map<StreamKey, std::uint64_t> completed_;
  std::map<Token, Pending> tokens_;
  std::set<StreamKey> capturing_;
  std::vector<Wait> waits_;
  std::set<StreamKey> destroyed_;
  int watch_holds_ = 0;
  Token next_token_ = 1;
};

}  // namespace cudakit::memory
