#include "cudakit/memory/snapshot.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdlib>
#include <fstream>
#include <memory>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/version.hpp"
#include "nlohmann/json.hpp"

namespace cudakit::memory {
namespace {

using nlohmann::json;

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

json frames_json(const std::shared_ptr<const StackFrames>& frames) {
  json out = json::array();
  if (!frames) return out;
  for (const auto& f : *frames) out.push_back({{"name", f.name}, {"filename", f.filename}, {"line", f.line}});
  return out;
}

std::shared_ptr<const StackFrames> frames_from(const json& j, const std::string& where) {
  if (!j.is_array()) {
    throw InvalidArgumentError("snapshot_from_json", detail::concat(where, ".frames is not a list"));
  }
  auto frames = std::make_shared<StackFrames>();
  for (const auto& f : j) frames->push_back({f.value("name", ""), f.value("filename", ""), f.value("line", 0)});
  return frames;
}

const char* state_name(BlockSnapshot::State s) {
  switch (s) {
    case BlockSnapshot::State::active_allocated: return "active_allocated";
    case BlockSnapshot::State::active_pending_free: return "active_pending_free";
    case BlockSnapshot::State::inactive: return "inactive";
  }
  return "inactive";
}

template <class T>
T get(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) {
    throw InvalidArgumentError("snapshot_from_json", detail::concat(where, " has no \"", key, "\""));
  }
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    throw InvalidArgumentError("snapshot_from_json",
                               detail::concat(where, ".", key, " has the wrong type: ", e.what()));
  }
}

}  // namespace

const char* to_string(TraceEntry::Action action) {
  switch (action) {
    case TraceEntry::Action::alloc: return "alloc";
    case TraceEntry::Action::free_requested: return "free_requested";
    case TraceEntry::Action::free_completed: return "free_completed";
    case TraceEntry::Action::segment_alloc: return "segment_alloc";
    case TraceEntry::Action::segment_free: return "segment_free";
    case TraceEntry::Action::segment_map: return "segment_map";
    case TraceEntry::Action::segment_unmap: return "segment_unmap";
    case TraceEntry::Action::oom: return "oom";
  }
  return "unknown";
}

StackFrames capture_stack(int skip) {
  void* addresses[64];
  const int n = backtrace(addresses, 64);
  StackFrames frames;
  for (int i = 1 + skip; i < n; ++i) {
    Dl_info info{};
    StackFrame f;
    if (dladdr(addresses[i], &info) && info.dli_sname) {
      f.name = demangle(info.dli_sname);
    } else {
      f.name = detail::concat("0x", std::hex, reinterpret_cast<std::uintptr_t>(addresses[i]));
    }
    f.filename = info.dli_fname ? info.dli_fname : "??";
    // cudakit's own allocation path is noise in every stack.
    if (f.name.rfind("cudakit::memory::", 0) == 0) continue;
    frames.push_back(std::move(f));
  }
  return frames;
}

void record_memory_history(bool enabled, std::size_t max_entries, int device) {
  device_allocator(device).record_history(enabled, max_entries, [] {
    return std::make_shared<const StackFrames>(capture_stack());
  });
}

MemorySnapshot memory_snapshot(int device) { return device_allocator(device).snapshot(); }

std::string snapshot_to_json(const MemorySnapshot& snap) {
  json segments = json::array();
  for (const auto& s : snap.segments) {
    json blocks = json::array();
    for (const auto& b : s.blocks) {
      blocks.push_back({{"address", b.address},
                        {"size", b.size},
                        {"requested_size", b.requested_size},
                        {"state", state_name(b.state)},
                        {"frames", frames_json(b.frames)}});
    }
    segments.push_back({{"device", s.device},
                        {"address", s.address},
                        {"total_size", s.total_size},
                        {"allocated_size", s.allocated_size},
                        {"active_size", s.active_size},
                        {"requested_size", s.requested_size},
                        {"stream", s.stream},
                        {"segment_type", s.is_small ? "small" : "large"},
                        {"segment_pool_id", {s.pool.first, s.pool.second}},
                        {"is_expandable", s.is_expandable},
                        {"frames", json::array()},
                        {"blocks", std::move(blocks)}});
  }
  json trace = json::array();
  for (const auto& e : snap.trace) {
    trace.push_back({{"action", to_string(e.action)},
                     {"addr", e.address},
                     {"size", e.size},
                     {"stream", e.stream},
                     {"time_us", e.time_us},
                     {"frames", frames_json(e.frames)}});
  }
  json device_traces = json::array();
  for (int d = 0; d < snap.device; ++d) device_traces.push_back(json::array());
  device_traces.push_back(std::move(trace));
  json stats = json::object();
  for (const auto& [k, v] : snap.stats.to_map()) stats[k] = v;
  json out = {{"segments", std::move(segments)},
              {"device_traces", std::move(device_traces)},
              {"allocator_settings", {{"CUDAKIT_ALLOC_CONF", snap.config.to_string()}}},
              {"device_stats", std::move(stats)},
              {"cudakit_version", CUDAKIT_VERSION_STRING},
              {"device", snap.device}};
  return out.dump();
}

