#include "memory/detail/pending_frees.hpp"

#include <algorithm>

namespace cudakit::memory::detail {
namespace {

bool any_capturing(const Block& b, StreamEvents& events) {
  return std::any_of(b.extra_streams.begin(), b.extra_streams.end(),
                     [&](StreamKey other) { return events.capturing(other); });
}

}  // namespace

void PendingFrees::add(Block* b, StreamEvents& events) {
  if (any_capturing(*b, events)) {
    // See Note [Frees during capture]: the first deferred free of the shard holds the watch.
    if (deferred_.empty()) events.hold_destroy_watch();
    deferred_.push_back(b);
    return;
  }
  record(b, events);
}

void PendingFrees::record_deferred(StreamEvents& events) {
  const bool had_deferred = !deferred_.empty();
  std::erase_if(deferred_, [&](Block* b) {
    if (any_capturing(*b, events)) return false;
    record(b, events);
    return true;
  });
  if (had_deferred && deferred_.empty()) events.release_destroy_watch();
}

void PendingFrees::record(Block* b, StreamEvents& events) {
  Entry pending{b, {}};
  for (StreamKey other : b->extra_streams) pending.tokens.push_back(events.record(other));
  pending_.push_back(std::move(pending));
}

}  // namespace cudakit::memory::detail
