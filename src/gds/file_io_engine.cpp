#include "cudakit/gds/file_io_engine.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/gds/io_error.hpp"

namespace cudakit::gds {
namespace {

using detail::concat;

std::uint64_t align_down(std::uint64_t value, std::size_t alignment) {
  return value / alignment * alignment;
}
std::uint64_t align_up(std::uint64_t value, std::size_t alignment) {
  return align_down(value + alignment - 1, alignment);
}

// A piece of one segment: its bytes lie within one chunk-size-aligned window of the file.
struct Chunk {
  std::byte* memory;
  std::size_t bytes;
  std::uint64_t file_offset;
};

std::vector<Chunk> cut_into_chunks(std::span<const IoSegment> segments, std::size_t chunk_bytes) {
  std::vector<Chunk> chunks;
  for (const IoSegment& segment : segments) {
    std::uint64_t offset = segment.file_offset;
    const std::uint64_t end = segment.file_offset + segment.bytes;
    auto* memory = static_cast<std::byte*>(segment.memory);
    while (offset < end) {
      const std::uint64_t window_end = std::min<std::uint64_t>(align_down(offset, chunk_bytes) + chunk_bytes, end);
      const std::size_t bytes = static_cast<std::size_t>(window_end - offset);
      chunks.push_back({memory, bytes, offset});
      memory += bytes;
      offset = window_end;
    }
  }
  return chunks;
}

void check_tuning(const IoTuning& tuning, const char* api) {
  if (tuning.alignment == 0 || (tuning.alignment & (tuning.alignment - 1)) != 0) {
    throw InvalidArgumentError(api, concat("O_DIRECT alignment ", tuning.alignment, " is not a power of two"));
  }
  if (tuning.chunk_bytes == 0 || tuning.chunk_bytes % tuning.alignment != 0) {
    throw InvalidArgumentError(api, concat("chunk size ", tuning.chunk_bytes,
                                           " is not a positive multiple of the O_DIRECT alignment ",
                                           tuning.alignment));
  }
  if (tuning.io_threads < 1 || tuning.buffers_per_thread < 1) {
    throw InvalidArgumentError(api, concat("io_threads ", tuning.io_threads, " and buffers_per_thread ",
                                           tuning.buffers_per_thread, " must be at least 1"));
  }
}

std::uint64_t file_size(const EngineFile& file, const char* api) {
  struct stat info {};
  if (::fstat(file.buffered_fd, &info) != 0) {
    const int error = errno;
    throw IoError(error, api, concat("cannot stat ", file.path.string(), ": ", std::strerror(error)));
  }
  return static_cast<std::uint64_t>(info.st_size);
}

// Reads up to `bytes` at `offset`, retrying after interrupts and partial reads; stops early only
// at the end of the file. Returns the bytes read.
std::size_t read_up_to(int fd, std::byte* buffer, std::size_t bytes, std::uint64_t offset,
                       const EngineFile& file, const char* how) {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::pread(fd, buffer + done, bytes - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      throw IoError(error, "pread",
                    concat(how, " read of ", file.path.string(), " at offset ", offset + done, " (",
                           bytes - done, " of ", bytes, " bytes left) failed: ", std::strerror(error)));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

void write_all(int fd, const std::byte* buffer, std::size_t bytes, std::uint64_t offset,
               const EngineFile& file, const char* how) {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t put = ::pwrite(fd, buffer + done, bytes - done, static_cast<off_t>(offset + done));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      const int error = put < 0 ? errno : 0;
      throw IoError(error, "pwrite",
                    concat("incomplete ", how, " write of ", file.path.string(), " at offset ", offset,
                           ": wrote ", done, " of ", bytes, " bytes",
                           error ? concat(": ", std::strerror(error)) : std::string(": no progress")));
    }
    done += static_cast<std::size_t>(put);
  }
}

// Which chunks are wholly in the page cache, from mincore over a mapping of the file (mapping
// reads nothing). Where the mapping fails, no chunk is taken as cached.
std::vector<bool> cached_chunks(const EngineFile& file, std::uint64_t size,
                                const std::vector<Chunk>& chunks) {
  std::vector<bool> cached(chunks.size(), false);
  if (size == 0) return cached;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, file.buffered_fd, 0);
  if (map == MAP_FAILED) return cached;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::uint64_t begin = align_down(chunks[i].file_offset, page);
    const std::uint64_t end = std::min<std::uint64_t>(align_up(chunks[i].file_offset + chunks[i].bytes, page), align_up(size, page));
    resident.assign((end - begin) / page, 0);
    if (::mincore(static_cast<char*>(map) + begin, end - begin, resident.data()) != 0) continue;
    cached[i] = std::all_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; });
  }
  ::munmap(map, size);
  return cached;
}

