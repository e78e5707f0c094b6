#include "cudakit/memory/snapshot_trace.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <unordered_map>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/pickle_tree.hpp"
#include "memory/detail/read_whole_file.hpp"
#include "nlohmann/json.hpp"

namespace cudakit::memory {

using cudakit::detail::concat;

// Note [Replaying a snapshot's trace]
// A snapshot's device_traces[d] lists what the allocator of device d did, oldest first: alloc
// (addr, size as requested, stream), free_requested (the program freed it: `size` is the
// requested size again), free_completed (the memory became reusable: at once, as the next
// entry, unless record_stream made the free wait for other streams' work), segment_alloc /
// segment_free / segment_map / segment_unmap (memory obtained from or returned to the driver),
// snapshot, oom. A replay needs the program's side: allocations and frees.
//  - Frees are taken at free_requested, when the program released the memory, as the project's
//    own recorder does (tests/data/alloc-traces/README.md). A free whose free_completed entry
//    comes later is marked `deferred` and gets a free_completed op there: torch's policy keeps
//    such a block from reuse until then, the other allocators decide for themselves.
//  - A free of an address the trace never allocated is a block allocated before the trace
//    began (recording started later, or the ring buffer of max_entries dropped the oldest
//    entries); so is a block still allocated in the snapshot's segments that no alloc entry
//    made. Both are seeded as allocations before the first entry, so that the memory they held
//    counts from the start.
//  - A run of segment_free / segment_unmap entries is the allocator returning cached memory:
//    an empty_cache() call (torch.cuda.empty_cache(), or a library calling it), replayed as one
//    by every allocator. Two other causes leave the same entries: out of memory (the release
//    and retry inside one malloc) and garbage collection (garbage_collection_threshold). A run
//    that an oom entry ends is the first; with a threshold in the recorded settings, a run that
//    a segment_alloc / segment_map ends is taken for the second. Otherwise an out-of-memory
//    retry that succeeded reads as an empty_cache() just before the request; each model then
//    releases its cache there too, which moves no peak before it, and it happens only where the
//    recorded run nearly filled the device.
//  - The segment events also give the reserved bytes the recording allocator had at each entry,
//    counted back from the final segments: the recorded peak, to set each model beside.
namespace {

constexpr const char* kApi = "load_snapshot_trace";
// No device has a petabyte; larger sizes are damaged files or hostile ones, and keeping below
// it keeps every sum of sizes in the replays far from overflowing.
constexpr std::uint64_t kLargestSize = std::uint64_t{1} << 50;
constexpr std::size_t kMaxJsonDepth = 1000;

using Id = PickleTree::Id;
using Kind = PickleTree::Kind;

// ---- JSON into the same tree ----

// nlohmann's SAX interface builds the tree directly: no intermediate json value, and no
// recursion (its parser keeps its own stack).
class JsonToTree {
 public:
  JsonToTree(PickleTree& tree, const std::string& name) : tree_(tree), name_(name) {}
  bool null() { return value(tree_.add_none()); }
  bool boolean(bool b) { return value(tree_.add_bool(b)); }
  bool number_integer(std::int64_t i) { return value(tree_.add_int(i)); }
  bool number_unsigned(std::uint64_t u) {
    return value(u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                     ? tree_.add_big_int()
                     : tree_.add_int(static_cast<std::int64_t>(u)));
  }
  bool number_float(double d, const std::string&) { return value(tree_.add_float(d)); }
  bool string(std::string& s) { return value(tree_.add_string(s)); }
  bool binary(nlohmann::json::binary_t&) { return value(tree_.add_none()); }
  bool start_object(std::size_t) { return open(Kind::dict); }
  bool key(std::string& k) {
    key_ = tree_.add_string(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Kind::list); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) {
    throw InvalidArgumentError(kApi, concat(name_, ": not valid JSON: ", e.what()));
  }

