#include "cudakit/memory/allocator_config.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {
namespace {

constexpr unsigned kMaxRegisterThreads = 128;  // torch's limit

// Why a key that torch reads is not taken here; empty for keys torch does not know either. A
// config copied from a torch program then fails with the reason, not as a typo would.
std::string_view unsupported_torch_key(std::string_view key) {
  if (key == "release_lock_on_cudamalloc") {
    return "there is no device-wide lock to release: a growth holds only the lock of its own "
           "stream's shard, and other streams allocate meanwhile";
  }
  if (key == "pinned_use_background_threads") {
    return "pinned events are polled by allocate() and process_events(), never by a thread of "
           "the allocator's own";
  }
  if (key == "expandable_segments_handle_type" || key == "graph_capture_record_stream_reuse" ||
      key == "pinned_reserve_segment_size_mb") {
    return "not supported";
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The trimmed text before `end`; removes it and the separator at `end` from `text`.
std::string_view pop_item(std::string_view& text, std::size_t end) {
  const std::string_view item = trim(text.substr(0, end));
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  return item;
}

// "left:right" split at its first colon, both sides trimmed; without a colon, all of it is left.
struct ColonPair {
  std::string_view left, right;
  bool has_colon;
};
ColonPair split_at_colon(std::string_view item) {
  const std::size_t colon = item.find(':');
  if (colon == std::string_view::npos) return {item, {}, false};
  return {trim(item.substr(0, colon)), trim(item.substr(colon + 1)), true};
}

// Whether `d` is a whole power of two no larger than `max` (range first: the cast needs it).
bool is_power_of_two_up_to(double d, std::uint64_t max) {
  if (!(d >= 1 && d <= static_cast<double>(max))) return false;
  const auto n = static_cast<std::uint64_t>(d);
  return d == static_cast<double>(n) && std::has_single_bit(n);
}

// Reads one config text for `api` ("AllocatorConfig::parse", "set_allocator_settings"): every
// refusal names the API, the item and why.
struct Reader {
  std::string_view api;

  // The item is quoted as outside input is (at most ~200 bytes, escaped), and so is `why`, which
  // may hold a part of it.
  [[noreturn]] void bad(std::string_view key, std::string_view value, std::string_view why) const {
    const std::string item = detail::quote_input(detail::concat(key, ":", value));
    const bool cut = why.size() > 2 * detail::kQuotedInputBytes;
    throw InvalidArgumentError(std::string(api), detail::concat(item, ": ", why.substr(0, 2 * detail::kQuotedInputBytes),
                                                                cut ? "..." : ""));
  }

  // Finite values only: from_chars also reads "inf" and "nan", which no key means and which pass
  // the range checks below (NaN compares false) on their way to a cast to an integer.
  double number(std::string_view key, std::string_view value) const {
    // from_chars for double is in GCC 12's libstdc++.
    double out = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc() || end != value.data() + value.size()) bad(key, value, "not a number");
    if (!std::isfinite(out)) bad(key, value, "not a finite number");
    return out;
  }

  // `mib` MiB in bytes; beyond what a size_t holds the cast is undefined, so that is an error.
  std::size_t mib_to_bytes(std::string_view key, std::string_view value, double mib) const {
    const double bytes = mib * 1048576.0;
    if (bytes < 0) bad(key, value, "must not be negative");
    if (!(bytes < 0x1p64)) bad(key, value, "too large (the size in bytes must fit in 64 bits)");
    return static_cast<std::size_t>(bytes);
  }

  bool boolean(std::string_view key, std::string_view value) const {
    if (value == "True" || value == "true" || value == "1") return true;
    if (value == "False" || value == "false" || value == "0") return false;
    bad(key, value, "expected True or False");
  }

  unsigned divisions(std::string_view key, std::string_view value, std::string_view entry) const {
    const double d = number(key, entry);
    if (d != 0 && !is_power_of_two_up_to(d, 64)) {
      bad(key, value, detail::concat("divisions '", entry, "' must be 0 or a power of two up to 64"));
    }
    return static_cast<unsigned>(d);
  }

  // torch's list form: "[B:d,...,>:d]", B a power of two in MiB naming the interval that starts
  // there (entry log2(B)); the first entry also covers every interval below it, ">" every one
  // after the last entry named.
  void divisions_list(std::string_view key, std::string_view value,
                      std::array<unsigned, AllocatorConfig::kRoundupIntervals>& out) const {
    std::string_view list = value.substr(1, value.size() - 2);
    bool first = true;
    std::size_t last = 0;
    while (!list.empty()) {
      const std::string_view entry = pop_item(list, list.find(','));
      const auto [bound, count, has_colon] = split_at_colon(entry);
      if (!has_colon) bad(key, value, detail::concat("entry '", entry, "' is not B:divisions"));
      const unsigned d = divisions(key, value, count);
      if (bound == ">") {
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(std::min(last + 1, out.size())), out.end(), d);
        continue;
      }
      const double b = number(key, bound);
      if (!is_power_of_two_up_to(b, std::uint64_t{1} << 63)) {
        bad(key, value, detail::concat("interval '", bound, "' must be a power of two (MiB)"));
      }
      const auto mib = static_cast<std::uint64_t>(b);
      const std::size_t index = std::min<std::size_t>(std::bit_width(mib) - 1, out.size() - 1);
      if (first) std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(index), d);
      first = false;
      out[index] = d;
      last = index;
    }
  }

