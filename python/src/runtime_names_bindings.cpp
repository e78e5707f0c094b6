// The rest of torch.cuda's names over what libcudakit has: initialization, capabilities, the
// synchronization debug mode, NVML telemetry, the cuBLAS handle, CUDA IPC collection, pinned
// host memory statistics, the default generators, pluggable allocators and TunableOp's offline
// tuning. The pure-Python package gives them torch's names (cudakit/_runtime.py and friends).

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/core/capabilities.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/lazy_init.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/core/telemetry.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/ipc/ipc_memory_export.hpp"
#include "cudakit/memory/host/pinned_host_allocator.hpp"
#include "cudakit/memory/pluggable_allocator.hpp"
#include "cudakit/random/default_generators.hpp"
#include "cudakit/random/generator.hpp"
#include "cudakit/tensor/blas_handle.hpp"
#include "cudakit/tunable/results_file.hpp"
#include "cudakit/tunable/tunable.hpp"

namespace cudakit::python {
namespace {

// torch's host_memory_stats keys where cudakit has the same quantity, and cudakit's own beside
// them (See the docstring of cudakit.memory.host_memory_stats).
nb::dict host_stats_dict(const memory::PinnedHostStats& s) {
  nb::dict d;
  d["allocated_bytes.current"] = s.allocated_bytes.current;
  d["allocated_bytes.peak"] = s.allocated_bytes.peak;
  d["reserved_bytes.current"] = s.reserved_bytes.current;
  d["reserved_bytes.peak"] = s.reserved_bytes.peak;
  d["allocation.current"] = s.allocated_blocks;
  d["allocation.allocated"] = s.num_allocations;
  d["num_host_alloc"] = s.num_host_allocs;
  d["num_host_free"] = s.num_host_frees;
  const auto durations = [&](const char* name, const memory::PinnedHostDuration& t) {
    const std::string prefix = name;
    d[(prefix + ".total").c_str()] = t.total_us;
    d[(prefix + ".max").c_str()] = t.max_us;
    d[(prefix + ".min").c_str()] = t.min_us;
    d[(prefix + ".count").c_str()] = t.count;
    d[(prefix + ".avg").c_str()] = t.average_us();
  };
  durations("host_alloc_time", s.host_alloc_time);
  durations("host_free_time", s.host_free_time);
  d["cached_bytes"] = s.cached_bytes;
  d["cached_blocks"] = s.cached_blocks;
  d["pending_bytes"] = s.pending_bytes;
  d["pending_blocks"] = s.pending_blocks;
  d["num_cache_hits"] = s.num_cache_hits;
  d["num_events_recorded"] = s.num_events_recorded;
  d["num_events_created"] = s.num_events_created;
  d["num_ooms"] = s.num_ooms;
  return d;
}

nb::list processes_list(const std::vector<GpuProcess>& processes) {
  nb::list out;
  for (const GpuProcess& p : processes) {
    nb::dict d;
    d["pid"] = p.pid;
    d["used_memory"] = p.used_memory ? nb::cast(*p.used_memory) : nb::object(nb::none());
    d["name"] = p.name;
    d["uses_cudakit"] = p.uses_cudakit ? nb::cast(*p.uses_cudakit) : nb::object(nb::none());
    out.append(d);
  }
  return out;
}

SyncDebugMode sync_mode_of(nb::handle mode) {
  if (PyLong_Check(mode.ptr()) && !PyBool_Check(mode.ptr())) {
    const long v = PyLong_AsLong(mode.ptr());
    if (v == 0) return SyncDebugMode::off;
    if (v == 1) return SyncDebugMode::warn;
    if (v == 2) return SyncDebugMode::error;
    throw nb::value_error(("set_sync_debug_mode: expected 0, 1 or 2 (or 'default', 'warn', 'error'), got " +
                           std::to_string(v)).c_str());
  }
  if (PyUnicode_Check(mode.ptr())) {
    const std::string name = nb::cast<std::string>(mode);
    // torch's name for "off".
    return name == "default" ? SyncDebugMode::off : parse_sync_debug_mode(name);
  }
  throw nb::type_error("set_sync_debug_mode: expected an int (0, 1, 2) or a str ('default', 'warn', 'error')");
}

}  // namespace

void bind_runtime_names(nb::module_& m) {
  m.def("init", &cudakit::init, "Initializes CUDA now (torch.cuda.init); otherwise the first call that needs it does.");
  m.def("is_initialized", &cudakit::is_initialized, "Whether cudakit's CUDA state has been initialized.");
  m.def("get_arch_list", &cudakit::get_arch_list, "The architectures libcudakit was compiled for ('sm_90', ...).");
  m.def("get_gencode_flags", &cudakit::get_gencode_flags,
        "The nvcc -gencode flags of those architectures ('-gencode arch=compute_90,code=sm_90 ...').");
  m.def("is_bf16_supported", [](bool including_emulation) { return cudakit::is_bf16_supported(including_emulation); },
        nb::arg("including_emulation") = true, "Whether the current device supports bfloat16 (natively, or emulated).");
  m.def("is_tf32_supported", [] { return cudakit::is_tf32_supported(); }, "Whether the current device has TF32 tensor cores.");

  m.def("set_sync_debug_mode", [](nb::handle mode) { cudakit::set_sync_debug_mode(sync_mode_of(mode)); },
        nb::arg("debug_mode"),
        "What a synchronizing call does: 0/'default' nothing, 1/'warn' warns, 2/'error' raises.");
  m.def("get_sync_debug_mode", [] { return static_cast<int>(cudakit::get_sync_debug_mode()); },
        "The synchronization debug mode: 0 (off), 1 (warn) or 2 (error).");

  m.def("device_memory_used", [](DeviceIndex d) { return cudakit::device_memory_used(d.value); },
        nb::arg("device") = nb::none(), "Bytes of device memory used, by every process and the driver (NVML).");
  m.def("memory_usage", [](DeviceIndex d) { return cudakit::memory_usage(d.value); }, nb::arg("device") = nb::none(),
        "Percent of the last sample period during which device memory was read or written (NVML).");
  m.def("utilization", [](DeviceIndex d) { return cudakit::utilization(d.value); }, nb::arg("device") = nb::none(),
        "Percent of the last sample period during which a kernel ran (NVML).");
  m.def("temperature", [](DeviceIndex d) { return cudakit::temperature(d.value); }, nb::arg("device") = nb::none(),
        "The GPU die's temperature, degrees Celsius (NVML).");
  m.def("power_draw", [](DeviceIndex d) { return cudakit::power_draw(d.value); }, nb::arg("device") = nb::none(),
        "The power draw, milliwatts (NVML).");
  m.def("clock_rate", [](DeviceIndex d) { return cudakit::clock_rate(d.value); }, nb::arg("device") = nb::none(),
        "The SM clock, MHz (NVML).");
  m.def("_list_gpu_processes", [](DeviceIndex d) { return processes_list(cudakit::list_gpu_processes(d.value)); },
        nb::arg("device") = nb::none(), "The processes on the device: [{'pid', 'used_memory', 'name', 'uses_cudakit'}].");

  m.def("current_blas_handle", [] { return reinterpret_cast<std::uintptr_t>(tensor::current_blas_handle()); },
        "The calling thread's cuBLAS handle (cublasHandle_t) as an address; it stays cudakit's.");
  m.def("_ipc_collect", &memory::ipc_collect, "Releases exported IPC blocks no process holds; returns how many.");

  m.def("_host_memory_stats", [] { return host_stats_dict(memory::pinned_host_allocator().stats()); });
  m.def("_reset_peak_host_memory_stats", [] { memory::pinned_host_allocator().reset_peak_stats(); });
  m.def("_reset_accumulated_host_memory_stats", [] { memory::pinned_host_allocator().reset_accumulated_stats(); });

  m.def("_default_generators", [] {
        nb::list out;
        for (int d = 0; d < cudakit::device_count(); ++d) {
          out.append(nb::cast(&random::default_cuda_generator(d), nb::rv_policy::reference));
        }
        return nb::tuple(out);
      }, "The default generator of each device (references: seeding one seeds the device's).");

  nb::class_<memory::PluggableAllocator>(m, "_PluggableAllocator")
      .def(nb::init<const std::string&, const std::string&, const std::string&>(), nb::arg("path_to_so_file"),
           nb::arg("alloc_fn_name"), nb::arg("free_fn_name"))
      .def_prop_ro("library_path", &memory::PluggableAllocator::library_path);
  m.def("_change_current_allocator", &memory::change_current_allocator, nb::arg("allocator"));

  m.def("_tunable_get_validators", [](DeviceIndex d) {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& v : tunable::get_validators(d.value)) out.emplace_back(v.name, v.value);
        return out;
      }, nb::arg("device") = nb::none());
  m.def("_tunable_tune_gemm_in_file", [](const std::string& untuned, const std::string& results) {
        return tunable::tune_gemm_in_file(untuned, results);
      }, nb::arg("filename"), nb::arg("results_filename") = "", nb::call_guard<nb::gil_scoped_release>());
  m.def("_tunable_mgpu_tune_gemm_in_file", [](const std::string& untuned, int devices, const std::string& results) {
        return tunable::mgpu_tune_gemm_in_file(untuned, devices, results);
      }, nb::arg("filename_pattern"), nb::arg("num_gpus") = 0, nb::arg("results_filename") = "",
      nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace cudakit::python
