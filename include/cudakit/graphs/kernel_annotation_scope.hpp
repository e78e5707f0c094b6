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

class KernelAnnotationScope {
 public:
  // {"name": name}.
  explicit KernelAnnotationScope(std::string name);
  explicit KernelAnnotationScope(Annotation fields);
  // mark_kernels({{"name", "mlp"}, {"layer", 3}}): preferred over the overloads above for a
  // braced list, which a one-pair list would otherwise make ambiguous.
  KernelAnnotationScope(std::initializer_list<Annotation::value_type> fields);
  ~KernelAnnotationScope();
  KernelAnnotationScope(const KernelAnnotationScope&) = delete;
  KernelAnnotationScope& operator=(const KernelAnnotationScope&) = delete;

 private:
  void enter(Annotation fields);
};
// torch's name (`with torch.cuda.graph_annotations.mark_kernels(...)`), kept by the naming rule
// (docs/ARCHITECTURE.md, "Naming").
using mark_kernels = KernelAnnotationScope;

// The calling thread's open regions, outermost first (what a node captured now would get).
[[nodiscard]] const std::vector<Annotation>& current_regions() noexcept;
// Those regions merged: inner regions win per key.
[[nodiscard]] Annotation current_annotation();

}  // namespace cudakit::graphs
