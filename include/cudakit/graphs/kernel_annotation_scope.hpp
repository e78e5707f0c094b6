#pragma once
// @brief KernelAnnotationScope (torch: mark_kernels): a RAII region of a graph capture whose kernel, memcpy and memset nodes receive
// an annotation (torch.cuda.graph_annotations.mark_kernels).
//
//   graphs::mark_kernels attention("attention");                   // {"name": "attention"}
//   graphs::mark_kernels mlp({{"name", "mlp"}, {"layer", 3}});
//
// Regions nest: a node gets one annotation object per enclosing region, outermost first, so
// merging them (merged_annotation) lets the inner region win per key and keeps the
// outer region's other keys. Regions are per thread. Outside a capture with annotations enabled
// a region is allowed and records nothing.

#include <initializer_list>
#include <string>
#include <vector>

#include "cudakit/graphs/kernel_annotations.hpp"

namespace cudakit::graphs {

// A region of the calling thread: the graph nodes captured while it is open get its annotation. Not
// copyable or movable: it belongs to its scope, and regions must close in reverse order of opening.
class KernelAnnotationScope {
 public:
  // {"name": name}.
  // @param name the annotation's "name" field.
  explicit KernelAnnotationScope(std::string name);
  // An annotation of several fields.
  // @param fields the annotation object.
  explicit KernelAnnotationScope(Annotation fields);
  // mark_kernels({{"name", "mlp"}, {"layer", 3}}): preferred over the overloads above for a
  // braced list, which a one-pair list would otherwise make ambiguous.
  // @param fields the annotation's key-value pairs.
  KernelAnnotationScope(std::initializer_list<Annotation::value_type> fields);
  // Closes the region: nodes captured from now on no longer get its annotation.
  ~KernelAnnotationScope();
  // Not copyable: a region is opened and closed once.
  KernelAnnotationScope(const KernelAnnotationScope&) = delete;
  // Not copyable: a region is opened and closed once.
  KernelAnnotationScope& operator=(const KernelAnnotationScope&) = delete;

 private:
  void enter(Annotation fields);
};
// torch's name (`with torch.cuda.graph_annotations.mark_kernels(...)`), kept by the naming rule
// (docs/ARCHITECTURE.md, "Naming").
using mark_kernels = KernelAnnotationScope;

// The calling thread's open regions, outermost first (what a node captured now would get).
// @return the regions; the reference is valid until the thread opens or closes a region.
[[nodiscard]] const std::vector<Annotation>& current_regions() noexcept;
// Those regions merged: inner regions win per key.
// @return the merged annotation; empty outside every region.
[[nodiscard]] Annotation current_annotation();

}  // namespace cudakit::graphs
