#pragma once
// @brief cudakit's own GPUDirect Storage path: parallel O_DIRECT reads and writes of file chunks
// through bounce buffers, overlapped with the copies to or from the destination. See Note [The
// engine].

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "cudakit/gds/io_report.hpp"
#include "cudakit/gds/staging_copier.hpp"

namespace cudakit::gds {

// Note [The engine]
// A call's buffers are cut into chunks at file offsets that are multiples of the chunk size (a
// multiple of the O_DIRECT alignment), so that every chunk but a buffer's first and last is
// aligned at both ends. Threads take chunks from a shared counter; each owns
// `buffers_per_thread` bounce buffers and cycles through them, so that its next read overlaps
// the copy of its previous chunk. A load reads the aligned cover of the chunk,
// [align_down(start), align_up(end)), with O_DIRECT and copies the chunk's bytes out of it; a
// save writes the chunk's aligned middle with O_DIRECT and its unaligned head or tail (only a
// buffer's first and last chunk have one) through the page cache. Chunks whose pages are all in
// the page cache (mincore) are read through it: O_DIRECT would fetch them from the disk again.
// The first error stops every thread; the engine waits for all copies before it frees the
// bounce buffers and rethrows it.

// One buffer of a call: `bytes` at `memory`, from or to the file at `file_offset`.
struct IoSegment {
  void* memory = nullptr;  // the buffer: device or host memory (read for saves, written for loads)
  std::size_t bytes = 0;  // its size; may be 0
  std::uint64_t file_offset = 0;  // where in the file its first byte goes or comes from
};

// How a load reads chunks the page cache does not hold (See Note [Cold reads through the page
// cache] in src/gds/file_io_engine.cpp).
enum class ColdReads : std::uint8_t {
  automatic,  // O_DIRECT or buffered with read-ahead, whichever the file system's first large
              // cold load in this process measured faster
  direct,     // O_DIRECT (where the file system takes it)
  buffered,   // through the page cache, read ahead of the threads
};

// The engine's settings for one file, resolved from its file system and GdsOptions
// (tuning_for()). See Note [The engine].
struct IoTuning {
  std::size_t chunk_bytes = 8u << 20;  // bytes per chunk, a multiple of `alignment`
  int io_threads = 8;  // threads reading or writing chunks in one call
  int buffers_per_thread = 2;  // bounce buffers each thread cycles through
  std::size_t alignment = 4096;   // O_DIRECT's offset, size and address alignment
  bool page_cache_check = true;  // read chunks the page cache holds through it (mincore)
  ColdReads cold_reads = ColdReads::automatic;  // how chunks the page cache lacks are read
};

// The two descriptors of one open file: `buffered_fd` always, `direct_fd` (O_DIRECT) where the
// file system accepts it, else -1 and `direct_refusal` says why. Not owned.
struct EngineFile {
  std::filesystem::path path;  // for messages
  int buffered_fd = -1;  // a descriptor without O_DIRECT
  int direct_fd = -1;  // an O_DIRECT descriptor of the same file, or -1
  std::string direct_refusal;  // why direct_fd is -1 (empty when it is open)
};

// Forgets which way of reading cold chunks each file system measured faster (ColdReads::
// automatic): the next large cold load on each measures again. Thread-safe.
void forget_cold_read_measurements();

// Checks that every segment lies inside the file, before a load moves any byte.
// @param file the file read
// @param segments the buffers of the load
// @param api the operation's name, used in the message
// @throws InvalidArgumentError naming path, offset, size and the file's size for a segment that
// reaches past the end of the file.
// @throws IoError when the file's size cannot be read.
void check_within_file(const EngineFile& file, std::span<const IoSegment> segments, const char* api);

// Reads every segment from the file into its memory (through `copier`). Returns when all bytes
// are in place: the engine waits for every slot of `copier` before it returns or throws, so no
// copy is left queued.
// @param file the file's descriptors
// @param segments the buffers, in any order (they may share no bytes)
// @param copier the copy step for the segments' kind of memory
// @param tuning chunk size, threads, buffers and read modes
// @return what the load did (path, direct and buffered bytes, threads, chunk size, time)
// @throws InvalidArgumentError naming path, offset, size and the file's size for a segment that
// reaches past the end of the file.
// @throws IoError naming path, offset and errno for a failed or short read.
// @throws whatever the copier throws.
IoReport engine_read(const EngineFile& file, std::span<const IoSegment> segments,
                     StagingCopier& copier, const IoTuning& tuning);

// Writes every segment's memory to the file. Returns when all bytes have been written (not
// synced); the engine has waited for every copy from the segments' memory.
// @param file the file's descriptors
// @param segments the buffers, in any order
// @param copier the copy step for the segments' kind of memory
// @param tuning chunk size, threads and buffers
// @return what the save did
// @throws IoError naming path, offset, bytes written and wanted, and errno for a
// write that did not complete.
IoReport engine_write(const EngineFile& file, std::span<const IoSegment> segments,
                      StagingCopier& copier, const IoTuning& tuning);

}  // namespace cudakit::gds
