// `cudakit alloc-replay SNAPSHOT`: the what-if table (See Note [What-if replays] in
// src/memory/what_if_replay.cpp): each allocator's peaks on a PyTorch snapshot's trace and,
// with --host-capacity-gib, whether and where it would run out of memory on that device.
#include "alloc_replay_snapshot.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/snapshot_trace.hpp"
#include "cudakit/memory/what_if_replay.hpp"
#include "errors.hpp"
#include "nlohmann/json.hpp"

namespace cudakit::cli {
namespace {

using memory::SnapshotDeviceTrace;
using memory::SnapshotOp;
using memory::SnapshotTrace;
using memory::WhatIfFailure;
using memory::WhatIfRow;

constexpr std::size_t kH200Memory = std::size_t{141} << 30;

std::string bytes_text(std::uint64_t bytes) {
  char text[64];
  const auto b = static_cast<double>(bytes);
  if (bytes >= (std::uint64_t{1} << 30)) std::snprintf(text, sizeof text, "%.2f GiB", b / 1073741824.0);
  else if (bytes >= (std::uint64_t{1} << 20)) std::snprintf(text, sizeof text, "%.1f MiB", b / 1048576.0);
  else if (bytes >= 1024) std::snprintf(text, sizeof text, "%.1f KiB", b / 1024.0);
  else std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  return text;
}

std::string stream_text(std::int64_t stream) {
  if (stream == 0) return "the default stream";
  std::ostringstream out;
  out << "stream 0x" << std::hex << static_cast<std::uint64_t>(stream);
  return out.str();
}

std::string frame_text(const SnapshotTrace& snapshot, std::uint32_t frame) {
  if (frame == SnapshotOp::kNoFrame) return "";
  const StackFrame& f = snapshot.frames[frame];
  std::ostringstream out;
  out << f.filename;
  if (f.line > 0) out << ":" << f.line;
  if (!f.name.empty()) out << " in " << f.name;
  return out.str();
}

std::string ratio_text(std::uint64_t reserved, std::uint64_t allocated) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", static_cast<double>(reserved) / static_cast<double>(std::max<std::uint64_t>(allocated, 1)));
  return text;
}

// "op 12 (trace entry 40): alloc of 2.00 GiB on stream 0x..., at train.py:8 in step"
std::string failure_text(const SnapshotTrace& snapshot, const SnapshotDeviceTrace& d, const WhatIfFailure& f) {
  std::ostringstream out;
  out << "op " << f.op;
  if (f.what.entry == SnapshotOp::kNoEntry) out << " (a block live before the trace began)";
  else out << " (trace entry " << f.what.entry << ")";
  out << ": alloc of " << bytes_text(f.what.size) << " on " << stream_text(d.streams.at(f.what.stream));
  if (const std::string at = frame_text(snapshot, f.what.frame); !at.empty()) {
    out << ", at " << at;
  } else if (f.what.entry != SnapshotOp::kNoEntry) {
    out << " (the entry has no Python frames: autograd's backward pass, or C++)";
  }
  return out.str();
}

nlohmann::json failure_json(const SnapshotTrace& snapshot, const SnapshotDeviceTrace& d, const WhatIfFailure& f) {
  nlohmann::json j = {{"op", f.op},
                      {"action", "alloc"},
                      {"size", f.what.size},
                      {"stream", d.streams.at(f.what.stream)},
                      {"trace_entry", f.what.entry == SnapshotOp::kNoEntry ? nlohmann::json() : nlohmann::json(f.what.entry)}};
  if (f.what.frame != SnapshotOp::kNoFrame) {
    const StackFrame& fr = snapshot.frames[f.what.frame];
    j["frame"] = {{"filename", fr.filename}, {"line", fr.line}, {"name", fr.name}};
  }
  return j;
}

std::string settings_text(const memory::AllocatorConfig& c) {
  std::ostringstream out;
  out << "max_split_size_mb ";
  if (c.max_split_size == ~std::size_t{0}) out << "unlimited";
  else out << c.max_split_size / 1048576.0;
  out << ", garbage_collection_threshold " << c.garbage_collection_threshold << ", roundup_power2_divisions ";
  bool any = false;
  for (unsigned d : c.roundup_power2_divisions) any = any || d > 1;
  if (!any) out << "none";
  for (std::size_t i = 0; any && i < c.roundup_power2_divisions.size(); ++i) {
    out << (i ? "," : "[") << c.roundup_power2_divisions[i] << (i + 1 == c.roundup_power2_divisions.size() ? "]" : "");
  }
  if (c.per_process_memory_fraction < 1.0) out << ", per_process_memory_fraction " << c.per_process_memory_fraction;
  return out.str();
}

void print_device(const SnapshotTrace& s, const SnapshotDeviceTrace& d, const std::vector<WhatIfRow>& rows,
                  const memory::WhatIfOptions& o, const std::string& path) {
  std::cout << "snapshot " << path << " (" << s.format << "), device " << d.device << ": " << d.trace_entries
            << " trace entries; " << d.allocs << " allocations and " << d.frees << " frees on "
            << d.streams.size() << " stream(s); peak requested " << bytes_text(d.peak_requested_bytes) << "\n";
  if (d.seeded_blocks > 0) {
    std::cout << "  " << d.seeded_blocks << " block(s) (" << bytes_text(d.seeded_bytes)
              << ") were allocated before the trace began: replayed as allocated at its start\n";
  }
  if (d.empty_cache_calls > 0) {
    std::cout << "  " << d.empty_cache_calls << " empty_cache() call(s), seen as segment releases that no "
              << "allocation needed, replayed as such\n";
  }
  if (d.oom_entries > 0) std::cout << "  the recorded run ran out of memory " << d.oom_entries << " time(s)\n";
  if (d.unknown_actions > 0) std::cout << "  " << d.unknown_actions << " entries of unknown actions skipped\n";
  std::cout << "  recorded with " << (s.settings_text.empty() ? "the default settings" : s.settings_text)
            << ", expandable_segments " << (s.settings.expandable_segments ? "True" : "False");
  if (d.recorded_peak_reserved) std::cout << "; its peak reserved, from the trace's segment events: " << bytes_text(*d.recorded_peak_reserved);
  std::cout << "\n";
  for (const std::string& item : s.ignored_settings) {
    std::cout << "  the recorded setting '" << item << "' does not change the models and is left out\n";
  }
  std::cout << "  torch rows replayed with " << settings_text(o.torch_config) << "\n\n";

  const std::string fits = o.capacity ? "fits in " + bytes_text(*o.capacity) : "";
  std::printf("  %-34s %14s %15s %19s  %s\n", "allocator", "peak reserved", "peak allocated", "reserved/allocated",
              fits.c_str());
  for (const WhatIfRow& r : rows) {
    std::string verdict;
    if (o.capacity) verdict = r.first_failure ? "no: op " + std::to_string(r.first_failure->op) : "yes";
    std::printf("  %-34s %14s %15s %19s  %s\n", memory::to_string(r.allocator), bytes_text(r.peak_reserved).c_str(),
                bytes_text(r.peak_allocated).c_str(), ratio_text(r.peak_reserved, r.peak_allocated).c_str(),
                verdict.c_str());
  }
  for (const WhatIfRow& r : rows) {
    if (r.stopped) {
      std::cout << "  " << memory::to_string(r.allocator) << " ran out of memory even without a capacity limit ("
                << (r.allocator == memory::WhatIfAllocator::cudakit ? "at the replay's ceiling" : "the memory fraction")
                << "), at " << failure_text(s, d, *r.stopped) << "; its peaks are up to there\n";
    }
  }
  bool header = false;
  for (const WhatIfRow& r : rows) {
    if (!r.first_failure) continue;
    if (!header) std::cout << "\n  the first operation that does not fit in " << bytes_text(*o.capacity) << ":\n";
    header = true;
    std::cout << "    " << memory::to_string(r.allocator) << ": " << failure_text(s, d, *r.first_failure) << "\n";
  }
  std::cout << "\n";
}

}  // namespace

