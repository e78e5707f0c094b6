// The memory snapshot viewer. The C++ side validates the snapshot against torch's schema (so a
// bad file fails here, with the offending key named, rather than as a blank page) and embeds it
// in a page whose script draws the summary, the timeline and the segment map when opened.
#include "cudakit/memory/viewer/memviz.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"
#include "embedded/memviz_page.hpp"

namespace cudakit::memory {
namespace {

using detail::concat;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Validation

[[noreturn]] void reject(std::string_view path, std::string_view problem) {
  throw InvalidArgumentError("render_memviz_html",
                             concat("malformed snapshot: ", path, ": ", problem));
}

std::string member_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : concat(parent, ".", key);
}

std::string element_path(std::string_view parent, std::size_t index) {
  return concat(parent, "[", index, "]");
}

// "string \"abc\"", "number -5", "an object": what was found instead, kept short.
std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::boolean: return concat("boolean ", value.dump());
    case json::value_t::string: {
      std::string text = value.dump();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return concat("string ", text);
    }
    default: return concat("number ", value.dump());
  }
}

enum class Kind { kUnsigned, kInteger, kNumber, kBoolean, kString, kObject, kFrames, kPoolId };

struct Field {
  const char* key;
  Kind kind;
  bool required;
};

void check_frames(const json& frames, const std::string& path);

void check_value(const json& value, Kind kind, const std::string& path) {
  const auto expect = [&](bool ok, std::string_view what) {
    if (!ok) reject(path, concat("expected ", what, ", got ", describe(value)));
  };
  switch (kind) {
    case Kind::kUnsigned:
      // Sizes and addresses; nlohmann stores non-negative integers as unsigned.
      expect(value.is_number_unsigned(), "a non-negative integer");
      break;
    case Kind::kInteger: expect(value.is_number_integer(), "an integer"); break;
    case Kind::kNumber: expect(value.is_number(), "a number"); break;
    case Kind::kBoolean: expect(value.is_boolean(), "a boolean"); break;
    case Kind::kString: expect(value.is_string(), "a string"); break;
    case Kind::kObject: expect(value.is_object(), "an object"); break;
    case Kind::kFrames: check_frames(value, path); break;
    case Kind::kPoolId:
      expect(value.is_array() && value.size() == 2 && value[0].is_number_integer() &&
                 value[1].is_number_integer(),
             "an array of two integers");
      break;
  }
}

// Keys outside `fields` are allowed: torch adds keys between releases (compile_context,
// user_metadata, history, ...) and the viewer ignores what it does not draw.
void check_fields(const json& object, const std::string& path,
                  std::initializer_list<Field> fields) {
  if (!object.is_object()) reject(path, concat("expected an object, got ", describe(object)));
  for (const Field& field : fields) {
    const auto it = object.find(field.key);
    if (it == object.end()) {
      if (field.required) reject(path, concat("missing key \"", field.key, "\""));
      continue;
    }
    check_value(*it, field.kind, member_path(path, field.key));
  }
}

// Calls check(element, path) for each element of the array at object[key]; a missing key is an
// empty list (a segment without "blocks", as in torch's older snapshots).
template <class Check>
void check_list(const json& object, std::string_view parent, const char* key, Check check) {
  const auto it = object.find(key);
  if (it == object.end()) return;
  const std::string path = member_path(parent, key);
  if (!it->is_array()) reject(path, concat("expected an array, got ", describe(*it)));
  for (std::size_t i = 0; i < it->size(); ++i) check((*it)[i], element_path(path, i));
}

void check_frames(const json& frames, const std::string& path) {
  if (!frames.is_array())
    reject(path, concat("expected an array of frames, got ", describe(frames)));
  for (std::size_t i = 0; i < frames.size(); ++i) {
    check_fields(frames[i], element_path(path, i),
                 {{"filename", Kind::kString, false},
                  {"line", Kind::kInteger, false},
                  {"name", Kind::kString, false}});
  }
}

constexpr std::array<std::string_view, 3> kBlockStates = {"active_allocated", "active_pending_free",
                                                          "inactive"};

void check_block(const json& block, const std::string& path) {
  // No "address" is tolerated: older torch snapshots left it out (blocks tile their segment).
  check_fields(block, path,
               {{"size", Kind::kUnsigned, true},
                {"state", Kind::kString, true},
                {"address", Kind::kUnsigned, false},
                {"requested_size", Kind::kUnsigned, false},
                {"frames", Kind::kFrames, false}});
  const auto& state = block["state"].get_ref<const std::string&>();
  for (std::string_view known : kBlockStates) {
    if (state == known) return;
  }
  reject(member_path(path, "state"),
         concat("unknown block state \"", state,
                "\" (expected active_allocated, active_pending_free or inactive)"));
}

void check_segment(const json& segment, const std::string& path) {
  check_fields(segment, path,
               {{"address", Kind::kUnsigned, true},
                {"total_size", Kind::kUnsigned, true},
                {"device", Kind::kInteger, false},
                {"stream", Kind::kInteger, false},
                {"allocated_size", Kind::kUnsigned, false},
                {"active_size", Kind::kUnsigned, false},
                {"requested_size", Kind::kUnsigned, false},
                {"segment_type", Kind::kString, false},
                {"segment_pool_id", Kind::kPoolId, false},
                {"is_expandable", Kind::kBoolean, false},
                {"frames", Kind::kFrames, false}});
  check_list(segment, path, "blocks", check_block);
}

