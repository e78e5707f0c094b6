#pragma once
// @brief Options of the caching device allocator: a typed struct, also parsed from CUDAKIT_ALLOC_CONF
// with PYTORCH_CUDA_ALLOC_CONF's syntax ("key:value,key:value") and, where they mean the same
// thing, its keys.

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace cudakit::memory {

// How one stream's request may be served by memory another stream freed (See Note [Memory
// across streams] in src/memory/caching_allocator.cpp).
enum class CrossStreamReuse : unsigned char {
  // Never: each stream reuses only what it freed itself (torch's rule).
  off,
  // When the work the freeing stream had queued at the free has finished, told by an event
  // recorded there now and then: no waiting, no host synchronization
  // (cudaMemPoolReuseAllowOpportunistic).
  opportunistic,
  // As opportunistic, and beyond it: a block whose freeing stream's work may still run is handed
  // out too, after making the requesting stream wait on an event recorded on the freeing stream
  // (stream-ordered, no host synchronization; cudaMemPoolReuseAllowInternalDependencies).
  dependencies,
};
// The setting's name as CUDAKIT_ALLOC_CONF spells it.
// @param mode the mode.
// @return "off", "opportunistic" or "dependencies".
[[nodiscard]] const char* to_string(CrossStreamReuse mode) noexcept;

// How threads that allocate on one stream share its cache (See Note [Threads sharing a stream]
// in src/memory/detail/thread_shards.hpp).
enum class ThreadShards : unsigned char {
  // One shard per (pool, stream), whatever the threads: they take turns at its lock.
  off,
  // One shard per (pool, stream) until its lock is found taken often; then each thread that
  // finds it taken moves to a shard of its own thread slot on that stream.
  adaptive,
  // Every thread allocates from its thread slot's shard of the stream from its first request.
  always,
};
// The setting's name as CUDAKIT_ALLOC_CONF spells it.
// @param mode the mode.
// @return "off", "adaptive" or "always".
[[nodiscard]] const char* to_string(ThreadShards mode) noexcept;

// The caching allocator's settings. A value: CachingAllocator::config() returns a copy.
struct AllocatorConfig {
  // Without expandable_segments, requests above 1 MiB and under 10 MiB are served from segments
  // of this size (torch's large_segment_size_mb; more than 10 MiB, default 20 MiB). Larger
  // requests get segments of their own size, rounded to 2 MiB.
  std::size_t large_segment_size = std::size_t{20} << 20;
  // Blocks larger than this are never split (torch's max_split_size_mb; more than
  // large_segment_size). Default: no limit.
  std::size_t max_split_size = std::numeric_limits<std::size_t>::max();
  // With max_split_size set, a request at or above it takes a free oversize block whole only if
  // that wastes less than this (torch's max_non_split_rounding_mb; at least large_segment_size,
  // which it follows when large_segment_size_mb is given without it; default 20 MiB).
  std::size_t max_non_split_rounding = std::size_t{20} << 20;
  // When reserved memory exceeds this fraction of the allowed memory, cached free memory is
  // released before more is reserved (0 = off). torch's garbage_collection_threshold.
  double garbage_collection_threshold = 0.0;
  // One growable virtual range per (pool, stream), backed on demand (cuMemCreate/cuMemMap),
  // instead of fixed segments from cudaMalloc. See Note [Expandable arenas]. Default on: it
  // halves fragmentation on recorded workloads (docs/performance.md, the allocator table).
  bool expandable_segments = true;
  // torch's roundup_power2_divisions: a request is rounded up to one of d equal steps between
  // the powers of two around it (d a power of two; 0 or 1: no rounding) when it exceeds
  // 512 * d bytes. d depends on the request's power-of-two interval: entry 0 for requests under
  // 2 MiB, entry k for [2^k, 2^(k+1)) MiB, entry 15 for 32 GiB and up. CUDAKIT_ALLOC_CONF sets
  // one value for all ("roundup_power2_divisions:4") or per interval as torch does
  // ("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]").
  static constexpr std::size_t kRoundupIntervals = 16;
  std::array<unsigned, kRoundupIntervals> roundup_power2_divisions{};  // d per interval; all 0 by default
  // cross_stream_reuse:off|opportunistic|dependencies. The default is the one that measured best
  // on the recorded traces with several streams (docs/performance.md, the allocator table).
  CrossStreamReuse cross_stream_reuse = CrossStreamReuse::opportunistic;
  // exact_peaks:True|False. With several streams, every statistic's peak is the device's
  // (the highest total at one moment), kept in a device-wide ledger that each change to the
  // statistics also writes; False leaves each stream its own peaks, reported summed (upper
  // bounds, exact for reserved bytes), and threads allocating on their own streams at once no
  // longer share a cache line. See Note [Device-wide peaks] in src/memory/detail/device_peaks.hpp.
  bool exact_peaks = true;
  // thread_shards:off|adaptive|always. Whether threads that allocate on one stream at once get
  // caches of their own for it; read when an allocator is created. See ThreadShards.
  ThreadShards thread_shards = ThreadShards::adaptive;
  // Limit on reserved memory as a fraction of the device's total (set_per_process_memory_fraction).
  double per_process_memory_fraction = 1.0;
  // Pinned host memory (PinnedHostAllocator; torch reads these keys from the same variable):
  // page-locked blocks from mmap + cudaHostRegister instead of cudaHostAlloc
  // (pinned_use_cuda_host_register), their pages first faulted in by this many threads
  // (pinned_num_register_threads: a power of two up to 128; no effect without the first key).
  // See Note [Registered pinned memory].
  bool pinned_use_host_register = false;
  unsigned pinned_num_register_threads = 1;  // see pinned_use_host_register
  // Which allocator serves memory::allocate and the statistics functions (torch's `backend` key):
  // cudakit's caching allocator ("native") or CUDA's stream-ordered pool allocator
  // ("cudaMallocAsync"). Read once, at the first use of the device-wide allocator. See Note
  // [Allocator backends] in src/memory/detail/allocator_backend.hpp.
  enum class Backend { native, cuda_malloc_async };
  Backend backend = Backend::native;  // the device-wide allocator's backend (see Backend)

  // Parses "expandable_segments:True,max_split_size_mb:128,...". Unknown keys and bad values
  // are errors naming the key and the value.
  // @param text the settings, CUDAKIT_ALLOC_CONF's syntax.
  // @param base the values of keys `text` does not name.
  // @return `base` with `text` applied.
  // @throws InvalidArgumentError naming the key and the value.
  static AllocatorConfig parse(std::string_view text, AllocatorConfig base);
  // parse() over the defaults.
  // @param text the settings, CUDAKIT_ALLOC_CONF's syntax.
  // @return the defaults with `text` applied.
  // @throws InvalidArgumentError naming the key and the value.
  static AllocatorConfig parse(std::string_view text);
  // The keys set_allocator_settings() changes in a running allocator (See Note [Settings at run
  // time] in allocator_config.cpp); the others are read when an allocator is created.
  static constexpr std::array<std::string_view, 8> kRuntimeKeys = {
      "large_segment_size_mb",     "max_split_size_mb",        "max_non_split_rounding_mb",
      "garbage_collection_threshold", "roundup_power2_divisions", "expandable_segments",
      "per_process_memory_fraction", "cross_stream_reuse"};
  // parse() for a running allocator (torch.cuda.memory._set_allocator_settings): only
  // kRuntimeKeys; a key outside them, an unknown key or a bad value throws, naming it, before
  // anything is applied. Keys not named keep their value in `base`.
  // @param text the settings, CUDAKIT_ALLOC_CONF's syntax, kRuntimeKeys only.
  // @param base the running allocator's settings.
  // @param api the function named in error messages.
  // @return `base` with `text` applied.
  // @throws InvalidArgumentError naming the API as `api`.
  static AllocatorConfig parse_runtime(std::string_view text, AllocatorConfig base,
                                       std::string_view api = "set_allocator_settings");
  // The defaults overridden by CUDAKIT_ALLOC_CONF when set.
  // @return the settings (read from the environment at each call).
  // @throws InvalidArgumentError for a malformed CUDAKIT_ALLOC_CONF, naming the key and value.
  static AllocatorConfig from_environment();
  // The config written back in the same syntax.
  // @return expandable_segments, then every key whose value is not its default.
  [[nodiscard]] std::string to_string() const;
  // The roundup_power2_divisions entry that applies to a request of `bytes`, and its index.
  // @param bytes the request's size.
  // @return roundup_power2_divisions[roundup_interval(bytes)].
  [[nodiscard]] unsigned roundup_divisions(std::size_t bytes) const noexcept;
  // The index of the roundup_power2_divisions interval of a request.
  // @param bytes the request's size.
  // @return 0 under 2 MiB, k for [2^k, 2^(k+1)) MiB, at most kRoundupIntervals - 1.
  [[nodiscard]] static std::size_t roundup_interval(std::size_t bytes) noexcept;
};

}  // namespace cudakit::memory
