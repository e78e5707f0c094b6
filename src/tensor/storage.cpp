#include "cudakit/tensor/storage.hpp"

#include <cstdlib>
#include <new>
#include <string>

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/device_allocator.hpp"

namespace cudakit::tensor {
namespace {
// Host buffers are aligned for 16-byte vector access and cache lines.
constexpr std::size_t kHostAlignment = 64;
}  // namespace

std::shared_ptr<Storage> Storage::allocate_host(std::size_t bytes, bool pinned) {
  void* p = nullptr;
  if (pinned) {
    if (bytes > 0) CUDAKIT_CHECK_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
  } else if (bytes > 0) {
    p = ::operator new(bytes, std::align_val_t{kHostAlignment});
  }
  return std::shared_ptr<Storage>(new Storage(p, bytes, Device::cpu(), pinned));
}

std::shared_ptr<Storage> Storage::allocate(std::size_t bytes, Device device, StreamRef stream,
                                           bool pinned) {
  if (device.is_cpu()) return allocate_host(bytes, pinned);
  if (pinned) {
    throw InvalidArgumentError("Storage::allocate", "pinned memory is host memory; asked for " +
                                                        device.str());
  }
  if (stream.device() != device.index) {
    throw InvalidArgumentError("Storage::allocate",
                               "stream of cuda:" + std::to_string(stream.device()) +
                                   " given for memory on " + device.str());
  }
  void* p = memory::allocate(bytes, stream);
  return std::shared_ptr<Storage>(new Storage(p, bytes, device, false));
}

std::shared_ptr<Storage> Storage::wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void()> release) {
  auto storage = std::shared_ptr<Storage>(new Storage(data, bytes, device, false));
  storage->release_ = release ? std::move(release) : [] {};
  return storage;
}

Storage::~Storage() {
  if (release_) {
    try {
      release_();
    } catch (...) {
      // Destructors never throw; wrap()'s contract forbids it, this keeps a broken one contained.
    }
    return;
  }
  if (data_ == nullptr) return;
  if (device_.is_cuda()) {
    try {
      memory::deallocate(data_);  // stream-ordered (see the header)
    } catch (...) {
      // Destructors never throw; a failure here means the runtime is going away.
    }
  } else if (pinned_) {
    CUDAKIT_WARN_CUDA(cudaFreeHost(data_));
  } else {
    ::operator delete(data_, std::align_val_t{kHostAlignment});
  }
}

void Storage::record_stream(StreamRef stream) const {
  if (device_.is_cpu() || data_ == nullptr || release_) return;
  if (stream.device() != device_.index) {
    throw InvalidArgumentError("Storage::record_stream",
                               "stream of cuda:" + std::to_string(stream.device()) +
                                   " recorded for memory on " + device_.str());
  }
  memory::record_stream(data_, stream);
}

}  // namespace cudakit::tensor
