#pragma once
// ListenerSet: a set of callbacks that is dispatched without locks: cudakit's one observer
// mechanism, used by the trace hooks' listeners, each CuptiHub channel (API callbacks, activity
// records) and the allocator's out-of-memory and segment observers (memory's OomObservers and
// SegmentObservers).
//
// Note [Listener snapshots]
// CUPTI calls the hub from whatever thread made a CUDA call, and from its buffer thread, so
// dispatch must be cheap and must never wait for a thread adding or removing a listener. The
// listeners are kept as an immutable vector behind an atomic shared_ptr: dispatch loads the
// current snapshot (one reference-count increment) and walks it without a lock; add and remove
// build a new vector under a writer mutex and publish it. remove() then waits until no
// dispatch still holds the snapshot that contained the removed listener (its use count drops
// back to ours), so once remove() returns the listener's function is never called again and
// its captures may be destroyed. Dispatches that start later see the new snapshot, so a busy
// program cannot starve remove(). A listener that removes itself from inside its own callback
// would wait for itself: the thread-local depth counter detects that and skips the wait (the
// header forbids it anyway).

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace cudakit::detail {

inline thread_local int listener_dispatch_depth = 0;

template <class Entry>
class ListenerSet {
 public:
  using Snapshot = std::vector<std::pair<int, Entry>>;

  ListenerSet() : snapshot_(std::make_shared<const Snapshot>()) {}

  int add(Entry entry) {
    std::lock_guard lock(write_mutex_);
    auto next = std::make_shared<Snapshot>(*snapshot_.load());
    const int id = next_id_++;
    next->emplace_back(id, std::move(entry));
    snapshot_.store(std::move(next));
    return id;
  }

  // Returns the removed entry (for the caller's reference counts), or nothing when `id` is not
  // a listener of this set. See Note [Listener snapshots] for the wait.
  std::unique_ptr<Entry> remove(int id) {
    std::shared_ptr<const Snapshot> old;
    std::unique_ptr<Entry> removed;
    {
      std::lock_guard lock(write_mutex_);
      old = snapshot_.load();
      auto next = std::make_shared<Snapshot>();
      next->reserve(old->size());
      for (const auto& item : *old) {
        if (item.first == id) removed = std::make_unique<Entry>(item.second);
        else next->push_back(item);
      }
      if (!removed) return nullptr;
      snapshot_.store(std::move(next));
    }
    if (listener_dispatch_depth == 0) {
      while (old.use_count() > 1) std::this_thread::yield();
    }
    return removed;
  }

  // Calls visit(entry) for every listener, without locks.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for_each_with_id([&](int, const Entry& entry) { visit(entry); });
  }

  // Calls visit(id, entry) for every listener, without locks; `id` is what add() returned.
  template <class Visit>
  void for_each_with_id(Visit&& visit) const {
    const std::shared_ptr<const Snapshot> current = snapshot_.load();
    if (current->empty()) return;
    struct Depth {
      Depth() { ++listener_dispatch_depth; }
      ~Depth() { --listener_dispatch_depth; }
    } depth;
    for (const auto& item : *current) visit(item.first, item.second);
  }

  [[nodiscard]] bool empty() const { return snapshot_.load()->empty(); }

 private:
  std::mutex write_mutex_;
  std::atomic<std::shared_ptr<const Snapshot>> snapshot_;
  int next_id_ = 1;
};

}  // namespace cudakit::detail
