// The jiterator over cudakit.Array: create_jit_fn / create_multi_output_jit_fn return callables
// that compile (NVRTC) on their first call of each dtype and layout combination.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/jiterator/jit_function.hpp"

namespace cudakit::python {
namespace {

using jiterator::JitArgument;
using jiterator::JitFunction;
using jiterator::Scalar;

Scalar to_scalar(nb::handle value, const char* what) {
  if (PyBool_Check(value.ptr())) return Scalar(nb::cast<bool>(value));
  if (PyLong_Check(value.ptr())) return Scalar(nb::cast<std::int64_t>(value));
  if (PyFloat_Check(value.ptr())) return Scalar(nb::cast<double>(value));
  throw nb::type_error((std::string(what) + ": expected a bool, int or float, got " +
                        nb::cast<std::string>(nb::repr(value))).c_str());
}

jiterator::ScalarDefaults defaults_of(const nb::kwargs& kwargs) {
  jiterator::ScalarDefaults defaults;
  for (auto [key, value] : kwargs) defaults.emplace(nb::cast<std::string>(key), to_scalar(value, "jiterator scalar"));
  return defaults;
}

nb::object call(const JitFunction& fn, const nb::args& args, const nb::kwargs& kwargs) {
  std::vector<tensor::Tensor> tensors;  // kept alive while the arguments point at them
  tensors.reserve(args.size());
  std::vector<JitArgument> inputs;
  for (nb::handle a : args) {
    if (nb::isinstance<PyArray>(a)) {
      tensors.push_back(nb::cast<const PyArray&>(a).tensor);
    }
  }
  std::size_t next = 0;
  for (nb::handle a : args) {
    if (nb::isinstance<PyArray>(a)) inputs.emplace_back(tensors[next++]);
    else inputs.emplace_back(to_scalar(a, "jiterator input"));
  }
  jiterator::JitCallOptions options;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    if (name == "out") {
      for (nb::handle o : nb::isinstance<PyArray>(value) ? nb::make_tuple(value) : nb::tuple(value)) {
        options.out.push_back(nb::cast<const PyArray&>(o).tensor);
      }
    } else if (name == "stream") {
      if (!value.is_none()) options.stream = nb::cast<const PyStream&>(value).ref();
    } else {
      options.scalars.emplace_back(name, to_scalar(value, name.c_str()));
    }
  }
  std::vector<tensor::Tensor> results;
  {
    nb::gil_scoped_release unlocked;  // compiling the first call of a variant takes a while
    results = fn.call(inputs, options);
  }
  if (results.size() == 1) return nb::cast(PyArray{std::move(results.front()), false});
  nb::list out;
  for (auto& r : results) out.append(nb::cast(PyArray{std::move(r), false}));
  return nb::tuple(out);
}

}  // namespace

void bind_jiterator(nb::module_& m) {
  nb::class_<JitFunction>(m, "_JitFunction")
      .def("__call__", &call)
      .def_prop_ro("name", &JitFunction::name)
      .def_prop_ro("num_inputs", &JitFunction::num_inputs)
      .def_prop_ro("num_outputs", &JitFunction::num_outputs)
      .def("scalar_names", &JitFunction::scalar_names);
  m.def("_create_jit_fn", [](std::string code, const nb::kwargs& kwargs) {
        return jiterator::create_jit_fn(std::move(code), defaults_of(kwargs));
      }, nb::arg("code"), nb::arg("kwargs"));
  m.def("_create_multi_output_jit_fn", [](std::string code, int num_outputs, const nb::kwargs& kwargs) {
        return jiterator::create_multi_output_jit_fn(std::move(code), num_outputs, defaults_of(kwargs));
      }, nb::arg("code"), nb::arg("num_outputs"), nb::arg("kwargs"));
}

}  // namespace cudakit::python
