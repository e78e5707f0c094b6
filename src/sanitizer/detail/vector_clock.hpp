#pragma once
// VectorClock: per stream index, how far that stream's operations are known complete (See Note
// [Stream sanitizer model] in detector.cpp). Dense: streams are few, and a merge is a loop.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cudakit::sanitizer::detail {

class VectorClock {
 public:
  // Advances stream s's own entry: the clock of the operation s issues now.
  std::uint64_t advance(std::uint32_t s) {
    if (s >= entries_.size()) entries_.resize(s + 1, 0);
    return ++entries_[s];
  }
  void merge(const VectorClock& other) {
    if (other.entries_.size() > entries_.size()) entries_.resize(other.entries_.size(), 0);
    for (std::size_t i = 0; i < other.entries_.size(); ++i) entries_[i] = std::max(entries_[i], other.entries_[i]);
  }
  // Stream s's operation with clock c is complete before this clock's next operation.
  [[nodiscard]] bool covers(std::uint32_t s, std::uint64_t c) const {
    return s < entries_.size() && entries_[s] >= c;
  }

 private:
  std::vector<std::uint64_t> entries_;
};

}  // namespace cudakit::sanitizer::detail