 private:
  bool value(Id id) {
    if (open_.empty()) {
      tree_.set_root(id);
    } else if (tree_.kind(open_.back()) == Kind::dict) {
      tree_.append(open_.back(), key_);
      tree_.append(open_.back(), id);
    } else {
      tree_.append(open_.back(), id);
    }
    return true;
  }
  bool open(Kind kind) {
    if (open_.size() >= kMaxJsonDepth) {
      throw InvalidArgumentError(kApi, concat(name_, ": JSON nested deeper than ", kMaxJsonDepth, " levels"));
    }
    const Id id = tree_.add_container(kind);
    const Id key = key_;
    value(id);
    key_ = key;
    open_.push_back(id);
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  PickleTree& tree_;
  const std::string& name_;
  std::vector<Id> open_;
  Id key_ = 0;
};

// ---- reading values by path ----

class Reader {
 public:
  Reader(const PickleTree& tree, std::string name) : tree_(tree), name_(std::move(name)) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw InvalidArgumentError(kApi, concat(name_, ": ", what));
  }
  void expect(Id id, Kind kind, const std::string& path) const {
    if (tree_.kind(id) != kind) {
      fail(concat(path, " is ", PickleTree::describe(tree_.kind(id)), ", expected ",
                          PickleTree::describe(kind)));
    }
  }
  std::optional<Id> member(Id dict, std::string_view key) const { return tree_.find(dict, key); }
  std::string_view string(Id id, const std::string& path) const {
    expect(id, Kind::string, path);
    return tree_.as_string(id);
  }
  std::int64_t integer(Id id, const std::string& path) const {
    if (tree_.kind(id) == Kind::big_integer) fail(concat(path, " is an int beyond 64 bits"));
    expect(id, Kind::integer, path);
    return tree_.as_int(id);
  }
  std::int64_t integer_or(Id dict, std::string_view key, std::int64_t fallback, const std::string& where) const {
    const auto v = member(dict, key);
    return v ? integer(*v, concat(where, ".", key)) : fallback;
  }
  // A size in bytes: an int from 0 to kLargestSize.
  std::uint64_t size(Id id, const std::string& path) const {
    if (tree_.kind(id) == Kind::big_integer) {
      fail(concat(path, " is beyond 64 bits: larger than any device (at most 2^50 bytes)"));
    }
    const std::int64_t v = integer(id, path);
    if (v < 0) fail(concat(path, " is ", v, ": a size cannot be negative"));
    if (static_cast<std::uint64_t>(v) > kLargestSize) {
      fail(concat(path, " is ", v, " bytes: larger than any device (at most 2^50 bytes)"));
    }
    return static_cast<std::uint64_t>(v);
  }
  std::uint64_t address(Id id, const std::string& path) const {
    const std::int64_t v = integer(id, path);
    if (v < 0) fail(concat(path, " is ", v, ": an address cannot be negative"));
    return static_cast<std::uint64_t>(v);
  }
  const PickleTree& tree() const { return tree_; }

 private:
  const PickleTree& tree_;
  std::string name_;
};

const char* const kHowToRecord =
    "record them with torch.cuda.memory._record_memory_history(max_entries=1000000) before the "
    "code to replay (its default context=\"all\" records every allocation, free and segment "
    "event) and call torch.cuda.memory._dump_snapshot(...) before recording stops; the trace is "
    "a ring buffer that keeps only the last max_entries events, so make it large enough for the "
    "whole run";

// The frame a person looks for: the innermost Python frame outside torch's own files, else the
// innermost Python frame, else the innermost frame.
std::optional<StackFrame> chosen_frame(const Reader& r, Id frames, const std::string& path) {
  r.expect(frames, Kind::list, path);
  const auto items = r.tree().items(frames);
  std::optional<StackFrame> any, python, user;
  for (std::size_t i = 0; i < items.size() && !user; ++i) {
    const std::string at = concat(path, "[", i, "]");
    r.expect(items[i], Kind::dict, at);
    StackFrame f;
    if (auto v = r.member(items[i], "filename")) f.filename = r.string(*v, at + ".filename");
    if (auto v = r.member(items[i], "name")) f.name = r.string(*v, at + ".name");
    const std::int64_t line = r.integer_or(items[i], "line", 0, at);
    f.line = static_cast<int>(std::clamp<std::int64_t>(line, 0, std::numeric_limits<int>::max()));
    const bool is_python = f.filename.ends_with(".py");
    if (is_python && f.filename.find("/torch/") == std::string::npos) user = f;
    if (is_python && !python) python = f;
    if (!any) any = std::move(f);
  }
  return user ? user : python ? python : any;
}

// Splits "a:1,b:[1:2,>:4],c:3" into its items (commas inside brackets belong to the item).
std::vector<std::string_view> setting_items(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '[') {
      ++depth;
    } else if (text[i] == ']') {
      --depth;
    }
  }
  return out;
}

