#pragma once
// StreamGuard: the C++ form of `with torch.cuda.stream(s):` — makes `s` and its device current
// for the scope, and restores the previous stream and device afterwards.

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

class StreamGuard {
 public:
  explicit StreamGuard(StreamRef stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  [[nodiscard]] StreamRef original_stream() const noexcept { return original_; }
  [[nodiscard]] StreamRef current_stream() const noexcept { return current_; }

 private:
  DeviceGuard device_guard_;
  StreamRef original_;
  StreamRef current_;
};

}  // namespace cudakit
