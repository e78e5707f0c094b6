#include "cudakit/memory/alloc_trace.hpp"

#include <charconv>
#include <string_view>
#include <unordered_map>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "memory/detail/read_whole_file.hpp"

namespace cudakit::memory {
namespace {

template <class T>
bool parse_number(std::string_view field, T& out) {
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && end == field.data() + field.size();
}

}  // namespace

AllocTrace parse_alloc_trace(const std::string& text, const std::string& name) {
  AllocTrace trace;
  std::unordered_map<std::uint64_t, std::uint32_t> id_slots;
  std::unordered_map<std::string, std::uint32_t> stream_ids;
  std::vector<std::uint64_t> live_size;  // by slot; 0 = not live (sizes of live ids are > 0 or tracked below)
  std::vector<bool> live;
  std::uint64_t current = 0;
  std::size_t line_number = 0;
  std::size_t pos = 0;
  auto fail = [&](std::string_view what, std::string_view line) {
    throw InvalidArgumentError("parse_alloc_trace",
                               cudakit::detail::concat(name, ":", line_number, ": ", what, " (line: '",
                                              line, "')"));
  };
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line_number == 1 && line.rfind("op,", 0) == 0) continue;  // header
    std::string_view fields[4];
    std::size_t start = 0;
    for (int f = 0; f < 4; ++f) {
      const std::size_t comma = f < 3 ? line.find(',', start) : line.size();
      if (comma == std::string_view::npos) fail("expected 4 comma-separated fields", line);
      fields[f] = line.substr(start, comma - start);
      start = comma + 1;
    }
    if (fields[0] != "a" && fields[0] != "f") fail("op must be 'a' or 'f'", line);
    std::uint64_t id = 0, size = 0;
    if (!parse_number(fields[1], id)) fail("id is not a non-negative integer", line);
    if (!parse_number(fields[2], size)) fail("size is not a non-negative integer", line);
    AllocTraceOp op;
    op.is_alloc = fields[0] == "a";
    auto [stream_it, new_stream] =
        stream_ids.try_emplace(std::string(fields[3]), static_cast<std::uint32_t>(stream_ids.size()));
    op.stream = stream_it->second;
    if (op.is_alloc) {
      auto [it, inserted] = id_slots.try_emplace(id, static_cast<std::uint32_t>(id_slots.size()));
      if (!inserted && live[it->second]) fail("allocation of an id that is still live", line);
      op.slot = it->second;
      if (op.slot >= live.size()) {
        live.resize(op.slot + 1, false);
        live_size.resize(op.slot + 1, 0);
      }
      live[op.slot] = true;
      live_size[op.slot] = size;
      op.size = size;
      current += size;
      if (current > trace.peak_requested_bytes) trace.peak_requested_bytes = current;
    } else {
      auto it = id_slots.find(id);
      if (it == id_slots.end() || !live[it->second]) fail("free of an id that is not live", line);
      op.slot = it->second;
      op.size = live_size[op.slot];
      live[op.slot] = false;
      current -= op.size;
    }
    trace.ops.push_back(op);
  }
  trace.num_ids = static_cast<std::uint32_t>(id_slots.size());
  trace.num_streams = static_cast<std::uint32_t>(stream_ids.size());
  return trace;
}

AllocTrace load_alloc_trace(const std::string& path) {
  return parse_alloc_trace(detail::read_whole_file(path, "load_alloc_trace"), path);
}

}  // namespace cudakit::memory
