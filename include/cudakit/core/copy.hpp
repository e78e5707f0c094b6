#pragma once
// @brief Stream-ordered copies and fills as cudakit's layers make them: checked, and reported to
// the trace hooks (See Note [Runtime trace hooks]) before they are queued.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// cudaMemcpyAsync(dst, src, bytes, kind, stream). Stream-ordered on `stream`; returns before
// the copy completes (a copy from or to pageable host memory may return only once the data is
// staged, as CUDA's does). The copy is reported to the trace hooks first.
// @param dst the destination address.
// @param src the source address.
// @param bytes the bytes to copy.
// @param kind the copy's direction, as cudaMemcpyAsync takes it (cudaMemcpyDefault infers it).
// @param stream the stream the copy is ordered on.
// @throws CudaError when the copy cannot be queued.
void memcpy_async(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                  StreamRef stream);
// cudaMemcpyPeerAsync between two devices' memory. Stream-ordered on `stream`; returns before
// the copy completes. Peer access need not be enabled (the runtime stages the copy if it is not).
// @param dst the destination address, on `dst_device`.
// @param dst_device the destination's device ordinal.
// @param src the source address, on `src_device`.
// @param src_device the source's device ordinal.
// @param bytes the bytes to copy.
// @param stream the stream the copy is ordered on.
// @throws CudaError when the copy cannot be queued.
void memcpy_peer_async(void* dst, int dst_device, const void* src, int src_device,
                       std::size_t bytes, StreamRef stream);
// cudaMemsetAsync(dst, value, bytes, stream). Stream-ordered on `stream`; returns before the
// fill completes.
// @param dst the device address to fill.
// @param value the byte value (its low 8 bits) written to each byte.
// @param bytes the bytes to fill.
// @param stream the stream the fill is ordered on.
// @throws CudaError when the fill cannot be queued.
void memset_async(void* dst, int value, std::size_t bytes, StreamRef stream);

}  // namespace cudakit
