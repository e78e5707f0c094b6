// The caching allocator: torch.cuda.memory's functions, MemPool and the scope behind
// `with cudakit.use_mem_pool(pool):`, history and snapshots.

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <dlfcn.h>

#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/mem_pool.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::python {
namespace {

using namespace cudakit::memory;

nb::object nested_to_python(const NestedStats& stats) {
  if (stats.is_leaf()) return nb::int_(stats.value());
  nb::dict d;
  for (const auto& [name, child] : stats.children()) d[nb::str(name.c_str())] = nested_to_python(child);
  return d;
}

std::pair<std::uint64_t, std::uint64_t> pool_tuple(PoolId id) { return {id.first, id.second}; }

// The functions of a CUDAPluggableAllocator's library, for MemPool(allocator=...). The library
// stays loaded for the rest of the process: the pool's memory may be freed until exit.
std::pair<UserAllocFn, UserFreeFn> user_functions(const std::string& path, const std::string& alloc_name,
                                                  const std::string& free_name) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw nb::value_error(("MemPool(allocator=...): cannot load '" + path + "': " + (why ? why : "unknown error")).c_str());
  }
  void* alloc_fn = dlsym(library, alloc_name.c_str());
  void* free_fn = dlsym(library, free_name.c_str());
  if (alloc_fn == nullptr || free_fn == nullptr) {
    throw nb::value_error(("MemPool(allocator=...): '" + path + "' has no function '" +
                           (alloc_fn == nullptr ? alloc_name : free_name) + "'").c_str());
  }
  return {reinterpret_cast<UserAllocFn>(alloc_fn), reinterpret_cast<UserFreeFn>(free_fn)};
}

// `with cudakit.use_mem_pool(pool):` — a MemPoolContext from __enter__ to __exit__.
class MemPoolScope {
 public:
  void enter(MemPool& pool) { context_.emplace(pool); }
  void exit() { context_.reset(); }

 private:
  std::optional<MemPoolContext> context_;
};

}  // namespace