// Any action string is accepted: torch has renamed and added actions over time ("free" became
// "free_requested"/"free_completed"; "segment_map", "oom" came later), and the page skips the
// ones it does not know instead of refusing a whole snapshot. "oom" events carry "device_free"
// (the device's free bytes) where the others carry "addr".
void check_trace_event(const json& event, const std::string& path) {
  check_fields(event, path,
               {{"action", Kind::kString, true},
                {"size", Kind::kUnsigned, true},
                {"addr", Kind::kUnsigned, false},
                {"device_free", Kind::kUnsigned, false},
                {"stream", Kind::kInteger, false},
                {"time_us", Kind::kNumber, false},
                {"frames", Kind::kFrames, false}});
}

void check_snapshot(const json& snapshot) {
  if (!snapshot.is_object()) {
    reject("top level", concat("expected an object (torch.cuda.memory._snapshot()'s schema), got ",
                               describe(snapshot)));
  }
  // The two keys every snapshot has (torch's and cudakit's, with or without a recorded history):
  // JSON without them is some other file, which would otherwise render as an empty page.
  for (const char* key : {"segments", "device_traces"}) {
    if (snapshot.contains(key)) continue;
    reject("top level",
           concat("missing key \"", key, "\": not a memory snapshot (torch.cuda.memory._snapshot() "
                  "and dump_snapshot() write \"segments\" and \"device_traces\")",
                  snapshot.contains("traceEvents")
                      ? "; it looks like a Chrome/Perfetto trace (\"traceEvents\"), which ui.perfetto.dev opens"
                      : ""));
  }
  check_list(snapshot, "", "segments", check_segment);
  check_list(snapshot, "", "device_traces", [](const json& trace, const std::string& path) {
    if (!trace.is_array()) {
      reject(path, concat("expected the device's array of trace events, got ", describe(trace)));
    }
    for (std::size_t i = 0; i < trace.size(); ++i)
      check_trace_event(trace[i], element_path(path, i));
  });
  check_fields(snapshot, "",
               {{"allocator_settings", Kind::kObject, false},
                {"device_stats", Kind::kObject, false},
                {"cudakit_version", Kind::kString, false}});
  if (const auto stats = snapshot.find("device_stats"); stats != snapshot.end()) {
    for (const auto& [name, value] : stats->items()) {
      check_value(value, Kind::kNumber, concat("device_stats[\"", name, "\"]"));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Embedding

// Note [Embedding the snapshot]
// The snapshot goes into a <script type="application/json"> element, which the page reads with
// JSON.parse. Such an element ends at the first "</script" anywhere in its text, and "<!--" in
// it changes how the parser looks for that end, so a frame named "operator</script>" could break
// out of it. The JSON is therefore re-serialized (it was parsed anyway) and every '<' in it
// written as the JSON escape \u003c: '<' can only occur inside JSON strings, where \u003c means
// the same character, so the data is unchanged and the element cannot be closed early.
// Addresses stay exact in JavaScript numbers: they are below 2^53 on every current GPU.
std::string embeddable_json(const json& snapshot) {
  const std::string text = snapshot.dump();
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (const char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// Note [The page's files]
// The page is memory/viewer/memviz.html, memviz.css and memviz.js, compiled into the library
// (cmake/EmbedFiles.cmake) and put together here into one file that opens from anywhere: so it
// has no URLs, no external fonts or scripts, and its SVG is built as markup (so not even the SVG
// namespace URI appears). memviz.html has three placeholders: {{memviz.css}} in the <style>
// element and {{memviz.js}} in the last <script>, each a line of its own that the file's text
// replaces (its last line ends where the placeholder's did), and {{snapshot}} in the data
// element. The template is cut at them in order and never searched after a part is put in, so a
// snapshot holding the text "{{memviz.js}}" stays data.
std::string fill_page(std::string_view data) {
  struct Part {
    std::string_view placeholder;
    std::string_view text;
  };
  const std::array<Part, 3> parts = {{{"{{memviz.css}}\n", embedded::memviz_css()},
                                      {"{{snapshot}}", data},
                                      {"{{memviz.js}}\n", embedded::memviz_js()}}};
  std::string_view rest = embedded::memviz_html();
  std::size_t size = rest.size();
  for (const Part& part : parts) size += part.text.size();
  std::string page;
  page.reserve(size);
  for (const Part& part : parts) {
    const std::size_t at = rest.find(part.placeholder);
    if (at == std::string_view::npos) {
      throw StateError("render_memviz_html",
                       concat("the built-in page lacks its placeholder ", part.placeholder));
    }
    page.append(rest.substr(0, at)).append(part.text);
    rest.remove_prefix(at + part.placeholder.size());
  }
  page.append(rest);
  return page;
}

}  // namespace

std::string render_memviz_html(std::string_view snapshot_json) {
  const json snapshot =
      detail::parse_outside_json<json>(snapshot_json, "snapshot", "render_memviz_html");
  check_snapshot(snapshot);
  return fill_page(embeddable_json(snapshot));
}

}  // namespace cudakit::memory
