// Chrome trace export on synthetic events (no GPU): the JSON is valid and in Kineto's layout,
// every kernel event has the required fields, flows pair up, annotations merge as the offline
// merge does, and key_averages sums what was recorded.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "cudakit/profiler/chrome_trace.hpp"
#include "cudakit/profiler/key_averages.hpp"
#include "cudakit/profiler/trace_merge.hpp"
#include "profiler/detail/synthetic_events.hpp"

namespace cudakit::profiler {
namespace {

using detail::synthetic_events;
using graphs::KernelAnnotations;
using detail::synthetic_node_id;

std::vector<nlohmann::json> of_category(const nlohmann::json& trace, const std::string& cat) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == cat) out.push_back(e);
  return out;
}

TEST(ProfilerChromeTrace, KernelEventsCarryEveryField) {
  const TraceEvents events = synthetic_events(2500, 1000);
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(events));
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["baseTimeNanoseconds"], events.ranges.front().start_ns);
  const auto kernels = of_category(trace, "kernel");
  ASSERT_EQ(kernels.size(), events.kernels.size());
  std::set<std::uint64_t> node_ids;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const auto& e = kernels[i];
    const KernelEvent& k = events.kernels[i];
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["name"], k.name);
    EXPECT_EQ(e["pid"], k.device);
    EXPECT_EQ(e["tid"], k.stream);
    // Microseconds relative to the base, with the nanoseconds kept as three decimals.
    EXPECT_NEAR(e["ts"].get<double>(), (k.start_ns - trace["baseTimeNanoseconds"].get<std::uint64_t>()) / 1e3, 1e-6);
    EXPECT_NEAR(e["dur"].get<double>(), (k.end_ns - k.start_ns) / 1e3, 1e-9);
    const auto& args = e["args"];
    for (const char* key : {"device", "stream", "correlation", "registers per thread",
                            "shared memory", "grid", "block", "graph id", "graph node id"})
      EXPECT_TRUE(args.contains(key)) << key << " missing in " << e.dump();
    EXPECT_EQ(args["shared memory"], 3072);
    EXPECT_EQ(args["grid"], nlohmann::json::array({k.grid[0], 1, 1}));
    EXPECT_EQ(args["block"], nlohmann::json::array({256, 1, 1}));
    EXPECT_EQ(args["correlation"], k.correlation);
    EXPECT_EQ(args["graph node id"], k.graph_node_id);
    node_ids.insert(args["graph node id"].get<std::uint64_t>());
  }
  EXPECT_EQ(node_ids.size(), kernels.size());
  EXPECT_EQ(of_category(trace, "gpu_memset").size(), 3u);
  EXPECT_EQ(of_category(trace, "cuda_runtime").size(), 3u);
  EXPECT_EQ(of_category(trace, "user_annotation").size(), 3u);
}

TEST(ProfilerChromeTrace, FlowsPairFromLaunchToFirstKernel) {
  const TraceEvents events = synthetic_events(2500, 1000);
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(events));
  std::map<std::uint64_t, nlohmann::json> starts, finishes;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "s") EXPECT_TRUE(starts.emplace(e["id"], e).second) << "two starts: " << e.dump();
    if (e["ph"] == "f") EXPECT_TRUE(finishes.emplace(e["id"], e).second) << "two ends: " << e.dump();
  }
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(finishes.size(), 3u);
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.contains(id));
    const auto& f = finishes[id];
    EXPECT_EQ(s["cat"], "ac2g");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(s["pid"], 4242);
    EXPECT_EQ(s["tid"], 4243);
    EXPECT_EQ(f["tid"], 7);
    EXPECT_LT(s["ts"].get<double>(), f["ts"].get<double>());
  }
  // The arrow's head is the first kernel of its launch.
  const auto kernels = of_category(trace, "kernel");
  EXPECT_EQ(finishes[1]["ts"], kernels[0]["ts"]);
  EXPECT_EQ(finishes[2]["ts"], kernels[1000]["ts"]);
}

