#include "cudakit/profiler/chrome_trace.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "profiler/detail/json_writer.hpp"

namespace cudakit::profiler {

// Note [Chrome trace layout]
// We follow what Kineto (torch.profiler) writes, so Perfetto, chrome://tracing and the tools
// people already point at PyTorch traces (HTA, TensorBoard's trace viewer) read ours:
//   - one "X" (complete) event per activity; device work on pid = device ordinal, tid = CUPTI
//     stream id; host work (cuda_runtime, user_annotation) on pid = process id, tid = system
//     thread id;
//   - categories "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_sync",
//     "user_annotation";
//   - flow events "s"/"f" of category "ac2g" with id = correlation id, from a runtime call to the
//     first device activity it caused ("bp": "e" binds the arrow's head to the enclosing slice).
//     A graph launch causes many kernels with one correlation id; a flow id may have only one
//     start and one finish, so the arrow goes to the first of them;
//   - "M" metadata events naming processes and threads.
// Timestamps are microseconds relative to "baseTimeNanoseconds" (as newer Kineto writes them)
// with three decimals: absolute epoch microseconds need 19 significant digits, more than a
// double that JSON readers parse them into keeps, and the nanoseconds would be lost.
// A synchronization is time the host spent blocked, so it is drawn on the host thread of the
// runtime call with its correlation id when that call was recorded, else on its stream's row.

namespace {

using detail::JsonBuffer;
using graphs::Annotation;

constexpr std::uint32_t kNoStream = std::numeric_limits<std::uint32_t>::max();

// Per-event annotation overrides, prepared once per node id. See Note [Chrome trace layout].
class AnnotationIndex {
 public:
  AnnotationIndex(const graphs::KernelAnnotations* annotations) {
    if (annotations == nullptr) return;
    for (const auto& [node, list] : *annotations) {
      Annotation merged = graphs::merged_annotation(*annotations, node);
      if (!merged.empty()) by_node_.emplace(node, std::move(merged));
    }
  }
  // The fields for node `node`, or nullptr.
  [[nodiscard]] const Annotation* find(std::uint64_t node) const {
    if (by_node_.empty()) return nullptr;
    const auto it = by_node_.find(node);
    return it == by_node_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<std::uint64_t, Annotation> by_node_;
};

// Writes the members of one event's "args", skipping the event's own fields that an annotation
// replaces, and then the annotation's fields.
class ArgsWriter {
 public:
  ArgsWriter(JsonBuffer& json, const Annotation* annotation) : json_(json), annotation_(annotation) {
    json_.raw(",\"args\":{");
  }
  template <class Value>
  void field(std::string_view key, const Value& value) {
    if (annotation_ != nullptr && annotation_->contains(std::string(key))) return;
    begin(key);
    json_.number(value);
  }
  void triple(std::string_view key, const std::int32_t (&value)[3]) {
    if (annotation_ != nullptr && annotation_->contains(std::string(key))) return;
    begin(key);
    json_.raw('[');
    json_.number(value[0]);
    json_.raw(',');
    json_.number(value[1]);
    json_.raw(',');
    json_.number(value[2]);
    json_.raw(']');
  }
  void text(std::string_view key, std::string_view value) {
    if (annotation_ != nullptr && annotation_->contains(std::string(key))) return;
    begin(key);
    json_.string(value);
  }
  ~ArgsWriter() {
    if (annotation_ != nullptr) {
      for (const auto& [key, value] : *annotation_) {
        begin(key);
        std::visit([&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) json_.string(v);
          else json_.number(v);
        }, value);
      }
    }
    json_.raw('}');
  }
  ArgsWriter(const ArgsWriter&) = delete;
  ArgsWriter& operator=(const ArgsWriter&) = delete;

 private:
  void begin(std::string_view key) {
    if (!first_) json_.raw(',');
    first_ = false;
    json_.key(key);
  }
  JsonBuffer& json_;
  const Annotation* annotation_;
  bool first_ = true;
};

class TraceWriter {
 public:
  TraceWriter(std::string& out, std::uint64_t base_ns) : json_(out), base_ns_(base_ns) {}

  // `{"ph":"X","cat":..,"name":..,"pid":..,"tid":..,"ts":..,"dur":..` — the caller closes it.
  void begin_complete(std::string_view category, std::string_view name, std::uint64_t pid,
                      std::uint64_t tid, std::uint64_t start_ns, std::uint64_t end_ns) {
    separator();
    json_.raw("{\"ph\":\"X\",\"cat\":");
    json_.string(category);
    json_.raw(",\"name\":");
    json_.string(name);
    pid_tid(pid, tid);
    json_.raw(",\"ts\":");
    json_.microseconds(relative(start_ns));
    json_.raw(",\"dur\":");
    json_.microseconds(end_ns > start_ns ? end_ns - start_ns : 0);
  }
  void end_event() { json_.raw('}'); }

