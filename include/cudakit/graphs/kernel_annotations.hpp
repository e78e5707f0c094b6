#pragma once
// @brief KernelAnnotations: the user metadata attached to graph nodes (graph kernel annotations),
// keyed by the "graph node id" the profiler reports for each replayed kernel, memcpy and memset.
// The graph layer produces it (get_kernel_annotations(), kernel_annotation_registry.hpp), the
// profiler merges it into exported traces, and `cudakit trace merge` reads it from a file.
//
// JSON form (the one the seed describes for saving annotations beside a trace): an object whose
// keys are node ids as decimal strings and whose values are lists of annotation objects, e.g.
//   {"17": [{"name": "attention"}], "18": [{"name": "mlp", "layer": 3}]}
// Annotation values are strings, integers or floating-point numbers; anything else (booleans,
// null, arrays, nested objects) is rejected when read, so every reader sees the same types.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cudakit::graphs {

// One annotation field's value: a string, an integer or a floating-point number.
using AnnotationValue = std::variant<std::string, std::int64_t, double>;
// One annotation object: {"name": "mlp", "layer": 3}.
using Annotation = std::map<std::string, AnnotationValue>;
// Node id -> the annotations of that node, outermost scope first. When merged into a trace
// event, the fields of every object are applied in order, so later objects win per key.
using KernelAnnotations = std::map<std::uint64_t, std::vector<Annotation>>;

// The JSON text of `annotations` (compact, keys in node-id order).
// @param annotations the annotations to write.
// @return the JSON text.
[[nodiscard]] std::string kernel_annotations_to_json(const KernelAnnotations& annotations);
// Parses the JSON form.
// @throws InvalidArgumentError naming the offending key (and list index) when the text is not
//         JSON, the top level is not an object, a key is not a decimal uint64, a value is not a
//         list of objects, or an annotation value is not a string or number.
// @param json the text.
// @return the annotations.
[[nodiscard]] KernelAnnotations kernel_annotations_from_json(std::string_view json);

// File forms of the two above; save_kernel_annotations(path) saves the registry's.
// Writes `annotations` to `path` as JSON, replacing the file.
// @param path the file to write.
// @param annotations the annotations.
// @throws FileError when the file cannot be written (naming it and why).
void save_kernel_annotations(const std::string& path, const KernelAnnotations& annotations);
// Reads annotations in the JSON form, as save_kernel_annotations writes them.
// @param path the file to read.
// @return the annotations.
// @throws FileError when the file cannot be read (naming it and why).
// @throws InvalidArgumentError as kernel_annotations_from_json, with the path in place of
//         "annotations", or when the file is over the input size limit or holds a NUL byte.
[[nodiscard]] KernelAnnotations load_kernel_annotations(const std::string& path);

// The fields a trace event of node `node_id` receives: every annotation object of the node,
// applied in order (later objects win). Empty when the node has none.
// @param annotations the annotations to look in.
// @param node_id the node's id, as the profiler reports it.
// @return the merged fields.
[[nodiscard]] Annotation merged_annotation(const KernelAnnotations& annotations,
                                           std::uint64_t node_id);

}  // namespace cudakit::graphs
