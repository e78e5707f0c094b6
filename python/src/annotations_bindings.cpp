// Graph kernel annotations (torch.cuda.graph_annotations): the regions behind
// `with cudakit.graph_annotations.mark_kernels(...)`, the process-wide registry keyed by the
// profiler's "graph node id", and which mechanism finds those ids.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "common.hpp"
#include "cudakit/graphs/kernel_annotation_registry.hpp"
#include "cudakit/graphs/kernel_annotation_scope.hpp"

namespace cudakit::python {
namespace {

using graphs::Annotation;
using graphs::AnnotationValue;

// A Python value of an annotation: str, int or float, as the JSON form allows (See
// kernel_annotations.hpp). bool is refused although Python makes it an int: the JSON form has no
// booleans, and a True read back as 1 would be a different annotation.
AnnotationValue annotation_value(const std::string& key, nb::handle value) {
  if (PyBool_Check(value.ptr())) {
    throw nb::type_error(("mark_kernels: the value of '" + key + "' is a bool; annotation values are str, int or float").c_str());
  }
  if (PyUnicode_Check(value.ptr())) return nb::cast<std::string>(value);
  if (PyLong_Check(value.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) {
      throw nb::value_error(("mark_kernels: the value of '" + key + "' does not fit in 64 bits").c_str());
    }
    return static_cast<std::int64_t>(v);
  }
  if (PyFloat_Check(value.ptr())) return PyFloat_AsDouble(value.ptr());
  const std::string type = nb::cast<std::string>(nb::str(value.type().attr("__name__")));
  throw nb::type_error(("mark_kernels: the value of '" + key + "' is a " + type +
                        "; annotation values are str, int or float").c_str());
}

// mark_kernels' argument: a name (str) or a dict of fields with str keys.
Annotation annotation_fields(nb::handle fields) {
  Annotation out;
  if (PyUnicode_Check(fields.ptr())) {
    out.emplace("name", nb::cast<std::string>(fields));
    return out;
  }
  if (!PyDict_Check(fields.ptr())) {
    const std::string type = nb::cast<std::string>(nb::str(fields.type().attr("__name__")));
    throw nb::type_error(("mark_kernels: expected a name (str) or a dict of fields, got a " + type).c_str());
  }
  for (auto [key, value] : nb::borrow<nb::dict>(fields)) {
    if (!PyUnicode_Check(key.ptr())) {
      throw nb::type_error("mark_kernels: field names must be str");
    }
    std::string name = nb::cast<std::string>(key);
    AnnotationValue v = annotation_value(name, value);
    out.insert_or_assign(std::move(name), std::move(v));
  }
  return out;
}

nb::object to_python(const AnnotationValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return nb::str(s->c_str(), s->size());
  if (const auto* i = std::get_if<std::int64_t>(&value)) return nb::int_(*i);
  return nb::float_(std::get<double>(value));
}

// torch.cuda.graph_annotations.mark_kernels: the annotation, parsed once when made, and the C++
// region from __enter__ to __exit__. Regions are per thread and nest; Python's with-statement
// closes them in order. A C++ type, so that a region costs no Python frame.
class MarkKernels {
 public:
  explicit MarkKernels(nb::handle annotation)
      : fields_(annotation_fields(annotation)),
        annotation_(PyDict_Check(annotation.ptr()) ? nb::steal(PyDict_Copy(annotation.ptr())) : nb::borrow(annotation)) {
    if (!annotation_.is_valid()) throw nb::python_error();
  }
  void enter() {
    if (scope_) throw nb::value_error("mark_kernels: this region is already open (a region is entered once at a time)");
    scope_.emplace(fields_);
  }
  void exit() { scope_.reset(); }
  [[nodiscard]] nb::object annotation() const { return annotation_; }

