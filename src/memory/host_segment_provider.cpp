#include "cudakit/memory/host_segment_provider.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {

HostSegmentProvider::HostSegmentProvider(std::size_t capacity, std::size_t page_size)
    : capacity_(capacity), page_size_(page_size) {}

HostSegmentProvider::~HostSegmentProvider() = default;

bool HostSegmentProvider::take(std::size_t bytes) {
  std::size_t used = in_use_.load();
  do {
    if (used + bytes > capacity_) return false;
  } while (!in_use_.compare_exchange_weak(used, used + bytes));
  acquire_calls_.fetch_add(1);
  return true;
}

void* HostSegmentProvider::allocate_segment(std::size_t bytes, StreamKey) {
  if (!take(bytes)) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) {
    system_refusal_.store(errno);
    in_use_.fetch_sub(bytes);
    return nullptr;
  }
  return p;
}

void HostSegmentProvider::free_segment(void* ptr, std::size_t bytes, StreamKey) noexcept {
  munmap(ptr, bytes);
  in_use_.fetch_sub(bytes);
  release_calls_.fetch_add(1);
}

void* HostSegmentProvider::reserve_range(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    system_refusal_.store(errno);
    return nullptr;
  }
  return p;
}

void HostSegmentProvider::release_range(void* base, std::size_t bytes) noexcept { munmap(base, bytes); }

bool HostSegmentProvider::map(void* addr, std::size_t bytes) {
  if (bytes % page_size_ != 0) {
    throw InvalidArgumentError("HostSegmentProvider::map",
                               detail::concat(bytes, " bytes is not a multiple of the page size ",
                                              page_size_));
  }
  if (!take(bytes)) return false;
  if (mprotect(addr, bytes, PROT_READ | PROT_WRITE) != 0) {
    system_refusal_.store(errno);
    in_use_.fetch_sub(bytes);
    return false;
  }
  return true;
}

void HostSegmentProvider::unmap(void* addr, std::size_t bytes) noexcept {
  // Drop the pages (as cuMemUnmap + cuMemRelease return physical memory), keep the reservation.
  madvise(addr, bytes, MADV_DONTNEED);
  mprotect(addr, bytes, PROT_NONE);
  in_use_.fetch_sub(bytes);
  release_calls_.fetch_add(1);
}

std::pair<std::size_t, std::size_t> HostSegmentProvider::memory_info() const {
  return {capacity_ - in_use_.load(), capacity_};
}

StreamEvents::Token HostStreamEvents::record(StreamKey stream) {
  std::lock_guard lock(mutex_);
  const Token token = next_token_++;
  // A destroyed stream queues nothing more: its mark is the work queued before.
  tokens_[token] = Pending{stream, destroyed_.count(stream) ? issued_[stream] : ++issued_[stream]};
  return token;
}

void HostStreamEvents::destroy_stream(StreamKey stream) {
  std::lock_guard lock(mutex_);
  capturing_.erase(stream);
  destroyed_.insert(stream);
}

int HostStreamEvents::destroy_watch_holds() {
  std::lock_guard lock(mutex_);
  return watch_holds_;
}

void HostStreamEvents::hold_destroy_watch() {
  std::lock_guard lock(mutex_);
  ++watch_holds_;
}

void HostStreamEvents::release_destroy_watch() noexcept {
  std::lock_guard lock(mutex_);
  --watch_holds_;
}

bool HostStreamEvents::query(Token token) {
  if (auto_complete_) return true;
  std::lock_guard lock(mutex_);
  const Pending& p = tokens_.at(token);
  return completed_[p.stream] >= p.ticket;
}

void HostStreamEvents::synchronize(Token token) {
  std::lock_guard lock(mutex_);
  const Pending& p = tokens_.at(token);
  // Waiting on the host means the work is done by the time we return.
  complete_locked(p.stream, p.ticket);
}

void HostStreamEvents::make_wait(StreamKey waiter, Token token) {
  std::lock_guard lock(mutex_);
  const Pending& p = tokens_.at(token);
  std::erase_if(waits_, [&](const Wait& w) { return completed_[w.awaited] >= w.ticket; });
  waits_.push_back(Wait{waiter, issued_[waiter], p.stream, p.ticket});
}

std::uint64_t HostStreamEvents::stream_serial(StreamKey stream) {
  std::lock_guard lock(mutex_);
  return destroyed_.count(stream) ? 0 : 1;
}

bool HostStreamEvents::idle(StreamKey) {
  // Without auto-completion the test decides when work finishes, through tickets alone: work
  // queued since the last ticket is never known to be done.
  return auto_complete_;
}

std::uint64_t HostStreamEvents::waited_ticket(StreamKey waiter, StreamKey awaited) {
  std::lock_guard lock(mutex_);
  std::uint64_t ticket = 0;
  for (const Wait& w : waits_) {
    if (w.waiter == waiter && w.awaited == awaited) ticket = std::max(ticket, w.ticket);
  }
  return ticket;
}

std::uint64_t HostStreamEvents::completed_ticket(StreamKey stream) {
  std::lock_guard lock(mutex_);
  return completed_[stream];
}

void HostStreamEvents::complete_locked(StreamKey stream, std::uint64_t ticket) {
  auto& done = completed_[stream];
  if (done >= ticket) return;
  done = ticket;
  // Work completed on `stream` past a wait means the awaited work completed first.
  for (std::size_t i = 0; i < waits_.size(); ++i) {
    const Wait w = waits_[i];
    if (w.waiter == stream && w.after < ticket) complete_locked(w.awaited, w.ticket);
  }
}

void HostStreamEvents::release(Token token) noexcept {
  std::lock_guard lock(mutex_);
  tokens_.erase(token);
}

bool HostStreamEvents::capturing(StreamKey stream) {
  std::lock_guard lock(mutex_);
  return capturing_.count(stream) != 0;
}

void HostStreamEvents::set_capturing(StreamKey stream, bool capturing) {
  std::lock_guard lock(mutex_);
  if (capturing) capturing_.insert(stream);
  else capturing_.erase(stream);
}

std::uint64_t HostStreamEvents::last_ticket(StreamKey stream) {
  std::lock_guard lock(mutex_);
  return issued_[stream];
}

void HostStreamEvents::complete_up_to(StreamKey stream, std::uint64_t ticket) {
  std::lock_guard lock(mutex_);
  complete_locked(stream, ticket);
}

void HostStreamEvents::complete_all() {
  std::lock_guard lock(mutex_);
  for (auto& [stream, ticket] : issued_) completed_[stream] = ticket;
}

std::size_t HostStreamEvents::live_tokens() {
  std::lock_guard lock(mutex_);
  return tokens_.size();
}

}  // namespace cudakit::memory