  void flow(char phase, std::uint32_t id, std::uint64_t pid, std::uint64_t tid,
            std::uint64_t ts_ns) {
    separator();
    json_.raw("{\"ph\":\"");
    json_.raw(phase);
    json_.raw("\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
    json_.number(id);
    pid_tid(pid, tid);
    json_.raw(",\"ts\":");
    json_.microseconds(relative(ts_ns));
    if (phase == 'f') json_.raw(",\"bp\":\"e\"");
    json_.raw('}');
  }

  void metadata(std::string_view what, std::uint64_t pid, std::uint64_t tid,
                std::string_view name) {
    separator();
    json_.raw("{\"ph\":\"M\",\"name\":");
    json_.string(what);
    pid_tid(pid, tid);
    json_.raw(",\"ts\":0.000,\"args\":{\"name\":");
    json_.string(name);
    json_.raw("}}");
  }

  JsonBuffer& json() { return json_; }

 private:
  void separator() {
    if (!first_) json_.raw(",\n");
    first_ = false;
  }
  void pid_tid(std::uint64_t pid, std::uint64_t tid) {
    json_.raw(",\"pid\":");
    json_.number(pid);
    json_.raw(",\"tid\":");
    json_.number(tid);
  }
  std::uint64_t relative(std::uint64_t ns) const { return ns > base_ns_ ? ns - base_ns_ : 0; }

  JsonBuffer json_;
  std::uint64_t base_ns_;
  bool first_ = true;
};

std::uint64_t earliest_start(const TraceEvents& events) {
  std::uint64_t base = std::numeric_limits<std::uint64_t>::max();
  auto take = [&](const auto& list) {
    for (const auto& e : list) base = std::min(base, e.start_ns);
  };
  take(events.kernels);
  take(events.memory_ops);
  take(events.runtime);
  take(events.syncs);
  take(events.ranges);
  return base == std::numeric_limits<std::uint64_t>::max() ? 0 : base;
}

// The rows (pid, tid) that events were drawn on, for their metadata names.
struct Rows {
  std::set<std::uint32_t> devices;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;  // (device, stream)
  std::set<std::uint32_t> threads;
};

struct FlowTarget {
  std::uint64_t start_ns;
  std::uint32_t device;
  std::uint32_t stream;
};

void write_device_op(TraceWriter& trace, const AnnotationIndex& annotations,
                     const MemoryOpEvent& op) {
  trace.begin_complete(op.type == MemoryOpEvent::Type::memcpy ? "gpu_memcpy" : "gpu_memset",
                       op.name, op.device, op.stream, op.start_ns, op.end_ns);
  {
    ArgsWriter args(trace.json(), annotations.find(op.graph_node_id));
    args.field("device", op.device);
    args.field("stream", op.stream);
    args.field("correlation", op.correlation);
    args.field("bytes", op.bytes);
    if (!op.copy_kind.empty()) args.text("kind", op.copy_kind);
    const std::uint64_t dur = op.end_ns > op.start_ns ? op.end_ns - op.start_ns : 0;
    if (dur > 0)
      args.field("memory bandwidth (GB/s)", static_cast<double>(op.bytes) / static_cast<double>(dur));
    args.field("graph id", op.graph_id);
    args.field("graph node id", op.graph_node_id);
  }
  trace.end_event();
}

}  // namespace

std::string chrome_trace_json(const TraceEvents& events, const graphs::KernelAnnotations* annotations) {
  const AnnotationIndex annotation_index(annotations);
  const std::uint64_t base_ns = earliest_start(events);
  const std::uint64_t pid = events.process_id;

  std::string out;
  out.reserve(512 * (events.kernels.size() + events.memory_ops.size() + events.runtime.size() +
                     events.ranges.size() + events.syncs.size()) + 4096);
  {
    JsonBuffer head(out);
    head.raw("{\"schemaVersion\":1,\"traceName\":\"cudakit\",\"displayTimeUnit\":\"ms\",");
    head.raw("\"baseTimeNanoseconds\":");
    head.number(base_ns);
    head.raw(",\"traceEvents\":[\n");
  }
  TraceWriter trace(out, base_ns);
  Rows rows;
  std::unordered_map<std::uint32_t, FlowTarget> flow_targets;  // correlation -> first device op
  auto note_device_op = [&](std::uint32_t correlation, std::uint64_t start, std::uint32_t device,
                            std::uint32_t stream) {
    rows.devices.insert(device);
    rows.streams.emplace(device, stream);
    if (correlation == 0) return;
    const auto [it, inserted] = flow_targets.try_emplace(correlation, FlowTarget{start, device, stream});
    if (!inserted && start < it->second.start_ns) it->second = {start, device, stream};
  };

  for (const KernelEvent& k : events.kernels) {
    trace.begin_complete("kernel", k.name, k.device, k.stream, k.start_ns, k.end_ns);
    {
      ArgsWriter args(trace.json(), annotation_index.find(k.graph_node_id));
      args.field("device", k.device);
      args.field("stream", k.stream);
      args.field("correlation", k.correlation);
      args.field("registers per thread", k.registers_per_thread);
      args.field("shared memory", k.static_shared_memory + k.dynamic_shared_memory);
      args.triple("grid", k.grid);
      args.triple("block", k.block);
      args.field("graph id", k.graph_id);
      args.field("graph node id", k.graph_node_id);
    }
    trace.end_event();
    note_device_op(k.correlation, k.start_ns, k.device, k.stream);
  }
  for (const MemoryOpEvent& op : events.memory_ops) {
    write_device_op(trace, annotation_index, op);
    note_device_op(op.correlation, op.start_ns, op.device, op.stream);
  }

  std::unordered_map<std::uint32_t, const RuntimeEvent*> runtime_by_correlation;
  runtime_by_correlation.reserve(events.runtime.size());
  for (const RuntimeEvent& r : events.runtime) {
    trace.begin_complete("cuda_runtime", r.name, pid, r.thread, r.start_ns, r.end_ns);
    {
      ArgsWriter args(trace.json(), nullptr);
      args.field("cbid", r.callback_id);
      args.field("correlation", r.correlation);
    }
    trace.end_event();
    rows.threads.insert(r.thread);
    runtime_by_correlation.emplace(r.correlation, &r);
  }
  for (const SyncEvent& s : events.syncs) {
    const auto host = runtime_by_correlation.find(s.correlation);
    const bool on_host = host != runtime_by_correlation.end();
    const std::uint32_t stream = s.stream == kNoStream ? 0 : s.stream;
    trace.begin_complete("cuda_sync", s.name, on_host ? pid : s.device,
                         on_host ? host->second->thread : stream, s.start_ns, s.end_ns);
    {
      ArgsWriter args(trace.json(), nullptr);
      args.field("device", s.device);
      if (s.stream != kNoStream) args.field("stream", s.stream);
      args.field("correlation", s.correlation);
    }
    trace.end_event();
    if (!on_host) {
      rows.devices.insert(s.device);
      rows.streams.emplace(s.device, stream);
    }
  }
  for (const RangeEvent& range : events.ranges) {
    trace.begin_complete("user_annotation", range.name, pid, range.thread, range.start_ns,
                         range.end_ns);
    trace.json().raw(",\"args\":{}");
    trace.end_event();
    rows.threads.insert(range.thread);
  }

  for (const auto& [correlation, target] : flow_targets) {
    const auto launch = runtime_by_correlation.find(correlation);
    if (launch == runtime_by_correlation.end()) continue;
    trace.flow('s', correlation, pid, launch->second->thread, launch->second->start_ns);
    trace.flow('f', correlation, target.device, target.stream, target.start_ns);
  }

  if (!rows.threads.empty()) trace.metadata("process_name", pid, 0, cudakit::detail::concat("host (pid ", pid, ")"));
  for (const std::uint32_t thread : rows.threads)
    trace.metadata("thread_name", pid, thread, cudakit::detail::concat("thread ", thread));
  for (const std::uint32_t device : rows.devices)
    trace.metadata("process_name", device, 0, cudakit::detail::concat("GPU ", device));
  for (const auto& [device, stream] : rows.streams)
    trace.metadata("thread_name", device, stream, cudakit::detail::concat("stream ", stream));

  trace.json().raw("\n]}\n");
  return out;
}

void write_chrome_trace(const std::string& path, const TraceEvents& events,
                        const graphs::KernelAnnotations* annotations) {
  cudakit::detail::write_text_file(path, chrome_trace_json(events, annotations), "write_chrome_trace");
}

}  // namespace cudakit::profiler
