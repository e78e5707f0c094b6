#pragma once
// The seed's end-to-end workflow in C++ (torch.cuda.graph_annotations): capture a graph with
// annotated regions, profile one replay, export the trace, join the annotations to it by graph
// node id, and see which region each kernel belongs to. `cudakit demo` runs it;
// examples/graph_annotations.cpp is the same as a program of its own.

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <ostream>
#include <string>
#include <variant>

#include "cudakit/core/device.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/graphs/kernel_annotation_registry.hpp"
#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/graphs/kernel_annotation_scope.hpp"
#include "cudakit/profiler/profiler.hpp"
#include "cudakit/profiler/trace_merge.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/matmul.hpp"

namespace cudakit::examples {

inline std::string describe(const graphs::Annotation& a) {
  std::string out;
  for (const auto& [key, value] : a) {
    if (!out.empty()) out += ", ";
    out += key + ": ";
    std::visit([&](const auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) out += v;
      else out += std::to_string(v);
    }, value);
  }
  return out.empty() ? "(none)" : out;
}

// Writes trace.json, annotations.json and trace_annotated.json into `out_dir` and prints the
// kernels of the replay per annotation. Returns 0, or 1 if a replayed kernel lacks its region.
inline int run_graph_annotations(const std::filesystem::path& out_dir, std::ostream& out) {
  using tensor::matmul;
  using tensor::relu;
  std::filesystem::create_directories(out_dir);
  const tensor::TensorOptions on_gpu{tensor::DType::float32, tensor::Device::cuda()};
  tensor::Tensor x = random::randn({1024, 1024}, on_gpu);

  // Warm-up: lazy initialization (cuBLAS handles, workspaces) must not land in the capture.
  tensor::Tensor y = matmul(x, x.t());
  tensor::Tensor z = matmul(relu(y), x);
  synchronize();

  graphs::Graph g;
  {
    graphs::GraphCapture capture(g, {.enable_annotations = true});
    {
      graphs::mark_kernels attention("attention");
      y = matmul(x, x.t());
    }
    {
      graphs::mark_kernels mlp({{"name", "mlp"}, {"layer", 3}});
      z = matmul(relu(y), x);
    }
  }

  profiler::Profiler prof;
  g.replay();
  synchronize();
  prof.stop();

  const graphs::KernelAnnotations annotations = graphs::get_kernel_annotations();
  const auto trace = (out_dir / "trace.json").string();
  const auto saved = (out_dir / "annotations.json").string();
  const auto annotated = (out_dir / "trace_annotated.json").string();
  prof.export_chrome_trace(trace);
  graphs::save_kernel_annotations(saved, annotations);
  const auto merged = profiler::merge_trace_annotation_files(trace, saved, annotated);

  struct Row { int kernels = 0; double us = 0; std::map<std::string, int> names; };
  std::map<std::string, Row> by_region;
  int unannotated = 0;
  for (const auto& k : prof.events().kernels) {
    if (k.graph_node_id == 0) continue;  // not from the replay
    const std::string region = describe(graphs::merged_annotation(annotations, k.graph_node_id));
    if (region == "(none)") ++unannotated;
    Row& row = by_region[region];
    ++row.kernels;
    row.us += static_cast<double>(k.end_ns - k.start_ns) / 1000.0;
    ++row.names[k.name.substr(0, 60)];
  }
  out << "Graph replay profiled with " << annotations.size() << " annotated node(s) (mechanism: "
      << graphs::to_string(graphs::annotation_mechanism()) << "); "
      << merged.annotated_events << " trace event(s) annotated.\n\n"
      << std::left << std::setw(28) << "annotation" << std::right << std::setw(9) << "kernels"
      << std::setw(12) << "GPU us" << "   kernel names\n";
  for (const auto& [region, row] : by_region) {
    out << std::left << std::setw(28) << region << std::right << std::setw(9) << row.kernels
        << std::setw(12) << std::fixed << std::setprecision(1) << row.us << "   ";
    bool first = true;
    for (const auto& [name, n] : row.names) {
      out << (first ? "" : "; ") << name << (n > 1 ? " x" + std::to_string(n) : "");
      first = false;
    }
    out << "\n";
  }
  out << "\nWrote " << trace << ", " << saved << " and " << annotated
      << " (open the last in Perfetto: each kernel shows its region in its args).\n";
  return unannotated == 0 && !by_region.empty() ? 0 : 1;
}

}  // namespace cudakit::examples
