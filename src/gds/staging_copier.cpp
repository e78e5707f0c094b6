#include "cudakit/gds/staging_copier.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::gds {

void* HostStagingCopier::allocate_staging(std::size_t bytes) {
  constexpr std::size_t kAlignment = 4096;
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* buffer = std::aligned_alloc(kAlignment, rounded);
  if (buffer == nullptr) {
    throw OutOfMemoryError("HostStagingCopier::allocate_staging",
                           detail::concat("a bounce buffer of ", rounded, " bytes"), rounded);
  }
  return buffer;
}

void HostStagingCopier::free_staging(void* buffer) noexcept { std::free(buffer); }

void HostStagingCopier::copy_to_destination(void* destination, const void* staging,
                                            std::size_t bytes, int) {
  std::memcpy(destination, staging, bytes);
}

void HostStagingCopier::copy_from_source(void* staging, const void* source, std::size_t bytes, int) {
  std::memcpy(staging, source, bytes);
}

}  // namespace cudakit::gds