int run_snapshot_replay(const SnapshotReplayOptions& options) {
  if (options.backend && *options.backend != "host") {
    throw UsageError("a snapshot replays on host models of each allocator; --backend " + *options.backend +
                     " applies to CSV traces only");
  }
  const SnapshotTrace snapshot = memory::load_snapshot_trace(options.path, options.device);
  memory::WhatIfOptions o;
  try {
    o.torch_config = memory::AllocatorConfig::parse(options.conf, snapshot.settings);
    o.cudakit_config = memory::AllocatorConfig::parse(options.conf, memory::AllocatorConfig::from_environment());
  } catch (const InvalidArgumentError& e) {
    throw std::runtime_error(std::string("--conf or CUDAKIT_ALLOC_CONF: ") + e.what());
  }
  if (options.capacity_gib) o.capacity = static_cast<std::size_t>(*options.capacity_gib * 1073741824.0);
  o.device_memory = o.capacity.value_or(kH200Memory);

  nlohmann::json devices = nlohmann::json::array();
  for (const SnapshotDeviceTrace& d : snapshot.devices) {
    const std::vector<WhatIfRow> rows = memory::replay_what_if(d, o);
    if (!options.json) {
      print_device(snapshot, d, rows, o, options.path);
      continue;
    }
    nlohmann::json allocators = nlohmann::json::array();
    for (const WhatIfRow& r : rows) {
      nlohmann::json a = {{"allocator", memory::key_of(r.allocator)},
                          {"name", memory::to_string(r.allocator)},
                          {"peak_reserved_bytes", r.peak_reserved},
                          {"peak_allocated_bytes", r.peak_allocated},
                          {"reserved_over_allocated", static_cast<double>(r.peak_reserved) /
                                                          static_cast<double>(std::max<std::uint64_t>(r.peak_allocated, 1))},
                          {"device_allocations", r.device_allocations}};
      a["stopped"] = r.stopped ? failure_json(snapshot, d, *r.stopped) : nlohmann::json();
      if (o.capacity) {
        a["fits"] = !r.first_failure.has_value();
        a["first_failure"] = r.first_failure ? failure_json(snapshot, d, *r.first_failure) : nlohmann::json();
      }
      allocators.push_back(std::move(a));
    }
    devices.push_back({{"device", d.device},
                       {"trace_entries", d.trace_entries},
                       {"allocs", d.allocs},
                       {"frees", d.frees},
                       {"streams", d.streams.size()},
                       {"seeded_blocks", d.seeded_blocks},
                       {"seeded_bytes", d.seeded_bytes},
                       {"empty_cache_calls", d.empty_cache_calls},
                       {"peak_requested_bytes", d.peak_requested_bytes},
                       {"recorded_peak_reserved_bytes",
                        d.recorded_peak_reserved ? nlohmann::json(*d.recorded_peak_reserved) : nlohmann::json()},
                       {"allocators", std::move(allocators)}});
  }
  if (options.json) {
    nlohmann::json j = {{"snapshot", options.path},
                        {"format", snapshot.format},
                        {"recorded_settings", snapshot.settings_text},
                        {"expandable_segments_recorded", snapshot.settings.expandable_segments},
                        {"capacity_bytes", o.capacity ? nlohmann::json(*o.capacity) : nlohmann::json()},
                        {"devices", std::move(devices)}};
    std::cout << j.dump() << "\n";
  }
  return 0;
}

}  // namespace cudakit::cli
