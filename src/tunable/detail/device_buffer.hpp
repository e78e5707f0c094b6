#pragma once
// Device memory from the caching allocator for the length of a scope (a call's workspace, the
// tuner's operands), returned stream-ordered: work queued on the allocating stream may still use
// it after the owner is gone.

#include <cstddef>
#include <exception>
#include <utility>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/device_allocator.hpp"

namespace cudakit::tunable::detail {

class DeviceBuffer {
 public:
  // No allocation for 0 bytes (get() is null).
  DeviceBuffer(std::size_t bytes, StreamRef stream) : ptr_(bytes ? memory::allocate(bytes, stream) : nullptr) {}
  ~DeviceBuffer() {
    try {
      memory::deallocate(ptr_);
    } catch (const std::exception&) {
      // Only at exit, with the allocator gone: the memory goes with the process.
    }
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] void* get() const noexcept { return ptr_; }

 private:
  void* ptr_;
};

}  // namespace cudakit::tunable::detail
