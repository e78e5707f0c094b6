#include "memory/detail/device_ledger.hpp"

#include <algorithm>
#include <thread>

namespace cudakit::memory::detail {
namespace {

// Changes a shard makes in the ledger's way before it asks for headroom again: a shard that
// keeps climbing past its own peak is not granted headroom at every change.
constexpr std::uint32_t kChangesBeforeGrant = 8;

// Note [Asking for headroom below the own peak]
// Headroom is what a shard may add before it reaches its own peak again, out of the slack under
// the device's; a grant asked for at the shard's own peak gets nothing. A shard that alternates
// (alloc, free: the commonest loop) and asked every kChangesBeforeGrant changes could ask in
// step with its loop, always right after an allocation, and never get any: with one idle stream
// beside it, every alloc and free of such a loop went through the ledger's lock and a grant, for
// the process's life (notes/allocator.md, 2026-12-04). So past kChangesBeforeGrant changes a shard asks
// at its next change that leaves its allocated bytes below its own peak, whatever its loop's
// period; one climbing to a new peak keeps not asking, as before.
bool below_own_peak(const Shard& s) {
  const Stat& bytes = s.stats.allocated_bytes[0];
  return bytes.current < bytes.peak;
}

}  // namespace

void DeviceLedger::start(const MemoryStats& only_shard) {
  {
    std::lock_guard lock(lock_);
    StatCounters<LedgerCounter>::zip(sums_, only_shard, [](LedgerCounter& to, const Stat& from) {
      to.value = from.current;
      to.peak = from.peak;
    });
  }
  active_.store(true, std::memory_order_release);
}

bool DeviceLedger::above_peaks() const {
  bool above = false;
  StatCounters<LedgerCounter>::each(sums_, [&](const LedgerCounter& c) { above |= c.value > c.peak; });
  return above;
}

void DeviceLedger::raise_peaks() {
  StatCounters<LedgerCounter>::each(sums_, [](LedgerCounter& c) { c.peak = std::max(c.peak, c.value); });
}

void DeviceLedger::want_collapse() {
  ++collapses_wanted_;
  wanted_.store(true, std::memory_order_relaxed);
}

void DeviceLedger::collapse_done() {
  if (--collapses_wanted_ == 0) wanted_.store(false, std::memory_order_relaxed);
}

void DeviceLedger::give_back(Shard& s) {
  StatCounters<LedgerCounter>::zip(sums_, s.headroom, [](LedgerCounter& c, HeadroomCounter& h) {
    c.value -= h.left;
    h.left = 0;
  });
  s.local = false;
  Shard* last = with_headroom_.back();
  with_headroom_[s.ledger_slot] = last;
  last->ledger_slot = s.ledger_slot;
  with_headroom_.pop_back();
}

void DeviceLedger::give_back_held(Shard& s) {
  std::lock_guard lock(lock_);
  if (s.local) give_back(s);
}

// Headroom for s out of the slack under the peaks, counter by counter: up to s's own peak (at
// most half the slack, so that one shard does not take it all), and with `overdrawn_only` at
// least what s overdrew (nothing granted, false, where the slack cannot cover that). A counter
// with headroom left keeps it as it is: a settlement is asked for by the one or two counters
// overdrawn (the count of blocks, mostly), and topping up the others cost most of its time.
bool DeviceLedger::grant(Shard& s, bool overdrawn_only) {
  if (overdrawn_only) {
    bool covered = true;
    StatCounters<LedgerCounter>::zip(sums_, s.headroom, [&](const LedgerCounter& c, const HeadroomCounter& h) {
      covered &= -h.left <= c.peak - c.value;
    });
    if (!covered) return false;
  }
  StatCounters<SumCounter> room;
  s.room_to_own_peak(room);
  bool any = false;
  StatCounters<LedgerCounter>::zip3(sums_, s.headroom, room, [&](LedgerCounter& c, HeadroomCounter& h, const SumCounter& r) {
    // Nothing to add where headroom is left, or where none was spent and s is at its own peak.
    if (h.left > 0 || (h.left == 0 && r.value <= 0)) return;
    const std::int64_t slack = std::max<std::int64_t>(0, c.peak - c.value);
    const std::int64_t need = std::max<std::int64_t>(0, -h.left);
    const std::int64_t add = std::max(need, std::min(slack >> 1, need + std::max<std::int64_t>(0, r.value)));
    c.value += add;
    h.left += add;
    any |= add > 0;
  });
  if (!s.local && any) {
    s.local = true;
    s.ledger_slot = with_headroom_.size();
    with_headroom_.push_back(&s);
  }
  return true;
}

void DeviceLedger::finish_change(Shard& s, bool passed) {
  if (!passed || with_headroom_.empty()) {
    // Without headroom anywhere, bound is the device's value: a new peak, if any, is exact.
    if (passed) raise_peaks();
    // See Note [Asking for headroom below the own peak].
    if (collapses_wanted_ == 0 && !s.local && ++s.changes_since_grant >= kChangesBeforeGrant &&
        below_own_peak(s)) {
      s.changes_since_grant = 0;
      grant(s, false);
    }
    lock_.unlock();
    return;
  }
  // bound passes a peak while shards hold headroom: the device's exact value is needed.
  want_collapse();
  lock_.unlock();
  collapse(/*until_under_peaks=*/true);
  raise_peaks();
  collapse_done();
  lock_.unlock();
}

void DeviceLedger::settle(Shard& s) {
  lock_.lock();
  if (collapses_wanted_ == 0 && s.headroom.overdrawn() && grant(s, true)) {
    lock_.unlock();
    return;
  }
  // What s overdrew comes into bound as its headroom goes back: it may pass a peak.
  give_back(s);
  finish_change(s, above_peaks());
}

// Note [Collapsing only as far as needed]
// A change that takes bound past a peak while shards hold headroom does not yet say that the
// device passed it: bound counts every shard's unspent headroom. Collapsing every shard for it
// sends all of them back through the ledger until they are granted again, and on a trace of
// many streams whose counts of blocks sit near their peaks (a serving loop on eight streams)
// that churn was most of the ledger's cost. So the collapse a change asks for takes headroom
// back one shard at a time and stops once bound is under every peak again: the exact sum is then
// under every peak too, and no peak is missed; only when every shard has given its headroom back
// is bound the exact sum whose excess is the new peak. stats() and reset_peak_stats() still take
// all of it back: they read bound as the device's exact values.
void DeviceLedger::collapse(bool until_under_peaks) {
  std::vector<Shard*> holders;
  for (;;) {
    lock_.lock();
    if (with_headroom_.empty()) return;
    holders = with_headroom_;
    lock_.unlock();
    bool busy = false;
    for (Shard* h : holders) {
      // A shard whose lock is taken gives its headroom back at its next change, or is free
      // here at the next pass.
      if (!h->lock.try_lock()) {
        busy = true;
        continue;
      }
      lock_.lock();
      if (h->local) give_back(*h);
      // See Note [Collapsing only as far as needed].
      if (until_under_peaks && !above_peaks()) {
        h->lock.unlock();
        return;
      }
      lock_.unlock();
      h->lock.unlock();
    }
    if (busy) std::this_thread::yield();
  }
}

void DeviceLedger::read(MemoryStats& out) {
  lock_.lock();
  want_collapse();
  lock_.unlock();
  collapse();
  raise_peaks();
  StatCounters<LedgerCounter>::zip(out, sums_, [](Stat& to, const LedgerCounter& from) {
    to.current = from.value;
    to.peak = from.peak;
  });
  collapse_done();
  lock_.unlock();
}

void DeviceLedger::reset_peaks() {
  lock_.lock();
  want_collapse();
  lock_.unlock();
  collapse();
  StatCounters<LedgerCounter>::each(sums_, [](LedgerCounter& c) { c.peak = c.value; });
  collapse_done();
  lock_.unlock();
}

}  // namespace cudakit::memory::detail
