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
  tensor::Tensor tensor;  // a contiguous tensor on any device (shared, kept alive by the call)
  std::uint64_t file_offset = 0;  // where its first byte is in the file
};

// A transfer running on a thread of its own (GdsFile::load_async / save_async). Destroying it
// waits for the transfer.
class IoTicket {
 public:
  // The ticket of a transfer started with std::async (GdsFile makes them).
  // @param future the transfer's result
  explicit IoTicket(std::future<IoReport> future) : future_(std::move(future)) {}
  // Blocks until the transfer is done and returns its report. A load's bytes are in place (host)
  // or its copies queued on the stream (device: work queued on that stream after wait() sees the
  // bytes); a save's bytes are in the file. @throws whatever the transfer threw. Once only.
  // @return the transfer's report
  IoReport wait() { return future_.get(); }
  // Whether wait() would return at once. Does not block; not after wait().
  // @return true once the transfer has finished (or failed)
  [[nodiscard]] bool ready() const {
    return future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::future<IoReport> future_;
};

// An open file that loads into and saves from device or host memory (See Note [Four paths]).
// Not copyable or movable. Transfers may run on several threads at once (the async calls do);
// their reports are recorded under a lock. The cuFile registrations (register_handle,
// register_buffer and their inverses) must not race with transfers.
class GdsFile {
 public:
  // Opens `path` with open(2)'s `flags` (O_RDONLY to load, O_RDWR | O_CREAT to save; new files
  // get mode 0644), and a second O_DIRECT descriptor where the file system takes one; registers
  // the file with cuFile where options.cufile allows (register_handle).
  // @param path the file
  // @param flags open(2)'s flags
  // @param options how to move bytes (default: the CUDAKIT_GDS_* variables)
  // @throws IoError naming the path, the flags and errno when the file cannot be opened.
  // @throws CuFileError when options.cufile is `required` and cuFile cannot take the file.
  explicit GdsFile(std::filesystem::path path, int flags = O_RDONLY,
                   GdsOptions options = GdsOptions::from_environment());
  // Deregisters the file from cuFile and closes it. Wait for every ticket first: async
  // transfers use the file.
  ~GdsFile();
  GdsFile(GdsFile&&) = delete;  // async transfers hold `this`
  // Not movable (async transfers hold `this`).
  GdsFile& operator=(GdsFile&&) = delete;

  // cuFile registration of the file (torch's register_handle / deregister_handle). Where cuFile
  // cannot take it, register_handle records why (cufile_status()) and returns false, or, with
  // CuFileUse::required, throws CuFileError. Idempotent.
  // @return whether the file is registered (transfers to device memory then go through cuFile)
  // @throws CuFileError with CuFileUse::required, when cuFile cannot take the file.
  bool register_handle();
  // Ends the cuFile registration (later transfers take cudakit's engine). Idempotent.
  void deregister_handle() noexcept;
  // @return whether the file is registered with cuFile.
  [[nodiscard]] bool handle_registered() const noexcept { return cufile_handle_ != nullptr; }
  // Why cuFile is not used for this file, or "registered (nvidia-fs present)".
  // @return the status text
  [[nodiscard]] const std::string& cufile_status() const noexcept { return cufile_status_; }

  // cuFileBufRegister for a device buffer that cuFile transfers will use again and again
  // (torch's gds_register_buffer). Returns false, doing nothing, where the file is not on the
  // cuFile path (cudakit's engine needs no registration: its bounce buffers are pinned).
  // @param device_memory the buffer's start
  // @param bytes its size
  // @return whether the buffer was registered
  // @throws CuFileError when cuFile refuses the buffer.
  bool register_buffer(void* device_memory, std::size_t bytes);
  // cuFileBufDeregister for a buffer of register_buffer; nothing off the cuFile path.
  // @param device_memory the buffer's start, as registered
  // @throws CuFileError when cuFile refuses.
  void deregister_buffer(void* device_memory);

  // Reads `bytes` at `offset` of the file into `memory` (device or host memory). Device copies
  // are queued on `stream` (default: the current stream of the memory's device), after the work
  // already there; returns once the bytes are in place. The cuFile path synchronizes `stream`
  // first (cuFile knows no streams).
  // @param memory the destination, device or host memory of `bytes` bytes
  // @param bytes how many bytes to read
  // @param offset where in the file they start
  // @param stream the copies' stream, on the memory's device (ignored for host memory)
  // @return which path the bytes took, how many and how fast
  // @throws InvalidArgumentError for a read past the end (naming path, offset, size and the file's
  // size), or a stream of another device than the memory's.
  // @throws IoError for a failed or short read.
  // @throws CuFileError on the cuFile path.
  IoReport load(void* memory, std::size_t bytes, std::uint64_t offset = 0, OptionalStream stream = {});
  // The tensor's bytes (contiguous; on any device) from `offset`. Stream ordering as the
  // pointer overload; returns once the bytes are in place.
  // @param destination a contiguous tensor, filled with its nbytes() bytes
  // @param offset where in the file they start
  // @param stream the copies' stream, on the tensor's device
  // @return the transfer's report
  // @throws InvalidArgumentError for a tensor that is not contiguous, and as the pointer overload.
  // @throws IoError for a failed or short read.
  IoReport load(const tensor::Tensor& destination, std::uint64_t offset = 0, OptionalStream stream = {});
  // Writes `bytes` of `memory` at `offset` (the file grows as needed); device copies queued on
  // `stream` after the work already there. Returns once the bytes are written (and synced with
  // options.fsync).
  // @param memory the source, device or host memory
  // @param bytes how many bytes to write
  // @param offset where in the file they go
  // @param stream the copies' stream, on the memory's device (ignored for host memory)
  // @return the transfer's report
  // @throws IoError naming path, offset and the bytes written of those wanted for
  // a write that did not complete: a save is never reported done when it is not.
  // @throws CuFileError on the cuFile path.
  IoReport save(const void* memory, std::size_t bytes, std::uint64_t offset = 0, OptionalStream stream = {});
  // The tensor's bytes (contiguous; on any device) at `offset`. Stream ordering as the pointer
  // overload; returns once the bytes are written.
  // @param source a contiguous tensor
  // @param offset where in the file its first byte goes
  // @param stream the copies' stream, on the tensor's device
  // @return the transfer's report
  // @throws InvalidArgumentError for a tensor that is not contiguous.
  // @throws IoError for a write that did not complete.
  IoReport save(const tensor::Tensor& source, std::uint64_t offset = 0, OptionalStream stream = {});

