#pragma once
// @brief Stream-ordered copies and fills as cudakit's layers make them: checked, and reported to
// the trace hooks (See Note [Runtime trace hooks]) before they are queued.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// cudaMemcpyAsync(dst, src, bytes, kind, stream). @throws CudaError.
void memcpy_async(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                  StreamRef stream);
// cudaMemcpyPeerAsync between two devices' memory. @throws CudaError.
void memcpy_peer_async(void* dst, int dst_device, const void* src, int src_device,
                       std::size_t bytes, StreamRef stream);
// cudaMemsetAsync(dst, value, bytes, stream). @throws CudaError.
void memset_async(void* dst, int value, std::size_t bytes, StreamRef stream);

}  // namespace cudakit
