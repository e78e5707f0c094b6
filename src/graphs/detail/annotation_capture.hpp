#pragma once
// AnnotationCapture: the annotation bookkeeping of one capture with enable_annotations.
// See Note [Kernel annotations] in src/graphs/annotations.cpp.

#include <cuda_runtime_api.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cudakit/graphs/kernel_annotations.hpp"

namespace cudakit::graphs::detail {

class AnnotationCapture {
 public:
  // Becomes the calling thread's active annotated capture (of `stream`).
  explicit AnnotationCapture(cudaStream_t stream);
  // Stops being active (if still).
  ~AnnotationCapture();
  AnnotationCapture(const AnnotationCapture&) = delete;
  AnnotationCapture& operator=(const AnnotationCapture&) = delete;

  // Gives every node captured since the last call the regions open until now. mark_kernels
  // calls it at each region boundary, through the thread's active capture.
  void attribute_new_nodes() noexcept;
  // The last attribution, at capture end; the capture stops being active.
  void finish() noexcept;
  // Instantiates `graph` and records the annotations of the executable graph's nodes under the
  // ids of the current mechanism. `flags`: cudaGraphInstantiateFlags bits (InstantiateOptions).
  // @throws CudaError from cudaGraphInstantiateWithFlags.
  cudaGraphExec_t instantiate(cudaGraph_t graph, unsigned long long flags);

  [[nodiscard]] std::size_t annotated_nodes() const noexcept { return annotated_.size(); }

  // The calling thread's active annotated capture, or nullptr.
  [[nodiscard]] static AnnotationCapture* active() noexcept;

 private:
  cudaStream_t stream_;
  std::unordered_set<cudaGraphNode_t> seen_;
  std::unordered_map<cudaGraphNode_t, std::vector<Annotation>> annotated_;
};

}  // namespace cudakit::graphs::detail