void read_settings(const Reader& r, Id root, SnapshotTrace& out) {
  AllocatorConfig& c = out.settings;
  c.expandable_segments = false;  // torch's default
  const auto settings = r.member(root, "allocator_settings");
  if (!settings) return;
  r.expect(*settings, Kind::dict, "allocator_settings");
  for (const char* key : {"PYTORCH_CUDA_ALLOC_CONF", "CUDAKIT_ALLOC_CONF"}) {
    const auto text = r.member(*settings, key);
    if (!text || r.tree().kind(*text) != Kind::string) continue;
    out.settings_text = concat(key, "='", r.tree().as_string(*text), "'");
    for (std::string_view item : setting_items(r.tree().as_string(*text))) {
      try {
        c = AllocatorConfig::parse(item, c);
      } catch (const InvalidArgumentError&) {
        out.ignored_settings.push_back(std::string(item));
      }
    }
  }
  const std::string at = "allocator_settings";
  // The effective values, as torch reports them beside the text (set_allocator_settings may
  // have changed them since).
  if (auto v = r.member(*settings, "max_split_size")) {
    // torch writes SIZE_MAX, unlimited, as an int past int64 or as -1.
    if (r.tree().kind(*v) == Kind::big_integer) {
      c.max_split_size = std::numeric_limits<std::size_t>::max();
    } else {
      const std::int64_t m = r.integer(*v, at + ".max_split_size");
      c.max_split_size = m < 0 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(m);
    }
  }
  if (auto v = r.member(*settings, "garbage_collection_threshold")) {
    const Kind k = r.tree().kind(*v);
    if (k == Kind::floating) c.garbage_collection_threshold = r.tree().as_float(*v);
    else c.garbage_collection_threshold = static_cast<double>(r.integer(*v, at + ".garbage_collection_threshold"));
  }
  if (auto v = r.member(*settings, "expandable_segments")) {
    r.expect(*v, Kind::boolean, at + ".expandable_segments");
    c.expandable_segments = r.tree().as_bool(*v);
  }
  // {"1": d, "2": d, "4": d, ...}: the divisions of each power-of-two interval in MiB.
  if (auto v = r.member(*settings, "roundup_power2_divisions"); v && r.tree().kind(*v) == Kind::dict) {
    const auto kv = r.tree().dict_items(*v);
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (r.tree().kind(kv[i]) != Kind::string || r.tree().kind(kv[i + 1]) != Kind::integer) continue;
      const std::string_view key = r.tree().as_string(kv[i]);
      std::uint64_t mib = 0;
      for (char ch : key) mib = ch >= '0' && ch <= '9' && mib < (1u << 20) ? mib * 10 + static_cast<unsigned>(ch - '0') : 0;
      const std::int64_t d = r.tree().as_int(kv[i + 1]);
      if (mib == 0 || !std::has_single_bit(mib) || d < 0 || d > 64) continue;
      const auto index = std::min<std::size_t>(std::bit_width(mib) - 1, AllocatorConfig::kRoundupIntervals - 1);
      c.roundup_power2_divisions[index] = static_cast<unsigned>(d);
    }
  }
}

struct Live {
  std::uint32_t slot;
  std::uint32_t stream;
  std::uint64_t size;
};

class Extractor {
 public:
  Extractor(const Reader& r, SnapshotTrace& out) : r_(r), out_(out) {}

