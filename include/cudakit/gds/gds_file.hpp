#pragma once
// @brief GdsFile: a file that loads into and saves from device (or host) memory by the fastest path
// this machine has (torch.cuda.gds.GdsFile, which needs cuFile and nvidia-fs, and fails without).

#include <fcntl.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <future>
#include <mutex>
#include <span>
#include <string>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/gds/file_io_engine.hpp"
#include "cudakit/gds/gds_options.hpp"
#include "cudakit/gds/io_report.hpp"
#include "cudakit/memory/file_descriptor.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::gds {

// Note [Four paths]
// A transfer between a file and device memory goes one of four ways, and every call's IoReport
// says which (IoReport::path):
// - cufile_direct: cuFile with nvidia-fs loaded: the storage DMAs into device memory. Used
//   automatically where libcufile loads, nvidia-fs is present and cuFile registers the file.
// - cufile_compat: cuFile without nvidia-fs, where libcufile falls back to its own POSIX reads.
//   Used only when the caller requires cuFile (CuFileUse::required): cudakit's engine does the
//   same job with parallel reads, and is never the slower of the two.
// - cudakit_odirect: cudakit's engine (Note [The engine]): parallel O_DIRECT reads or writes
//   into pinned bounce buffers, overlapped with cudaMemcpyAsync to or from the device.
// - buffered: the same engine through the page cache, where the file system refuses O_DIRECT
//   (the note says so), where O_DIRECT is turned off, or where the bytes are already in the page
//   cache (O_DIRECT would read them from the disk again).
// Host destinations (plain or pinned host memory, CPU tensors) always take the engine, with
// memcpy as its copy step.

// One buffer of a batch: `bytes` at `memory` (device or host), at `file_offset` in the file.
using IoRequest = IoSegment;

// One tensor of a batch: its bytes (contiguous) at `file_offset`.
struct TensorAt {
  tensor::Tensor tensor;
  std::uint64_t file_offset = 0;
};

// A transfer running on a thread of its own (GdsFile::load_async / save_async). Destroying it
// waits for the transfer.
class IoTicket {
 public:
  explicit IoTicket(std::future<IoReport> future) : future_(std::move(future)) {}
  // Blocks until the transfer is done and returns its report. A load's bytes are in place (host)
  // or its copies queued on the stream (device: work queued on that stream after wait() sees the
  // bytes); a save's bytes are in the file. @throws whatever the transfer threw. Once only.
  IoReport wait() { return future_.get(); }
  [[nodiscard]] bool ready() const {
    return future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::future<IoReport> future_;
};

class GdsFile {
 public:
  // Opens `path` with open(2)'s `flags` (O_RDONLY to load, O_RDWR | O_CREAT to save; new files
  // get mode 0644), and a second O_DIRECT descriptor where the file system takes one; registers
  // the file with cuFile where options.cufile allows (register_handle).
  // @throws IoError naming the path, the flags and errno when the file cannot be opened;
  // CuFileError when options.cufile is `required` and cuFile cannot take the file.
  explicit GdsFile(std::filesystem::path path, int flags = O_RDONLY,
                   GdsOptions options = GdsOptions::from_environment());
  ~GdsFile();
  GdsFile(GdsFile&&) = delete;  // async transfers hold `this`
  GdsFile& operator=(GdsFile&&) = delete;

  // cuFile registration of the file (torch's register_handle / deregister_handle). Where cuFile
  // cannot take it, register_handle records why (cufile_status()) and returns false, or, with
  // CuFileUse::required, throws CuFileError. Idempotent.
  bool register_handle();
  void deregister_handle() noexcept;
  [[nodiscard]] bool handle_registered() const noexcept { return cufile_handle_ != nullptr; }
  // Why cuFile is not used for this file, or "registered (nvidia-fs present)".
  [[nodiscard]] const std::string& cufile_status() const noexcept { return cufile_status_; }

  // cuFileBufRegister for a device buffer that cuFile transfers will use again and again
  // (torch's gds_register_buffer). Returns false, doing nothing, where the file is not on the
  // cuFile path (cudakit's engine needs no registration: its bounce buffers are pinned).
  // @throws CuFileError when cuFile refuses the buffer.
  bool register_buffer(void* device_memory, std::size_t bytes);
  void deregister_buffer(void* device_memory);