  CrossStreamReuse cross_stream_reuse(std::string_view key, std::string_view value) const {
    for (auto mode : {CrossStreamReuse::off, CrossStreamReuse::opportunistic, CrossStreamReuse::dependencies}) {
      if (value == memory::to_string(mode)) return mode;
    }
    bad(key, value, "expected off, opportunistic or dependencies");
  }
  ThreadShards thread_shards(std::string_view key, std::string_view value) const {
    for (auto mode : {ThreadShards::off, ThreadShards::adaptive, ThreadShards::always}) {
      if (value == memory::to_string(mode)) return mode;
    }
    bad(key, value, "expected off, adaptive or always");
  }
  // Sets the field `key` names from `value`; false for a key that is not one of ours.
  bool apply(std::string_view key, std::string_view value, AllocatorConfig& config) const;
  // Every item of `text`, in order: (key, value) to `item`.
  template <class Item>
  void items(std::string_view text, Item&& item) const;
};

bool Reader::apply(std::string_view key, std::string_view value, AllocatorConfig& config) const {
  if (key == "large_segment_size_mb") {
    const double mb = number(key, value);
    // torch's bound: requests under 10 MiB share these segments, so they must be larger.
    if (mb <= 10) bad(key, value, "must be greater than 10 (MiB)");
    config.large_segment_size = mib_to_bytes(key, value, mb);
  } else if (key == "max_split_size_mb") {
    config.max_split_size = mib_to_bytes(key, value, number(key, value));
  } else if (key == "max_non_split_rounding_mb") {
    config.max_non_split_rounding = mib_to_bytes(key, value, number(key, value));
  } else if (key == "garbage_collection_threshold") {
    const double t = number(key, value);
    if (!(t > 0.0 && t < 1.0)) bad(key, value, "must lie strictly between 0 and 1");
    config.garbage_collection_threshold = t;
  } else if (key == "expandable_segments") {
    config.expandable_segments = boolean(key, value);
  } else if (key == "roundup_power2_divisions") {
    config.roundup_power2_divisions = {};
    if (value.starts_with('[') && value.ends_with(']')) {
      divisions_list(key, value, config.roundup_power2_divisions);
    } else {
      config.roundup_power2_divisions.fill(divisions(key, value, value));
    }
  } else if (key == "per_process_memory_fraction") {
    const double f = number(key, value);
    if (!(f > 0.0 && f <= 1.0)) bad(key, value, "must lie in (0, 1]");
    config.per_process_memory_fraction = f;
  } else if (key == "cross_stream_reuse") {
    config.cross_stream_reuse = cross_stream_reuse(key, value);
  } else if (key == "exact_peaks") {
    config.exact_peaks = boolean(key, value);
  } else if (key == "thread_shards") {
    config.thread_shards = thread_shards(key, value);
  } else if (key == "backend") {
    if (value == "native") {
      config.backend = AllocatorConfig::Backend::native;
    } else if (value == "cudaMallocAsync") {
      config.backend = AllocatorConfig::Backend::cuda_malloc_async;
    } else {
      bad(key, value, "unknown backend (accepted: native, cudaMallocAsync)");
    }
  } else if (key == "pinned_use_cuda_host_register") {
    config.pinned_use_host_register = boolean(key, value);
  } else if (key == "pinned_num_register_threads") {
    const double n = number(key, value);
    if (!is_power_of_two_up_to(n, kMaxRegisterThreads)) {
      bad(key, value, detail::concat("must be a power of two from 1 to ", kMaxRegisterThreads));
    }
    config.pinned_num_register_threads = static_cast<unsigned>(n);
  } else {
    return false;
  }
  return true;
}

