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

// One node of the tree: a leaf with a value, or an inner node with named children.
class NestedStats {
 public:
  // A leaf of value 0.
  NestedStats() = default;
  // A leaf of value `value`.
  // @param value the leaf's value.
  explicit NestedStats(std::int64_t value) : value_(value) {}

  // @return whether the node has no children.
  [[nodiscard]] bool is_leaf() const noexcept { return children_.empty(); }
  // A leaf's value (0 for an inner node).
  // @return the value.
  [[nodiscard]] std::int64_t value() const noexcept { return value_; }
  // The children in name order, as torch's (sorted) dict.
  // @return (name, node) pairs, sorted by name.
  [[nodiscard]] const std::vector<std::pair<std::string, NestedStats>>& children() const noexcept {
    return children_;
  }
  // The child named `name`.
  // @param name the child's name ("allocated_bytes", "all", "current", ...).
  // @return the child.
  // @throws InvalidArgumentError naming it when there is none.
  [[nodiscard]] const NestedStats& operator[](std::string_view name) const;
  // The node at a dotted path ("active.large_pool.peak").
  // @param path names joined by '.'.
  // @return the node there.
  // @throws InvalidArgumentError naming the first part that is missing.
  [[nodiscard]] const NestedStats& at(std::string_view path) const;
  // The child named `name`, added (as a leaf of value 0) where there is none.
  // @param name the child's name.
  // @return the child, valid until another child is added to this node.
  NestedStats& child(std::string_view name);
  // Every leaf, keyed by its dotted path: torch.cuda.memory_stats()'s dict.
  // @return the flat dict.
  [[nodiscard]] std::map<std::string, std::int64_t> flatten() const;

 private:
  std::int64_t value_ = 0;
  // A vector, not a map: a std::map of an incomplete type is not allowed; kept sorted by name.
  std::vector<std::pair<std::string, NestedStats>> children_;
};

}  // namespace cudakit::memory
