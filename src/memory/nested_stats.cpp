#include "cudakit/memory/nested_stats.hpp"

#include <algorithm>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {
namespace {

template <class Children>
auto find_child(Children& children, std::string_view name) {
  return std::lower_bound(children.begin(), children.end(), name,
                          [](const auto& child, std::string_view n) { return child.first < n; });
}

void flatten_into(const NestedStats& node, const std::string& prefix, std::map<std::string, std::int64_t>& out) {
  if (node.is_leaf()) {
    out[prefix] = node.value();
    return;
  }
  for (const auto& [name, child] : node.children()) {
    flatten_into(child, prefix.empty() ? name : detail::concat(prefix, ".", name), out);
  }
}

}  // namespace

const NestedStats& NestedStats::operator[](std::string_view name) const {
  const auto it = find_child(children_, name);
  if (it == children_.end() || it->first != name) {
    throw InvalidArgumentError("NestedStats", detail::concat("no statistic named '", name, "'"));
  }
  return it->second;
}

const NestedStats& NestedStats::at(std::string_view path) const {
  const NestedStats* node = this;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string_view part = path.substr(start, dot - start);
    const auto it = find_child(node->children_, part);
    if (it == node->children_.end() || it->first != part) {
      throw InvalidArgumentError("NestedStats::at",
                                 detail::concat("'", path, "': no statistic '", part, "' in '",
                                                path.substr(0, start == 0 ? 0 : start - 1), "'"));
    }
    node = &it->second;
    start = dot + 1;
  }
  return *node;
}

NestedStats& NestedStats::child(std::string_view name) {
  auto it = find_child(children_, name);
  if (it == children_.end() || it->first != name) it = children_.emplace(it, std::string(name), NestedStats{});
  return it->second;
}

std::map<std::string, std::int64_t> NestedStats::flatten() const {
  std::map<std::string, std::int64_t> out;
  flatten_into(*this, "", out);
  return out;
}

}  // namespace cudakit::memory
