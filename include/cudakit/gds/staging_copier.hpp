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
class StagingCopier {
 public:
  virtual ~StagingCopier() = default;
  // `count` slots, numbered 0..count-1; called once, before any copy.
  virtual void prepare_slots(int count) = 0;
  // A bounce buffer of `bytes`, aligned to at least 4096 bytes (O_DIRECT's alignment).
  [[nodiscard]] virtual void* allocate_staging(std::size_t bytes) = 0;
  // Frees a buffer from allocate_staging; every slot has been waited for first. Never throws.
  virtual void free_staging(void* buffer) noexcept = 0;
  // Queues bounce buffer -> destination.
  virtual void copy_to_destination(void* destination, const void* staging, std::size_t bytes,
                                   int slot) = 0;
  // Queues source -> bounce buffer; the bytes are there once wait(slot) returns.
  virtual void copy_from_source(void* staging, const void* source, std::size_t bytes, int slot) = 0;
  // Blocks until the last copy queued on `slot` has finished (at once when none was).
  virtual void wait(int slot) = 0;
};

// Copies with memcpy, at once: for destinations in host memory. Bounce buffers are plain
// aligned host memory.
class HostStagingCopier final : public StagingCopier {
 public:
  void prepare_slots(int) override {}
  [[nodiscard]] void* allocate_staging(std::size_t bytes) override;
  void free_staging(void* buffer) noexcept override;
  void copy_to_destination(void* destination, const void* staging, std::size_t bytes,
                           int slot) override;
  void copy_from_source(void* staging, const void* source, std::size_t bytes, int slot) override;
  void wait(int) override {}
};

}  // namespace cudakit::gds
