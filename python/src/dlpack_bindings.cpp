// DLPack both ways: Array.__dlpack__ / __dlpack_device__ and from_dlpack.
//
// Note [DLPack streams]
// A consumer passes the stream it will use the data on (`stream=`); the producer must order that
// stream after the work that writes the data, which cudakit queues on the current stream of the
// array's device. The protocol's values (the array API standard's __dlpack__): None — the
// consumer uses the legacy default stream; 1 — the legacy default stream; 2 — the per-thread
// default stream; -1 — no synchronization at all; 0 — refused (it could mean any of the three);
// anything else a cudaStream_t. Where the two streams differ, the producer records an event on
// its stream and makes the consumer's stream wait on it: no host synchronization, ever. The event
// is one per (thread, device), reused: a wait takes the event's state at the time of the call,
// so recording it again later does not disturb the earlier wait.
//
// Note [DLPack deleters]
// A capsule we produce holds a copy of the array's Tensor (a reference to its Storage) in the
// managed tensor's context; the deleter drops it, which returns device memory to the caching
// allocator. It touches no Python object, so any thread may call it, with or without the GIL. A
// tensor we consume is wrapped in a Storage (Storage::wrap) whose release calls the producer's
// deleter exactly once, when the last cudakit owner lets go, possibly on a thread that does not
// hold the GIL; the protocol makes deleters safe there (producers that need the GIL take it).
// During interpreter shutdown, a Python producer's deleter could not take the GIL, so such a
// late release leaks the tensor instead.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/tensor/factories.hpp"
#include "dlpack.hpp"

namespace cudakit::python {
namespace {

using tensor::DType;

[[noreturn]] void buffer_error(const std::string& message) {
  PyErr_SetString(PyExc_BufferError, message.c_str());
  throw nb::python_error();
}

// DLPack 1.1's codes; the FP8 formats have codes of their own (bits 8, lanes 1) and NVFP4's
// packed pair is kDLFloat4_e2m1fn with bits 4 and lanes 2, as torch exports them.
struct DLPackDType {
  DType dtype;
  dlpack::DataType code;
};
constexpr DLPackDType kDLPackDTypes[] = {
    {DType::float32, {dlpack::kFloat, 32, 1}},          {DType::float16, {dlpack::kFloat, 16, 1}},
    {DType::bfloat16, {dlpack::kBfloat, 16, 1}},        {DType::float64, {dlpack::kFloat, 64, 1}},
    {DType::int32, {dlpack::kInt, 32, 1}},              {DType::int64, {dlpack::kInt, 64, 1}},
    {DType::uint8, {dlpack::kUInt, 8, 1}},              {DType::bool_, {dlpack::kBool, 8, 1}},
    {DType::int8, {dlpack::kInt, 8, 1}},                {DType::int16, {dlpack::kInt, 16, 1}},
    {DType::uint16, {dlpack::kUInt, 16, 1}},            {DType::uint32, {dlpack::kUInt, 32, 1}},
    {DType::uint64, {dlpack::kUInt, 64, 1}},            {DType::float8_e4m3fn, {dlpack::kFloat8_e4m3fn, 8, 1}},
    {DType::float8_e5m2, {dlpack::kFloat8_e5m2, 8, 1}}, {DType::float8_e8m0fnu, {dlpack::kFloat8_e8m0fnu, 8, 1}},
    {DType::complex64, {dlpack::kComplex, 64, 1}},      {DType::complex128, {dlpack::kComplex, 128, 1}},
    {DType::float4_e2m1fn_x2, {dlpack::kFloat4_e2m1fn, 4, 2}},
};
static_assert(std::size(kDLPackDTypes) == tensor::kDTypeCount);

dlpack::DataType to_dlpack(DType dtype) {
  for (const DLPackDType& d : kDLPackDTypes) {
    if (d.dtype == dtype) return d.code;
  }
  return {dlpack::kUInt, 8, 1};
}

DType from_dlpack(dlpack::DataType t) {
  for (const DLPackDType& d : kDLPackDTypes) {
    if (d.code.code == t.code && d.code.bits == t.bits && d.code.lanes == t.lanes) return d.dtype;
  }
  buffer_error("from_dlpack: dtype code " + std::to_string(t.code) + " with " + std::to_string(t.bits) +
               " bits and " + std::to_string(t.lanes) + " lanes has no cudakit dtype (cudakit takes bool, "
               "int8/16/32/64, uint8/16/32/64, float16/32/64, bfloat16, float8_e4m3fn, float8_e5m2, "
               "float8_e8m0fnu, complex64/128 and float4_e2m1fn_x2)");
}

dlpack::Device device_of(const tensor::Tensor& t) {
  const tensor::Device d = t.device();
  return d.is_cuda() ? dlpack::Device{dlpack::kCUDA, d.index} : dlpack::Device{dlpack::kCPU, 0};
}

// --- producing -------------------------------------------------------------------------------

// One allocation per export: the managed tensor and the Tensor it keeps alive, whose own shape
// and strides the DLPack tensor points at (consumers only read them; the Tensor never changes).
template <class Managed>
struct Export {
  Managed managed{};
  tensor::Tensor tensor;

