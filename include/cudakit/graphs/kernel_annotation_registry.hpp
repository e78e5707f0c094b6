#pragma once
// @brief The process-wide registry of graph kernel annotations (torch.cuda.graph_annotations'
// get_kernel_annotations and friends), and the mechanism that finds each node's id.
//
// Keys are the "graph node id" the profiler reports for the replayed kernel, memcpy or memset
// (CUPTI activity records' graphNodeId): one entry per node of every instantiation of a graph
// captured with enable_annotations. See Note [Kernel annotations] in src/graphs/annotations.cpp.

#include <optional>
#include <string>

#include "cudakit/graphs/kernel_annotations.hpp"

namespace cudakit::graphs {

// How an instantiation learns the node ids its annotations are keyed by.
enum class AnnotationMechanism {
  // cuGraphNodeGetToolsId on the executable graph's nodes (CUDA >= 13.1 drivers).
  tools_id,
  // CUPTI's node ids (cuptiGetGraphNodeId) of the executable graph's nodes, found through the
  // node-cloned callback of instantiation (any driver CUPTI supports, 13.0 included). Kernel
  // nodes only: memset and memcpy nodes are rebuilt after cloning, under ids the callback does
  // not reveal (See Note [Kernel annotations]).
  cupti,
  // No way to learn node ids: annotations record nothing (CUPTI could not be loaded).
  none,
};
// @param mechanism a mechanism.
// @return its name as CUDAKIT_ANNOTATIONS_MECHANISM spells it ("tools_id", "cupti", "none").
[[nodiscard]] const char* to_string(AnnotationMechanism mechanism) noexcept;

// The mechanism instantiations use now: the one set_annotation_mechanism forced, else the one
// CUDAKIT_ANNOTATIONS_MECHANISM names (tools_id, cupti, none or auto), else the best available.
// @return the mechanism in force.
[[nodiscard]] AnnotationMechanism annotation_mechanism();
// Forces `mechanism` (nullopt: back to automatic). Annotations recorded so far are kept.
// Applies to instantiations from now on; process-wide and thread-safe.
// @param mechanism the mechanism to force, or nullopt.
// @throws StateError when the mechanism cannot work here (no tools ids, no CUPTI).
void set_annotation_mechanism(std::optional<AnnotationMechanism> mechanism);
// True when captures with enable_annotations record anything (mechanism != none): torch's
// graph_annotations.is_available(), named apart from cudakit::is_available() (is there a device).
// @return whether the mechanism in force is not `none`.
[[nodiscard]] bool annotations_available();

// A copy of every annotation recorded so far. Thread-safe.
// @return node id -> that node's annotations.
[[nodiscard]] KernelAnnotations get_kernel_annotations();
// Forgets them. Thread-safe.
void clear_kernel_annotations();
// The registry in the JSON form beside a trace: save_kernel_annotations(path,
// get_kernel_annotations()), the overload of kernel_annotations.hpp.
// @param path the file to write (replaced whole).
// @throws FileError when the file cannot be written (naming it and why).
void save_kernel_annotations(const std::string& path);

}  // namespace cudakit::graphs