void bind_memory(nb::module_& m) {
  m.def("memory_allocated", [](DeviceIndex d) { return memory_allocated(d.value); }, nb::arg("device") = nb::none(),
        "Bytes the caching allocator has handed out on `device` and not yet taken back.");
  m.def("max_memory_allocated", [](DeviceIndex d) { return max_memory_allocated(d.value); }, nb::arg("device") = nb::none(),
        "The peak of memory_allocated since the start or reset_peak_memory_stats.");
  m.def("memory_reserved", [](DeviceIndex d) { return memory_reserved(d.value); }, nb::arg("device") = nb::none(),
        "Bytes the caching allocator holds from the driver on `device` (allocated and cached).");
  m.def("max_memory_reserved", [](DeviceIndex d) { return max_memory_reserved(d.value); }, nb::arg("device") = nb::none(),
        "The peak of memory_reserved since the start or reset_peak_memory_stats.");
  m.def("memory_stats", [](DeviceIndex d) { return memory_stats(d.value).to_map(); }, nb::arg("device") = nb::none(),
        "torch.cuda.memory_stats(): flat keys ('allocated_bytes.all.current', 'num_ooms', ...).");
  m.def("memory_stats_as_nested_dict", [](DeviceIndex d) { return nested_to_python(memory_stats_as_nested_dict(d.value)); },
        nb::arg("device") = nb::none(),
        "memory_stats as torch's nested dict ({'allocated_bytes': {'all': {'current': ...}}}).");
  m.def("memory_summary", [](DeviceIndex d, bool) { return memory_summary(d.value); },
        nb::arg("device") = nb::none(), nb::arg("abbreviated") = false,
        "A readable table of the allocator's statistics (`abbreviated` is accepted for torch's signature).");
  m.def("reset_peak_memory_stats", [](DeviceIndex d) { reset_peak_memory_stats(d.value); }, nb::arg("device") = nb::none(),
        "Sets every peak statistic of `device` to its current value.");
  m.def("reset_accumulated_memory_stats", [](DeviceIndex d) { reset_accumulated_memory_stats(d.value); },
        nb::arg("device") = nb::none(),
        "Zeroes the counters of `device` (allocations, frees, retries, OOMs).");
  m.def("empty_cache", &empty_cache, nb::call_guard<nb::gil_scoped_release>(),
        "Returns cached, unused memory of every device to the driver.");
  m.def("set_per_process_memory_fraction", [](double f, DeviceIndex d) { set_per_process_memory_fraction(f, d.value); },
        nb::arg("fraction"), nb::arg("device") = nb::none(),
        "Limits reserved memory on `device` to fraction * its total memory (0 < fraction <= 1).");
  m.def("get_per_process_memory_fraction", [](DeviceIndex d) { return get_per_process_memory_fraction(d.value); },
        nb::arg("device") = nb::none(),
        "The limit set_per_process_memory_fraction set (1.0: none).");
  m.def("_set_allocator_settings", [](const std::string& s) { set_allocator_settings(s); }, nb::arg("settings"));
  m.def("get_allocator_backend", &get_allocator_backend,
        "'native' (cudakit's caching allocator), 'cudaMallocAsync' or 'pluggable'.");
  m.def("caching_allocator_alloc", [](std::size_t size, DeviceIndex d, const PyStream* s) {
        OptionalStream stream = optional_stream(s);
        if (!stream && d.value >= 0) stream = cudakit::current_stream(d.value);
        return reinterpret_cast<std::uintptr_t>(allocate(size, stream));
      }, nb::arg("size"), nb::arg("device") = nb::none(), nb::arg("stream") = nb::none(),
      "Device memory from the caching allocator, as an address (torch.cuda.caching_allocator_alloc).");
  m.def("caching_allocator_delete", [](std::uintptr_t ptr) { deallocate(reinterpret_cast<void*>(ptr)); },
        nb::arg("mem_ptr"),
        "Frees memory caching_allocator_alloc returned (its address).");

  m.def("_record_memory_history",
        [](std::optional<std::string> enabled, std::optional<std::string> context, const std::string& stacks,
           std::size_t max_entries, DeviceIndex d, bool clear_history, std::vector<std::string> skip_actions) {
          MemoryHistoryOptions options;
          options.enabled = MemoryHistoryOptions::parse_enabled(enabled);
          options.context = MemoryHistoryOptions::parse_context(context);
          options.stacks = MemoryHistoryOptions::parse_stacks(stacks);
          options.max_entries = max_entries;
          options.clear_history = clear_history;
          options.skip_actions = std::move(skip_actions);
          // Python frames are the extension's (See Note [Python frames in memory history]).
          record_memory_history(options, d.value, history_frames(stacks));
        },
        nb::arg("enabled").none() = "all", nb::arg("context").none() = "all", nb::arg("stacks") = "all",
        nb::arg("max_entries") = std::numeric_limits<std::size_t>::max(), nb::arg("device") = nb::none(),
        nb::arg("clear_history") = false, nb::arg("skip_actions") = std::vector<std::string>{},
        "torch.cuda.memory._record_memory_history: enabled None turns recording off.");
  m.def("_snapshot_json", [](DeviceIndex d) { return snapshot_to_json(memory_snapshot(d.value)); },
        nb::arg("device") = nb::none());
  m.def("_dump_snapshot", [](const std::string& path, DeviceIndex d) { dump_snapshot(path, d.value); },
        nb::arg("filename") = "dump_snapshot.json", nb::arg("device") = nb::none(),
        "Writes the snapshot as JSON (`cudakit memviz FILE -o memory.html` draws it).");

  nb::class_<MemPool>(m, "_MemPool")
      .def("__init__", [](MemPool* self, bool use_on_oom, bool no_split, DeviceIndex d) {
            new (self) MemPool(PoolOptions{.use_on_oom = use_on_oom, .no_split = no_split}, d.value);
          }, nb::arg("use_on_oom") = false, nb::arg("no_split") = false, nb::arg("device") = nb::none())
      .def("__init__", [](MemPool* self, const std::string& path, const std::string& alloc_name,
                          const std::string& free_name, bool use_on_oom, bool no_split, DeviceIndex d) {
            const auto [alloc_fn, free_fn] = user_functions(path, alloc_name, free_name);
            new (self) MemPool(alloc_fn, free_fn, d.value, PoolOptions{.use_on_oom = use_on_oom, .no_split = no_split});
          }, nb::arg("path"), nb::arg("alloc_fn_name"), nb::arg("free_fn_name"), nb::arg("use_on_oom") = false,
          nb::arg("no_split") = false, nb::arg("device") = nb::none(),
          "A pool whose segments come from the C functions `alloc_fn_name`/`free_fn_name` of the shared "
          "library `path` (torch's CUDAPluggableAllocator signatures).")
      .def_prop_ro("id", [](const MemPool& p) { return pool_tuple(p.id()); })
      .def_prop_ro("device_index", &MemPool::device)
      .def("use_count", &MemPool::use_count)
      .def("reserved_bytes", &MemPool::reserved_bytes)
      .def("allocated_bytes", &MemPool::allocated_bytes)
      .def("_snapshot_json", [](const MemPool& p) { return snapshot_to_json(p.snapshot()); });

  nb::class_<MemPoolScope>(m, "_MemPoolScope")
      .def(nb::init<>())
      .def("enter", &MemPoolScope::enter, nb::arg("pool"))
      .def("exit", &MemPoolScope::exit);
}

}  // namespace cudakit::python