  static void deleter(Managed* self) noexcept { delete static_cast<Export*>(self->manager_ctx); }
};

template <class Managed>
Managed* make_export(tensor::Tensor t) {
  auto* e = new Export<Managed>();
  e->tensor = std::move(t);
  dlpack::Tensor& dl = e->managed.dl_tensor;
  dl.data = e->tensor.numel() == 0 ? nullptr : e->tensor.data_ptr();
  dl.device = device_of(e->tensor);
  dl.ndim = e->tensor.dim();
  dl.dtype = to_dlpack(e->tensor.dtype());
  dl.shape = const_cast<std::int64_t*>(e->tensor.sizes().data());
  dl.strides = const_cast<std::int64_t*>(e->tensor.strides().data());
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &Export<Managed>::deleter;
  return &e->managed;
}

// The destructor of a capsule nobody consumed (still under its first name): the tensor goes back.
template <class Managed>
void capsule_destructor(PyObject* capsule, const char* name) noexcept {
  if (!PyCapsule_IsValid(capsule, name)) return;  // renamed "used_...": the consumer owns it
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}
void versioned_capsule_destructor(PyObject* capsule) noexcept {
  capsule_destructor<dlpack::ManagedTensorVersioned>(capsule, dlpack::kVersionedCapsule);
}
void legacy_capsule_destructor(PyObject* capsule) noexcept {
  capsule_destructor<dlpack::ManagedTensor>(capsule, dlpack::kLegacyCapsule);
}

Event& ordering_event(int device) {
  thread_local std::vector<std::unique_ptr<Event>> events;
  if (device >= static_cast<int>(events.size())) events.resize(device + 1);
  if (!events[device]) events[device] = std::make_unique<Event>(EventFlags{});  // made on first record
  return *events[device];
}

// `consumer` after the work queued so far on `producer`, by an event (one per thread and device),
// when they are two streams. See Note [DLPack streams].
void order_after(cudaStream_t producer, StreamRef consumer, int device) {
  if (protocol_stream_value(producer) == protocol_stream_value(consumer.handle())) return;
  Event& event = ordering_event(device);
  // The runtime reads the two special handles as the current device's default streams.
  std::optional<DeviceGuard> on;
  const auto special = [](cudaStream_t s) { return s == cudaStreamLegacy || s == cudaStreamPerThread; };
  if (special(producer) || special(consumer.handle())) on.emplace(device);
  event.record(StreamRef(producer, device));
  consumer.wait_event(event);
}

// See Note [DLPack streams].
void order_consumer_stream(const tensor::Tensor& t, nb::handle stream) {
  const int device = t.device().index;
  cudaStream_t consumer = cudaStreamLegacy;  // None: the legacy default stream
  if (!stream.is_none()) {
    if (!PyLong_Check(stream.ptr())) {
      throw nb::type_error(("__dlpack__: stream must be None or an int, got " +
                            nb::cast<std::string>(nb::repr(stream))).c_str());
    }
    const long long value = PyLong_AsLongLong(stream.ptr());
    if (value == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      const auto handle = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(stream.ptr()));
      if (PyErr_Occurred()) throw nb::python_error();
      consumer = reinterpret_cast<cudaStream_t>(handle);
    } else if (value == -1) {
      return;  // the consumer asked for no synchronization
    } else if (value == 0) {
      throw nb::value_error("__dlpack__: stream=0 is ambiguous for CUDA (the protocol refuses it); "
                            "pass 1 for the legacy default stream, 2 for the per-thread one");
    } else if (value < -1) {
      throw nb::value_error(("__dlpack__: stream " + std::to_string(value) + " is no stream").c_str());
    } else if (value == 1) {
      consumer = cudaStreamLegacy;
    } else if (value == 2) {
      consumer = cudaStreamPerThread;
    } else {
      consumer = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(value));
    }
  }
  order_after(cudakit::current_stream(device).handle(), StreamRef(consumer, device), device);
}