 private:
  Annotation fields_;
  nb::object annotation_;  // what was given (a dict copied): str, int and float values only, so no cycles
  std::optional<graphs::KernelAnnotationScope> scope_;
};

std::optional<graphs::AnnotationMechanism> parse_mechanism(const std::optional<std::string>& name) {
  if (!name || *name == "auto") return std::nullopt;
  for (auto m : {graphs::AnnotationMechanism::tools_id, graphs::AnnotationMechanism::cupti,
                 graphs::AnnotationMechanism::none}) {
    if (*name == graphs::to_string(m)) return m;
  }
  throw nb::value_error(("set_annotation_mechanism: expected 'tools_id', 'cupti', 'none', 'auto' or None, got '" +
                         *name + "'").c_str());
}

}  // namespace

void bind_annotations(nb::module_& m) {
  // The Python name is torch's; cudakit.graph_annotations re-exports it. A C++ type rather than a
  // Python subclass: a region costs two bound calls and no Python frame.
  nb::class_<MarkKernels>(m, "mark_kernels",
      "``with mark_kernels(\"attention\"):`` or ``with mark_kernels({\"name\": \"mlp\", \"layer\": 3}):``.\n\n"
      "The kernel, memcpy and memset nodes captured inside the block, on this thread, receive the annotation (a name "
      "gives {\"name\": name}). Regions nest: a node gets one annotation per enclosing region, outermost first. "
      "Outside a capture with annotations enabled the block records nothing. Values are str, int or float "
      "(TypeError otherwise: the JSON form beside a trace holds nothing else). The same object may be entered again "
      "once it has been left; as a decorator, each call of the function runs inside the region.")
      .def("__init__", [](MarkKernels* self, nb::handle annotation) { new (self) MarkKernels(annotation); },
           nb::arg("annotation"),
           "`annotation`: a name (str, giving {'name': name}) or a dict of str keys to str, int or float values.")
      .def("__enter__", [](nb::handle self) {
            nb::cast<MarkKernels&>(self).enter();
            return nb::borrow(self);
          }, "Opens the region on this thread.")
      // Three arguments rather than *args: nanobind's vectorcall path then makes no tuple.
      .def("__exit__", [](MarkKernels& region, nb::handle, nb::handle, nb::handle) { region.exit(); },
           nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none(), "Closes the region.")
      .def("__call__", [](nb::handle self, nb::handle fn) {
            return nb::module_::import_("cudakit.graph_annotations").attr("_decorate")(self, fn);
          }, nb::arg("fn"), "As a decorator: each call of `fn` runs inside the region.")
      .def_prop_ro("annotation", &MarkKernels::annotation, "The annotation given (a dict is copied).");

  m.def("_get_kernel_annotations", [] {
        nb::dict out;
        for (const auto& [node, annotations] : graphs::get_kernel_annotations()) {
          nb::list objects;
          for (const Annotation& annotation : annotations) {
            nb::dict fields;
            for (const auto& [key, value] : annotation) fields[nb::str(key.c_str(), key.size())] = to_python(value);
            objects.append(fields);
          }
          out[nb::int_(node)] = objects;
        }
        return out;
      }, "A copy of the registry: {graph node id: [annotation dict, ...]}, outermost region first.");
  m.def("_clear_kernel_annotations", &graphs::clear_kernel_annotations, "Forgets every recorded annotation.");
  m.def("_annotations_available", &graphs::annotations_available,
        "Whether captures with enable_annotations record anything here.");
  m.def("_annotation_mechanism", [] { return std::string(graphs::to_string(graphs::annotation_mechanism())); },
        "The mechanism instantiations use now: 'tools_id', 'cupti' or 'none'.");
  m.def("_set_annotation_mechanism",
        [](const std::optional<std::string>& name) { graphs::set_annotation_mechanism(parse_mechanism(name)); },
        nb::arg("mechanism").none(),
        "Forces 'tools_id', 'cupti' or 'none' (None or 'auto': back to automatic). Raises StateError "
        "when the mechanism cannot work here.");
  m.def("_save_kernel_annotations", [](const std::string& path) { graphs::save_kernel_annotations(path); },
        nb::arg("path"), "Writes the registry as JSON ({\"node id\": [{...}], ...}).");
}

}  // namespace cudakit::python