template <class Item>
void Reader::items(std::string_view text, Item&& item) const {
  while (!text.empty()) {
    // Items are comma-separated; a bracketed list's commas belong to its value.
    std::size_t comma = text.find(',');
    const std::size_t bracket = text.find('[');
    if (bracket < comma) {
      const std::size_t close = text.find(']', bracket);
      if (close == std::string_view::npos) {
        const auto [key, value, has_colon] = split_at_colon(trim(text));
        bad(key, value, "'[' without a closing ']'");
      }
      comma = text.find(',', close);
    }
    const std::string_view entry = pop_item(text, comma);
    if (entry.empty()) continue;
    const auto [key, value, has_colon] = split_at_colon(entry);
    if (!has_colon) bad(entry, "", "expected key:value");
    item(key, value);
  }
}

constexpr std::string_view kKnownKeys =
    "large_segment_size_mb, max_split_size_mb, max_non_split_rounding_mb, "
    "garbage_collection_threshold, expandable_segments, roundup_power2_divisions, "
    "per_process_memory_fraction, cross_stream_reuse, exact_peaks, thread_shards, pinned_use_cuda_host_register, "
    "pinned_num_register_threads, backend";

// Parses `text` over `config`, refusing keys `allowed` rejects (with the reason it returns),
// then checks the sizes against each other as torch does.
template <class Allowed>
AllocatorConfig parse_with(const Reader& reader, std::string_view text, AllocatorConfig config,
                           Allowed&& allowed) {
  bool large_segment_named = false;
  std::optional<std::string_view> split_value, rounding_value;  // as written, for the errors
  reader.items(text, [&](std::string_view key, std::string_view value) {
    if (const std::string_view why = allowed(key); !why.empty()) reader.bad(key, value, why);
    if (!reader.apply(key, value, config)) {
      if (const std::string_view why = unsupported_torch_key(key); !why.empty()) {
        reader.bad(key, value, detail::concat("a PYTORCH_CUDA_ALLOC_CONF key that cudakit does not implement: ", why));
      }
      reader.bad(key, value, detail::concat("unknown key (known: ", kKnownKeys, ")"));
    }
    large_segment_named |= key == "large_segment_size_mb";
    if (key == "max_non_split_rounding_mb") rounding_value = value;
    if (key == "max_split_size_mb") split_value = value;
  });
  // torch's relations between the sizes, checked once every key is read (their order in the
  // text does not matter): max_non_split_rounding starts at the large-segment size, and neither
  // it nor max_split_size may be below it.
  const std::size_t segment_mib = config.large_segment_size >> 20;
  if (large_segment_named && !rounding_value) config.max_non_split_rounding = config.large_segment_size;
  const auto written = [](std::optional<std::string_view> value, std::size_t bytes) {
    return value ? std::string(*value) : detail::concat(bytes >> 20);
  };
  const bool limited = config.max_split_size != std::numeric_limits<std::size_t>::max();
  if (limited && config.max_split_size <= config.large_segment_size) {
    reader.bad("max_split_size_mb", written(split_value, config.max_split_size),
               detail::concat("must be greater than ", segment_mib, " (MiB), the large-segment size"));
  }
  if (config.max_non_split_rounding < config.large_segment_size) {
    reader.bad("max_non_split_rounding_mb", written(rounding_value, config.max_non_split_rounding),
               detail::concat("must be at least ", segment_mib, " (MiB), the large-segment size"));
  }
  return config;
}

// Note [Settings at run time]
// set_allocator_settings (torch.cuda.memory._set_allocator_settings) re-reads the config text
// in a running program. torch accepts every key there but `backend` (which must equal the one
// read at start-up); what each changes is what its allocator reads afterwards:
//  - large_segment_size_mb, max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions
//    and garbage_collection_threshold apply to the next request; blocks already cut stay as they
//    are (a block split under an old max_split_size stays split until it merges back);
//  - expandable_segments applies to memory obtained from then on: existing segments and arenas
//    keep serving requests, new ones are of the new kind;
//  - per_process_memory_fraction is applied to every existing allocator too (torch reads it only
//    when a device's allocator is created, so there a change reaches only later devices; a
//    setting that silently does nothing would be worse than this difference).
// exact_peaks is refused (See Note [Device-wide peaks]). The pinned keys are refused: cudakit's pinned allocator picks its memory provider (cudaHostAlloc
// or mmap + cudaHostRegister) once, when created. torch's parse also resets max_split_size_mb,
// roundup_power2_divisions and garbage_collection_threshold to their defaults whenever they are
// not named; here a key not named keeps its value, so that a call changes what it names only.
// The whole text is parsed before anything is applied: a refused call changes nothing.