// torch's current stream of `device`: raw_stream_of(device), whose 0 is torch's legacy default
// stream.
cudaStream_t torch_current_stream(nb::handle raw_stream_of, int device) {
  const nb::object raw = raw_stream_of(device);
  const unsigned long long value = PyLong_AsUnsignedLongLong(raw.ptr());
  if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw nb::python_error();
  return value == 0 ? cudaStreamLegacy : reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(value));
}

nb::object dlpack_export(const PyArray& a, nb::handle stream, std::optional<std::pair<int, int>> max_version,
                         std::optional<std::pair<int, int>> dl_device, std::optional<bool> copy) {
  tensor::Tensor t = a.tensor;
  bool copied = false;
  bool readonly = a.readonly;
  if (dl_device) {
    const auto [type, id] = *dl_device;
    const dlpack::Device own = device_of(t);
    if (type != own.device_type || id != own.device_id) {
      tensor::Device target;
      if (type == dlpack::kCPU) {
        target = tensor::Device::cpu();
      } else if (type == dlpack::kCUDA) {
        target = tensor::Device::cuda(id);
      } else {
        buffer_error("__dlpack__: cannot export to DLPack device type " + std::to_string(type) +
                     " (cudakit has CPU (1) and CUDA (2) memory)");
      }
      if (copy == false) {
        buffer_error("__dlpack__: the array is on " + t.device().str() + "; dl_device (" + std::to_string(type) + ", " +
                     std::to_string(id) + ") needs a copy, which copy=False forbids");
      }
      t = t.to(target);
      copied = true;
      readonly = false;
    }
  }
  if (copy == true && !copied) {
    tensor::Tensor out = tensor::empty_like(t);
    out.copy_(t);
    t = std::move(out);
    copied = true;
    readonly = false;
  }
  if (t.device().is_cuda()) order_consumer_stream(t, stream);
  else if (!stream.is_none() && !(PyLong_Check(stream.ptr()) && PyLong_AsLong(stream.ptr()) == -1)) {
    throw nb::value_error("__dlpack__: a host array takes stream=None");
  }

  if (!max_version || max_version->first < 1) {
    if (readonly) {
      buffer_error("__dlpack__: a read-only array cannot be exported as a legacy (pre-1.0) DLPack "
                   "capsule, which has no read-only flag; ask with max_version=(1, 0) or later");
    }
    auto* managed = make_export<dlpack::ManagedTensor>(std::move(t));
    PyObject* capsule = PyCapsule_New(managed, dlpack::kLegacyCapsule, &legacy_capsule_destructor);
    if (capsule == nullptr) {
      managed->deleter(managed);
      throw nb::python_error();
    }
    return nb::steal(capsule);
  }
  auto* managed = make_export<dlpack::ManagedTensorVersioned>(std::move(t));
  managed->version = {dlpack::kMajorVersion,
                      max_version->first == 1 ? std::min<std::uint32_t>(dlpack::kMinorVersion, max_version->second)
                                              : dlpack::kMinorVersion};
  managed->flags = (readonly ? dlpack::kFlagReadOnly : 0) | (copied ? dlpack::kFlagIsCopied : 0);
  PyObject* capsule = PyCapsule_New(managed, dlpack::kVersionedCapsule, &versioned_capsule_destructor);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// --- consuming -------------------------------------------------------------------------------

bool interpreter_finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// A Tensor over a DLPack tensor; `release` is called once when the last owner lets go.
tensor::Tensor view_of(const dlpack::Tensor& dl, std::function<void()> release) {
  // Until the Storage owns `release`, a refusal hands the tensor back to its producer itself.
  try {
  const DType dtype = from_dlpack(dl.dtype);
  tensor::Device device;
  switch (dl.device.device_type) {
    case dlpack::kCPU:
    case dlpack::kCUDAHost: device = tensor::Device::cpu(); break;
    case dlpack::kCUDA:
    case dlpack::kCUDAManaged: device = tensor::Device::cuda(dl.device.device_id); break;
    default:
      buffer_error("from_dlpack: DLPack device type " + std::to_string(dl.device.device_type) +
                   " is neither CPU (1), CUDA (2), CUDA host (3) nor CUDA managed (13) memory");
  }
  if (dl.ndim < 0 || (dl.ndim > 0 && dl.shape == nullptr)) {
    buffer_error("from_dlpack: ndim " + std::to_string(dl.ndim) + " without a shape");
  }
  tensor::Shape sizes(dl.shape, dl.shape + dl.ndim);
  tensor::Shape strides = dl.strides != nullptr ? tensor::Shape(dl.strides, dl.strides + dl.ndim)
                                                : tensor::contiguous_strides(sizes);
  // The storage spans the elements the view reaches; negative strides start it below element 0.
  std::int64_t lo = 0, hi = 0;
  const std::int64_t numel = tensor::shape_numel(sizes);
  for (int d = 0; d < dl.ndim && numel > 0; ++d) {
    // A stride whose reach overflows is a producer's error (CuPy before its fix of issue 10172
    // wrote -1 as 2^62 - 1, a negative byte stride divided as unsigned): refused, with the values.
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
        __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {
      buffer_error("from_dlpack: dimension " + std::to_string(d) + " of size " + std::to_string(sizes[d]) +
                   " has stride " + std::to_string(strides[d]) +
                   " (in elements), which reaches beyond any address: the producer's strides are wrong");
    }
  }
  const std::size_t itemsize = tensor::element_size(dtype);
  char* first = static_cast<char*>(dl.data) + dl.byte_offset;
  char* base = first + lo * static_cast<std::int64_t>(itemsize);
  const std::size_t bytes = numel == 0 ? 0 : static_cast<std::size_t>(hi - lo + 1) * itemsize;
  auto storage = tensor::Storage::wrap(base, bytes, device, release);
  release = nullptr;  // the storage releases it from here on, the Tensor's refusal included
  return tensor::Tensor(std::move(storage), dtype, std::move(sizes), std::move(strides), -lo);
  } catch (...) {
    if (release) release();
    throw;
  }
}

std::function<void()> releaser(dlpack::ManagedTensorVersioned* m) {
  return [m] {
    if (m->deleter != nullptr && !interpreter_finalizing()) m->deleter(m);
  };
}
std::function<void()> releaser(dlpack::ManagedTensor* m) {
  return [m] {
    if (m->deleter != nullptr && !interpreter_finalizing()) m->deleter(m);
  };
}

PyArray consume_capsule(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, dlpack::kVersionedCapsule)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(c, dlpack::kVersionedCapsule));
    if (m->version.major != dlpack::kMajorVersion) {
      // A major version we do not know: its layout after `version` may differ; leave it to the
      // capsule's destructor (the producer's deleter), as the protocol says.
      buffer_error("from_dlpack: DLPack major version " + std::to_string(m->version.major) +
                   " is not supported (cudakit reads 1.x)");
    }
    if (PyCapsule_SetName(c, dlpack::kUsedVersionedCapsule) != 0) throw nb::python_error();
    if (m->flags & dlpack::kFlagIsSubbytePadded) {
      m->deleter != nullptr ? m->deleter(m) : void();
      buffer_error("from_dlpack: sub-byte dtypes are not supported");
    }
    const bool readonly = (m->flags & dlpack::kFlagReadOnly) != 0;
    return PyArray{view_of(m->dl_tensor, releaser(m)), readonly};
  }
  if (PyCapsule_IsValid(c, dlpack::kLegacyCapsule)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(c, dlpack::kLegacyCapsule));
    if (PyCapsule_SetName(c, dlpack::kUsedLegacyCapsule) != 0) throw nb::python_error();
    return PyArray{view_of(m->dl_tensor, releaser(m)), false};
  }
  if (PyCapsule_CheckExact(c)) {
    const char* name = PyCapsule_GetName(c);
    throw nb::value_error(("from_dlpack: the capsule is named '" + std::string(name ? name : "") +
                           "', not 'dltensor_versioned' or 'dltensor' (a used capsule cannot be taken twice)")
                              .c_str());
  }
  throw nb::type_error("from_dlpack: expected a DLPack capsule");
}

