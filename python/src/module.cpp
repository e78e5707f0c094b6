// cudakit._cudakit: the extension module. Each area's bindings live in a file of their own; the
// pure-Python package `cudakit` arranges them under torch.cuda's names.

#include <nanobind/nanobind.h>

#include <nanobind/stl/string.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <string>

#include "common.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/lazy_init.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/gds/io_error.hpp"
#include "cudakit/jiterator/nvrtc_error.hpp"
#include "cudakit/nccl/nccl_error.hpp"

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

namespace {

// Note [A bound call over its C++ call]
// The target for the bindings is a bound call at most 0.1 us over the C++ call it makes. The
// benchmark times the bound function from Python and the same C++ function in a C++ loop here,
// in one process, and reports the difference. The loop keeps each result (an empty asm that
// claims to read it), so the compiler can neither drop the call nor hoist it out of the loop.
template <class F>
double cpp_call_us(F&& call, std::int64_t n) {
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < n; ++i) {
    auto result = call();
    asm volatile("" : : "g"(&result) : "memory");
  }
  const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(n);
}

double time_cpp_call(const std::string& name, std::int64_t n) {
  if (n <= 0) throw nb::value_error(("_cpp_call_us: n must be positive, got " + std::to_string(n)).c_str());
  if (name == "current_device") return cpp_call_us([] { return cudakit::current_device(); }, n);
  if (name == "get_sync_debug_mode") return cpp_call_us([] { return cudakit::get_sync_debug_mode(); }, n);
  if (name == "is_initialized") return cpp_call_us([] { return cudakit::is_initialized(); }, n);
  throw nb::value_error(("_cpp_call_us: no C++ call named '" + name +
                         "' (current_device, get_sync_debug_mode, is_initialized)").c_str());
}

}  // namespace

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
  // The C++ side of the same measure (Note [A bound call over its C++ call]).
  m.def("_cpp_call_us", &time_cpp_call, nb::arg("name"), nb::arg("n"),
        "Microseconds per call of the C++ function behind the binding `name`, over `n` calls in a C++ loop.");

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
