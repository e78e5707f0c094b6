#pragma once
// What the extension's binding files share: the device-argument caster, the Python-side holders
// of streams and arrays, and the functions that add each area's bindings to the module.

#include <nanobind/nanobind.h>

#include <functional>
#include <optional>
#include <string_view>

#include "cudakit/core/stack_frame.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::python {

namespace nb = nanobind;

// A device argument as torch.cuda takes it: None (the current device, -1), an int, "cuda",
// "cuda:N", or an object with `type == "cuda"` and an `index` (torch.device).
struct DeviceIndex {
  int value = -1;
};

// Parses "cuda" / "cuda:N" into `out` (-1 for "cuda"); false for anything else.
bool parse_cuda_device(std::string_view text, int& out) noexcept;

// torch.cuda.Stream: owns a cudakit::Stream, or refers to one it does not own (current_stream(),
// ExternalStream).
class PyStream {
 public:
  PyStream(int device, int priority) : owned_(std::in_place, device, priority), ref_(owned_->ref()) {}
  explicit PyStream(StreamRef ref) : ref_(ref) {}
  [[nodiscard]] StreamRef ref() const { return ref_; }
  [[nodiscard]] bool owns() const { return owned_.has_value(); }

 private:
  std::optional<Stream> owned_;
  StreamRef ref_;
};

// cudakit.Array: a cudakit::tensor::Tensor and whether writes through it are refused (an
// imported read-only DLPack tensor stays read-only when exported again).
struct PyArray {
  tensor::Tensor tensor;
  bool readonly = false;
};

// Refuses a write through a read-only array. @throws ValueError naming `api`.
void check_writable(const PyArray& a, const char* api);

// A device as the array functions take it: "cpu", "cuda", "cuda:N", an int (a CUDA ordinal),
// None (the current CUDA device) or a torch.device. @throws ValueError naming what was given.
[[nodiscard]] tensor::Device parse_device(nb::handle device);
// A dtype: its name ("float32", "bool", ...), a torch dtype ("torch.float32") or a NumPy dtype.
[[nodiscard]] tensor::DType parse_dtype(nb::handle dtype);

// The stream a Python-level `stream=None | Stream` argument names: None is the current stream.
[[nodiscard]] inline OptionalStream optional_stream(const PyStream* stream) {
  return stream == nullptr ? OptionalStream{} : OptionalStream{stream->ref()};
}

// A stream handle as the DLPack and __cuda_array_interface__ protocols spell it: the legacy default
// stream is 1 (0 is ambiguous there), the per-thread default stream 2, any other its address.
[[nodiscard]] std::uintptr_t protocol_stream_value(cudaStream_t handle) noexcept;

// The calling thread's Python frames, innermost first; none without the GIL (See Note [Python
// frames in memory history] in python_frames.cpp).
[[nodiscard]] StackFrames python_frames();
// The frame capture memory history uses for torch's `stacks` argument: Python frames for
// "python", C++ then Python frames for "all", empty (the library's C++ capture) otherwise.
[[nodiscard]] std::function<StackFrames()> history_frames(std::string_view stacks);

void bind_core(nb::module_& m);
void bind_memory(nb::module_& m);
void bind_array(nb::module_& m);
void bind_dlpack(nb::module_& m);
void bind_random(nb::module_& m);
void bind_graphs(nb::module_& m);
void bind_annotations(nb::module_& m);
void bind_runtime_names(nb::module_& m);
void bind_profiler(nb::module_& m);
void bind_nvtx(nb::module_& m);
void bind_jiterator(nb::module_& m);
void bind_tunable(nb::module_& m);
void bind_matmul(nb::module_& m);
void bind_sanitizer(nb::module_& m);
void bind_nccl(nb::module_& m);
void bind_gds(nb::module_& m);
void bind_green_contexts(nb::module_& m);
void bind_torch_allocator(nb::module_& m);

}  // namespace cudakit::python

namespace nanobind::detail {
template <>
struct type_caster<cudakit::python::DeviceIndex> {
  NB_TYPE_CASTER(cudakit::python::DeviceIndex, const_name("int | str"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    if (src.is_none()) {
      value.value = -1;
      return true;
    }
    if (PyLong_Check(src.ptr()) && !PyBool_Check(src.ptr())) {
      const long v = PyLong_AsLong(src.ptr());
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      if (v < -1 || v > 1 << 20) return false;
      value.value = static_cast<int>(v);
      return true;
    }
    if (PyUnicode_Check(src.ptr())) {
      Py_ssize_t size = 0;
      const char* text = PyUnicode_AsUTF8AndSize(src.ptr(), &size);
      if (text == nullptr) {
        PyErr_Clear();
        return false;
      }
      return cudakit::python::parse_cuda_device(std::string_view(text, size), value.value);
    }
    // torch.device and look-alikes: type "cuda" and an index (None: the current device).
    PyObject* type = PyObject_GetAttrString(src.ptr(), "type");
    if (type == nullptr) {
      PyErr_Clear();
      return false;
    }
    const bool is_cuda = PyUnicode_Check(type) && PyUnicode_CompareWithASCIIString(type, "cuda") == 0;
    Py_DECREF(type);
    if (!is_cuda) return false;
    PyObject* index = PyObject_GetAttrString(src.ptr(), "index");
    if (index == nullptr) {
      PyErr_Clear();
      return false;
    }
    bool ok = true;
    if (index == Py_None) {
      value.value = -1;
    } else if (PyLong_Check(index)) {
      value.value = static_cast<int>(PyLong_AsLong(index));
    } else {
      ok = false;
    }
    Py_DECREF(index);
    return ok;
  }

  static handle from_cpp(cudakit::python::DeviceIndex device, rv_policy, cleanup_list*) noexcept {
    return PyLong_FromLong(device.value);
  }
};
}  // namespace nanobind::detail