MemorySnapshot snapshot_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InvalidArgumentError("snapshot_from_json", detail::concat("not valid JSON: ", e.what()));
  }
  if (!j.is_object()) throw InvalidArgumentError("snapshot_from_json", "the top level is not an object");
  MemorySnapshot snap;
  snap.device = j.value("device", 0);
  const json segments = get<json>(j, "segments", "snapshot");
  if (!segments.is_array()) throw InvalidArgumentError("snapshot_from_json", "\"segments\" is not a list");
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const json& s = segments[i];
    const std::string where = detail::concat("segments[", i, "]");
    SegmentSnapshot seg;
    seg.device = get<int>(s, "device", where);
    seg.address = get<std::uintptr_t>(s, "address", where);
    seg.total_size = get<std::size_t>(s, "total_size", where);
    seg.allocated_size = s.value("allocated_size", std::size_t{0});
    seg.active_size = s.value("active_size", std::size_t{0});
    seg.requested_size = s.value("requested_size", std::size_t{0});
    seg.stream = s.value("stream", std::uintptr_t{0});
    seg.is_small = s.value("segment_type", "large") == "small";
    seg.is_expandable = s.value("is_expandable", false);
    if (auto pool = s.find("segment_pool_id"); pool != s.end() && pool->is_array() && pool->size() == 2) {
      seg.pool = PoolId{(*pool)[0].get<std::uint64_t>(), (*pool)[1].get<std::uint64_t>()};
    }
    const json blocks = get<json>(s, "blocks", where);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const json& b = blocks[k];
      const std::string bw = detail::concat(where, ".blocks[", k, "]");
      BlockSnapshot bs;
      bs.address = get<std::uintptr_t>(b, "address", bw);
      bs.size = get<std::size_t>(b, "size", bw);
      bs.requested_size = b.value("requested_size", std::size_t{0});
      const std::string state = get<std::string>(b, "state", bw);
      if (state == "active_allocated") bs.state = BlockSnapshot::State::active_allocated;
      else if (state == "active_pending_free") bs.state = BlockSnapshot::State::active_pending_free;
      else if (state == "inactive") bs.state = BlockSnapshot::State::inactive;
      else throw InvalidArgumentError("snapshot_from_json", detail::concat(bw, ".state '", state, "' is unknown"));
      if (auto f = b.find("frames"); f != b.end()) bs.frames = frames_from(*f, bw);
      seg.blocks.push_back(std::move(bs));
    }
    snap.segments.push_back(std::move(seg));
  }
  if (auto traces = j.find("device_traces"); traces != j.end()) {
    if (!traces->is_array()) throw InvalidArgumentError("snapshot_from_json", "\"device_traces\" is not a list");
    if (static_cast<std::size_t>(snap.device) < traces->size()) {
      const json& list = (*traces)[static_cast<std::size_t>(snap.device)];
      for (std::size_t i = 0; i < list.size(); ++i) {
        const json& e = list[i];
        const std::string where = detail::concat("device_traces[", snap.device, "][", i, "]");
        TraceEntry t;
        const std::string action = get<std::string>(e, "action", where);
        bool known = false;
        for (auto a : {TraceEntry::Action::alloc, TraceEntry::Action::free_requested,
                       TraceEntry::Action::free_completed, TraceEntry::Action::segment_alloc,
                       TraceEntry::Action::segment_free, TraceEntry::Action::segment_map,
                       TraceEntry::Action::segment_unmap, TraceEntry::Action::oom}) {
          if (action == to_string(a)) {
            t.action = a;
            known = true;
          }
        }
        if (!known) throw InvalidArgumentError("snapshot_from_json", detail::concat(where, ".action '", action, "' is unknown"));
        t.address = e.value("addr", std::uintptr_t{0});
        t.size = e.value("size", std::size_t{0});
        t.stream = e.value("stream", std::uintptr_t{0});
        t.time_us = e.value("time_us", std::int64_t{0});
        if (auto f = e.find("frames"); f != e.end()) t.frames = frames_from(*f, where);
        snap.trace.push_back(std::move(t));
      }
    }
  }
  return snap;
}

void dump_snapshot(const std::string& path, int device) {
  const std::string text = snapshot_to_json(memory_snapshot(device));
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text) || !out.flush()) {
    throw InvalidArgumentError("dump_snapshot", detail::concat("cannot write '", path, "'"));
  }
}

}  // namespace cudakit::memory
