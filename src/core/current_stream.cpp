#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/core/stream_pool.hpp"

namespace cudakit {
namespace {

// Per thread, per device; null means the device's default stream.
std::vector<cudaStream_t>& thread_current_streams() {
  thread_local std::vector<cudaStream_t> streams(static_cast<std::size_t>(device_count()), nullptr);
  return streams;
}

struct DeviceStreamPool {
  std::once_flag created;
  std::array<cudaStream_t, kStreamsPerPool> low{};
  std::array<cudaStream_t, kStreamsPerPool> high{};
  std::atomic<unsigned> next_low{0};
  std::atomic<unsigned> next_high{0};
};

DeviceStreamPool& pool_of(int device) {
  // One pool per visible device, made once; pools live until exit (like torch's, they are
  // never destroyed, so references handed out stay valid in static destructors).
  static const std::unique_ptr<DeviceStreamPool[]> pools(new DeviceStreamPool[device_count()]);
  return pools[device];
}

}  // namespace

StreamRef current_stream(int device) {
  device = detail::resolve_device(device, "current_stream");
  return StreamRef(thread_current_streams()[device], device);
}

StreamRef default_stream(int device) {
  return StreamRef(nullptr, detail::resolve_device(device, "default_stream"));
}

void set_current_stream(StreamRef stream) {
  const int device = detail::resolve_device(stream.device(), "set_current_stream");
  thread_current_streams()[device] = stream.handle();
}

StreamRef get_stream_from_pool(bool high_priority, int device) {
  device = detail::resolve_device(device, "get_stream_from_pool");
  DeviceStreamPool& pool = pool_of(device);
  std::call_once(pool.created, [&] {
    DeviceGuard guard(device);
    int least = 0, greatest = 0;
    CUDAKIT_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int i = 0; i < kStreamsPerPool; ++i) {
      CUDAKIT_CHECK_CUDA(cudaStreamCreateWithPriority(&pool.low[i], cudaStreamNonBlocking, least));
      CUDAKIT_CHECK_CUDA(
          cudaStreamCreateWithPriority(&pool.high[i], cudaStreamNonBlocking, greatest));
    }
  });
  auto& next = high_priority ? pool.next_high : pool.next_low;
  const auto& streams = high_priority ? pool.high : pool.low;
  return StreamRef(streams[next.fetch_add(1, std::memory_order_relaxed) % kStreamsPerPool], device);
}

StreamGuard::StreamGuard(StreamRef stream)
    : device_guard_(stream.device()),
      original_(cudakit::current_stream(stream.device())),
      current_(stream) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() { thread_current_streams()[original_.device()] = original_.handle(); }

}  // namespace cudakit
