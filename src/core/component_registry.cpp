#include "cudakit/core/detail/component_registry.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

namespace cudakit::detail {
namespace {

template <class Source>
struct Ranked {
  int rank;
  Source source;
};

// Function-local statics: registrations run during static initialization, in an order between
// files that nothing fixes, so the lists must exist before the first of them.
struct Registry {
  std::mutex mutex;
  std::vector<Ranked<ComponentRow>> components;
  std::vector<Ranked<FeatureRows>> features;
};

Registry& registry() noexcept {
  static Registry instance;
  return instance;
}

template <class Source>
void add(std::vector<Ranked<Source>> Registry::*list, int rank, Source source) noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  try {
    (r.*list).push_back({rank, source});
  } catch (...) {
    // Out of memory while the library loads: the row is missing from `cudakit info`, nothing else.
  }
}

// The list in order of rank, registration order among equal ranks.
template <class Source>
std::vector<Ranked<Source>> sorted(std::vector<Ranked<Source>> Registry::*list) {
  Registry& r = registry();
  std::vector<Ranked<Source>> out;
  {
    const std::lock_guard lock(r.mutex);
    out = r.*list;
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return out;
}

}  // namespace

ComponentRegistration::ComponentRegistration(int rank, ComponentRow row) noexcept {
  add(&Registry::components, rank, row);
}

FeatureRegistration::FeatureRegistration(int rank, FeatureRows rows) noexcept {
  add(&Registry::features, rank, rows);
}

std::vector<ComponentVersion> registered_components() {
  std::vector<ComponentVersion> out;
  for (const auto& entry : sorted(&Registry::components)) out.push_back(entry.source());
  return out;
}

std::vector<FeatureSupport> registered_features() {
  std::vector<FeatureSupport> out;
  for (const auto& entry : sorted(&Registry::features)) entry.source(out);
  return out;
}

ComponentVersion library_row(const LibraryStatus& status) {
  std::string version = status.version;
  if (status.loaded && version.empty()) version = "unknown";
  return {status.library, std::move(version), status.loaded ? status.file : status.reason};
}

}  // namespace cudakit::detail
