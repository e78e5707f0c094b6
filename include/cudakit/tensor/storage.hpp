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

// A block of bytes on the host or one CUDA device, owned through shared_ptr by the tensors that
// view it (torch.UntypedStorage). Not copyable; immutable after creation apart from the bytes
// themselves. Its memory is uninitialized.
class Storage {
 public:
  // `bytes` of memory on `device`; for CUDA devices allocated on `stream` (which must be on that
  // device), for the host page-locked when `pinned`. The allocation queues no work: device memory
  // is usable at once on `stream`, on others after an event.
  // @param bytes the size; 0 gives a storage with a null data()
  // @param device the host or a CUDA device (a resolved index)
  // @param stream for CUDA memory, the stream it is allocated for (memory::allocate); ignored for
  //   the host
  // @param pinned host memory only: page-locked (cudaHostAlloc) rather than pageable
  // @return the new storage, its only owner
  // @throws OutOfMemoryError when the caching allocator cannot provide the memory
  // @throws CudaError when pinned host memory cannot be allocated.
  // @throws InvalidArgumentError for a stream of another device, or `pinned` with a CUDA device.
  static std::shared_ptr<Storage> allocate(std::size_t bytes, Device device, StreamRef stream,
                                           bool pinned = false);
  // Host memory only (no stream needed, works without a GPU unless `pinned`): 64-byte aligned.
  // @param bytes the size; 0 gives a storage with a null data()
  // @param pinned page-locked (cudaHostAlloc, portable to every device) rather than pageable
  // @return the new storage, its only owner
  // @throws CudaError when pinned memory cannot be allocated.
  static std::shared_ptr<Storage> allocate_host(std::size_t bytes, bool pinned = false);
  // Memory another library owns (torch.from_blob; DLPack's from_dlpack): `bytes` at `data` on
  // `device`, handed back by calling `release` once, from whichever thread drops the last owner.
  // cudakit neither frees nor caches it, and record_stream() is a no-op on it: the owner's release
  // decides when the memory is reused. `release` must not throw.
  // @param data the memory's first byte
  // @param bytes its size
  // @param device where it lives
  // @param release called once when the last owner goes (null: nothing is called)
  // @return the storage, its only owner
  static std::shared_ptr<Storage> wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void()> release);

  // Gives the memory back: device memory to the caching allocator (stream-ordered, see above;
  // the host does not wait), pinned memory to cudaFreeHost, wrapped memory to its `release`.
  // Never throws.
  ~Storage();
  // Not copyable: tensors share a Storage through shared_ptr.
  Storage(const Storage&) = delete;
  // Not copyable.
  Storage& operator=(const Storage&) = delete;

  // @return the first byte (null for an empty storage).
  [[nodiscard]] void* data() const noexcept { return data_; }
  // @return the size in bytes.
  [[nodiscard]] std::size_t nbytes() const noexcept { return bytes_; }
  // @return where the memory lives.
  [[nodiscard]] Device device() const noexcept { return device_; }
  // @return whether this is page-locked host memory from allocate(..., pinned = true).
  [[nodiscard]] bool is_pinned() const noexcept { return pinned_; }
  // True for memory made by wrap(), which another library owns.
  // @return whether the memory is another library's
  [[nodiscard]] bool is_external() const noexcept { return static_cast<bool>(release_); }
  // Marks the memory as used by `stream`, so that its release waits for the work queued on
  // `stream` so far. No-op for host memory and wrapped memory. Returns at once.
  // @param stream a stream of the storage's device that uses the memory
  // @throws InvalidArgumentError for another device.
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
