// Devices, streams and events: torch.cuda's device functions, Stream, ExternalStream, Event, and
// the guard behind `with cudakit.stream(s):`.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "common.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream_guard.hpp"

namespace cudakit::python {
namespace {

// `with cudakit.stream(s):` — a StreamGuard from __enter__ to __exit__ (it also makes the stream's
// device current, as torch's StreamContext does).
class StreamScope {
 public:
  void enter(const PyStream& stream) { guard_.emplace(stream.ref()); }
  void exit() { guard_.reset(); }

 private:
  std::optional<StreamGuard> guard_;
};

nb::dict properties_dict(const DeviceProperties& p) {
  nb::dict d;
  d["index"] = p.index;
  d["name"] = p.name;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["multi_processor_count"] = p.multi_processor_count;
  d["total_memory"] = p.total_memory;
  d["L2_cache_size"] = p.l2_cache_size;
  d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
  d["warp_size"] = p.warp_size;
  d["regs_per_multiprocessor"] = p.regs_per_multiprocessor;
  d["shared_memory_per_multiprocessor"] = p.shared_memory_per_multiprocessor;
  d["shared_memory_per_block_optin"] = p.shared_memory_per_block_optin;
  d["shared_memory_per_block"] = p.shared_memory_per_block;
  d["max_threads_per_block"] = p.max_threads_per_block;
  d["memory_bus_width"] = p.memory_bus_width;
  d["clock_rate"] = p.clock_rate_khz;
  d["memory_clock_rate"] = p.memory_clock_rate_khz;
  d["is_integrated"] = p.is_integrated;
  d["is_multi_gpu_board"] = p.is_multi_gpu_board;
  d["uuid"] = p.uuid;
  d["pci_bus_id"] = p.pci_bus_id;
  d["pci_device_id"] = p.pci_device_id;
  d["pci_domain_id"] = p.pci_domain_id;
  return d;
}

}  // namespace

void bind_core(nb::module_& m) {
  m.def("device_count", &cudakit::device_count, "The number of CUDA devices (0 without a GPU or driver).");
  m.def("is_available", &cudakit::is_available, "Whether a CUDA device can be used.");
  m.def("current_device", &cudakit::current_device,
        "The index of the calling thread's current device.");
  m.def("set_device", [](DeviceIndex d) { cudakit::set_device(d.value < 0 ? cudakit::current_device() : d.value); },
        nb::arg("device"),
        "Makes `device` current for the calling thread (None or 'cuda': the current one, a no-op).");
  m.def("_get_device_properties", [](DeviceIndex d) { return properties_dict(cudakit::get_device_properties(d.value)); },
        nb::arg("device") = nb::none());
  m.def("get_device_name", [](DeviceIndex d) { return cudakit::get_device_properties(d.value).name; },
        nb::arg("device") = nb::none(),
        "The device's name ('NVIDIA H200').");
  m.def("get_device_capability", [](DeviceIndex d) { return cudakit::get_device_capability(d.value); },
        nb::arg("device") = nb::none(),
        "The device's compute capability as (major, minor).");
  m.def("mem_get_info", [](DeviceIndex d) { return cudakit::mem_get_info(d.value); },
        nb::arg("device") = nb::none(), "(free, total) bytes of the device.");
  m.def("synchronize", [](DeviceIndex d) { cudakit::synchronize(d.value); },
        nb::arg("device") = nb::none(), nb::call_guard<nb::gil_scoped_release>(),
        "Waits for all work on `device` (default: the current one) to finish.");
  m.def("can_device_access_peer", &cudakit::can_device_access_peer, nb::arg("device"), nb::arg("peer_device"),
        "Whether `device` can read and write `peer_device`'s memory directly.");
  m.def("_stream_priority_range", [](DeviceIndex d) { return cudakit::stream_priority_range(d.value); },
        nb::arg("device") = nb::none());

  nb::class_<PyStream>(m, "Stream", "torch.cuda.Stream: a CUDA stream (owned, or a reference to one).")
      .def("__init__", [](PyStream* self, DeviceIndex d, int priority) { new (self) PyStream(d.value, priority); },
           nb::arg("device") = nb::none(), nb::arg("priority") = 0)
      .def_static("_wrap", [](std::uintptr_t handle, int device) {
            return PyStream(StreamRef(reinterpret_cast<cudaStream_t>(handle), device));
          }, nb::arg("handle"), nb::arg("device"),
          "A reference to a stream cudakit does not own (its device given).")
      .def_static("_wrap_any", [](std::uintptr_t handle) {
            return PyStream(StreamRef(reinterpret_cast<cudaStream_t>(handle)));
          }, nb::arg("handle"), "A reference to any stream, its device asked of the runtime.")
      .def_prop_ro("cuda_stream", [](const PyStream& s) { return reinterpret_cast<std::uintptr_t>(s.ref().handle()); })
      .def_prop_ro("device_index", [](const PyStream& s) { return s.ref().device(); })
      .def_prop_ro("priority", [](const PyStream& s) { return s.ref().priority(); })
      .def_prop_ro("stream_id", [](const PyStream& s) { return s.ref().id(); })
      .def_prop_ro("owns", &PyStream::owns)
      .def_static("priority_range", [](DeviceIndex d) { return cudakit::stream_priority_range(d.value); },
                  nb::arg("device") = nb::none(),
                  "(least, greatest) stream priority of the device; greatest is numerically lowest, e.g. (0, -5).")
      .def("query", [](const PyStream& s) { return s.ref().query(); })
      .def("synchronize", [](const PyStream& s) { s.ref().synchronize(); }, nb::call_guard<nb::gil_scoped_release>())
      .def("wait_event", [](const PyStream& s, const Event& e) { s.ref().wait_event(e); }, nb::arg("event"))
      .def("wait_stream", [](const PyStream& s, const PyStream& other) { s.ref().wait_stream(other.ref()); },
           nb::arg("stream"))
      .def("record_event", [](const PyStream& s, nb::object event) {
            nb::object recorded = event.is_none() ? nb::type<Event>()() : event;
            nb::cast<Event&>(recorded).record(s.ref());
            return recorded;
          }, nb::arg("event") = nb::none(), "Records `event` (a new Event when None) on this stream; returns it.")
      .def("__eq__", [](const PyStream& a, const PyStream& b) { return a.ref() == b.ref(); })
      .def("__hash__", [](const PyStream& s) {
        return std::hash<std::uintptr_t>{}(reinterpret_cast<std::uintptr_t>(s.ref().handle())) ^
               static_cast<std::size_t>(s.ref().device());
      })
      .def("__repr__", [](const PyStream& s) {
        return "<cudakit.Stream device=cuda:" + std::to_string(s.ref().device()) + " cuda_stream=0x" +
               [&] {
                 char buffer[32];
                 std::snprintf(buffer, sizeof buffer, "%llx",
                               static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(s.ref().handle())));
                 return std::string(buffer);
               }() + ">";
      });

