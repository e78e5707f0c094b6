#include "cudakit/memory/snapshot.hpp"


#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <type_traits>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stack_trace.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/version.hpp"
#include "nlohmann/json.hpp"

namespace cudakit::memory {
namespace {

using nlohmann::json;

json frames_json(const std::shared_ptr<const StackFrames>& frames) {
  json out = json::array();
  if (!frames) return out;
  for (const auto& f : *frames) out.push_back({{"name", f.name}, {"filename", f.filename}, {"line", f.line}});
  return out;
}

// Reading a snapshot: every malformed value is an InvalidArgumentError naming its path. nlohmann's
// own accessors are not used on unchecked values: value() and operator[] throw nlohmann's
// type_error on the wrong kind of value, and get<T> converts a float to an integer unchecked,
// which is undefined past the integer's range.
[[noreturn]] void malformed(std::string_view what) {
  throw InvalidArgumentError("snapshot_from_json", what);
}

template <class T>
T convert(const json& value, const std::string& path) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (value.is_string()) return value.get<std::string>();
    malformed(detail::concat(path, " is ", value.type_name(), ", expected a string"));
  } else if constexpr (std::is_same_v<T, bool>) {
    if (value.is_boolean()) return value.get<bool>();
    malformed(detail::concat(path, " is ", value.type_name(), ", expected a boolean"));
  } else {
    static_assert(std::is_integral_v<T>);
    if (value.is_number_unsigned()) {
      if (const auto u = value.get<std::uint64_t>(); std::in_range<T>(u)) return static_cast<T>(u);
    } else if (value.is_number_integer()) {
      if (const auto i = value.get<std::int64_t>(); std::in_range<T>(i)) return static_cast<T>(i);
    }
    malformed(detail::concat(path, " is ", value.is_number() ? value.dump() : value.type_name(),
                             ", expected ", std::is_signed_v<T> ? "a signed " : "an unsigned ",
                             sizeof(T) * 8, "-bit integer"));
  }
}

const json& object_at(const json& value, const std::string& path) {
  if (!value.is_object()) malformed(detail::concat(path, " is ", value.type_name(), ", expected an object"));
  return value;
}

const json& array_at(const json& value, const std::string& path) {
  if (!value.is_array()) malformed(detail::concat(path, " is ", value.type_name(), ", expected a list"));
  return value;
}

// object[key] of an object, which must be there.
const json& member(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) malformed(detail::concat(where, " has no \"", key, "\""));
  return *it;
}

// object[key] as T, `fallback` where the key is absent.
template <class T>
T get_or(const json& object, const char* key, T fallback, const std::string& where) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : convert<T>(*it, detail::concat(where, ".", key));
}

std::shared_ptr<const StackFrames> frames_from(const json& j, const std::string& where) {
  const std::string path = detail::concat(where, ".frames");
  array_at(j, path);
  auto frames = std::make_shared<StackFrames>();
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string at = detail::concat(path, "[", i, "]");
    const json& f = object_at(j[i], at);
    frames->push_back({get_or<std::string>(f, "name", "", at),
                       get_or<std::string>(f, "filename", "", at), get_or<int>(f, "line", 0, at)});
  }
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

// object[key] as T, which must be there.
template <class T>
T get(const json& object, const char* key, const std::string& where) {
  return convert<T>(member(object, key, where), detail::concat(where, ".", key));
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
  StackFrames frames = cudakit::capture_stack(skip + 1);
  // cudakit's own allocation path is noise in every stack.
  std::erase_if(frames, [](const StackFrame& f) { return f.name.rfind("cudakit::memory::", 0) == 0; });
  return frames;
}


// record_memory_history and memory_snapshot are in device_allocator.cpp, with the backend they
// depend on (See Note [Allocator backends]).

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
  const json j = detail::parse_outside_json<json>(text, "snapshot", "snapshot_from_json");
  if (!j.is_object()) throw InvalidArgumentError("snapshot_from_json", "the top level is not an object");
  MemorySnapshot snap;
  snap.device = get_or<int>(j, "device", 0, "snapshot");
  const json& segments = array_at(member(j, "segments", "snapshot"), "segments");
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string where = detail::concat("segments[", i, "]");
    const json& s = object_at(segments[i], where);
    SegmentSnapshot seg;
    seg.device = get<int>(s, "device", where);
    seg.address = get<std::uintptr_t>(s, "address", where);
    seg.total_size = get<std::size_t>(s, "total_size", where);
    seg.allocated_size = get_or<std::size_t>(s, "allocated_size", 0, where);
    seg.active_size = get_or<std::size_t>(s, "active_size", 0, where);
    seg.requested_size = get_or<std::size_t>(s, "requested_size", 0, where);
    seg.stream = get_or<std::uintptr_t>(s, "stream", 0, where);
    seg.is_small = get_or<std::string>(s, "segment_type", "large", where) == "small";
    seg.is_expandable = get_or<bool>(s, "is_expandable", false, where);
    if (auto pool = s.find("segment_pool_id"); pool != s.end() && pool->is_array() && pool->size() == 2) {
      const std::string at = detail::concat(where, ".segment_pool_id");
      seg.pool = PoolId{convert<std::uint64_t>((*pool)[0], at + "[0]"),
                        convert<std::uint64_t>((*pool)[1], at + "[1]")};
    }
    const std::string blocks_at = detail::concat(where, ".blocks");
    const json& blocks = array_at(member(s, "blocks", where), blocks_at);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const std::string bw = detail::concat(blocks_at, "[", k, "]");
      const json& b = object_at(blocks[k], bw);
      BlockSnapshot bs;
      bs.address = get<std::uintptr_t>(b, "address", bw);
      bs.size = get<std::size_t>(b, "size", bw);
      bs.requested_size = get_or<std::size_t>(b, "requested_size", 0, bw);
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
    if (snap.device >= 0 && static_cast<std::size_t>(snap.device) < traces->size()) {
      const std::string list_at = detail::concat("device_traces[", snap.device, "]");
      const json& list = array_at((*traces)[static_cast<std::size_t>(snap.device)], list_at);
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string where = detail::concat(list_at, "[", i, "]");
        const json& e = object_at(list[i], where);
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
        t.address = get_or<std::uintptr_t>(e, "addr", 0, where);
        t.size = get_or<std::size_t>(e, "size", 0, where);
        t.stream = get_or<std::uintptr_t>(e, "stream", 0, where);
        t.time_us = get_or<std::int64_t>(e, "time_us", 0, where);
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