TEST(ProfilerChromeTrace, NamesProcessesAndThreads) {
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(synthetic_events(10)));
  std::set<std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M") names.insert(e["name"].get<std::string>() + "=" + e["args"]["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"process_name=GPU 0", "process_name=host (pid 4242)",
                                          "thread_name=stream 7", "thread_name=thread 4243"}));
}

TEST(ProfilerChromeTrace, AnnotationsMergeAsTheOfflineMergeDoes) {
  const TraceEvents events = synthetic_events(20, 10);
  const KernelAnnotations annotations = {
      {synthetic_node_id(1, 1), {{{"name", std::string("attention")}}}},
      {synthetic_node_id(1, 2),
       {{{"name", std::string("model")}, {"scale", 0.5}},
        {{"name", std::string("mlp")}, {"layer", std::int64_t{3}}}}},
      // Annotation fields win over the kernel's own.
      {synthetic_node_id(2, 3), {{{"stream", std::string("overridden")}}}},
      {synthetic_node_id(1, 11), {{{"name", std::string("fill")}}}},  // the memset
  };
  const std::string plain = chrome_trace_json(events);
  const nlohmann::json at_export = nlohmann::json::parse(chrome_trace_json(events, &annotations));
  const nlohmann::json offline =
      nlohmann::json::parse(merge_trace_annotations(plain, annotations).json);
  EXPECT_EQ(at_export, offline);

  const auto kernels = of_category(at_export, "kernel");
  EXPECT_EQ(kernels[0]["args"]["name"], "attention");
  EXPECT_EQ(kernels[1]["args"]["name"], "mlp");
  EXPECT_EQ(kernels[1]["args"]["layer"], 3);
  EXPECT_EQ(kernels[1]["args"]["scale"], 0.5);
  EXPECT_FALSE(kernels[3]["args"].contains("name"));
  EXPECT_EQ(kernels[12]["args"]["stream"], "overridden");
  EXPECT_EQ(of_category(at_export, "gpu_memset")[0]["args"]["name"], "fill");
}

TEST(ProfilerChromeTrace, EscapesAndEmptyRecordings) {
  TraceEvents events;
  events.kernels.push_back({});
  events.kernels[0].name = std::string("a\"b\\c\n\x01 d", 10);
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(events));
  EXPECT_EQ(trace["traceEvents"][0]["name"], std::string("a\"b\\c\n\x01 d", 10));
  EXPECT_TRUE(nlohmann::json::parse(chrome_trace_json(TraceEvents{}))["traceEvents"].is_array());
}

TEST(ProfilerKeyAverages, SumsPerNameSortedByTotal) {
  TraceEvents events;
  auto kernel = [&](const char* name, std::uint64_t start, std::uint64_t dur) {
    KernelEvent k;
    k.name = name;
    k.start_ns = start;
    k.end_ns = start + dur;
    events.kernels.push_back(k);
  };
  kernel("small", 0, 100);
  kernel("big", 200, 5000);
  kernel("small", 6000, 300);
  events.memory_ops.push_back({MemoryOpEvent::Type::memset, "Memset (Device)", 7000, 7600});
  const auto rows = key_averages(events);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "big");
  EXPECT_EQ(rows[1].name, "Memset (Device)");
  EXPECT_EQ(rows[2].name, "small");
  EXPECT_EQ(rows[2].calls, 2u);
  EXPECT_EQ(rows[2].total_ns, 400u);
  EXPECT_EQ(rows[2].min_ns, 100u);
  EXPECT_EQ(rows[2].max_ns, 300u);
  EXPECT_DOUBLE_EQ(rows[2].average_ns(), 200.0);
  EXPECT_NEAR(rows[0].percent_of_total, 100.0 * 5000 / 6000, 1e-9);
  const std::string table = key_averages_table(rows, 2);
  EXPECT_NE(table.find("big"), std::string::npos);
  EXPECT_EQ(table.find("small "), std::string::npos);
  EXPECT_NE(table.find("1 more rows"), std::string::npos);
}

}  // namespace
}  // namespace cudakit::profiler