  m.def("current_stream", [](DeviceIndex d) { return PyStream(cudakit::current_stream(d.value)); },
        nb::arg("device") = nb::none(),
        "The calling thread's current stream on `device` (a reference: cudakit does not own it).");
  m.def("default_stream", [](DeviceIndex d) { return PyStream(cudakit::default_stream(d.value)); },
        nb::arg("device") = nb::none(),
        "The device's default (legacy null) stream.");
  m.def("set_stream", [](const PyStream& s) { cudakit::set_current_stream(s.ref()); }, nb::arg("stream"),
        "Makes `stream` the calling thread's current stream on its device (torch.cuda.set_stream).");

  nb::class_<StreamScope>(m, "_StreamScope")
      .def(nb::init<>())
      .def("enter", &StreamScope::enter, nb::arg("stream"))
      .def("exit", &StreamScope::exit);

  nb::class_<Event>(m, "Event", "torch.cuda.Event: a CUDA event (owned).")
      .def("__init__", [](Event* self, bool enable_timing, bool blocking, bool interprocess, bool external) {
            new (self) Event(EventFlags{.enable_timing = enable_timing, .blocking = blocking,
                                        .interprocess = interprocess, .external = external});
          }, nb::arg("enable_timing") = false, nb::arg("blocking") = false,
          nb::arg("interprocess") = false, nb::arg("external") = false)
      .def("record", [](Event& e, const PyStream* s) { e.record(optional_stream(s)); },
           nb::arg("stream") = nb::none(), "Records the event on `stream` (default: the current stream).")
      .def("wait", [](const Event& e, const PyStream* s) { e.wait(optional_stream(s)); },
           nb::arg("stream") = nb::none(), "Makes `stream` (default: the current stream) wait for the event.")
      .def("query", [](const Event& e) { return e.query(); })
      .def("synchronize", [](const Event& e) { e.synchronize(); }, nb::call_guard<nb::gil_scoped_release>())
      .def("elapsed_time", &Event::elapsed_time, nb::arg("end_event"),
           "Milliseconds between this event and `end_event` (both recorded, with enable_timing).")
      .def_prop_ro("cuda_event", [](const Event& e) { return reinterpret_cast<std::uintptr_t>(e.handle()); })
      .def_prop_ro("device_index", [](const Event& e) { return e.device(); })
      .def_prop_ro("was_recorded", &Event::was_recorded)
      .def("ipc_handle", [](Event& e) {
            const IpcEventHandle h = e.ipc_handle();
            return nb::bytes(reinterpret_cast<const char*>(h.bytes.data()), h.bytes.size());
          }, "The handle (64 bytes) another process passes to Event.from_ipc_handle; needs interprocess=True.")
      .def_static("from_ipc_handle", [](DeviceIndex d, nb::bytes handle) {
            IpcEventHandle h;
            if (handle.size() != h.bytes.size()) {
              throw nb::value_error(("Event.from_ipc_handle: a handle is " + std::to_string(h.bytes.size()) +
                                     " bytes, got " + std::to_string(handle.size())).c_str());
            }
            std::memcpy(h.bytes.data(), handle.c_str(), h.bytes.size());
            return Event::from_ipc_handle(h, d.value);
          }, nb::arg("device"), nb::arg("handle"), "Opens an event another process shared (torch's argument order).");
}

}  // namespace cudakit::python
