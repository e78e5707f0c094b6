#include "cudakit/core/copy.hpp"

#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit {

void memcpy_async(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                  StreamRef stream) {
  CUDAKIT_TRACE({.kind = TraceEventKind::memcpy, .device = stream.device(),
                 .stream = stream.handle(), .pointer = dst, .source = src, .bytes = bytes,
                 .copy_kind = kind});
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream.handle()));
}

void memcpy_peer_async(void* dst, int dst_device, const void* src, int src_device,
                       std::size_t bytes, StreamRef stream) {
  CUDAKIT_TRACE({.kind = TraceEventKind::memcpy, .device = stream.device(),
                 .stream = stream.handle(), .pointer = dst, .source = src, .bytes = bytes,
                 .copy_kind = cudaMemcpyDeviceToDevice});
  CUDAKIT_CHECK_CUDA(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream.handle()));
}

void memset_async(void* dst, int value, std::size_t bytes, StreamRef stream) {
  CUDAKIT_TRACE({.kind = TraceEventKind::memset, .device = stream.device(),
                 .stream = stream.handle(), .pointer = dst, .bytes = bytes});
  CUDAKIT_CHECK_CUDA(cudaMemsetAsync(dst, value, bytes, stream.handle()));
}

}  // namespace cudakit