// Why a key cannot change in a running allocator; empty for one that can (or is unknown).
std::string_view fixed_at_creation(std::string_view key) {
  if (key == "backend") {
    return "cannot change at run time: the backend is chosen at the first allocation and serves "
           "until the process ends (torch refuses a different one too)";
  }
  if (key == "pinned_use_cuda_host_register" || key == "pinned_num_register_threads") {
    return "cannot change at run time: the pinned host allocator chooses how it obtains memory "
           "when it is created (on first use); set it in CUDAKIT_ALLOC_CONF";
  }
  if (key == "thread_shards") {
    return "cannot change at run time: a stream's threads keep the shards they were given; set it "
           "in CUDAKIT_ALLOC_CONF";
  }
  if (key == "exact_peaks") {
    return "cannot change at run time: the device-wide peaks are kept from the second stream's "
           "first allocation on, and a ledger started later would have missed the peaks before; "
           "set it in CUDAKIT_ALLOC_CONF";
  }
  return {};
}

}  // namespace

const char* to_string(CrossStreamReuse mode) noexcept {
  switch (mode) {
    case CrossStreamReuse::off: return "off";
    case CrossStreamReuse::opportunistic: return "opportunistic";
    case CrossStreamReuse::dependencies: return "dependencies";
  }
  return "?";
}

const char* to_string(ThreadShards mode) noexcept {
  switch (mode) {
    case ThreadShards::off: return "off";
    case ThreadShards::adaptive: return "adaptive";
    case ThreadShards::always: return "always";
  }
  return "?";
}

std::size_t AllocatorConfig::roundup_interval(std::size_t bytes) noexcept {
  const int log2 = std::bit_width(bytes) - 1;  // intervals start at 1 MiB = 2^20
  return log2 > 20 ? std::min<std::size_t>(log2 - 20, kRoundupIntervals - 1) : 0;
}

unsigned AllocatorConfig::roundup_divisions(std::size_t bytes) const noexcept {
  return roundup_power2_divisions[roundup_interval(bytes)];
}

AllocatorConfig AllocatorConfig::parse(std::string_view text, AllocatorConfig config) {
  return parse_with(Reader{"AllocatorConfig::parse"}, text, config, [](std::string_view) { return std::string_view{}; });
}

AllocatorConfig AllocatorConfig::parse_runtime(std::string_view text, AllocatorConfig base, std::string_view api) {
  return parse_with(Reader{api}, text, base, fixed_at_creation);
}

AllocatorConfig AllocatorConfig::parse(std::string_view text) { return parse(text, AllocatorConfig{}); }

AllocatorConfig AllocatorConfig::from_environment() {
  const char* text = std::getenv("CUDAKIT_ALLOC_CONF");
  return text ? parse(text) : AllocatorConfig{};
}

std::string AllocatorConfig::to_string() const {
  std::string out = detail::concat("expandable_segments:", expandable_segments ? "True" : "False");
  if (large_segment_size != AllocatorConfig{}.large_segment_size) {
    out += detail::concat(",large_segment_size_mb:", large_segment_size / 1048576);
  }
  if (max_split_size != std::numeric_limits<std::size_t>::max()) {
    out += detail::concat(",max_split_size_mb:", max_split_size / 1048576);
  }
  if (max_non_split_rounding != AllocatorConfig{}.max_non_split_rounding) {
    out += detail::concat(",max_non_split_rounding_mb:", max_non_split_rounding / 1048576);
  }
  if (garbage_collection_threshold > 0) {
    out += detail::concat(",garbage_collection_threshold:", garbage_collection_threshold);
  }
  const auto& d = roundup_power2_divisions;
  if (std::all_of(d.begin(), d.end(), [&](unsigned v) { return v == d[0]; })) {
    if (d[0]) out += detail::concat(",roundup_power2_divisions:", d[0]);
  } else {
    out += ",roundup_power2_divisions:[";
    for (std::size_t i = 0; i + 1 < d.size(); ++i) out += detail::concat(std::uint64_t{1} << i, ":", d[i], ",");
    out += detail::concat(">:", d.back(), "]");
  }
  if (per_process_memory_fraction < 1.0) {
    out += detail::concat(",per_process_memory_fraction:", per_process_memory_fraction);
  }
  if (backend == Backend::cuda_malloc_async) out += ",backend:cudaMallocAsync";
  if (cross_stream_reuse != AllocatorConfig{}.cross_stream_reuse) {
    out += detail::concat(",cross_stream_reuse:", memory::to_string(cross_stream_reuse));
  }
  if (!exact_peaks) out += ",exact_peaks:False";
  if (thread_shards != AllocatorConfig{}.thread_shards) {
    out += detail::concat(",thread_shards:", memory::to_string(thread_shards));
  }
  if (pinned_use_host_register) out += ",pinned_use_cuda_host_register:True";
  if (pinned_num_register_threads != 1) {
    out += detail::concat(",pinned_num_register_threads:", pinned_num_register_threads);
  }
  return out;
}

}  // namespace cudakit::memory