// The threads, their bounce buffers and the first error of one call.
class ChunkRunner {
 public:
  ChunkRunner(StagingCopier& copier, const IoTuning& tuning, std::size_t chunk_count)
      : copier_(copier), tuning_(tuning),
        threads_(static_cast<int>(std::min<std::size_t>(tuning.io_threads, chunk_count))) {}

  [[nodiscard]] int threads() const noexcept { return threads_; }

  // Runs work(chunk_index, bounce_buffer, slot) for every chunk, on threads() threads.
  template <class Work>
  void run(std::size_t chunk_count, Work work) {
    if (chunk_count == 0) return;
    const int slots = threads_ * tuning_.buffers_per_thread;
    copier_.prepare_slots(slots);
    std::vector<void*> buffers;
    buffers.reserve(static_cast<std::size_t>(slots));
    try {
      for (int i = 0; i < slots; ++i) buffers.push_back(copier_.allocate_staging(tuning_.chunk_bytes));
    } catch (...) {
      for (void* buffer : buffers) copier_.free_staging(buffer);
      throw;
    }
    std::atomic<std::size_t> next{0};
    auto worker = [&](int thread) {
      std::size_t turn = 0;
      while (!failed_.load(std::memory_order_relaxed)) {
        const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
        if (index >= chunk_count) break;
        const int slot = thread * tuning_.buffers_per_thread + static_cast<int>(turn++ % tuning_.buffers_per_thread);
        try {
          work(index, static_cast<std::byte*>(buffers[static_cast<std::size_t>(slot)]), slot);
        } catch (...) {
          record_failure(std::current_exception());
        }
      }
    };
    if (threads_ == 1) {
      worker(0);
    } else {
      std::vector<std::thread> pool;
      pool.reserve(static_cast<std::size_t>(threads_));
      try {
        for (int t = 0; t < threads_; ++t) pool.emplace_back(worker, t);
      } catch (...) {
        record_failure(std::current_exception());
      }
      for (std::thread& thread : pool) thread.join();
    }
    // Copies may still read or fill the bounce buffers: wait for every slot before freeing.
    for (int slot = 0; slot < slots; ++slot) {
      try {
        copier_.wait(slot);
      } catch (...) {
        record_failure(std::current_exception());
      }
    }
    for (void* buffer : buffers) copier_.free_staging(buffer);
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  void record_failure(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(error);
    failed_.store(true, std::memory_order_relaxed);
  }

  StagingCopier& copier_;
  const IoTuning& tuning_;
  int threads_;
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::exception_ptr failure_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::size_t total_bytes(std::span<const IoSegment> segments) {
  std::size_t total = 0;
  for (const IoSegment& segment : segments) total += segment.bytes;
  return total;
}

void check_segments(std::span<const IoSegment> segments, const char* api) {
  for (const IoSegment& segment : segments) {
    if (segment.memory == nullptr && segment.bytes > 0) {
      throw InvalidArgumentError(api, concat("null buffer for ", segment.bytes, " bytes at file offset ",
                                             segment.file_offset));
    }
  }
}

// A call's report before its bytes move.
IoReport begin_report(IoDirection direction, std::span<const IoSegment> segments, const IoTuning& tuning) {
  IoReport report;
  report.direction = direction;
  report.bytes = total_bytes(segments);
  report.requests = segments.size();
  report.chunk_bytes = tuning.chunk_bytes;
  return report;
}

// The byte counts of one call's chunks, added to from every thread.
struct ByteCounts {
  std::atomic<std::size_t> direct{0};
  std::atomic<std::size_t> buffered{0};
};

// The report's counts, path, note and time once the bytes have moved.
void finish_report(IoReport& report, const ByteCounts& counts, int threads, const EngineFile& file,
                   bool cached_reads, bool unaligned, std::chrono::steady_clock::time_point start) {
  report.io_threads = threads;
  report.direct_bytes = counts.direct.load();
  report.buffered_bytes = counts.buffered.load();
  report.seconds = seconds_since(start);
  report.path = report.direct_bytes > 0 ? IoPath::cudakit_odirect : IoPath::buffered;
  std::vector<std::string> notes;
  if (file.direct_fd < 0 && report.bytes > 0) notes.push_back(file.direct_refusal);
  if (cached_reads) notes.push_back("chunks found in the page cache were read through it");
  if (unaligned) notes.push_back("unaligned heads and tails went through the page cache");
  for (std::size_t i = 0; i < notes.size(); ++i) report.note += (i ? "; " : "") + notes[i];
}

// Note [Cold reads through the page cache]
// O_DIRECT is not always the fastest way to read a file the page cache does not hold. On the lent
// machines the engine's O_DIRECT load ran at the disk's own O_DIRECT rate, yet torch's single
// buffered read into pinned memory was faster (notes/gds.md has the runs): that virtual disk
// serves the kernel's large read-ahead better than many direct requests. So a load can read its
// cold chunks through the page cache, each asked of the kernel (POSIX_FADV_WILLNEED) a round of
// threads before a thread reaches it, so that the disk sees large requests while earlier chunks
// are copied. Which way wins depends on the disk, so by default
// (ColdReads::automatic) the first load in the process with at least kMeasuredRounds rounds of
// cold chunks on a file system (st_dev) measures both: two rounds O_DIRECT, two rounds buffered,
// timed apart, the rest of the load and every later one on that file system the faster way.
// CUDAKIT_GDS_COLD_READS=direct or buffered fixes it. Buffered reads leave the file in the page
// cache, as torch's reads do; O_DIRECT does not.
constexpr std::size_t kMeasuredRounds = 4;

enum class ChunkRead : std::uint8_t { direct, buffered, read_ahead };

std::mutex& cold_reads_mutex() {
  static std::mutex mutex;
  return mutex;
}
// Per file system: whether buffered reads with read-ahead measured faster than O_DIRECT.
std::map<dev_t, bool>& cold_reads_by_device() {
  static std::map<dev_t, bool> decisions;
  return decisions;
}
std::optional<dev_t> device_of(const EngineFile& file) {
  struct stat info {};
  if (::fstat(file.buffered_fd, &info) != 0) return std::nullopt;
  return info.st_dev;
}
std::optional<bool> measured_cold_reads(const EngineFile& file) {
  const std::optional<dev_t> device = device_of(file);
  if (!device) return false;  // nothing to key a measurement on: O_DIRECT, as before
  const std::lock_guard lock(cold_reads_mutex());
  const auto found = cold_reads_by_device().find(*device);
  return found == cold_reads_by_device().end() ? std::nullopt : std::optional<bool>(found->second);
}
void remember_cold_reads(const EngineFile& file, bool buffered_faster) {
  if (const std::optional<dev_t> device = device_of(file)) {
    const std::lock_guard lock(cold_reads_mutex());
    cold_reads_by_device().emplace(*device, buffered_faster);
  }
}

// Reads one chunk into `staging` as `how` says, then hands it to the copier.
void read_chunk(const EngineFile& file, const Chunk& chunk, ChunkRead how, std::byte* staging, int slot,
                StagingCopier& copier, const IoTuning& tuning, ByteCounts& counts, const char* api) {
  copier.wait(slot);  // the buffer's previous copy must be done before it is refilled
  const std::byte* payload = staging;
  std::size_t got = 0;
  if (how == ChunkRead::direct) {
    const std::uint64_t begin = align_down(chunk.file_offset, tuning.alignment);
    const std::uint64_t end = align_up(chunk.file_offset + chunk.bytes, tuning.alignment);
    const std::size_t lead = static_cast<std::size_t>(chunk.file_offset - begin);
    const std::size_t read = read_up_to(file.direct_fd, staging, static_cast<std::size_t>(end - begin), begin, file, "O_DIRECT");
    got = read > lead ? std::min(read - lead, chunk.bytes) : 0;
    payload = staging + lead;
    counts.direct.fetch_add(got, std::memory_order_relaxed);
  } else {
    got = read_up_to(file.buffered_fd, staging, chunk.bytes, chunk.file_offset, file, "buffered");
    counts.buffered.fetch_add(got, std::memory_order_relaxed);
  }
  if (got < chunk.bytes) {
    throw IoError(0, api, concat("short read of ", file.path.string(), " at offset ", chunk.file_offset,
                                 ": got ", got, " of ", chunk.bytes,
                                 " bytes (the file shrank to ", file_size(file, api), " bytes?)"));
  }
  copier.copy_to_destination(chunk.memory, payload, chunk.bytes, slot);
}

}  // namespace

void forget_cold_read_measurements() {
  const std::lock_guard lock(cold_reads_mutex());
  cold_reads_by_device().clear();
}

void check_within_file(const EngineFile& file, std::span<const IoSegment> segments, const char* api) {
  const std::uint64_t size = file_size(file, api);
  for (const IoSegment& segment : segments) {
    if (segment.file_offset > size || segment.bytes > size - segment.file_offset) {
      throw InvalidArgumentError(api, concat("read past the end of ", file.path.string(), ": offset ",
                                             segment.file_offset, " + ", segment.bytes, " bytes = ",
                                             segment.file_offset + segment.bytes, " > file size ", size));
    }
  }
}

IoReport engine_read(const EngineFile& file, std::span<const IoSegment> segments,
                     StagingCopier& copier, const IoTuning& tuning) {
  constexpr const char* kApi = "GdsFile::load";
  const auto start = std::chrono::steady_clock::now();
  check_tuning(tuning, kApi);
  check_segments(segments, kApi);
  check_within_file(file, segments, kApi);
  const std::uint64_t size = file_size(file, kApi);
  const std::vector<Chunk> chunks = cut_into_chunks(segments, tuning.chunk_bytes);
  std::vector<bool> cached(chunks.size(), false);
  if (file.direct_fd >= 0 && tuning.page_cache_check) cached = cached_chunks(file, size, chunks);

  // How each chunk is read: cold chunks as the tuning says, or as measured (Note [Cold reads
  // through the page cache]); without O_DIRECT every chunk through the page cache, read ahead
  // unless told otherwise.
  std::vector<ChunkRead> how(chunks.size(), file.direct_fd < 0 && tuning.cold_reads != ColdReads::direct
                                                ? ChunkRead::read_ahead
                                                : ChunkRead::buffered);
  std::vector<std::size_t> cold;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (file.direct_fd >= 0 && !cached[i]) cold.push_back(i);
  }
  const int threads = static_cast<int>(std::min<std::size_t>(tuning.io_threads, std::max<std::size_t>(chunks.size(), 1)));
  std::optional<bool> buffered_wins = tuning.cold_reads == ColdReads::direct     ? std::optional<bool>(false)
                                      : tuning.cold_reads == ColdReads::buffered ? std::optional<bool>(true)
                                                                                 : measured_cold_reads(file);
  const bool measure = !buffered_wins && cold.size() >= kMeasuredRounds * static_cast<std::size_t>(threads);
  for (const std::size_t i : cold) how[i] = buffered_wins.value_or(false) ? ChunkRead::read_ahead : ChunkRead::direct;

