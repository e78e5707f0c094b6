// cudakit.Array: a small strided array over cudakit::tensor::Tensor — shape, strides, dtype,
// device, __cuda_array_interface__, copies between devices, the factories, and the few elementwise
// operations the tensor layer has. DLPack is in dlpack.cpp.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/factories.hpp"

namespace cudakit::python {

using tensor::DType;
using tensor::Shape;

tensor::Device parse_device(nb::handle device) {
  if (device.is_none()) return tensor::Device::cuda(-1);
  if (PyLong_Check(device.ptr()) && !PyBool_Check(device.ptr())) {
    return tensor::Device::cuda(nb::cast<int>(device));
  }
  std::string text;
  if (nb::isinstance<nb::str>(device)) {
    text = nb::cast<std::string>(device);
  } else if (nb::hasattr(device, "type")) {
    text = nb::cast<std::string>(nb::str(device));  // torch.device("cuda", 1) -> "cuda:1"
  } else {
    throw nb::value_error(("device: expected 'cpu', 'cuda', 'cuda:N', an int or None, got " +
                           nb::cast<std::string>(nb::repr(device))).c_str());
  }
  if (text == "cpu") return tensor::Device::cpu();
  int index = -1;
  if (!parse_cuda_device(text, index)) {
    throw nb::value_error(("device: expected 'cpu', 'cuda' or 'cuda:N', got '" + text + "'").c_str());
  }
  return tensor::Device::cuda(index);
}

tensor::DType parse_dtype(nb::handle dtype) {
  std::string name;
  if (nb::isinstance<nb::str>(dtype)) {
    name = nb::cast<std::string>(dtype);
  } else if (nb::hasattr(dtype, "itemsize") && nb::hasattr(dtype, "name")) {
    name = nb::cast<std::string>(dtype.attr("name"));  // numpy.dtype
  } else if (nb::isinstance<nb::type_object>(dtype) && nb::hasattr(dtype, "dtype")) {
    name = nb::cast<std::string>(nb::str(dtype.attr("dtype")));  // numpy.float32 and friends
  } else {
    name = nb::cast<std::string>(nb::str(dtype));  // torch.float32
  }
  if (name.starts_with("torch.")) name.erase(0, 6);
  if (name == "bool_") name = "bool";
  if (name == "float") name = "float32";
  if (name == "half") name = "float16";
  if (name == "double") name = "float64";
  if (name == "long") name = "int64";
  if (name == "int") name = "int32";
  if (name == "short") name = "int16";
  if (name == "cfloat") name = "complex64";
  if (name == "cdouble") name = "complex128";
  return tensor::parse_dtype(name);
}

void check_writable(const PyArray& a, const char* api) {
  if (a.readonly) throw nb::value_error((std::string(api) + ": the array is read-only").c_str());
}

namespace {

nb::tuple to_tuple(const Shape& values) {
  nb::list list;
  for (std::int64_t v : values) list.append(v);
  return nb::tuple(list);
}

// NumPy's typestr for __cuda_array_interface__; bfloat16, FP8 and packed FP4 have none.
const char* typestr(DType dtype) {
  switch (dtype) {
    case DType::float32: return "<f4";
    case DType::float16: return "<f2";
    case DType::float64: return "<f8";
    case DType::int32: return "<i4";
    case DType::int64: return "<i8";
    case DType::uint8: return "|u1";
    case DType::bool_: return "|b1";
    case DType::int8: return "|i1";
    case DType::int16: return "<i2";
    case DType::uint16: return "<u2";
    case DType::uint32: return "<u4";
    case DType::uint64: return "<u8";
    case DType::complex64: return "<c8";
    case DType::complex128: return "<c16";
    default: break;
  }
  return nullptr;
}

// One element as Python has it: bool, int, float or complex.
nb::object element_object(DType dtype, const tensor::complex128& value) {
  if (dtype == DType::bool_) return nb::bool_(value.re != 0);
  if (tensor::is_complex(dtype)) return nb::steal(PyComplex_FromDoubles(value.re, value.im));
  if (tensor::is_floating(dtype)) return nb::float_(value.re);
  return nb::none();  // integers: see tolist
}

// Row-major values nested by `sizes` from dimension `dim` on, starting at flat index `at`.
nb::object nest(const nb::list& flat, const Shape& sizes, std::size_t dim, std::int64_t& at) {
  if (dim == sizes.size()) return flat[static_cast<std::size_t>(at++)];
  nb::list level;
  for (std::int64_t i = 0; i < sizes[dim]; ++i) level.append(nest(flat, sizes, dim + 1, at));
  return level;
}

nb::object tolist(const tensor::Tensor& t) {
  nb::list flat;
  if (t.dtype() == DType::uint64) {
    for (std::uint64_t v : t.to_vector<std::uint64_t>()) flat.append(nb::int_(v));
  } else if (tensor::is_integral(t.dtype()) && t.dtype() != DType::bool_) {
    for (std::int64_t v : t.to_vector<std::int64_t>()) flat.append(v);
  } else {
    for (const tensor::complex128& v : t.to_vector<tensor::complex128>()) flat.append(element_object(t.dtype(), v));
  }
  std::int64_t at = 0;
  return nest(flat, t.sizes(), 0, at);
}

PyArray make(tensor::Tensor t) { return PyArray{std::move(t), false}; }

tensor::TensorOptions options(nb::handle dtype, nb::handle device) {
  return tensor::TensorOptions{.dtype = parse_dtype(dtype), .device = parse_device(device)};
}

}  // namespace

void bind_array(nb::module_& m) {
  nb::class_<PyArray>(m, "Array",
                      "A strided array in cudakit's memory (cudakit::tensor::Tensor): CUDA memory from "
                      "the caching allocator, or host memory; exchanged with other libraries through "
                      "DLPack and __cuda_array_interface__.")
      .def_prop_ro("shape", [](const PyArray& a) { return to_tuple(a.tensor.sizes()); })
      .def_prop_ro("strides", [](const PyArray& a) {
            Shape bytes = a.tensor.strides();
            for (auto& s : bytes) s *= static_cast<std::int64_t>(a.tensor.element_size());
            return to_tuple(bytes);
          }, "Strides in bytes (NumPy's and CuPy's convention); stride() gives elements.")
      .def("stride", [](const PyArray& a) { return to_tuple(a.tensor.strides()); },
           "Strides in elements (torch's Tensor.stride()).")
      .def_prop_ro("dtype", [](const PyArray& a) { return std::string(tensor::dtype_name(a.tensor.dtype())); })
      .def_prop_ro("device", [](const PyArray& a) { return a.tensor.device().str(); })
      .def_prop_ro("is_cuda", [](const PyArray& a) { return a.tensor.device().is_cuda(); })
      .def_prop_ro("ndim", [](const PyArray& a) { return a.tensor.dim(); })
      .def_prop_ro("size", [](const PyArray& a) { return a.tensor.numel(); })
      .def_prop_ro("nbytes", [](const PyArray& a) { return a.tensor.nbytes(); })
      .def_prop_ro("itemsize", [](const PyArray& a) { return a.tensor.element_size(); })
      .def_prop_ro("readonly", [](const PyArray& a) { return a.readonly; })
      .def_prop_ro("storage_offset", [](const PyArray& a) { return a.tensor.storage_offset(); })
      .def("numel", [](const PyArray& a) { return a.tensor.numel(); })
      .def("data_ptr", [](const PyArray& a) { return reinterpret_cast<std::uintptr_t>(a.tensor.data_ptr()); })
      .def("is_contiguous", [](const PyArray& a) { return a.tensor.is_contiguous(); })
      .def("__len__", [](const PyArray& a) {
        if (a.tensor.dim() == 0) throw nb::type_error("len() of a 0-d array");
        return a.tensor.size(0);
      })
      .def("__repr__", [](const PyArray& a) {
        return "cudakit.Array(shape=" + a.tensor.shape_string() + ", dtype=" +
               std::string(tensor::dtype_name(a.tensor.dtype())) + ", device='" + a.tensor.device().str() + "'" +
               (a.readonly ? ", readonly=True" : "") + ")";
      })
      .def_prop_ro("__cuda_array_interface__", [](const PyArray& a) {
        if (!a.tensor.device().is_cuda()) throw nb::attribute_error("a host array has no __cuda_array_interface__");
        const char* type = typestr(a.tensor.dtype());
        if (type == nullptr) {
          throw nb::attribute_error((std::string(tensor::dtype_name(a.tensor.dtype())) +
                                     " has no __cuda_array_interface__ typestr; use DLPack").c_str());
        }
        nb::dict d;
        d["shape"] = to_tuple(a.tensor.sizes());
        d["typestr"] = type;
        d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(a.tensor.numel() ? a.tensor.data_ptr() : nullptr),
                                   a.readonly);
        d["version"] = 3;
        if (a.tensor.is_contiguous()) {
          d["strides"] = nb::none();
        } else {
          Shape bytes = a.tensor.strides();
          for (auto& s : bytes) s *= static_cast<std::int64_t>(a.tensor.element_size());
          d["strides"] = to_tuple(bytes);
        }
        // The stream the data is ready on: the consumer orders its work after it (version 3).
        d["stream"] = protocol_stream_value(cudakit::current_stream(a.tensor.device().index).handle());
        return d;
      })
      .def("to", [](const PyArray& a, nb::handle target, const PyStream* s) {
            // A device ("cpu", "cuda:1") or a dtype ("float16").
            if (nb::isinstance<nb::str>(target)) {
              const std::string text = nb::cast<std::string>(target);
              if (text == "cpu" || text.starts_with("cuda")) return make(a.tensor.to(parse_device(target), optional_stream(s)));
            } else if (PyLong_Check(target.ptr()) || nb::hasattr(target, "index")) {
              return make(a.tensor.to(parse_device(target), optional_stream(s)));
            }
            return make(a.tensor.to(parse_dtype(target), optional_stream(s)));
          }, nb::arg("target"), nb::arg("stream") = nb::none(),
          "A copy on another device or in another dtype (the array itself when nothing changes).")
      .def("cpu", [](const PyArray& a) { return make(a.tensor.to(tensor::Device::cpu())); })
      .def("cuda", [](const PyArray& a, DeviceIndex d) { return make(a.tensor.to(tensor::Device::cuda(d.value))); },
           nb::arg("device") = nb::none())
      .def("copy", [](const PyArray& a, const PyStream* s) {
            tensor::Tensor out = tensor::empty_like(a.tensor, optional_stream(s));
            out.copy_(a.tensor, optional_stream(s));
            return make(std::move(out));
          }, nb::arg("stream") = nb::none(), "A new contiguous array with the same values.")
      .def("contiguous", [](const PyArray& a) { return PyArray{a.tensor.contiguous(), a.readonly && a.tensor.is_contiguous()}; })
      .def("reshape", [](const PyArray& a, std::vector<std::int64_t> shape) { return PyArray{a.tensor.reshape(shape), a.readonly}; },
           nb::arg("shape"))
      .def("view", [](const PyArray& a, std::vector<std::int64_t> shape) { return PyArray{a.tensor.view(shape), a.readonly}; },
           nb::arg("shape"))
      .def("transpose", [](const PyArray& a, int d0, int d1) { return PyArray{a.tensor.transpose(d0, d1), a.readonly}; },
           nb::arg("dim0"), nb::arg("dim1"))
      .def_prop_ro("T", [](const PyArray& a) { return PyArray{a.tensor.t(), a.readonly}; })
      .def("slice", [](const PyArray& a, int dim, std::int64_t start, std::int64_t end, std::int64_t step) {
            return PyArray{a.tensor.slice(dim, start, end, step), a.readonly};
          }, nb::arg("dim"), nb::arg("start"), nb::arg("end"), nb::arg("step") = 1)
      .def("fill_", [](nb::handle self, double value) {
            PyArray& a = nb::cast<PyArray&>(self);
            check_writable(a, "fill_");
            a.tensor.fill_(value);
            return nb::borrow(self);
          }, nb::arg("value"))
      .def("zero_", [](nb::handle self) {
            PyArray& a = nb::cast<PyArray&>(self);
            check_writable(a, "zero_");
            a.tensor.zero_();
            return nb::borrow(self);
          })
      .def("copy_", [](nb::handle self, const PyArray& src, const PyStream* s) {
            PyArray& a = nb::cast<PyArray&>(self);
            check_writable(a, "copy_");
            a.tensor.copy_(src.tensor, optional_stream(s));
            return nb::borrow(self);
          }, nb::arg("src"), nb::arg("stream") = nb::none())
      .def("record_stream", [](const PyArray& a, const PyStream& s) { a.tensor.record_stream(s.ref()); },
           nb::arg("stream"))
      .def("item", [](const PyArray& a) -> nb::object {
        if (a.tensor.numel() != 1) (void)a.tensor.item();  // its error: one element expected
        const tensor::Tensor one(a.tensor.storage(), a.tensor.dtype(), {1}, {1}, a.tensor.storage_offset());
        return nb::cast<nb::list>(tolist(one))[0];
      })
      .def("tolist", [](const PyArray& a) { return tolist(a.tensor); });

