// The jiterator over cudakit.Array: create_jit_fn / create_multi_output_jit_fn return callables
// that compile (NVRTC) on their first call of each dtype and layout combination.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/jit_reduction.hpp"

namespace cudakit::python {
namespace {

using jiterator::JitArgument;
using jiterator::JitFunction;
using jiterator::JitReduction;
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

// A call's positional arguments: Arrays (their tensors kept alive here while the arguments point
// at them) and numbers.
struct CallInputs {
  std::vector<tensor::Tensor> tensors;
  std::vector<JitArgument> arguments;

  explicit CallInputs(const nb::args& args) {
    tensors.reserve(args.size());
    for (nb::handle a : args) {
      if (nb::isinstance<PyArray>(a)) tensors.push_back(nb::cast<const PyArray&>(a).tensor);
    }
    std::size_t next = 0;
    for (nb::handle a : args) {
      if (nb::isinstance<PyArray>(a)) arguments.emplace_back(tensors[next++]);
      else arguments.emplace_back(to_scalar(a, "jiterator input"));
    }
  }
};

nb::object call(const JitFunction& fn, const nb::args& args, const nb::kwargs& kwargs) {
  const CallInputs call_inputs(args);
  const std::vector<JitArgument>& inputs = call_inputs.arguments;
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

// A reduction's call: Arrays and numbers, then dim= (an int or a sequence of them; None: all),
// keepdim=, stream= and scalar overrides by keyword.
PyArray reduce(const JitReduction& fn, const nb::args& args, const nb::kwargs& kwargs) {
  const CallInputs inputs(args);
  jiterator::JitReductionOptions options;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    if (name == "dim") {
      if (value.is_none()) continue;
      if (PyLong_Check(value.ptr())) options.dims.push_back(nb::cast<int>(value));
      else options.dims = nb::cast<std::vector<int>>(value);
    } else if (name == "keepdim") {
      options.keepdim = nb::cast<bool>(value);
    } else if (name == "stream") {
      if (!value.is_none()) options.stream = nb::cast<const PyStream&>(value).ref();
    } else {
      options.scalars.emplace_back(name, to_scalar(value, name.c_str()));
    }
  }
  nb::gil_scoped_release unlocked;  // compiling the first call of a variant takes a while
  return PyArray{fn.call(inputs.arguments, options), false};
}

}  // namespace

void bind_jiterator(nb::module_& m) {
  nb::class_<JitReduction>(m, "_JitReduction",
                           "A reduction compiled at run time: map each element, combine the results.")
      .def("__call__", &reduce, "reduction(*arrays_and_numbers, dim=None, keepdim=False, stream=None, **scalars)")
      .def_prop_ro("num_inputs", &JitReduction::num_inputs);
  m.def("_create_jit_reduction", [](std::string map_code, std::string combine_code, std::string identity,
                                    const nb::kwargs& kwargs) {
        return jiterator::create_jit_reduction(std::move(map_code), std::move(combine_code), std::move(identity),
                                               defaults_of(kwargs));
      }, nb::arg("map_code"), nb::arg("combine_code"), nb::arg("identity"), nb::arg("kwargs"),
      "cudakit's jiterator reductions: see cudakit.jiterator.create_jit_reduction.");
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