// `device` of from_dlpack as a DLPack device: None (none asked), (type, id), "cpu", "cuda",
// "cuda:N" or a CUDA ordinal.
std::optional<std::pair<int, int>> requested_device(nb::handle device) {
  if (device.is_none()) return std::nullopt;
  if (nb::isinstance<nb::tuple>(device)) return nb::cast<std::pair<int, int>>(device);
  const tensor::Device d = parse_device(device);
  if (d.is_cpu()) return std::make_pair(static_cast<int>(dlpack::kCPU), 0);
  return std::make_pair(static_cast<int>(dlpack::kCUDA), d.index);
}

// The consumer's side: see from_dlpack's docstring and Note [DLPack streams].
PyArray import_dlpack(nb::handle obj, nb::handle device, std::optional<bool> copy) {
  if (PyCapsule_CheckExact(obj.ptr())) return consume_capsule(obj);
  nb::object export_fn = nb::getattr(obj, "__dlpack__", nb::none());
  if (export_fn.is_none()) {
    throw nb::type_error(("from_dlpack: " + std::string(Py_TYPE(obj.ptr())->tp_name) + " has no __dlpack__").c_str());
  }
  auto [type, id] = nb::cast<std::pair<int, int>>(obj.attr("__dlpack_device__")());
  const std::optional<std::pair<int, int>> wanted = requested_device(device);
  if (wanted) std::tie(type, id) = *wanted;
  // CUDA memory: the producer orders our current stream after its work. Host memory (CPU,
  // pinned, managed) takes stream=None.
  nb::object stream = type == dlpack::kCUDA ? nb::cast(protocol_stream_value(cudakit::current_stream(id).handle()))
                                            : nb::none();
  nb::dict kwargs;
  kwargs["stream"] = stream;
  kwargs["max_version"] = nb::make_tuple(dlpack::kMajorVersion, dlpack::kMinorVersion);
  if (wanted) kwargs["dl_device"] = nb::make_tuple(type, id);
  if (copy) kwargs["copy"] = *copy;
  PyObject* capsule = PyObject_Call(export_fn.ptr(), nb::tuple().ptr(), kwargs.ptr());
  if (capsule == nullptr) {
    // A producer from before DLPack 1.0 takes no max_version (nor dl_device, copy): ask again.
    if (wanted || !PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();
    PyErr_Clear();
    nb::dict legacy;
    legacy["stream"] = stream;
    capsule = PyObject_Call(export_fn.ptr(), nb::tuple().ptr(), legacy.ptr());
    if (capsule == nullptr) throw nb::python_error();
    PyArray imported = consume_capsule(nb::steal(capsule));
    if (copy != true) return imported;
    tensor::Tensor out = tensor::empty_like(imported.tensor);
    out.copy_(imported.tensor);
    return PyArray{std::move(out), false};
  }
  return consume_capsule(nb::steal(capsule));
}

}  // namespace

