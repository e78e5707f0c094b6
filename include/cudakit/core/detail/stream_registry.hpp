#pragma once
// Which streams are known to exist: the ones cudakit::Stream created and has not destroyed (or
// released), each under a serial number that is never reused, and the default streams. Higher
// layers ask before they touch a stream on behalf of someone who did not name it just now (the
// caching allocator, recording an event at a free: See Note [Memory across streams] in
// src/memory/caching_allocator.cpp).

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cudakit::detail {

// The serial under which `stream` is known to exist now; 0 when it is not known (a stream the
// program created itself, or one destroyed). The default streams (null, cudaStreamLegacy,
// cudaStreamPerThread) always exist: kDefaultStreamSerial.
inline constexpr std::uint64_t kDefaultStreamSerial = 1;
[[nodiscard]] std::uint64_t known_stream_serial(cudaStream_t stream) noexcept;
// Called by cudakit::Stream as it creates and before it destroys or releases a stream.
void note_stream_created(cudaStream_t stream);
void note_stream_gone(cudaStream_t stream) noexcept;

}  // namespace cudakit::detail
