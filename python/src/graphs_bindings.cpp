// CUDA graphs: torch.cuda.CUDAGraph (capture_begin/capture_end/replay/reset/pool), the pool
// handle, and whether the current stream is capturing. The `graph` context manager is Python.

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "common.hpp"
#include "cudakit/graphs/capture_status.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/random/generator.hpp"

namespace cudakit::python {
namespace {

using graphs::CaptureErrorMode;
using graphs::Graph;

CaptureErrorMode parse_capture_error_mode(const std::string& mode) {
  if (mode == "global") return CaptureErrorMode::global;
  if (mode == "thread_local") return CaptureErrorMode::thread_local_;
  if (mode == "relaxed") return CaptureErrorMode::relaxed;
  throw nb::value_error(("capture_error_mode: expected 'global', 'thread_local' or 'relaxed', got '" + mode + "'").c_str());
}

memory::PoolId parse_pool(nb::handle pool) {
  if (pool.is_none()) return {};
  if (nb::hasattr(pool, "id") && !nb::isinstance<nb::tuple>(pool)) pool = pool.attr("id");  // a MemPool
  const auto [first, second] = nb::cast<std::pair<std::uint64_t, std::uint64_t>>(pool);
  return memory::PoolId{first, second};
}

std::pair<std::uint64_t, std::uint64_t> pool_tuple(memory::PoolId id) { return {id.first, id.second}; }

}  // namespace

void bind_graphs(nb::module_& m) {
  // dynamic_attr: `cudakit.graph` keeps what the capture needs alive on the graph object (torch's
  // memory pool when torch's kernels were captured).
  nb::class_<Graph>(m, "CUDAGraph", nb::dynamic_attr(),
                    "torch.cuda.CUDAGraph: a captured CUDA graph, replayed on a stream.")
      .def(nb::init<bool>(), nb::arg("keep_graph") = false,
           "keep_graph=True: capture_end does not instantiate; instantiate() or the first replay() does.")
      .def("capture_begin", [](Graph& g, nb::handle pool, const std::string& mode, bool annotations) {
            g.capture_begin(parse_pool(pool), parse_capture_error_mode(mode), annotations);
          }, nb::arg("pool").none() = nb::none(), nb::arg("capture_error_mode") = "global",
          nb::arg("enable_annotations") = false,
          "Starts capturing the current stream (which must not be the legacy default stream).")
      .def("capture_end", &Graph::capture_end)
      .def("_capture_abort", &Graph::capture_abort)
      .def("instantiate", &Graph::instantiate)
      .def("replay", [](Graph& g, const PyStream* s) { g.replay(optional_stream(s)); }, nb::arg("stream").none() = nb::none())
      .def("reset", &Graph::reset)
      .def("pool", [](const Graph& g) { return pool_tuple(g.pool()); })
      .def("is_capturing", &Graph::is_capturing)
      .def("is_instantiated", &Graph::is_instantiated)
      .def_prop_ro("device_index", &Graph::device)
      .def("register_generator_state", [](Graph& g, random::Generator& gen) { g.register_generator_state(gen); },
           nb::arg("generator"), "Each replay draws fresh numbers from `generator`.")
      .def("debug_dump", [](const Graph& g, const std::string& path) { g.debug_dump(path); }, nb::arg("debug_path"),
           "Writes the captured graph as Graphviz DOT (cudaGraphDebugDotPrint).")
      .def("enable_debug_mode", [](Graph&) {},
           "torch's switch to keep the captured graph for debug_dump; cudakit always keeps it, so this does nothing.")
      .def("raw_cuda_graph", [](const Graph& g) { return reinterpret_cast<std::uintptr_t>(g.ref().graph()); },
           "The captured cudaGraph_t as an address (0 before a capture), valid until reset().")
      .def("raw_cuda_graph_exec", [](const Graph& g) { return reinterpret_cast<std::uintptr_t>(g.ref().exec()); },
           "The executable cudaGraphExec_t as an address (0 before instantiation), valid until reset().");
  m.def("graph_pool_handle", [] { return pool_tuple(graphs::graph_pool_handle()); },
        "A new pool id for captures to share (pass it as pool=).");
  m.def("is_current_stream_capturing", &graphs::is_current_stream_capturing,
        "Whether the current stream is capturing a graph.");
}

}  // namespace cudakit::python