  SnapshotDeviceTrace device(int device, Id entries, Id root, bool collects_garbage) {
    SnapshotDeviceTrace d;
    d.device = device;
    const std::string list = concat("device_traces[", device, "]");
    const auto items = r_.tree().items(entries);
    if (items.size() >= SnapshotOp::kNoEntry) r_.fail(concat(list, " has more entries than this reader takes"));
    d.trace_entries = items.size();
    // Whether free_completed entries were recorded at all (skip_actions may leave them out).
    bool completions = false;
    std::vector<std::string_view> actions(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string at = concat(list, "[", i, "]");
      r_.expect(items[i], Kind::dict, at);
      const auto action = r_.member(items[i], "action");
      if (!action) r_.fail(concat(at, " has no \"action\""));
      actions[i] = r_.string(*action, at + ".action");
      completions = completions || actions[i] == "free_completed";
    }

    std::unordered_map<std::uint64_t, Live> live;
    std::unordered_map<std::uint64_t, Live> awaiting;  // deferred frees, by address
    std::vector<SnapshotOp> seeds, body;
    std::int64_t reserved_change = 0, reserved_high = 0;
    bool releasing = false;  // inside a run of segment releases (See Note [Replaying a snapshot's trace])
    const auto end_release = [&](bool empty_cache) {
      if (releasing && empty_cache) {
        body.push_back({.kind = SnapshotOp::Kind::empty_cache});
        ++d.empty_cache_calls;
      }
      releasing = false;
    };
    std::uint32_t next_slot = 0;
    std::unordered_map<std::int64_t, std::uint32_t> stream_index;
    auto stream_of = [&](std::int64_t s) {
      auto [it, inserted] = stream_index.try_emplace(s, static_cast<std::uint32_t>(d.streams.size()));
      if (inserted) d.streams.push_back(s);
      return it->second;
    };

    for (std::size_t i = 0; i < items.size(); ++i) {
      const Id e = items[i];
      const std::string at = concat(list, "[", i, "]");
      const std::string_view action = actions[i];
      const bool is_alloc = action == "alloc";
      const bool is_free = action == "free_requested" || action == "free";
      const bool grows = action == "segment_alloc" || action == "segment_map";
      const bool shrinks = action == "segment_free" || action == "segment_unmap";
      if (grows || shrinks) {
        const auto bytes = static_cast<std::int64_t>(r_.size(need(e, "size", at), at + ".size"));
        reserved_change += grows ? bytes : -bytes;
        reserved_high = std::max(reserved_high, reserved_change);
        if (shrinks) releasing = true;
        if (grows) end_release(!collects_garbage);
        continue;
      }
      if (action == "oom") {
        ++d.oom_entries;
        end_release(false);
        continue;
      }
      if (action == "snapshot") continue;
      if (!is_alloc && !is_free && action != "free_completed") {
        ++d.unknown_actions;
        continue;
      }
      end_release(true);
      const std::uint64_t addr = r_.address(need(e, "addr", at), at + ".addr");
      if (action == "free_completed") {
        if (auto it = awaiting.find(addr); it != awaiting.end()) {
          body.push_back({.kind = SnapshotOp::Kind::free_completed, .slot = it->second.slot,
                          .stream = it->second.stream, .size = it->second.size,
                          .entry = static_cast<std::uint32_t>(i)});
          awaiting.erase(it);
        }
        continue;
      }
      const std::uint64_t size = r_.size(need(e, "size", at), at + ".size");
      const std::uint32_t stream = stream_of(r_.integer_or(e, "stream", 0, at));
      const std::uint32_t frame = frame_of(e, at);
      if (is_alloc) {
        if (auto it = live.find(addr); it != live.end()) {
          r_.fail(concat(at, " allocates address ", addr, " again while it is allocated: the "
                                 "trace lacks its free_requested entry (was it recorded with "
                                 "skip_actions?)"));
        }
        awaiting.erase(addr);  // its free completed, though the entry saying so is missing
        const Live l{next_slot++, stream, size};
        live.emplace(addr, l);
        body.push_back({.kind = SnapshotOp::Kind::alloc, .slot = l.slot, .stream = stream, .size = size,
                        .entry = static_cast<std::uint32_t>(i), .frame = frame});
        ++d.allocs;
        continue;
      }
      // A free: of a block the trace allocated, or of one allocated before it began.
      Live l{};
      if (auto it = live.find(addr); it != live.end()) {
        l = it->second;
        live.erase(it);
      } else {
        l = Live{next_slot++, stream, size};
        seeds.push_back({.kind = SnapshotOp::Kind::alloc, .slot = l.slot, .stream = stream, .size = size});
        d.seeded_bytes += size;
      }
      const bool completes_now = !completions || action == "free" ||
                                 (i + 1 < items.size() && actions[i + 1] == "free_completed" &&
                                  next_addr(items[i + 1]) == addr);
      if (!completes_now) awaiting.emplace(addr, l);
      body.push_back({.kind = SnapshotOp::Kind::free, .deferred = !completes_now, .slot = l.slot,
                      .stream = l.stream, .size = l.size, .entry = static_cast<std::uint32_t>(i),
                      .frame = frame});
      ++d.frees;
    }
    end_release(true);

    // Blocks still allocated in the snapshot that no entry allocated; and the final reserved bytes.
    std::uint64_t reserved_end = 0;
    if (auto segments = r_.member(root, "segments")) {
      r_.expect(*segments, Kind::list, "segments");
      const auto segs = r_.tree().items(*segments);
      const std::int64_t top_device = r_.integer_or(root, "device", 0, "snapshot");
      for (std::size_t s = 0; s < segs.size(); ++s) {
        const std::string at = concat("segments[", s, "]");
        r_.expect(segs[s], Kind::dict, at);
        if (r_.integer_or(segs[s], "device", top_device, at) != device) continue;
        std::uint64_t address = r_.address(need(segs[s], "address", at), at + ".address");
        reserved_end += r_.size(need(segs[s], "total_size", at), at + ".total_size");
        const std::uint32_t stream = stream_of(r_.integer_or(segs[s], "stream", 0, at));
        const auto blocks = r_.member(segs[s], "blocks");
        if (!blocks) continue;
        r_.expect(*blocks, Kind::list, at + ".blocks");
        const auto bs = r_.tree().items(*blocks);
        for (std::size_t b = 0; b < bs.size(); ++b) {
          const std::string bat = concat(at, ".blocks[", b, "]");
          r_.expect(bs[b], Kind::dict, bat);
          // Older snapshots leave out the address: blocks tile their segment.
          if (auto a = r_.member(bs[b], "address")) address = r_.address(*a, bat + ".address");
          const std::uint64_t block_size = r_.size(need(bs[b], "size", bat), bat + ".size");
          const auto state = r_.member(bs[b], "state");
          if (state && r_.string(*state, bat + ".state") == "active_allocated" && !live.contains(address)) {
            const auto requested = r_.member(bs[b], "requested_size");
            std::uint64_t size = requested ? r_.size(*requested, bat + ".requested_size") : 0;
            if (size == 0) size = block_size;
            seeds.push_back({.kind = SnapshotOp::Kind::alloc, .slot = next_slot++, .stream = stream,
                             .size = size, .frame = frame_of(bs[b], bat)});
            d.seeded_bytes += size;
          }
          address += block_size;
        }
      }
    }
    d.seeded_blocks = seeds.size();
    d.num_slots = next_slot;
    d.ops = std::move(seeds);
    d.ops.insert(d.ops.end(), body.begin(), body.end());
    std::uint64_t requested = 0;
    for (const SnapshotOp& op : d.ops) {
      if (op.kind == SnapshotOp::Kind::alloc) requested += op.size;
      if (op.kind == SnapshotOp::Kind::free) requested -= op.size;
      d.peak_requested_bytes = std::max(d.peak_requested_bytes, requested);
    }
    d.recorded_final_reserved = reserved_end;
    if (reserved_change <= static_cast<std::int64_t>(reserved_end)) {
      const std::uint64_t start = reserved_end - static_cast<std::uint64_t>(reserved_change);
      d.recorded_peak_reserved = start + static_cast<std::uint64_t>(std::max<std::int64_t>(reserved_high, 0));
    }
    if (d.streams.empty()) d.streams.push_back(0);
    return d;
  }

