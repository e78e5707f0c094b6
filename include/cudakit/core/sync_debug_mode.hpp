#pragma once
// @brief Sync debug mode (torch.cuda.set_sync_debug_mode): every synchronizing call that cudakit
// makes — stream, event and device synchronization, the blocking copies of tensors to the host,
// the allocator's device-wide synchronization before it returns memory (empty_cache, the retry
// before an out-of-memory error) — warns or fails while the mode is on.
//
// warn: one warning per call site (the calling stack), with that stack, through cudakit's log.
// error: the call throws StateError, naming it, before it synchronizes.
// The mode is the process's (set_sync_debug_mode, as torch's) unless a SyncDebugModeScope on
// the calling thread says otherwise. Work queued with raw CUDA calls is not seen.
#include <atomic>
#include <string_view>

namespace cudakit {

// What a synchronizing call does while the mode is on: nothing (`off`), log a warning once per
// call site (`warn`), or throw StateError before it synchronizes (`error`).
enum class SyncDebugMode { off, warn, error };

// torch's names: "default" (or "off") / "warn" / "error", or 0 / 1 / 2.
// @param name the mode's name or number.
// @return the mode.
// @throws InvalidArgumentError for another name, naming it.
[[nodiscard]] SyncDebugMode parse_sync_debug_mode(std::string_view name);
// @param mode a mode.
// @return torch's name of it: "default", "warn" or "error" (a static string).
[[nodiscard]] const char* to_string(SyncDebugMode mode) noexcept;

// Sets the process-wide mode; threads inside a SyncDebugModeScope keep their scope's. Thread-safe.
// @param mode the new mode.
void set_sync_debug_mode(SyncDebugMode mode);
// The same, by name (torch.cuda.set_sync_debug_mode("warn")).
// @param name a name parse_sync_debug_mode() accepts.
// @throws InvalidArgumentError for another name; the mode is then unchanged.
void set_sync_debug_mode(std::string_view name);
// The mode the calling thread is in (its scope's, else the process's).
// @return the mode in force for the calling thread.
[[nodiscard]] SyncDebugMode get_sync_debug_mode() noexcept;

// Sets the calling thread's mode for the scope's lifetime; scopes nest.
class SyncDebugModeScope {
 public:
  // @param mode the calling thread's mode until the scope ends.
  explicit SyncDebugModeScope(SyncDebugMode mode) noexcept;
  // Restores the thread's previous mode (an enclosing scope's, or the process's).
  ~SyncDebugModeScope();
  // Not copyable: exactly one scope restores the previous mode.
  SyncDebugModeScope(const SyncDebugModeScope&) = delete;
  // Not copyable: exactly one scope restores the previous mode.
  SyncDebugModeScope& operator=(const SyncDebugModeScope&) = delete;

 private:
  int previous_;
};

namespace detail {
// -1: the thread follows the process; else a SyncDebugMode.
extern thread_local int t_sync_debug_override;
extern std::atomic<int> g_sync_debug_mode;  // the process's SyncDebugMode
[[gnu::cold]] void report_synchronization(const char* api, SyncDebugMode mode);
// At each synchronizing call, before it synchronizes: one thread-local and one plain load when
// the mode is off. @throws StateError in error mode.
inline void check_synchronization(const char* api) {
  const int mode = t_sync_debug_override >= 0 ? t_sync_debug_override : g_sync_debug_mode.load(std::memory_order_relaxed);
  if (mode != 0) [[unlikely]] report_synchronization(api, static_cast<SyncDebugMode>(mode));
}
}  // namespace detail

}  // namespace cudakit