  IoReport report = begin_report(IoDirection::load, segments, tuning);
  ByteCounts counts;
  std::string measured_note;
  int most_threads = 0;
  // When the first read of the latest run began: a measured part's time starts there, after its
  // bounce buffers were allocated (the first run's allocation would otherwise count against it).
  std::chrono::steady_clock::time_point first_read;
  // Runs the chunks `order` names, in that order, on up to io_threads threads; the chunks read
  // ahead are asked of the kernel a round of threads before a thread reaches them.
  const auto run = [&](std::span<const std::size_t> order) {
    if (order.empty()) return;
    std::once_flag started;
    ChunkRunner runner(copier, tuning, order.size());
    most_threads = std::max(most_threads, runner.threads());
    const std::size_t lead = static_cast<std::size_t>(runner.threads());
    const auto read_ahead = [&](std::size_t position) {
      if (position >= order.size()) return;
      const Chunk& chunk = chunks[order[position]];
      if (how[order[position]] == ChunkRead::read_ahead) {
        ::posix_fadvise(file.buffered_fd, static_cast<off_t>(chunk.file_offset), static_cast<off_t>(chunk.bytes),
                        POSIX_FADV_WILLNEED);
      }
    };
    runner.run(order.size(), [&](std::size_t position, std::byte* staging, int slot) {
      std::call_once(started, [&] {
        first_read = std::chrono::steady_clock::now();
        for (std::size_t p = 0; p < lead; ++p) read_ahead(p);
      });
      read_ahead(position + lead);
      read_chunk(file, chunks[order[position]], how[order[position]], staging, slot, copier, tuning, counts, kApi);
    });
  };
  std::vector<std::size_t> order(chunks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!measure) {
    run(order);
  } else {
    // The first rounds of cold chunks O_DIRECT, the next as many buffered, each timed; the rest
    // (cached chunks included) after them, cold ones by the faster.
    const std::size_t round = static_cast<std::size_t>(threads) * (kMeasuredRounds / 2);
    const std::span<const std::size_t> direct_part(cold.data(), round), buffered_part(cold.data() + round, round);
    for (const std::size_t i : buffered_part) how[i] = ChunkRead::read_ahead;
    const auto timed = [&](std::span<const std::size_t> part) {
      run(part);
      std::size_t bytes = 0;
      for (const std::size_t i : part) bytes += chunks[i].bytes;
      return static_cast<double>(bytes) / std::max(seconds_since(first_read), 1e-9);
    };
    const double direct_rate = timed(direct_part);
    const double buffered_rate = timed(buffered_part);
    const bool buffered_faster = buffered_rate > direct_rate;
    remember_cold_reads(file, buffered_faster);
    std::vector<bool> done(chunks.size(), false);
    for (std::size_t k = 0; k < 2 * round; ++k) done[cold[k]] = true;
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      if (done[i]) continue;
      if (file.direct_fd >= 0 && !cached[i]) how[i] = buffered_faster ? ChunkRead::read_ahead : ChunkRead::direct;
      rest.push_back(i);
    }
    run(rest);
    measured_note = concat("cold reads measured: O_DIRECT ", direct_rate / 1e9, " GB/s, buffered with read-ahead ",
                           buffered_rate / 1e9, " GB/s; the rest ", buffered_faster ? "buffered" : "O_DIRECT");
  }
  const bool read_ahead_used = std::find(how.begin(), how.end(), ChunkRead::read_ahead) != how.end();
  finish_report(report, counts, most_threads, file,
                std::find(cached.begin(), cached.end(), true) != cached.end(), false, start);
  if (read_ahead_used) {
    report.note += std::string(report.note.empty() ? "" : "; ") + "chunks read through the page cache ahead of the threads";
  }
  if (!measured_note.empty()) report.note += std::string(report.note.empty() ? "" : "; ") + measured_note;
  return report;
}