 private:
  Id need(Id dict, std::string_view key, const std::string& at) const {
    const auto v = r_.member(dict, key);
    if (!v) r_.fail(concat(at, " has no \"", key, "\""));
    return *v;
  }
  std::uint64_t next_addr(Id entry) const {
    const auto v = r_.member(entry, "addr");
    return v && r_.tree().kind(*v) == Kind::integer ? static_cast<std::uint64_t>(r_.tree().as_int(*v)) : ~0ull;
  }
  std::uint32_t frame_of(Id dict, const std::string& at) {
    const auto frames = r_.member(dict, "frames");
    if (!frames) return SnapshotOp::kNoFrame;
    if (auto it = frame_index_.find(*frames); it != frame_index_.end()) return it->second;
    std::uint32_t index = SnapshotOp::kNoFrame;
    if (auto f = chosen_frame(r_, *frames, at + ".frames")) {
      index = static_cast<std::uint32_t>(out_.frames.size());
      out_.frames.push_back(std::move(*f));
    }
    frame_index_.emplace(*frames, index);
    return index;
  }

  const Reader& r_;
  SnapshotTrace& out_;
  std::unordered_map<Id, std::uint32_t> frame_index_;  // frames lists are shared: one each
};

SnapshotTrace extract(const PickleTree& tree, const std::string& name, std::string format,
                      std::optional<int> device) {
  const Reader r(tree, name);
  const Id root = tree.root();
  const char* const what = "torch.cuda.memory._dump_snapshot writes a dict with \"segments\" and "
                           "\"device_traces\"";
  if (tree.kind(root) != Kind::dict) {
    r.fail(concat("it holds ", PickleTree::describe(tree.kind(root)), ", not a memory snapshot (", what, ")"));
  }
  const auto traces = r.member(root, "device_traces");
  if (!traces || !r.member(root, "segments")) {
    r.fail(concat("no \"", traces ? "segments" : "device_traces", "\" key: not a memory snapshot (", what, ")"));
  }
  r.expect(*traces, Kind::list, "device_traces");
  SnapshotTrace out;
  out.format = std::move(format);
  read_settings(r, root, out);
  Extractor extractor(r, out);
  const auto lists = tree.items(*traces);
  std::string with_entries;
  for (std::size_t d = 0; d < lists.size(); ++d) {
    const std::string at = concat("device_traces[", d, "]");
    r.expect(lists[d], Kind::list, at);
    if (tree.items(lists[d]).empty()) continue;
    with_entries += concat(with_entries.empty() ? "" : ", ", d);
    if (device && *device != static_cast<int>(d)) continue;
    out.devices.push_back(
        extractor.device(static_cast<int>(d), lists[d], root, out.settings.garbage_collection_threshold > 0));
  }
  if (with_entries.empty()) r.fail(concat("the snapshot has no trace entries: ", kHowToRecord));
  if (out.devices.empty()) {
    r.fail(concat("device ", *device, " has no trace entries (devices with entries: ", with_entries, ")"));
  }
  for (const SnapshotDeviceTrace& d : out.devices) {
    if (d.allocs + d.frees == 0) {
      r.fail(concat("device_traces[", d.device, "] has ", d.trace_entries,
                            " entries but no alloc or free_requested among them: ", kHowToRecord));
    }
  }
  return out;
}

