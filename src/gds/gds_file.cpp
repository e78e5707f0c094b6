#include "cudakit/gds/gds_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/gds/detail/cufile_api.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "cudakit/gds/io_error.hpp"
#include "cudakit/gds/io_tuning.hpp"
#include "gds/detail/cuda_staging_copier.hpp"
#include "gds/detail/cufile_driver.hpp"
#include "gds/detail/mapped_file.hpp"

namespace cudakit::gds {
namespace {

using cudakit::detail::concat;

// The CUDA device holding `memory`, or -1 for host memory (plain, pinned, or any memory where no
// device exists).
int device_of(const void* memory) {
  if (!is_available()) return -1;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, memory) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  const bool on_device = attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return on_device ? attributes.device : -1;
}

IoSegment segment_of(const TensorAt& at, const char* api) {
  at.tensor.check_defined(api);
  if (!at.tensor.is_contiguous()) {
    throw InvalidArgumentError(api, concat("tensor ", at.tensor.description(), " is not contiguous"));
  }
  return {at.tensor.data_ptr(), at.tensor.nbytes(), at.file_offset};
}

std::vector<IoSegment> segments_of(std::span<const TensorAt> tensors, const char* api) {
  std::vector<IoSegment> segments;
  segments.reserve(tensors.size());
  for (const TensorAt& at : tensors) segments.push_back(segment_of(at, api));
  return segments;
}

std::string describe_flags(int flags) {
  std::string text = (flags & O_ACCMODE) == O_RDONLY ? "O_RDONLY" : (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR";
  if (flags & O_CREAT) text += "|O_CREAT";
  if (flags & O_TRUNC) text += "|O_TRUNC";
  if (flags & O_EXCL) text += "|O_EXCL";
  return text;
}

}  // namespace

GdsFile::GdsFile(std::filesystem::path path, int flags, GdsOptions options) : options_(options) {
  file_.path = std::move(path);
  if ((flags & O_TRUNC) != 0 && detail::is_mapped(file_.path)) {  // See Note [Host loads of cached files].
    throw InvalidArgumentError("GdsFile", concat("will not truncate ", file_.path.string(),
                                                 ": host tensors of a load still map its pages, and would fault; "
                                                 "save it atomically (a new file renamed over it) or drop them first"));
  }
  buffered_ = memory::FileDescriptor(::open(file_.path.c_str(), flags | O_CLOEXEC, 0644));
  if (!buffered_) {
    const int error = errno;
    throw IoError(error, "GdsFile", concat("cannot open ", file_.path.string(), " (", describe_flags(flags),
                                           "): ", std::strerror(error)));
  }
  file_.buffered_fd = buffered_.get();
  file_system_ = file_system_name(buffered_.get());
  tuning_ = tuning_for(file_system_, options_);
  if (!options_.o_direct) {
    file_.direct_refusal = "O_DIRECT turned off (GdsOptions::o_direct, CUDAKIT_GDS_O_DIRECT=0)";
  } else {
    // The second descriptor opens the file the first made: no O_CREAT, O_TRUNC or O_EXCL again.
    const int direct_flags = (flags & ~(O_CREAT | O_TRUNC | O_EXCL | O_APPEND)) | O_DIRECT | O_CLOEXEC;
    direct_ = memory::FileDescriptor(::open(file_.path.c_str(), direct_flags));
    if (!direct_) {
      const int error = errno;
      file_.direct_refusal = concat("the ", file_system_, " file system refuses O_DIRECT for ",
                                    file_.path.string(), " (", std::strerror(error), ")");
    }
    file_.direct_fd = direct_.get();
  }
  if (options_.cufile != CuFileUse::never) register_handle();
  else cufile_status_ = "cuFile turned off (GdsOptions::cufile, CUDAKIT_GDS_CUFILE=never)";
}

GdsFile::~GdsFile() { deregister_handle(); }

bool GdsFile::register_handle() {
  if (cufile_handle_ != nullptr) return true;
  const std::string nvfs = nvidia_fs_version();
  const auto& driver = detail::cufile_driver();
  if (!driver.open) {
    cufile_status_ = driver.reason;
  } else if (file_.direct_fd < 0) {
    cufile_status_ = concat("cuFile needs an O_DIRECT descriptor: ", file_.direct_refusal);
  } else if (nvfs.empty() && options_.cufile != CuFileUse::required) {
    // See Note [Four paths]: compatibility mode is libcufile's own POSIX path, which cudakit's
    // engine replaces with a parallel one.
    cufile_status_ = "nvidia-fs is not loaded: cuFile could only run in compatibility mode, and "
                     "cudakit's engine does that job faster (CUDAKIT_GDS_CUFILE=required to use it)";
  } else {
    cudakit::detail::CUfileDescr_t description{};
    description.type = cudakit::detail::CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    description.handle.fd = file_.direct_fd;
    void* handle = nullptr;
    const auto status = cudakit::detail::cufile_api().cuFileHandleRegister(&handle, &description);
    if (status.err == cudakit::detail::CU_FILE_SUCCESS) {
      cufile_handle_ = handle;
      cufile_status_ = nvfs.empty() ? "registered (compatibility mode: nvidia-fs absent)"
                                    : "registered (nvidia-fs " + nvfs + ")";
      return true;
    }
    cufile_status_ = concat("cuFileHandleRegister refused ", file_.path.string(), " on ", file_system_,
                            ": cuFile status ", status.err);
  }
  if (options_.cufile == CuFileUse::required) {
    throw CuFileError(-1, "GdsFile::register_handle", cufile_status_);
  }
  return false;
}

void GdsFile::deregister_handle() noexcept {
  if (cufile_handle_ == nullptr) return;
  cudakit::detail::cufile_api().cuFileHandleDeregister(cufile_handle_);
  cufile_handle_ = nullptr;
  cufile_status_ = "deregistered";
}

bool GdsFile::register_buffer(void* device_memory, std::size_t bytes) {
  if (cufile_handle_ == nullptr) return false;
  const auto status = cudakit::detail::cufile_api().cuFileBufRegister(device_memory, bytes, 0);
  if (status.err != cudakit::detail::CU_FILE_SUCCESS) {
    throw CuFileError(status.err, "cuFileBufRegister",
                      concat("cannot register ", bytes, " bytes at ", device_memory, ": cuFile status ", status.err));
  }
  return true;
}

void GdsFile::deregister_buffer(void* device_memory) {
  if (cufile_handle_ == nullptr) return;
  const auto status = cudakit::detail::cufile_api().cuFileBufDeregister(device_memory);
  if (status.err != cudakit::detail::CU_FILE_SUCCESS) {
    throw CuFileError(status.err, "cuFileBufDeregister",
                      concat("cannot deregister ", device_memory, ": cuFile status ", status.err));
  }
}

IoReport GdsFile::load(void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream) {
  const IoSegment segment{memory, bytes, offset};
  return transfer(IoDirection::load, std::span(&segment, 1), stream);
}

IoReport GdsFile::load(const tensor::Tensor& destination, std::uint64_t offset, OptionalStream stream) {
  const IoSegment segment = segment_of({destination, offset}, "GdsFile::load");
  return transfer(IoDirection::load, std::span(&segment, 1), stream);
}

IoReport GdsFile::save(const void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream) {
  const IoSegment segment{const_cast<void*>(memory), bytes, offset};
  return transfer(IoDirection::save, std::span(&segment, 1), stream);
}

IoReport GdsFile::save(const tensor::Tensor& source, std::uint64_t offset, OptionalStream stream) {
  const IoSegment segment = segment_of({source, offset}, "GdsFile::save");
  return transfer(IoDirection::save, std::span(&segment, 1), stream);
}

IoReport GdsFile::load_batch(std::span<const IoRequest> requests, OptionalStream stream) {
  return transfer(IoDirection::load, requests, stream);
}

IoReport GdsFile::load_batch(std::span<const TensorAt> tensors, OptionalStream stream) {
  const std::vector<IoSegment> segments = segments_of(tensors, "GdsFile::load_batch");
  return transfer(IoDirection::load, segments, stream);
}

IoReport GdsFile::save_batch(std::span<const IoRequest> requests, OptionalStream stream) {
  return transfer(IoDirection::save, requests, stream);
}

IoReport GdsFile::save_batch(std::span<const TensorAt> tensors, OptionalStream stream) {
  const std::vector<IoSegment> segments = segments_of(tensors, "GdsFile::save_batch");
  return transfer(IoDirection::save, segments, stream);
}

IoTicket GdsFile::load_async(void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream) {
  return IoTicket(std::async(std::launch::async, [this, memory, bytes, offset, stream] {
    return load(memory, bytes, offset, stream);
  }));
}

IoTicket GdsFile::load_async(const tensor::Tensor& destination, std::uint64_t offset, OptionalStream stream) {
  return IoTicket(std::async(std::launch::async, [this, destination, offset, stream] {
    return load(destination, offset, stream);
  }));
}

IoTicket GdsFile::save_async(const void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream) {
  return IoTicket(std::async(std::launch::async, [this, memory, bytes, offset, stream] {
    return save(memory, bytes, offset, stream);
  }));
}

IoTicket GdsFile::save_async(const tensor::Tensor& source, std::uint64_t offset, OptionalStream stream) {
  return IoTicket(std::async(std::launch::async, [this, source, offset, stream] {
    return save(source, offset, stream);
  }));
}

void GdsFile::sync() {
  if (::fsync(buffered_.get()) != 0) {
    const int error = errno;
    throw IoError(error, "fsync", concat("cannot sync ", file_.path.string(), ": ", std::strerror(error)));
  }
}

std::uint64_t GdsFile::size() const {
  struct stat info {};
  if (::fstat(buffered_.get(), &info) != 0) {
    const int error = errno;
    throw IoError(error, "fstat", concat("cannot stat ", file_.path.string(), ": ", std::strerror(error)));
  }
  return static_cast<std::uint64_t>(info.st_size);
}

IoReport GdsFile::last_io() const {
  std::lock_guard lock(reports_mutex_);
  return last_io_;
}

IoStatistics GdsFile::statistics() const {
  std::lock_guard lock(reports_mutex_);
  return statistics_;
}

IoReport GdsFile::record(IoReport report) {
  std::lock_guard lock(reports_mutex_);
  last_io_ = report;
  statistics_.add(report);
  return report;
}

IoReport GdsFile::transfer(IoDirection direction, std::span<const IoSegment> segments, OptionalStream stream) {
  const auto start = std::chrono::steady_clock::now();
  if (direction == IoDirection::save) {
    // Writing into allocated blocks below the file's size keeps parallel O_DIRECT writes from
    // serializing on the size update (ext4, xfs); a file system without fallocate just grows.
    std::uint64_t end = 0;
    for (const IoSegment& segment : segments) end = std::max<std::uint64_t>(end, segment.file_offset + segment.bytes);
    if (end > size()) (void)::fallocate(buffered_.get(), 0, 0, static_cast<off_t>(end));
  }
  // One engine run per kind of memory (a safetensors file: its header from the host, its
  // tensors from a device), in the order the kinds first appear.
  std::vector<std::pair<int, std::vector<IoSegment>>> groups;
  for (const IoSegment& segment : segments) {
    const int device = device_of(segment.memory);
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == device; });
    if (group == groups.end()) group = groups.insert(groups.end(), {device, {}});
    group->second.push_back(segment);
  }
  IoReport total{.direction = direction, .requests = segments.size()};
  std::size_t largest = 0;
  for (const auto& [device, group] : groups) {
    const IoReport report = transfer_group(direction, device, group, stream);
    total.bytes += report.bytes;
    total.direct_bytes += report.direct_bytes;
    total.buffered_bytes += report.buffered_bytes;
    if (report.bytes >= largest) {
      largest = report.bytes;
      total.path = report.path;
      total.io_threads = report.io_threads;
      total.chunk_bytes = report.chunk_bytes;
    }
    if (!report.note.empty() && total.note.find(report.note) == std::string::npos) {
      total.note += (total.note.empty() ? "" : "; ") + report.note;
    }
  }
  if (direction == IoDirection::save && options_.fsync) sync();
  total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record(std::move(total));
}

