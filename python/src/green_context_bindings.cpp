// Green contexts (torch.cuda.green_contexts.GreenContext): partitions of a GPU's SMs, each with
// streams whose work runs on its SMs only; `with ctx:` makes one current as torch's does.

#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/core/green_context.hpp"
#include "cudakit/core/sm_partition.hpp"

namespace cudakit::python {
namespace {

// A GreenContext and the scopes `with ctx:` opened on it (innermost last).
struct PyGreenContext {
  GreenContext context;
  std::vector<std::unique_ptr<GreenContextScope>> scopes;
};

// An SM count from Python: positive, and small enough for the driver's unsigned.
unsigned sm_count_arg(long long value, const char* what) {
  if (value <= 0 || value > 1 << 20) {
    throw nb::value_error((std::string(what) + ": expected a positive number of SMs, got " + std::to_string(value)).c_str());
  }
  return static_cast<unsigned>(value);
}

std::vector<unsigned> sm_counts_arg(const std::vector<long long>& values) {
  if (values.empty()) throw nb::value_error("sm_counts: expected at least one partition, got an empty list");
  std::vector<unsigned> out;
  for (long long v : values) out.push_back(sm_count_arg(v, "sm_counts"));
  return out;
}

nb::dict resource_dict(const SmResourceInfo& r) {
  nb::dict d;
  d["sm_count"] = r.sm_count;
  d["min_partition"] = r.min_partition;
  d["alignment"] = r.alignment;
  return d;
}

}  // namespace

void bind_green_contexts(nb::module_& m) {
  nb::class_<PyGreenContext>(m, "GreenContext",
                             "torch.cuda.green_contexts.GreenContext: a partition of a GPU's SMs. Work on its "
                             "streams (stream(), create_stream()) runs on its SMs only; `with ctx:` (or "
                             "set_context/pop_context) makes its stream the current one.")
      .def_static("create", [](long long num_sms, DeviceIndex device_id) {
            const unsigned count = sm_count_arg(num_sms, "num_sms");
            return PyGreenContext{GreenContext::create(count, device_id.value), {}};
          }, nb::arg("num_sms"), nb::arg("device_id") = nb::none(),
          "A context of at least `num_sms` SMs, rounded up to the device's granularity (sm_count says "
          "what was granted).")
      .def_static("split", [](const std::vector<long long>& sm_counts, DeviceIndex device) {
            std::vector<GreenContext> parts = GreenContext::split(device.value, sm_counts_arg(sm_counts));
            std::vector<std::unique_ptr<PyGreenContext>> out;
            for (GreenContext& part : parts) out.push_back(std::make_unique<PyGreenContext>(PyGreenContext{std::move(part), {}}));
            return out;
          }, nb::arg("sm_counts"), nb::arg("device") = nb::none(),
          "Disjoint partitions of the device, one per entry of `sm_counts` (no two share an SM).")
      .def_static("device_resource", [](DeviceIndex device) { return resource_dict(GreenContext::device_resource(device.value)); },
                  nb::arg("device") = nb::none(),
                  "The device's SMs as the driver describes them: sm_count, min_partition, alignment.")
      .def_prop_ro("sm_count", [](const PyGreenContext& g) { return g.context.sm_count(); }, "The SMs granted.")
      .def_prop_ro("requested_sm_count", [](const PyGreenContext& g) { return g.context.requested_sm_count(); })
      .def_prop_ro("device_index", [](const PyGreenContext& g) { return g.context.device(); })
      .def("stream", [](const PyGreenContext& g) { return PyStream(g.context.stream()); }, nb::keep_alive<0, 1>(),
           "The context's own stream (a cudakit.Stream; it keeps the context alive).")
      .def("create_stream", [](PyGreenContext& g, int priority) { return PyStream(g.context.create_stream(priority)); },
           nb::arg("priority") = 0, nb::keep_alive<0, 1>(), "Another stream of the context, owned by the context.")
      .def("set_context", [](const PyGreenContext& g) { g.context.set_context(); },
           "Makes the context current on this thread (its stream the device's current stream).")
      .def("pop_context", [](const PyGreenContext& g) { g.context.pop_context(); },
           "Undoes this thread's innermost set_context, which must be this context's.")
      .def("__enter__", [](nb::handle self) {
            PyGreenContext& g = nb::cast<PyGreenContext&>(self);
            g.scopes.push_back(std::make_unique<GreenContextScope>(g.context));
            return nb::borrow(self);
          })
      .def("__exit__", [](PyGreenContext& g, nb::args) {
            if (!g.scopes.empty()) g.scopes.pop_back();
          })
      .def("__repr__", [](const PyGreenContext& g) {
        return "<cudakit.GreenContext device=cuda:" + std::to_string(g.context.device()) + " sm_count=" +
               std::to_string(g.context.sm_count()) + ">";
      });

  m.def("_sm_count_of", [](const PyStream& s) { return sm_count_of(s.ref()); }, nb::arg("stream"),
        "The SMs a stream's work can use: its green context's count, or the whole device's.");
  // The partition arithmetic on a described resource (pure; what create and split apply).
  m.def("_granted_sm_count", [](long long requested, unsigned sm_count, unsigned min_partition, unsigned alignment) {
        return granted_sm_count(SmResourceInfo{sm_count, min_partition, alignment}, sm_count_arg(requested, "num_sms"));
      }, nb::arg("requested"), nb::arg("sm_count"), nb::arg("min_partition"), nb::arg("alignment"));
  m.def("_plan_sm_split", [](const std::vector<long long>& requested, unsigned sm_count, unsigned min_partition,
                             unsigned alignment) {
        return plan_sm_split(SmResourceInfo{sm_count, min_partition, alignment}, sm_counts_arg(requested));
      }, nb::arg("requested"), nb::arg("sm_count"), nb::arg("min_partition"), nb::arg("alignment"));
}

}  // namespace cudakit::python