IoReport engine_write(const EngineFile& file, std::span<const IoSegment> segments,
                      StagingCopier& copier, const IoTuning& tuning) {
  constexpr const char* kApi = "GdsFile::save";
  const auto start = std::chrono::steady_clock::now();
  check_tuning(tuning, kApi);
  check_segments(segments, kApi);
  const std::vector<Chunk> chunks = cut_into_chunks(segments, tuning.chunk_bytes);

  IoReport report = begin_report(IoDirection::save, segments, tuning);
  ByteCounts counts;
  ChunkRunner runner(copier, tuning, chunks.size());
  runner.run(chunks.size(), [&](std::size_t index, std::byte* staging, int slot) {
    const Chunk& chunk = chunks[index];
    // The payload sits in the buffer as the file lays it out from the aligned offset below it,
    // so that its aligned middle starts at an aligned address.
    const std::uint64_t window = align_down(chunk.file_offset, tuning.alignment);
    std::byte* payload = staging + (chunk.file_offset - window);
    copier.copy_from_source(payload, chunk.memory, chunk.bytes, slot);
    copier.wait(slot);
    const std::uint64_t end = chunk.file_offset + chunk.bytes;
    std::uint64_t middle_begin = align_up(chunk.file_offset, tuning.alignment);
    std::uint64_t middle_end = align_down(end, tuning.alignment);
    if (file.direct_fd < 0 || middle_begin >= middle_end) middle_begin = middle_end = end;
    if (middle_begin > chunk.file_offset) {
      write_all(file.buffered_fd, payload, static_cast<std::size_t>(middle_begin - chunk.file_offset), chunk.file_offset, file, "buffered");
      counts.buffered.fetch_add(static_cast<std::size_t>(middle_begin - chunk.file_offset), std::memory_order_relaxed);
    }
    if (middle_end > middle_begin) {
      write_all(file.direct_fd, staging + (middle_begin - window), static_cast<std::size_t>(middle_end - middle_begin), middle_begin, file, "O_DIRECT");
      counts.direct.fetch_add(static_cast<std::size_t>(middle_end - middle_begin), std::memory_order_relaxed);
    }
    if (end > middle_end && middle_end != end) {
      write_all(file.buffered_fd, staging + (middle_end - window), static_cast<std::size_t>(end - middle_end), middle_end, file, "buffered");
      counts.buffered.fetch_add(static_cast<std::size_t>(end - middle_end), std::memory_order_relaxed);
    }
  });
  finish_report(report, counts, runner.threads(), file, false,
                file.direct_fd >= 0 && counts.buffered.load() > 0, start);
  return report;
}

}  // namespace cudakit::gds
