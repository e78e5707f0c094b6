#pragma once
// DLPack's C structures, version 1.1, written from the format's specification (the layout is the
// interface; these are our declarations of it). Only what cudakit exchanges is named.

#include <cstdint>

namespace cudakit::python::dlpack {

inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 1;

// The capsule names of the Python protocol; a consumer renames a capsule it took to the "used_"
// name, so that the capsule's destructor leaves the tensor to the consumer.
inline constexpr const char* kVersionedCapsule = "dltensor_versioned";
inline constexpr const char* kUsedVersionedCapsule = "used_dltensor_versioned";
inline constexpr const char* kLegacyCapsule = "dltensor";
inline constexpr const char* kUsedLegacyCapsule = "used_dltensor";

// DLManagedTensorVersioned::flags.
inline constexpr std::uint64_t kFlagReadOnly = 1ull << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1ull << 1;
inline constexpr std::uint64_t kFlagIsSubbytePadded = 1ull << 2;

struct PackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

// DLDeviceType (a C enum: int-sized).
enum DeviceType : std::int32_t {
  kCPU = 1,
  kCUDA = 2,
  kCUDAHost = 3,
  kCUDAManaged = 13,
};

struct Device {
  std::int32_t device_type;  // DeviceType
  std::int32_t device_id;
};

// DLDataTypeCode.
enum DataTypeCode : std::uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kOpaqueHandle = 3,
  kBfloat = 4,
  kComplex = 5,
  kBool = 6,
  kFloat8_e3m4 = 7,
  kFloat8_e4m3 = 8,
  kFloat8_e4m3b11fnuz = 9,
  kFloat8_e4m3fn = 10,
  kFloat8_e4m3fnuz = 11,
  kFloat8_e5m2 = 12,
  kFloat8_e5m2fnuz = 13,
  kFloat8_e8m0fnu = 14,
  kFloat6_e2m3fn = 15,
  kFloat6_e3m2fn = 16,
  kFloat4_e2m1fn = 17,
};

struct DataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null means compact row-major
  std::uint64_t byte_offset;
};

// The legacy managed tensor (capsule "dltensor").
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

// DLPack 1.x's managed tensor (capsule "dltensor_versioned").
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  Tensor dl_tensor;
};

static_assert(sizeof(DataType) == 4);
static_assert(sizeof(Tensor) == 48);
static_assert(sizeof(ManagedTensor) == 64);
static_assert(sizeof(ManagedTensorVersioned) == 80);

}  // namespace cudakit::python::dlpack
