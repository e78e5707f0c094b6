#pragma once
// The engine's copy step for device memory: pinned bounce buffers from the pinned host
// allocator, cudaMemcpyAsync on the caller's stream, one event per bounce buffer.
// See Note [The copy seam] in gds/staging_copier.hpp.

#include <cuda_runtime_api.h>

#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/gds/staging_copier.hpp"

namespace cudakit::gds::detail {

class CudaStagingCopier final : public StagingCopier {
 public:
  // Copies queued on `stream`, whose device owns the memory. No CUDA call until prepare_slots.
  explicit CudaStagingCopier(StreamRef stream) : stream_(stream) {}
  ~CudaStagingCopier() override;
  CudaStagingCopier(const CudaStagingCopier&) = delete;
  CudaStagingCopier& operator=(const CudaStagingCopier&) = delete;

  void prepare_slots(int count) override;
  [[nodiscard]] void* allocate_staging(std::size_t bytes) override;
  void free_staging(void* buffer) noexcept override;
  void copy_to_destination(void* destination, const void* staging, std::size_t bytes, int slot) override;
  void copy_from_source(void* staging, const void* source, std::size_t bytes, int slot) override;
  void wait(int slot) override;

 private:
  void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, int slot);

  StreamRef stream_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace cudakit::gds::detail