  // Reads `bytes` at `offset` of the file into `memory` (device or host memory). Device copies
  // are queued on `stream` (default: the current stream of the memory's device), after the work
  // already there; returns once the bytes are in place.
  // @throws InvalidArgumentError for a read past the end (naming path, offset, size and the file's
  // size); IoError for a failed or short read; CuFileError on the cuFile path.
  IoReport load(void* memory, std::size_t bytes, std::uint64_t offset = 0, OptionalStream stream = {});
  // The tensor's bytes (contiguous; on any device) from `offset`.
  IoReport load(const tensor::Tensor& destination, std::uint64_t offset = 0, OptionalStream stream = {});
  // Writes `bytes` of `memory` at `offset` (the file grows as needed); device copies queued on
  // `stream` after the work already there. Returns once the bytes are written (and synced with
  // options.fsync). @throws IoError naming path, offset and the bytes written of those wanted for
  // a write that did not complete: a save is never reported done when it is not.
  IoReport save(const void* memory, std::size_t bytes, std::uint64_t offset = 0, OptionalStream stream = {});
  IoReport save(const tensor::Tensor& source, std::uint64_t offset = 0, OptionalStream stream = {});

  // Many buffers or tensors in one call: chunks of all of them share the engine's threads
  // (one engine run per kind of memory among them: host, or each device). Stream ordering and
  // errors as load() and save(); a batch that fails has not completed as a whole.
  IoReport load_batch(std::span<const IoRequest> requests, OptionalStream stream = {});
  IoReport load_batch(std::span<const TensorAt> tensors, OptionalStream stream = {});
  IoReport save_batch(std::span<const IoRequest> requests, OptionalStream stream = {});
  IoReport save_batch(std::span<const TensorAt> tensors, OptionalStream stream = {});

  // load / save on a thread of their own. The memory (and tensors, which the ticket keeps
  // alive) must not be touched until the ticket's wait() returns.
  [[nodiscard]] IoTicket load_async(void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream = {});
  [[nodiscard]] IoTicket load_async(const tensor::Tensor& destination, std::uint64_t offset, OptionalStream stream = {});
  [[nodiscard]] IoTicket save_async(const void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream = {});
  [[nodiscard]] IoTicket save_async(const tensor::Tensor& source, std::uint64_t offset, OptionalStream stream = {});

  // fsync(2): what was saved is on the storage. @throws IoError.
  void sync();
  // The file's size now. @throws IoError.
  [[nodiscard]] std::uint64_t size() const;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return file_.path; }
  [[nodiscard]] const std::string& file_system() const noexcept { return file_system_; }
  [[nodiscard]] const IoTuning& tuning() const noexcept { return tuning_; }
  // Whether an O_DIRECT descriptor is open, and why not where it is not.
  [[nodiscard]] bool o_direct() const noexcept { return file_.direct_fd >= 0; }
  [[nodiscard]] const std::string& o_direct_status() const noexcept { return file_.direct_refusal; }

  // The last completed call's report, and the sums over all calls (thread-safe).
  [[nodiscard]] IoReport last_io() const;
  [[nodiscard]] IoStatistics statistics() const;

 private:
  IoReport transfer(IoDirection direction, std::span<const IoSegment> segments, OptionalStream stream);
  IoReport transfer_group(IoDirection direction, int device, std::span<const IoSegment> segments,
                          OptionalStream stream);
  IoReport cufile_transfer(IoDirection direction, std::span<const IoSegment> segments, StreamRef stream);
  IoReport record(IoReport report);

  GdsOptions options_;
  memory::FileDescriptor buffered_;
  memory::FileDescriptor direct_;
  EngineFile file_;
  std::string file_system_;
  IoTuning tuning_;
  void* cufile_handle_ = nullptr;
  std::string cufile_status_;
  mutable std::mutex reports_mutex_;
  IoReport last_io_;
  IoStatistics statistics_;
};

}  // namespace cudakit::gds
