// cudakit._cudakit: the extension module. Each area's bindings live in a file of their own; the
// pure-Python package `cudakit` arranges them under torch.cuda's names.

#include <nanobind/nanobind.h>

#include <charconv>

#include "common.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/gds/io_error.hpp"

namespace cudakit::python {

bool parse_cuda_device(std::string_view text, int& out) noexcept {
  if (text == "cuda") {
    out = -1;
    return true;
  }
  if (!text.starts_with("cuda:")) return false;
  text.remove_prefix(5);
  int index = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (error != std::errc{} || end != text.data() + text.size() || index < 0) return false;
  out = index;
  return true;
}

std::uintptr_t protocol_stream_value(cudaStream_t handle) noexcept {
  // cudakit's default stream is the null handle, which the runtime (built without per-thread
  // default streams) takes as the legacy default stream: DLPack's 1.
  if (handle == nullptr || handle == cudaStreamLegacy) return 1;
  if (handle == cudaStreamPerThread) return 2;
  return reinterpret_cast<std::uintptr_t>(handle);
}

}  // namespace cudakit::python

NB_MODULE(_cudakit, m) {
  namespace nb = nanobind;
  using namespace cudakit::python;
  m.doc() = "cudakit's C++ runtime (libcudakit) bound for Python; use the `cudakit` package.";

  // torch.cuda.OutOfMemoryError is a RuntimeError; so are cudakit's CUDA and NVRTC errors. Bad
  // arguments (InvalidArgumentError, a std::invalid_argument) become ValueError, as nanobind maps
  // the standard exceptions.
  nb::exception<cudakit::OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError);
  nb::exception<cudakit::CudaError>(m, "CudaError", PyExc_RuntimeError);
  nb::exception<cudakit::NvrtcError>(m, "NvrtcError", PyExc_RuntimeError);
  nb::exception<cudakit::StateError>(m, "StateError", PyExc_RuntimeError);
  // NCCL's failures (a refused call, a watchdog timeout, an unreachable store) and cuFile's are
  // RuntimeErrors too; a file that cannot be opened, read or written is an OSError, as Python's
  // own I/O raises. SanitizerError, which carries its report, is made in sanitizer_bindings.cpp.
  nb::exception<cudakit::NcclError>(m, "NcclError", PyExc_RuntimeError);
  nb::exception<cudakit::gds::IoError>(m, "IoError", PyExc_OSError);
  nb::exception<cudakit::FileError>(m, "FileError", PyExc_OSError);
  nb::exception<cudakit::gds::CuFileError>(m, "CuFileError", PyExc_RuntimeError);

  // A bound function that does nothing: the benchmark's measure of the binding's own call cost.
  m.def("_noop", [] {});

  bind_core(m);
  bind_memory(m);
  bind_array(m);
  bind_dlpack(m);
  bind_random(m);
  bind_graphs(m);
  bind_annotations(m);
  bind_profiler(m);
  bind_nvtx(m);
  bind_jiterator(m);
  bind_tunable(m);
  bind_matmul(m);
  bind_sanitizer(m);
  bind_nccl(m);
  bind_gds(m);
  bind_green_contexts(m);
  bind_torch_allocator(m);
  bind_runtime_names(m);
}
