#pragma once
// @brief StagingCopier: the one step of cudakit's I/O engine that touches the destination memory —
// copies between the engine's bounce buffers and the caller's memory. See Note [The copy seam].

#include <cstddef>

namespace cudakit::gds {

// Note [The copy seam]
// The engine (gds/file_io_engine.hpp) reads file chunks into bounce buffers and hands each to a
// StagingCopier, which moves it to its place; for saves, the other way. Everything else —
// chunking, alignment, threads, page-cache checks, error paths, atomic saves — is the engine's
// and runs the same whatever the memory. Two copiers exist: HostStagingCopier (memcpy into host
// memory: loads into plain or pinned host buffers, and the host tests) and the CUDA one inside
// GdsFile (pinned bounce buffers, cudaMemcpyAsync on the caller's stream, an event per buffer).
//
// Each bounce buffer is a numbered slot. wait(slot) returns once the copy last queued for that
// slot has finished, so its buffer may be refilled (loads) or written to the file (saves). Slots
// are used by one engine thread each; different slots are used concurrently.

// The engine's copy step between its bounce buffers and the caller's memory (See Note [The copy
// seam] above). Implementations must allow calls for different slots from different threads at
// once.
class StagingCopier {
 public:
  // Frees what prepare_slots made; the engine has freed every buffer first.
  virtual ~StagingCopier() = default;
  // `count` slots, numbered 0..count-1; called once, before any copy.
  // @param count the number of slots: the engine's threads times buffers per thread
  virtual void prepare_slots(int count) = 0;
  // A bounce buffer of `bytes`, aligned to at least 4096 bytes (O_DIRECT's alignment).
  // @param bytes the size in bytes
  // @return the buffer, to be given back with free_staging
  [[nodiscard]] virtual void* allocate_staging(std::size_t bytes) = 0;
  // Frees a buffer from allocate_staging; every slot has been waited for first. Never throws.
  // @param buffer a buffer allocate_staging returned
  virtual void free_staging(void* buffer) noexcept = 0;
  // Queues bounce buffer -> destination.
  // @param destination where the bytes go in the caller's memory
  // @param staging the bounce buffer holding them
  // @param bytes how many
  // @param slot the slot the bounce buffer belongs to: wait(slot) waits for this copy
  virtual void copy_to_destination(void* destination, const void* staging, std::size_t bytes,
                                   int slot) = 0;
  // Queues source -> bounce buffer; the bytes are there once wait(slot) returns.
  // @param staging the bounce buffer
  // @param source where the bytes come from in the caller's memory
  // @param bytes how many
  // @param slot the slot the bounce buffer belongs to
  virtual void copy_from_source(void* staging, const void* source, std::size_t bytes, int slot) = 0;
  // Blocks until the last copy queued on `slot` has finished (at once when none was).
  // @param slot a slot number below prepare_slots' count
  virtual void wait(int slot) = 0;
};

// Copies with memcpy, at once: for destinations in host memory. Bounce buffers are plain
// aligned host memory.
class HostStagingCopier final : public StagingCopier {
 public:
  // Nothing to prepare: copies finish before they return.
  void prepare_slots(int) override {}
  // A 4096-byte aligned host buffer (std::aligned_alloc, the size rounded up to 4096).
  // @param bytes the size
  // @return the buffer
  // @throws OutOfMemoryError when host memory runs out.
  [[nodiscard]] void* allocate_staging(std::size_t bytes) override;
  // Frees a buffer of allocate_staging.
  // @param buffer the buffer
  void free_staging(void* buffer) noexcept override;
  // memcpy from the bounce buffer, finished when it returns.
  // @param destination where the bytes go
  // @param staging the bounce buffer
  // @param bytes how many
  // @param slot unused: the copy is already done
  void copy_to_destination(void* destination, const void* staging, std::size_t bytes,
                           int slot) override;
  // memcpy into the bounce buffer, finished when it returns.
  // @param staging the bounce buffer
  // @param source where the bytes come from
  // @param bytes how many
  // @param slot unused: the copy is already done
  void copy_from_source(void* staging, const void* source, std::size_t bytes, int slot) override;
  // Returns at once: every copy finished when it was made.
  void wait(int) override {}
};

}  // namespace cudakit::gds
