#pragma once
// @brief GdsOptions: how GdsFile moves bytes; defaults per file system, overridable in code and
// through CUDAKIT_GDS_* variables.

#include <cstddef>
#include <cstdint>
#include <string>

#include "cudakit/gds/file_io_engine.hpp"

namespace cudakit::gds {

// Whether to try cuFile before cudakit's own engine.
enum class CuFileUse : std::uint8_t {
  automatic,  // where libcufile loads and registers the file; else cudakit's engine
  never,      // cudakit's engine only
  required,   // cuFile or an error (CuFileError) naming why it cannot take the file
};

// How GdsFile moves bytes: the engine's settings (0: the file system's default), O_DIRECT, the
// page-cache check, fsync and cuFile. A value type; from_environment() gives the defaults with
// the CUDAKIT_GDS_* variables applied.
struct GdsOptions {
  // 0: the file system's default (See Note [Tuning per file system] in src/gds/io_tuning.cpp).
  std::size_t chunk_bytes = 0;  // a multiple of the O_DIRECT alignment
  int io_threads = 0;           // threads doing file I/O in one call
  int buffers_per_thread = 2;   // bounce buffers per thread: 2 overlaps one read with one copy
  bool o_direct = true;         // false: every byte through the page cache
  // Chunks whose pages are all in the page cache are read through it: O_DIRECT would go to the
  // disk for bytes that memory already holds.
  bool page_cache_check = true;
  // Chunks the page cache does not hold: O_DIRECT, buffered with read-ahead, or whichever this
  // process measured faster on the file system (automatic).
  ColdReads cold_reads = ColdReads::automatic;
  bool fsync = false;           // save(): fsync before returning
  CuFileUse cufile = CuFileUse::automatic;  // whether to try cuFile first

  // The defaults overridden by the environment:
  //   CUDAKIT_GDS_CHUNK_BYTES=8388608 (or 8M, 512K)   CUDAKIT_GDS_IO_THREADS=8
  //   CUDAKIT_GDS_BUFFERS_PER_THREAD=2   CUDAKIT_GDS_O_DIRECT=0|1
  //   CUDAKIT_GDS_PAGE_CACHE_CHECK=0|1   CUDAKIT_GDS_FSYNC=0|1   CUDAKIT_GDS_CUFILE=auto|never|required
  //   CUDAKIT_GDS_COLD_READS=auto|direct|buffered
  // @return the options
  // @throws InvalidArgumentError naming the variable and its value when one does not parse.
  [[nodiscard]] static GdsOptions from_environment();
  // Sets one field from a variable's text (the name without CUDAKIT_GDS_, e.g. "IO_THREADS").
  // @param name the variable's name without the prefix: CHUNK_BYTES, IO_THREADS, ...
  // @param value its text, in the forms listed above
  // @throws InvalidArgumentError for an unknown name or a value that does not parse.
  void set(const std::string& name, const std::string& value);
};

}  // namespace cudakit::gds
