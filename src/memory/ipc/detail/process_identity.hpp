#pragma once
// Which machine and which process: what IPC memory handles and their ref-count records name, so
// that a handle from another machine is refused and a dead importer is told from a live one
// (See Note [Process identity]).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cudakit::memory::detail {

// Note [Process identity]
// A pid alone does not name a process for long: once it exits, the kernel may give the number
// to a new one. A process is therefore named by its pid and its start time (field 22 of
// /proc/<pid>/stat, in clock ticks since boot), which together stay unique until reboot; and a
// machine by its boot id (/proc/sys/kernel/random/boot_id), new at every boot, so that a handle
// that outlived a reboot is refused as well. A zombie (exited, not yet reaped) counts as dead:
// it holds no device memory any more.
struct ProcessId {
  pid_t pid = 0;
  std::uint64_t start_time = 0;
  friend bool operator==(const ProcessId&, const ProcessId&) = default;
};

// This process. @throws StateError when /proc cannot be read.
ProcessId self_process();
// The process with that pid now, or nullopt when there is none (or it is a zombie).
std::optional<ProcessId> find_process(pid_t pid);
// True while that very process runs (same pid, same start time).
bool process_alive(const ProcessId& process);
// This machine's boot id ("8-4-4-4-12" hex). @throws StateError when it cannot be read.
const std::string& boot_id();

}  // namespace cudakit::memory::detail