  m.def("empty", [](std::vector<std::int64_t> shape, nb::handle dtype, nb::handle device, const PyStream* s) {
        return make(tensor::empty(shape, options(dtype, device), optional_stream(s)));
      }, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device").none() = "cuda", nb::arg("stream") = nb::none(),
        "An uninitialized Array of `shape` (torch.empty).");
  m.def("zeros", [](std::vector<std::int64_t> shape, nb::handle dtype, nb::handle device, const PyStream* s) {
        return make(tensor::zeros(shape, options(dtype, device), optional_stream(s)));
      }, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device").none() = "cuda", nb::arg("stream") = nb::none(),
        "An Array of zeros (torch.zeros).");
  m.def("ones", [](std::vector<std::int64_t> shape, nb::handle dtype, nb::handle device, const PyStream* s) {
        return make(tensor::ones(shape, options(dtype, device), optional_stream(s)));
      }, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device").none() = "cuda", nb::arg("stream") = nb::none(),
        "An Array of ones (torch.ones).");
  m.def("full", [](std::vector<std::int64_t> shape, double value, nb::handle dtype, nb::handle device, const PyStream* s) {
        return make(tensor::full(shape, value, options(dtype, device), optional_stream(s)));
      }, nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = "float32", nb::arg("device").none() = "cuda",
      nb::arg("stream") = nb::none(),
        "An Array filled with `fill_value` (torch.full).");
  m.def("arange", [](double start, std::optional<double> end, double step, nb::handle dtype, nb::handle device,
                     const PyStream* s) {
        if (!end) return make(tensor::arange(0.0, start, step, options(dtype, device), optional_stream(s)));
        return make(tensor::arange(start, *end, step, options(dtype, device), optional_stream(s)));
      }, nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1.0, nb::arg("dtype") = "float32",
      nb::arg("device").none() = "cuda", nb::arg("stream") = nb::none(),
      "arange(end) or arange(start, end, step), as torch.arange.");
  m.def("equal", [](const PyArray& a, const PyArray& b) { return tensor::equal(a.tensor, b.tensor); },
        "Whether the arrays have the same shape and elements (torch.equal).");
  m.def("allclose", [](const PyArray& a, const PyArray& b, double rtol, double atol, bool equal_nan) {
        return tensor::allclose(a.tensor, b.tensor, rtol, atol, equal_nan);
      }, nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false,
        "Whether |a - b| <= atol + rtol * |b| everywhere (torch.allclose).");
}

}  // namespace cudakit::python