  // Many buffers or tensors in one call: chunks of all of them share the engine's threads
  // (one engine run per kind of memory among them: host, or each device). Stream ordering and
  // errors as load() and save(); a batch that fails has not completed as a whole.
  // @param requests the buffers and their offsets (device buffers may be on several devices)
  // @param stream the copies' stream for device memory (default: each device's current stream)
  // @return one report for the whole batch (the path of its largest part)
  // @throws InvalidArgumentError for a read past the end of the file.
  // @throws IoError for a failed or short read.
  IoReport load_batch(std::span<const IoRequest> requests, OptionalStream stream = {});
  // load_batch of tensors (each contiguous, on any device), at their offsets.
  // @param tensors the tensors and their offsets
  // @param stream the copies' stream for device memory
  // @return one report for the whole batch
  // @throws InvalidArgumentError for a tensor that is not contiguous or a read past the end.
  // @throws IoError for a failed or short read.
  IoReport load_batch(std::span<const TensorAt> tensors, OptionalStream stream = {});
  // save of many buffers in one call (see load_batch).
  // @param requests the buffers and their offsets
  // @param stream the copies' stream for device memory
  // @return one report for the whole batch
  // @throws IoError for a write that did not complete.
  IoReport save_batch(std::span<const IoRequest> requests, OptionalStream stream = {});
  // save of many tensors in one call (each contiguous, on any device).
  // @param tensors the tensors and their offsets
  // @param stream the copies' stream for device memory
  // @return one report for the whole batch
  // @throws InvalidArgumentError for a tensor that is not contiguous.
  // @throws IoError for a write that did not complete.
  IoReport save_batch(std::span<const TensorAt> tensors, OptionalStream stream = {});

  // load / save on a thread of their own. The memory (and tensors, which the ticket keeps
  // alive) must not be touched until the ticket's wait() returns. Errors come from wait().
  // @param memory the destination
  // @param bytes how many bytes to read
  // @param offset where in the file they start
  // @param stream the copies' stream (resolved on the transfer's thread when left out: pass it
  //   when the current stream matters)
  // @return the ticket
  [[nodiscard]] IoTicket load_async(void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream = {});
  // load() of a tensor on a thread of its own; the ticket keeps the tensor alive.
  // @param destination a contiguous tensor
  // @param offset where in the file its bytes start
  // @param stream the copies' stream (resolved on the transfer's thread when left out)
  // @return the ticket
  [[nodiscard]] IoTicket load_async(const tensor::Tensor& destination, std::uint64_t offset, OptionalStream stream = {});
  // save() on a thread of its own; `memory` must stay unchanged until wait() returns.
  // @param memory the source
  // @param bytes how many bytes to write
  // @param offset where in the file they go
  // @param stream the copies' stream (resolved on the transfer's thread when left out)
  // @return the ticket
  [[nodiscard]] IoTicket save_async(const void* memory, std::size_t bytes, std::uint64_t offset, OptionalStream stream = {});
  // save() of a tensor on a thread of its own; the ticket keeps the tensor alive.
  // @param source a contiguous tensor
  // @param offset where in the file its first byte goes
  // @param stream the copies' stream (resolved on the transfer's thread when left out)
  // @return the ticket
  [[nodiscard]] IoTicket save_async(const tensor::Tensor& source, std::uint64_t offset, OptionalStream stream = {});

  // fsync(2): what was saved is on the storage. @throws IoError.
  void sync();
  // The file's size now.
  // @return the size in bytes (fstat)
  // @throws IoError.
  [[nodiscard]] std::uint64_t size() const;
  // @return the path the file was opened with.
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return file_.path; }
  // @return the file system's name ("ext4", "xfs", ...; see file_system_name()).
  [[nodiscard]] const std::string& file_system() const noexcept { return file_system_; }
  // @return the engine's settings for this file (its file system's defaults and the options).
  [[nodiscard]] const IoTuning& tuning() const noexcept { return tuning_; }
  // The descriptor without O_DIRECT (for fstat or mmap), valid while this GdsFile lives.
  // @return the descriptor
  [[nodiscard]] int descriptor() const noexcept { return file_.buffered_fd; }
  // Whether an O_DIRECT descriptor is open.
  // @return true where the file system took O_DIRECT (and options allowed it)
  [[nodiscard]] bool o_direct() const noexcept { return file_.direct_fd >= 0; }
  // @return why no O_DIRECT descriptor is open (empty when one is).
  [[nodiscard]] const std::string& o_direct_status() const noexcept { return file_.direct_refusal; }

  // The last completed call's report (thread-safe).
  // @return a copy of the report (an empty one before the first call)
  [[nodiscard]] IoReport last_io() const;
  // The sums over all completed calls (thread-safe).
  // @return a copy of the statistics
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
