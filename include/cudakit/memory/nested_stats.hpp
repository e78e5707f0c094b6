#pragma once
// @brief NestedStats: torch.cuda.memory_stats_as_nested_dict()'s form of the statistics — a tree whose
// inner nodes are named ("allocated_bytes" -> "all" -> "current") and whose leaves hold values.
// torch.cuda.memory_stats() is this tree flattened, its keys the names on the path joined by
// '.': "allocated_bytes.all.current".

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudakit::memory {

class NestedStats {
 public:
  NestedStats() = default;
  explicit NestedStats(std::int64_t value) : value_(value) {}

  [[nodiscard]] bool is_leaf() const noexcept { return children_.empty(); }
  // A leaf's value (0 for an inner node).
  [[nodiscard]] std::int64_t value() const noexcept { return value_; }
  // The children in name order, as torch's (sorted) dict.
  [[nodiscard]] const std::vector<std::pair<std::string, NestedStats>>& children() const noexcept {
    return children_;
  }
  // The child named `name`. @throws InvalidArgumentError naming it when there is none.
  [[nodiscard]] const NestedStats& operator[](std::string_view name) const;
  // The node at a dotted path ("active.large_pool.peak"). @throws InvalidArgumentError naming the
  // first part that is missing.
  [[nodiscard]] const NestedStats& at(std::string_view path) const;
  // The child named `name`, added (as a leaf of value 0) where there is none.
  NestedStats& child(std::string_view name);
  // Every leaf, keyed by its dotted path: torch.cuda.memory_stats()'s dict.
  [[nodiscard]] std::map<std::string, std::int64_t> flatten() const;

 private:
  std::int64_t value_ = 0;
  // A vector, not a map: a std::map of an incomplete type is not allowed; kept sorted by name.
  std::vector<std::pair<std::string, NestedStats>> children_;
};

}  // namespace cudakit::memory
