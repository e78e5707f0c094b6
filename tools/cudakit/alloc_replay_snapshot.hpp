#pragma once
// `cudakit alloc-replay SNAPSHOT`: what-if replays of a PyTorch memory snapshot (the pickle
// torch.cuda.memory._dump_snapshot writes, or its JSON form) under several allocators on the
// host. alloc_replay.cpp hands snapshots here.

#include <optional>
#include <string>

namespace cudakit::cli {

struct SnapshotReplayOptions {
  std::string path;
  std::string conf;                         // --conf, over the snapshot's recorded settings
  bool json = false;
  std::optional<double> capacity_gib;       // --host-capacity-gib
  std::optional<int> device;                // --device
  std::optional<std::string> backend;       // --backend, where given
};

// Prints the replays; returns the exit status. @throws UsageError for options that do not apply
// to snapshots, the library's errors for a bad snapshot.
int run_snapshot_replay(const SnapshotReplayOptions& options);

}  // namespace cudakit::cli
