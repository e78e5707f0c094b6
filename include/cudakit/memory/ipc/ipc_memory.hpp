#pragma once
// @brief IpcMemory: a block of another process's caching allocator, opened in this one (the importer's
// side of torch's CUDA IPC: rebuild_cuda_tensor / getIpcDevPtr). It owns the mapping and this
// process's registration in the block's ref-count record, and closes both on destruction. See
// memory/ipc/ipc_memory_export.hpp for the exporter's side, lifetimes and stream ordering.

#include <cstddef>
#include <memory>

#include "cudakit/memory/ipc/ipc_memory_handle.hpp"

namespace cudakit::memory {

// An opened block of another process's memory: move-only; closes on destruction. One object
// is not safe to use from several threads at once.
class IpcMemory {
 public:
  // Opens `handle` (an expandable one with its descriptors, which it takes over) on the device
  // whose UUID the handle names, and registers this process in the block's record, so that the
  // exporter keeps the block until close(). The memory holds what the exporter's completed work
  // wrote: wait for the exporter's interprocess event, or be told it synchronized, before
  // reading. Queues no device work.
  // @param handle the exporter's handle; taken over (its descriptors are closed once mapped).
  // @return the open block.
  // @throws InvalidArgumentError when the handle comes from another machine (its boot id is not
  // this machine's: the message gives both), from this process, names a device not visible
  // here, or lacks its descriptors.
  // @throws StateError when the exporter has already released the block (its record is gone)
  // or exited.
  // @throws CudaError when the runtime or driver cannot map the memory.
  [[nodiscard]] static IpcMemory open(IpcMemoryHandle handle);

  // close(), with failures logged.
  ~IpcMemory();
  // Takes over `other`'s mapping; `other` is closed afterwards (its accessors throw).
  // @param other the block to move from.
  IpcMemory(IpcMemory&& other) noexcept;
  // Closes this block (failures logged), then takes over `other`'s mapping.
  // @param other the block to move from.
  // @return this block.
  IpcMemory& operator=(IpcMemory&& other) noexcept;
  // Not copyable: the mapping and the registration have one owner.
  IpcMemory(const IpcMemory&) = delete;
  // Not copyable: the mapping and the registration have one owner.
  IpcMemory& operator=(const IpcMemory&) = delete;

  // The block in this process's address space, and its size. Every accessor of a moved-from
  // or closed IpcMemory throws StateError.
  // @return the block's device address here.
  // @throws StateError when closed or moved from.
  [[nodiscard]] void* ptr() const;
  // @return the block's size in bytes (its rounded size in the exporter).
  // @throws StateError when closed or moved from.
  [[nodiscard]] std::size_t size() const;
  // This process's ordinal of the block's device.
  // @return the ordinal.
  // @throws StateError when closed or moved from.
  [[nodiscard]] int device() const;
  // @return how the memory is shared (legacy or expandable).
  // @throws StateError when closed or moved from.
  [[nodiscard]] IpcMemoryKind kind() const;
  // @return false once closed or moved from.
  [[nodiscard]] bool is_open() const noexcept { return state_ != nullptr; }

  // Waits for all work on the block's device (cudaDeviceSynchronize: the memory may be used
  // by any stream), unmaps it (cudaIpcCloseMemHandle, or cuMemUnmap and cuMemAddressFree) and
  // unregisters this process, after which the exporter's ipc_collect() may release the block.
  // A second close() does nothing. Blocks the host until the device is idle.
  // @throws CudaError when synchronizing or unmapping fails (this process is unregistered all
  // the same).
  void close();

 private:
  struct State;
  explicit IpcMemory(std::unique_ptr<State> state) noexcept;
  [[nodiscard]] const State& state(const char* api) const;
  std::unique_ptr<State> state_;
};

}  // namespace cudakit::memory
