// The CUPTI profiler (start/stop, Chrome/Perfetto trace export, key averages) and
// cudaProfilerStart/Stop.

#include <nanobind/stl/string.h>

#include <string>

#include "common.hpp"
#include "cudakit/profiler/cuda_profiler_api.hpp"
#include "cudakit/profiler/profiler.hpp"

namespace cudakit::python {

void bind_profiler(nb::module_& m) {
  using profiler::Profiler;
  nb::class_<Profiler>(m, "Profiler", "CUPTI activity tracing; export_chrome_trace writes what chrome://tracing and Perfetto read.")
      .def("__init__", [](Profiler* self, bool kernels, bool memory_ops, bool runtime, bool synchronization, bool start) {
            new (self) Profiler(profiler::ProfilerOptions{.kernels = kernels, .memory_ops = memory_ops,
                                                          .runtime = runtime, .synchronization = synchronization},
                                start);
          }, nb::arg("kernels") = true, nb::arg("memory_ops") = true, nb::arg("runtime") = true,
          nb::arg("synchronization") = true, nb::arg("start") = false)
      .def("start", &Profiler::start)
      .def("stop", &Profiler::stop, nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("is_running", &Profiler::is_running)
      .def("clear", &Profiler::clear)
      .def("export_chrome_trace", [](const Profiler& p, const std::string& path) { p.export_chrome_trace(path); },
           nb::arg("path"))
      .def("key_averages_table", &Profiler::key_averages_table, nb::arg("row_limit") = 0);
  m.def("_cuda_profiler_start", &profiler::start, "cudaProfilerStart (torch.cuda.profiler.start).");
  m.def("_cuda_profiler_stop", &profiler::stop, "cudaProfilerStop (torch.cuda.profiler.stop).");
}

}  // namespace cudakit::python
