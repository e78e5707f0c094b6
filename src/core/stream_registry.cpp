#include "cudakit/core/detail/stream_registry.hpp"

#include <mutex>
#include <unordered_map>

namespace cudakit::detail {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<cudaStream_t, std::uint64_t> serials;
  std::uint64_t next = kDefaultStreamSerial + 1;
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
  r.serials[stream] = r.next++;
}

void note_stream_gone(cudaStream_t stream) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.serials.erase(stream);
}

}  // namespace cudakit::detail
