#include "cudakit/memory/file_descriptor.hpp"

#include <unistd.h>

namespace cudakit::memory {

void FileDescriptor::reset() noexcept {
  // Not retried on EINTR: on Linux the descriptor is closed even then.
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

}  // namespace cudakit::memory
