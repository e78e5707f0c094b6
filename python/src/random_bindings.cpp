// Philox generators: torch.cuda's seeding and state functions on the default generators, a
// Generator class, and the distributions over cudakit.Array (bit-identical on CPU and GPU).

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <span>
#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/random/default_generators.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/random/generator.hpp"

namespace cudakit::python {
namespace {

using random::Generator;

nb::bytes to_bytes(const std::vector<std::uint8_t>& state) {
  return nb::bytes(reinterpret_cast<const char*>(state.data()), state.size());
}

std::vector<std::uint8_t> from_bytes(const nb::bytes& state) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(state.c_str());
  return std::vector<std::uint8_t>(p, p + state.size());
}

tensor::TensorOptions options(nb::handle dtype, nb::handle device) {
  return tensor::TensorOptions{.dtype = parse_dtype(dtype), .device = parse_device(device)};
}

}  // namespace

void bind_random(nb::module_& m) {
  m.def("manual_seed", &random::manual_seed, nb::arg("seed"), "Seeds the current device's generator.");
  m.def("manual_seed_all", &random::manual_seed_all, nb::arg("seed"),
        "Seeds the default generator of every device.");
  m.def("seed", &random::seed, "A non-deterministic seed for the current device's generator; returns it.");
  m.def("seed_all", &random::seed_all,
        "Seeds the default generator of every device non-deterministically.");
  m.def("initial_seed", &random::initial_seed,
        "The seed the current device's default generator started from.");
  m.def("get_rng_state", [](DeviceIndex d) { return to_bytes(random::get_rng_state(d.value)); },
        nb::arg("device") = nb::none(), "The generator's state as bytes (torch returns them as a uint8 tensor).");
  m.def("set_rng_state", [](const nb::bytes& state, DeviceIndex d) { random::set_rng_state(from_bytes(state), d.value); },
        nb::arg("new_state"), nb::arg("device") = nb::none(),
        "Restores a state get_rng_state returned, on `device`.");
  m.def("get_rng_state_all", [] {
    nb::list states;
    for (const auto& s : random::get_rng_state_all()) states.append(to_bytes(s));
    return states;
  }, "get_rng_state of every device, as a list.");
  m.def("set_rng_state_all", [](const std::vector<nb::bytes>& states) {
    std::vector<std::vector<std::uint8_t>> all;
    for (const auto& s : states) all.push_back(from_bytes(s));
    random::set_rng_state_all(all);
  }, nb::arg("new_states"), "set_rng_state for every device, from get_rng_state_all's list.");

  nb::class_<Generator>(m, "Generator", "torch.Generator: a Philox generator for the host or a CUDA device.")
      .def("__init__", [](Generator* self, nb::handle device, std::uint64_t seed) {
            new (self) Generator(parse_device(device), seed);
          }, nb::arg("device") = "cpu", nb::arg("seed") = random::kDefaultSeed)
      .def_prop_ro("device", [](const Generator& g) { return g.device().str(); })
      .def("manual_seed", [](nb::handle self, std::uint64_t seed) {
            nb::cast<Generator&>(self).manual_seed(seed);
            return nb::borrow(self);
          }, nb::arg("seed"), "Seeds the generator; returns it, as torch does.")
      .def("seed", &Generator::seed)
      .def("initial_seed", &Generator::initial_seed)
      .def("get_offset", &Generator::offset)
      .def("set_offset", &Generator::set_offset, nb::arg("offset"))
      .def("get_state", [](const Generator& g) { return to_bytes(g.get_state()); })
      .def("set_state", [](nb::handle self, const nb::bytes& state) {
            const auto bytes = from_bytes(state);
            nb::cast<Generator&>(self).set_state(std::span<const std::uint8_t>(bytes));
            return nb::borrow(self);
          }, nb::arg("new_state"));

  auto fill = [](const char* name, auto fn) {
    return [fn, name](nb::handle self, double a, double b, Generator* g, const PyStream* s) {
      PyArray& array = nb::cast<PyArray&>(self);
      if (array.readonly) throw nb::value_error((std::string(name) + ": the array is read-only").c_str());
      fn(array.tensor, a, b, g, optional_stream(s));
      return nb::borrow(self);
    };
  };
  auto array = nb::type<PyArray>();
  nb::setattr(array, "uniform_", nb::cpp_function(
      fill("uniform_", [](tensor::Tensor& t, double a, double b, Generator* g, OptionalStream s) { random::uniform_(t, a, b, g, s); }),
      nb::is_method(), nb::arg("from_") = 0.0, nb::arg("to") = 1.0, nb::arg("generator").none() = nb::none(),
      nb::arg("stream").none() = nb::none(), nb::name("uniform_"), nb::scope(array)));
  nb::setattr(array, "normal_", nb::cpp_function(
      fill("normal_", [](tensor::Tensor& t, double a, double b, Generator* g, OptionalStream s) { random::normal_(t, a, b, g, s); }),
      nb::is_method(), nb::arg("mean") = 0.0, nb::arg("std") = 1.0, nb::arg("generator").none() = nb::none(),
      nb::arg("stream").none() = nb::none(), nb::name("normal_"), nb::scope(array)));

  m.def("rand", [](std::vector<std::int64_t> shape, nb::handle dtype, nb::handle device, Generator* g, const PyStream* s) {
        return PyArray{random::rand(shape, options(dtype, device), g, optional_stream(s)), false};
      }, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device").none() = "cuda",
      nb::arg("generator").none() = nb::none(), nb::arg("stream").none() = nb::none(),
        "An Array of uniform numbers in [0, 1) (torch.rand); bit-identical on the host and the GPU.");
  m.def("randn", [](std::vector<std::int64_t> shape, nb::handle dtype, nb::handle device, Generator* g, const PyStream* s) {
        return PyArray{random::randn(shape, options(dtype, device), g, optional_stream(s)), false};
      }, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device").none() = "cuda",
      nb::arg("generator").none() = nb::none(), nb::arg("stream").none() = nb::none(),
        "An Array of standard normal numbers (torch.randn).");
  m.def("randint", [](std::int64_t low, std::int64_t high, std::vector<std::int64_t> shape, nb::handle dtype,
                      nb::handle device, Generator* g, const PyStream* s) {
        return PyArray{random::randint(low, high, shape, options(dtype, device), g, optional_stream(s)), false};
      }, nb::arg("low"), nb::arg("high"), nb::arg("shape"), nb::arg("dtype") = "int64", nb::arg("device").none() = "cuda",
      nb::arg("generator").none() = nb::none(), nb::arg("stream").none() = nb::none(),
        "An Array of integers in [low, high) (torch.randint).");
  m.def("randperm", [](std::int64_t n, nb::handle dtype, nb::handle device, Generator* g, const PyStream* s) {
        return PyArray{random::randperm(n, options(dtype, device), g, optional_stream(s)), false};
      }, nb::arg("n"), nb::arg("dtype") = "int64", nb::arg("device").none() = "cuda",
      nb::arg("generator").none() = nb::none(), nb::arg("stream").none() = nb::none(),
        "A random permutation of 0..n-1 (torch.randperm).");
}

}  // namespace cudakit::python
