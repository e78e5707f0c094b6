#pragma once
// @brief Offline merge of kernel annotations into a recorded Chrome trace (the seed's merge loop, as a
// library call and as `cudakit trace merge`): needs no GPU and no CUPTI.

#include <cstddef>
#include <string>
#include <string_view>

#include "cudakit/graphs/kernel_annotations.hpp"

namespace cudakit::profiler {

// What merge_trace_annotations produced, with counts for a summary.
struct TraceMergeResult {
  std::string json;                   // the merged trace
  std::size_t annotated_events = 0;   // events that received at least one field
  std::size_t graph_node_events = 0;  // events that carry a "graph node id"
};

// For every event of trace["traceEvents"] whose args carry a "graph node id" that is a key of
// `annotations`, applies the fields of that node's annotation objects to args in order (later
// objects win, and they overwrite the event's own fields), as the seed's
// `event["args"].update(ann)` does. Everything else in the trace is kept as it was.
// @throws InvalidArgumentError whose message names what is malformed: invalid JSON (with the
//         byte offset), a missing or non-array "traceEvents", the index of an event that is not
//         an object, whose "args" is not an object, or whose "graph node id" is not an
//         unsigned integer.
// `source` names the trace in messages (its path).
// @param trace_json the Chrome trace's text.
// @param annotations the annotations to apply.
// @param source the trace's name for messages.
// @return the merged trace and its counts.
[[nodiscard]] TraceMergeResult merge_trace_annotations(std::string_view trace_json,
                                                       const graphs::KernelAnnotations& annotations,
                                                       std::string_view source = "trace");

// The file form: reads TRACE and ANNOTATIONS, writes OUT.
// @param trace_path the Chrome trace to read.
// @param annotations_path the annotations file (load_kernel_annotations' form).
// @param output_path the file to write the merged trace to (replaced whole).
// @return the result, its `json` also written to `output_path`.
// @throws InvalidArgumentError whose message starts with the path of the file at fault.
// @throws FileError when a file cannot be read or written (naming it and why).
TraceMergeResult merge_trace_annotation_files(const std::string& trace_path,
                                              const std::string& annotations_path,
                                              const std::string& output_path);

}  // namespace cudakit::profiler