void bind_dlpack(nb::module_& m) {
  auto array = nb::type<PyArray>();
  nb::setattr(array, "__dlpack__",
              nb::cpp_function(&dlpack_export, nb::is_method(), nb::kw_only(),
                               nb::arg("stream").none() = nb::none(), nb::arg("max_version").none() = nb::none(),
                               nb::arg("dl_device").none() = nb::none(), nb::arg("copy").none() = nb::none(),
                               nb::name("__dlpack__"), nb::scope(array),
                               "DLPack export: a versioned capsule where max_version >= (1, 0), else a legacy one; "
                               "see Note [DLPack streams] for `stream`."));
  nb::setattr(array, "__dlpack_device__",
              nb::cpp_function([](const PyArray& a) {
                const dlpack::Device d = device_of(a.tensor);
                return std::make_pair(d.device_type, d.device_id);
              }, nb::is_method(), nb::name("__dlpack_device__"), nb::scope(array)));
  m.def("from_dlpack", &import_dlpack, nb::arg("obj"), nb::kw_only(), nb::arg("device").none() = nb::none(),
        nb::arg("copy").none() = nb::none(),
        "An Array over `obj`'s memory (no copy unless copy=True or `device` needs one).\n\n"
        "`obj` has __dlpack__/__dlpack_device__ (PyTorch, CuPy, JAX, NumPy, cudakit) or is a DLPack "
        "capsule. For CUDA memory the producer is given the current stream of that device, and orders "
        "it after its own work. `device` ('cpu', 'cuda:N', (type, id)) asks the producer to deliver "
        "there. The array keeps the producer's tensor until the last cudakit reference goes, then "
        "calls its deleter. A producer that predates DLPack 1.0 is asked again without max_version.");
  m.def("_from_dlpack_capsule", &consume_capsule, nb::arg("capsule"),
        "Takes a 'dltensor_versioned' or 'dltensor' capsule (renaming it 'used_...').");
  m.def("_protocol_stream", [](DeviceIndex d) { return protocol_stream_value(cudakit::current_stream(d.value).handle()); },
        nb::arg("device") = nb::none(),
        "The current stream of `device` as DLPack's stream argument (1 for the legacy default stream).");
  // Note [Exchange with torch in a microsecond] (python/cudakit/torch.py): the protocol's ordering
  // around torch._C's capsule functions, with torch's current stream from `raw_stream_of(index)`
  // (torch._C._cuda_getCurrentRawStream; 0 is its legacy default stream).
  m.def("_capsule_for_torch",
        [](const PyArray& a, nb::handle raw_stream_of) {
          nb::object stream = nb::none();
          if (a.tensor.device().is_cuda()) {
            stream = nb::int_(protocol_stream_value(torch_current_stream(raw_stream_of, a.tensor.device().index)));
          }
          return dlpack_export(a, stream, std::nullopt, std::nullopt, std::nullopt);
        },
        nb::arg("array"), nb::arg("raw_stream_of"),
        "A legacy capsule of `array` for torch._C._from_dlpack, torch's current stream ordered after cudakit's.");
  m.def("_array_from_torch_capsule",
        [](nb::handle capsule, nb::handle raw_stream_of) {
          PyObject* c = capsule.ptr();
          const dlpack::Tensor* dl = nullptr;
          if (PyCapsule_IsValid(c, dlpack::kLegacyCapsule)) {
            dl = &static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(c, dlpack::kLegacyCapsule))->dl_tensor;
          } else if (PyCapsule_IsValid(c, dlpack::kVersionedCapsule)) {
            dl = &static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(c, dlpack::kVersionedCapsule))->dl_tensor;
          }
          if (dl != nullptr && dl->device.device_type == dlpack::kCUDA) {
            const int device = dl->device.device_id;
            order_after(torch_current_stream(raw_stream_of, device), cudakit::current_stream(device), device);
          }
          return consume_capsule(capsule);
        },
        nb::arg("capsule"), nb::arg("raw_stream_of"),
        "Takes torch._C._to_dlpack's capsule, cudakit's current stream ordered after torch's.");
  m.def("_dlpack_version", [] { return std::make_pair(dlpack::kMajorVersion, dlpack::kMinorVersion); });
}

}  // namespace cudakit::python
