// NVTX ranges and marks in cudakit's domain (torch.cuda.nvtx's names); they reach the trace
// hooks too, where cudakit's profiler records them.

#include <nanobind/stl/string.h>

#include <string>

#include "common.hpp"
#include "cudakit/nvtx/ranges.hpp"

namespace cudakit::python {

void bind_nvtx(nb::module_& m) {
  m.def("_nvtx_range_push", [](const std::string& msg) { nvtx::range_push(msg.c_str()); }, nb::arg("msg"));
  m.def("_nvtx_range_pop", [] { nvtx::range_pop(); });
  m.def("_nvtx_range_start", [](const std::string& msg) { return nvtx::range_start(msg.c_str()); }, nb::arg("msg"));
  m.def("_nvtx_range_end", [](nvtx::RangeId id) { nvtx::range_end(id); }, nb::arg("range_id"));
  m.def("_nvtx_mark", [](const std::string& msg) { nvtx::mark(msg.c_str()); }, nb::arg("msg"));
}

}  // namespace cudakit::python
