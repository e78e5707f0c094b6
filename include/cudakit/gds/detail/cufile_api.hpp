#pragma once
// cuFile's (GPUDirect Storage) entry points, loaded at run time. See Note [Optional library
// tables].

#include <cuda.h>
#include <sys/types.h>

#include <cstddef>

#include "cudakit/core/detail/library_table.hpp"

namespace cudakit::detail {

// Note [cuFile declarations]
// The CUDA 13 toolkit does not always install cufile.h (it comes with the GDS package), so the
// table declares each signature itself, with the few types of cufile.h they need, laid out as
// that header lays them out (a stable C ABI): a status pair returned by value, an opaque handle,
// and the descriptor of the file to register.
struct CUfileError_t {
  int err;         // CUfileOpError; CU_FILE_SUCCESS is 0
  CUresult cu_err;  // the driver's error, when err says there is one
};
inline constexpr int CU_FILE_SUCCESS = 0;
using CUfileHandle_t = void*;
struct CUfileDescr_t {
  int type;  // CUfileFileHandleType
  union {
    int fd;
    void* handle;
  } handle;
  const void* fs_ops;  // const CUfileFSOps_t*: null for a kernel file system
};
inline constexpr int CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1;

// cufile.h renames cuFileDriverClose to cuFileDriverClose_v2 (which counts opens, so that two
// users in one process can each open and close the driver); the library exports both names,
// older ones only the first. Older libraries lack cuFileGetVersion as well.
#define CUDAKIT_CUFILE_FUNCTIONS(X)                                                              \
  X(cuFileGetVersion, optional, CUfileError_t, (int* version))                                   \
  X(cuFileDriverOpen, required, CUfileError_t, ())                                               \
  X(cuFileDriverClose, required, CUfileError_t, ())                                              \
  X(cuFileDriverClose_v2, optional, CUfileError_t, ())                                           \
  X(cuFileHandleRegister, required, CUfileError_t, (CUfileHandle_t* handle, CUfileDescr_t* descr)) \
  X(cuFileHandleDeregister, required, void, (CUfileHandle_t handle))                            \
  X(cuFileBufRegister, required, CUfileError_t, (const void* buffer, std::size_t length, int flags)) \
  X(cuFileBufDeregister, required, CUfileError_t, (const void* buffer))                          \
  X(cuFileRead, required, ssize_t,                                                               \
    (CUfileHandle_t handle, void* buffer, std::size_t size, off_t file_offset, off_t buffer_offset)) \
  X(cuFileWrite, required, ssize_t,                                                              \
    (CUfileHandle_t handle, const void* buffer, std::size_t size, off_t file_offset,             \
     off_t buffer_offset))

struct CuFileApi {
  CUDAKIT_LIBRARY_TABLE(CUDAKIT_CUFILE_FUNCTIONS)
};

// The table, loaded on first call (libcufile.so.0, libcufile.so). Thread-safe; never throws.
// The version reads "1.15" (cuFileGetVersion's 1150: 1000 major + 10 minor); empty where the
// library lacks cuFileGetVersion.
const CuFileApi& cufile_api() noexcept;

}  // namespace cudakit::detail
