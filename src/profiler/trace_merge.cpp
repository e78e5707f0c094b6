#include "cudakit/profiler/trace_merge.hpp"

#include <nlohmann/json.hpp>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/graphs/detail/annotation_json.hpp"

namespace cudakit::profiler {
namespace {

constexpr const char* kApi = "merge_trace_annotations";

[[noreturn]] void malformed(std::string_view source, std::string_view what) {
  throw InvalidArgumentError(kApi, cudakit::detail::concat(source, ": ", what));
}

TraceMergeResult merge(std::string_view trace_json, const graphs::KernelAnnotations& annotations,
                       std::string_view source) {
  nlohmann::json trace = cudakit::detail::parse_outside_json<nlohmann::json>(trace_json, source, kApi);
  if (!trace.is_object())
    malformed(source, cudakit::detail::concat("top level is a ", trace.type_name(),
                                              ", expected an object with \"traceEvents\""));
  const auto events = trace.find("traceEvents");
  if (events == trace.end()) malformed(source, "no \"traceEvents\" key");
  if (!events->is_array())
    malformed(source, cudakit::detail::concat("\"traceEvents\" is a ", events->type_name(),
                                              ", expected an array"));

  // Each node's fields, merged once (later annotation objects win), as JSON values.
  std::map<std::uint64_t, nlohmann::json> fields;
  for (const auto& [node, list] : annotations) {
    nlohmann::json merged = nlohmann::json::object();
    for (const auto& [key, value] : graphs::merged_annotation(annotations, node))
      merged[key] = graphs::detail::annotation_value_json(value);
    if (!merged.empty()) fields.emplace(node, std::move(merged));
  }

  TraceMergeResult result;
  for (std::size_t i = 0; i < events->size(); ++i) {
    nlohmann::json& event = (*events)[i];
    const auto where = [&](std::string_view what) {
      return cudakit::detail::concat("traceEvents[", i, "]", what);
    };
    if (!event.is_object())
      malformed(source, where(cudakit::detail::concat(" is a ", event.type_name(),
                                                       ", expected an object")));
    const auto args = event.find("args");
    if (args == event.end()) continue;
    if (!args->is_object())
      malformed(source, where(cudakit::detail::concat(".args is a ", args->type_name(),
                                                       ", expected an object")));
    const auto node = args->find("graph node id");
    if (node == args->end()) continue;
    if (!node->is_number_unsigned() && !(node->is_number_integer() && node->get<std::int64_t>() >= 0))
      malformed(source, where(cudakit::detail::concat(".args.\"graph node id\" is ",
                                                       node->dump(), ", expected an unsigned integer")));
    ++result.graph_node_events;
    const auto match = fields.find(node->get<std::uint64_t>());
    if (match == fields.end()) continue;
    args->update(match->second);
    ++result.annotated_events;
  }
  result.json = trace.dump();
  return result;
}

}  // namespace

TraceMergeResult merge_trace_annotations(std::string_view trace_json,
                                         const graphs::KernelAnnotations& annotations,
                                         std::string_view source) {
  return merge(trace_json, annotations, source);
}

TraceMergeResult merge_trace_annotation_files(const std::string& trace_path,
                                              const std::string& annotations_path,
                                              const std::string& output_path) {
  const graphs::KernelAnnotations annotations = graphs::load_kernel_annotations(annotations_path);
  TraceMergeResult result =
      merge(cudakit::detail::read_text_file(trace_path, kApi), annotations, trace_path);
  cudakit::detail::write_text_file(output_path, result.json, kApi);
  return result;
}

}  // namespace cudakit::profiler
