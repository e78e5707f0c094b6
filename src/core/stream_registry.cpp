#include "cudakit/core/detail/stream_registry.hpp"

#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cudakit::detail {
namespace {

using Serials = std::unordered_map<cudaStream_t, std::uint64_t>;

// The nodes of streams gone, kept for the next streams made (See Note [Creating a stream] in
// stream.cpp): a program that makes and destroys streams in a loop allocates nothing here.
constexpr std::size_t kSpareNodes = 32;

struct Registry {
  std::mutex mutex;
  Serials serials;
  std::vector<Serials::node_type> spare;
  std::uint64_t next = kDefaultStreamSerial + 1;
  Registry() { spare.reserve(kSpareNodes); }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: streams may be destroyed at exit
  return *r;
}

}  // namespace

std::uint64_t known_stream_serial(cudaStream_t stream) noexcept {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return kDefaultStreamSerial;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.serials.find(stream);
  return it == r.serials.end() ? 0 : it->second;
}

void note_stream_created(cudaStream_t stream) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const std::uint64_t serial = r.next++;
  if (r.spare.empty()) {
    r.serials[stream] = serial;
    return;
  }
  Serials::node_type node = std::move(r.spare.back());
  r.spare.pop_back();
  node.key() = stream;
  node.mapped() = serial;
  const auto placed = r.serials.insert(std::move(node));
  if (!placed.inserted) placed.position->second = serial;  // a handle the runtime reused
}

void note_stream_gone(cudaStream_t stream) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Serials::node_type node = r.serials.extract(stream);
  if (!node.empty() && r.spare.size() < kSpareNodes) r.spare.push_back(std::move(node));
}

}  // namespace cudakit::detail