std::size_t first_content_byte(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t')) ++i;
  return i;
}

}  // namespace

bool looks_like_snapshot(const std::string& path) {
  const std::string start = detail::read_file_start(path, 64);
  const std::size_t i = first_content_byte(start);
  return i < start.size() && (static_cast<unsigned char>(start[i]) == 0x80 || start[i] == '{');
}

SnapshotTrace parse_snapshot_trace(std::string_view bytes, const std::string& name, std::optional<int> device) {
  const std::size_t i = first_content_byte(bytes);
  if (i < bytes.size() && static_cast<unsigned char>(bytes[i]) == 0x80) {
    return extract(PickleTree::parse(bytes, name), name, "pickle", device);
  }
  if (i < bytes.size() && bytes[i] == '{') {
    PickleTree tree;
    JsonToTree builder(tree, name);
    try {
      nlohmann::json::sax_parse(bytes, &builder);
    } catch (const InvalidArgumentError&) {
      throw;
    } catch (const nlohmann::json::exception& e) {
      throw InvalidArgumentError(kApi, concat(name, ": not valid JSON: ", e.what()));
    }
    return extract(tree, name, "JSON", device);
  }
  if (i >= bytes.size()) throw InvalidArgumentError(kApi, concat(name, ": the file is empty"));
  throw InvalidArgumentError(
      kApi, concat(name, ": neither a pickle (torch.cuda.memory._dump_snapshot writes one, starting "
                                 "with byte 0x80) nor a JSON snapshot (starting with '{')"));
}

SnapshotTrace load_snapshot_trace(const std::string& path, std::optional<int> device) {
  return parse_snapshot_trace(detail::read_whole_file(path, kApi), path, device);
}

}  // namespace cudakit::memory
