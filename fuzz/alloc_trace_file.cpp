// load_alloc_trace: a trace file as `cudakit alloc-replay` and the benchmarks read it, plain or
// gzip-compressed (zlib decides by the magic bytes). There is no in-memory entry for the gzip
// form, so each input is written to an in-memory file (memfd) and read back by its path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "cudakit/memory/alloc_trace.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("alloc_trace", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    std::perror("fuzz: cannot write the input to a memfd");
    std::abort();
  }
  return cudakit::fuzz::read_input(data, size, [](std::string_view) {
    (void)cudakit::memory::load_alloc_trace(path);
  });
}
