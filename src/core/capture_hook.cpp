#include "cudakit/core/capture_hook.hpp"

#include <mutex>

namespace cudakit {
namespace {
struct Registry {
  std::mutex mutex;
  std::vector<CaptureHook*> hooks;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: hooks are called until exit
  return *r;
}
}  // namespace

void register_capture_hook(CaptureHook* hook) {
  std::lock_guard lock(registry().mutex);
  registry().hooks.push_back(hook);
}

std::vector<CaptureHook*> capture_hooks() {
  std::lock_guard lock(registry().mutex);
  return registry().hooks;
}

}  // namespace cudakit
