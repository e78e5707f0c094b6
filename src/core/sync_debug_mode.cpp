#include "cudakit/core/sync_debug_mode.hpp"

#include <execinfo.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/stack_trace.hpp"

namespace cudakit {
namespace detail {
thread_local int t_sync_debug_override = -1;
std::atomic<int> g_sync_debug_mode{0};

namespace {
// A call site: the return addresses of the stack above the check, hashed. Warnings are kept
// apart per site for the process's life, as torch's are.
std::uint64_t call_site_key() {
  void* addresses[16];
  const int n = backtrace(addresses, 16);
  std::uint64_t key = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) key = (key ^ reinterpret_cast<std::uintptr_t>(addresses[i])) * 1099511628211ull;
  return key;
}
}  // namespace

void report_synchronization(const char* api, SyncDebugMode mode) {
  if (mode == SyncDebugMode::error) {
    throw StateError(api, "called a synchronizing operation while the sync debug mode is 'error' "
                          "(set_sync_debug_mode / SyncDebugModeScope)");
  }
  static std::mutex mutex;
  static std::unordered_set<std::uint64_t> warned;
  {
    std::lock_guard lock(mutex);
    if (!warned.insert(call_site_key()).second) return;
  }
  CUDAKIT_LOG(warning, api, " is a synchronizing operation (sync debug mode 'warn'), called from:\n",
              format_stack(capture_stack(2)));
}
}  // namespace detail

SyncDebugMode parse_sync_debug_mode(std::string_view name) {
  if (name == "default" || name == "off" || name == "0") return SyncDebugMode::off;
  if (name == "warn" || name == "1") return SyncDebugMode::warn;
  if (name == "error" || name == "2") return SyncDebugMode::error;
  throw InvalidArgumentError("set_sync_debug_mode",
                             detail::concat("unknown mode '", name, "' (accepted: default or off or 0, warn or 1, error or 2)"));
}

const char* to_string(SyncDebugMode mode) noexcept {
  switch (mode) {
    case SyncDebugMode::off: return "default";
    case SyncDebugMode::warn: return "warn";
    case SyncDebugMode::error: return "error";
  }
  return "?";
}

void set_sync_debug_mode(SyncDebugMode mode) { detail::g_sync_debug_mode.store(static_cast<int>(mode)); }
void set_sync_debug_mode(std::string_view name) { set_sync_debug_mode(parse_sync_debug_mode(name)); }

SyncDebugMode get_sync_debug_mode() noexcept {
  const int t = detail::t_sync_debug_override;
  return static_cast<SyncDebugMode>(t >= 0 ? t : detail::g_sync_debug_mode.load(std::memory_order_relaxed));
}

SyncDebugModeScope::SyncDebugModeScope(SyncDebugMode mode) noexcept
    : previous_(std::exchange(detail::t_sync_debug_override, static_cast<int>(mode))) {}
SyncDebugModeScope::~SyncDebugModeScope() { detail::t_sync_debug_override = previous_; }

}  // namespace cudakit
