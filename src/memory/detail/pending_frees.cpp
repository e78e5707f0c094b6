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
    deferred_.push_back(b);  // See Note [Frees during capture].
    return;
  }
  record(b, events);
}

void PendingFrees::record_deferred(StreamEvents& events) {
  std::erase_if(deferred_, [&](Block* b) {
    if (any_capturing(*b, events)) return false;
    record(b, events);
    return true;
  });
}

void PendingFrees::record(Block* b, StreamEvents& events) {
  Entry pending{b, {}};
  for (StreamKey other : b->extra_streams) pending.tokens.push_back(events.record(other));
  pending_.push_back(std::move(pending));
}

}  // namespace cudakit::memory::detail