IoReport GdsFile::transfer_group(IoDirection direction, int device, std::span<const IoSegment> segments,
                                 OptionalStream stream) {
  if (device < 0) {
    HostStagingCopier copier;
    return direction == IoDirection::load ? engine_read(file_, segments, copier, tuning_)
                                          : engine_write(file_, segments, copier, tuning_);
  }
  const StreamRef on = stream_or_current(stream, device);
  if (on.device() != device) {
    throw InvalidArgumentError(direction == IoDirection::load ? "GdsFile::load" : "GdsFile::save",
                               concat("a stream of device ", on.device(), " for memory on device ", device));
  }
  if (cufile_handle_ != nullptr) return cufile_transfer(direction, segments, on);
  detail::CudaStagingCopier copier(on);
  IoReport report = direction == IoDirection::load ? engine_read(file_, segments, copier, tuning_)
                                                   : engine_write(file_, segments, copier, tuning_);
  if (!cufile_status_.empty()) report.note += (report.note.empty() ? "" : "; ") + ("cuFile: " + cufile_status_);
  return report;
}

IoReport GdsFile::cufile_transfer(IoDirection direction, std::span<const IoSegment> segments, StreamRef stream) {
  const char* api = direction == IoDirection::load ? "cuFileRead" : "cuFileWrite";
  const auto start = std::chrono::steady_clock::now();
  if (direction == IoDirection::load) check_within_file(file_, segments, "GdsFile::load");
  // cuFile's transfers are synchronous and know no stream: the work already queued on `stream`
  // (that writes a buffer to be overwritten, or produces one to be saved) must finish first.
  stream.synchronize();
  const auto& api_table = cudakit::detail::cufile_api();
  IoReport report;
  report.direction = direction;
  report.requests = segments.size();
  report.io_threads = 1;
  for (const IoSegment& segment : segments) {
    std::size_t done = 0;
    while (done < segment.bytes) {
      const auto left = segment.bytes - done;
      const auto file_offset = static_cast<off_t>(segment.file_offset + done);
      const ssize_t moved = direction == IoDirection::load
          ? api_table.cuFileRead(cufile_handle_, segment.memory, left, file_offset, static_cast<off_t>(done))
          : api_table.cuFileWrite(cufile_handle_, segment.memory, left, file_offset, static_cast<off_t>(done));
      if (moved <= 0) {
        throw CuFileError(static_cast<int>(-moved), api,
                          concat(direction == IoDirection::load ? "read of " : "incomplete write of ",
                                 file_.path.string(), " at offset ", file_offset, " stopped after ", done,
                                 " of ", segment.bytes, " bytes (returned ", moved, ")"));
      }
      done += static_cast<std::size_t>(moved);
    }
    report.bytes += segment.bytes;
  }
  report.direct_bytes = report.bytes;
  report.path = nvidia_fs_version().empty() ? IoPath::cufile_compat : IoPath::cufile_direct;
  report.note = "cuFile: " + cufile_status_;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace cudakit::gds
