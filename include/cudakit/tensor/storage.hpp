#pragma once
// @brief Storage: the memory behind one or more tensors, shared by views.
//
// Device memory comes from the device's caching allocator (cudakit::memory::allocate) on a
// stream and goes back to it through memory::deallocate when the last owner lets go: the block is
// reusable at once by later work on the allocation stream, and by other streams only after the
// work recorded with record_stream() — the contract of torch's Tensor.record_stream. Host
// memory is plain aligned memory, or page-locked (cudaHostAlloc) when asked for, so that copies
// from and to it can be asynchronous.

#include <cstddef>
#include <functional>
#include <memory>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tensor/device.hpp"

namespace cudakit::tensor {

class Storage {
 public:
  // `bytes` of memory on `device`; for CUDA devices allocated on `stream` (which must be on that
  // device), for the host page-locked when `pinned`.
  // @throws OutOfMemoryError, CudaError, InvalidArgumentError (stream of another device).
  static std::shared_ptr<Storage> allocate(std::size_t bytes, Device device, StreamRef stream,
                                           bool pinned = false);
  // Host memory only (no stream needed, works without a GPU).
  static std::shared_ptr<Storage> allocate_host(std::size_t bytes, bool pinned = false);
  // Memory another library owns (torch.from_blob; DLPack's from_dlpack): `bytes` at `data` on
  // `device`, handed back by calling `release` once, from whichever thread drops the last owner.
  // cudakit neither frees nor caches it, and record_stream() is a no-op on it: the owner's release
  // decides when the memory is reused. `release` must not throw.
  static std::shared_ptr<Storage> wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void()> release);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t nbytes() const noexcept { return bytes_; }
  [[nodiscard]] Device device() const noexcept { return device_; }
  [[nodiscard]] bool is_pinned() const noexcept { return pinned_; }
  // True for memory made by wrap(), which another library owns.
  [[nodiscard]] bool is_external() const noexcept { return static_cast<bool>(release_); }
  // Marks the memory as used by `stream`, so that its release waits for the work queued on
  // `stream` so far. No-op for host memory. @throws InvalidArgumentError for another device.
  void record_stream(StreamRef stream) const;

 private:
  Storage(void* data, std::size_t bytes, Device device, bool pinned) noexcept
      : data_(data), bytes_(bytes), device_(device), pinned_(pinned) {}
  void* data_;
  std::size_t bytes_;
  Device device_;
  bool pinned_;
  std::function<void()> release_;  // set by wrap(): the owner's release instead of a free
};

}  // namespace cudakit::tensor
