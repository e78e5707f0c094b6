// Offline merge (`cudakit trace merge`) on a recorded trace fixture: the seed's merge loop,
// malformed inputs, and the agreement between offline merging and merging at export.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cudakit/core/error.hpp"
#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/profiler/trace_merge.hpp"
#include "support/paths.hpp"

namespace cudakit::profiler {
namespace {

using graphs::KernelAnnotations;
using graphs::load_kernel_annotations;

std::string fixture(const char* name) {
  return testing::test_data_dir() + "/profiler/" + name;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The seed's Python loop, on parsed JSON: the reference the merge must equal.
nlohmann::json seed_merge(nlohmann::json trace, const nlohmann::json& annotations) {
  for (auto& event : trace["traceEvents"]) {
    if (!event.contains("args") || !event["args"].contains("graph node id")) continue;
    const std::string key = std::to_string(event["args"]["graph node id"].get<std::uint64_t>());
    if (!annotations.contains(key)) continue;
    for (const auto& ann : annotations[key]) event["args"].update(ann);
  }
  return trace;
}

// Checks that merge_trace_annotations throws InvalidArgumentError whose message contains `part`.
void expect_merge_error(const std::string& trace, const std::string& part) {
  try {
    (void)merge_trace_annotations(trace, {});
    FAIL() << "no error for " << trace;
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << part;
  }
}

TEST(ProfilerTraceMerge, MatchesTheSeedLoopOnTheRecordedFixture) {
  const std::string trace_text = read(fixture("replay_trace.json"));
  const KernelAnnotations annotations = load_kernel_annotations(fixture("replay_annotations.json"));
  const TraceMergeResult result = merge_trace_annotations(trace_text, annotations);

  const nlohmann::json expected = seed_merge(nlohmann::json::parse(trace_text),
                                             nlohmann::json::parse(read(fixture("replay_annotations.json"))));
  EXPECT_EQ(nlohmann::json::parse(result.json), expected);
  // 4 kernels and a memset of the graph, plus the eager memcpy whose node id is 0.
  EXPECT_EQ(result.graph_node_events, 6u);
  EXPECT_EQ(result.annotated_events, 5u);
}

TEST(ProfilerTraceMerge, AppliesTheRulesPerEvent) {
  const TraceMergeResult result = merge_trace_annotations(
      read(fixture("replay_trace.json")), load_kernel_annotations(fixture("replay_annotations.json")));
  const nlohmann::json merged = nlohmann::json::parse(result.json);
  const auto& events = merged["traceEvents"];
  auto args_of_node = [&](std::uint64_t node) -> const nlohmann::json& {
    for (const auto& e : events)
      if (e.contains("args") && e["args"].value("graph node id", std::uint64_t{0}) == node)
        return e["args"];
    throw std::runtime_error("node not in trace");
  };
  EXPECT_EQ(args_of_node(12884901889)["name"], "attention");
  EXPECT_FALSE(args_of_node(12884901889).contains("layer"));
  EXPECT_EQ(args_of_node(12884901891)["name"], "mlp");
  EXPECT_EQ(args_of_node(12884901891)["layer"], 3);
  // Two objects: the later one wins per key, keys only the earlier one has stay.
  EXPECT_EQ(args_of_node(12884901892)["name"], "mlp");
  EXPECT_EQ(args_of_node(12884901892)["scale"], 0.5);
  // The kernel's own fields are kept beside the annotation's.
  EXPECT_EQ(args_of_node(12884901892)["grid"], nlohmann::json::array({8, 8, 1}));
  EXPECT_EQ(args_of_node(12884901893)["note"], "zero the bias");
  // Events outside any graph, and events without args, are untouched.
  for (const auto& e : events) {
    if (e.value("name", "") == "eager_kernel()" || e.value("cat", "") == "cuda_runtime")
      EXPECT_FALSE(e["args"].contains("name")) << e.dump();
  }
  EXPECT_EQ(merged["baseTimeNanoseconds"], 1759300000000000000ull);
  EXPECT_EQ(merged["deviceProperties"][0]["name"], "NVIDIA H200");
}

TEST(ProfilerTraceMerge, AnnotationFieldsOverwriteTheEventsOwn) {
  // As the seed's event["args"].update(ann) does.
  const std::string trace =
      R"({"traceEvents":[{"ph":"X","args":{"graph node id":5,"stream":7}}]})";
  const TraceMergeResult result =
      merge_trace_annotations(trace, {{5, {{{"stream", std::string("mine")}}}}});
  EXPECT_EQ(nlohmann::json::parse(result.json)["traceEvents"][0]["args"]["stream"], "mine");
}

TEST(ProfilerTraceMerge, NamesWhatIsMalformed) {
  expect_merge_error("{\"traceEvents\": [", "trace:1:18: not valid JSON");
  expect_merge_error("[1, 2]", "top level is a array");
  expect_merge_error("{\"events\": []}", "no \"traceEvents\" key");
  expect_merge_error("{\"traceEvents\": {}}", "\"traceEvents\" is a object, expected an array");
  expect_merge_error(R"({"traceEvents": [{"ph":"X"}, 3]})", "traceEvents[1] is a number");
  expect_merge_error(R"({"traceEvents": [{"ph":"X"}, {"args": [1]}]})",
                     "traceEvents[1].args is a array, expected an object");
  expect_merge_error(R"({"traceEvents": [{"args": {"graph node id": "12"}}]})",
                     "traceEvents[0].args.\"graph node id\" is \"12\", expected an unsigned integer");
  expect_merge_error(R"({"traceEvents": [{"args": {"graph node id": -4}}]})",
                     "traceEvents[0].args.\"graph node id\" is -4");
}

TEST(ProfilerTraceMerge, FilesNameThePathAtFault) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cudakit_trace_merge_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out.json").string();
  const std::string bad = (dir / "bad_annotations.json").string();
  std::ofstream(bad) << R"({"12": [{"name": "x"}], "abc": []})";

  const TraceMergeResult ok = merge_trace_annotation_files(
      fixture("replay_trace.json"), fixture("replay_annotations.json"), out);
  EXPECT_EQ(nlohmann::json::parse(read(out)), nlohmann::json::parse(ok.json));

  try {
    (void)merge_trace_annotation_files(fixture("replay_trace.json"), bad, out);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ": key \"abc\": is not a graph node id"),
              std::string::npos) << e.what();
  }
  try {
    (void)merge_trace_annotation_files((dir / "missing.json").string(),
                                       fixture("replay_annotations.json"), out);
    FAIL();
  } catch (const FileError& e) {  // the system's refusal, not a bad argument
    EXPECT_NE(std::string(e.what()).find("cannot read " + (dir / "missing.json").string()),
              std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cudakit::profiler
