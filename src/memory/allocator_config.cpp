#include "cudakit/memory/allocator_config.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "cudakit/core/detail/concat.hpp"
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

[[noreturn]] void bad(std::string_view key, std::string_view value, std::string_view why) {
  throw InvalidArgumentError("AllocatorConfig::parse",
                             detail::concat("'", key, ":", value, "': ", why));
}

// Finite values only: from_chars also reads "inf" and "nan", which no key means and which pass
// the range checks below (NaN compares false) on their way to a cast to an integer.
double parse_double(std::string_view key, std::string_view value) {
  // from_chars for double is in GCC 12's libstdc++.
  double out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size()) bad(key, value, "not a number");
  if (!std::isfinite(out)) bad(key, value, "not a finite number");
  return out;
}

// `mib` MiB in bytes; beyond what a size_t holds the cast is undefined, so that is an error.
std::size_t mib_to_bytes(std::string_view key, std::string_view value, double mib) {
  const double bytes = mib * 1048576.0;
  if (!(bytes < 0x1p64)) bad(key, value, "too large (the size in bytes must fit in 64 bits)");
  return static_cast<std::size_t>(bytes);
}

bool parse_bool(std::string_view key, std::string_view value) {
  if (value == "True" || value == "true" || value == "1") return true;
  if (value == "False" || value == "false" || value == "0") return false;
  bad(key, value, "expected True or False");
}

// Whether `d` is a whole power of two no larger than `max` (range first: the cast needs it).
bool is_power_of_two_up_to(double d, std::uint64_t max) {
  if (!(d >= 1 && d <= static_cast<double>(max))) return false;
  const auto n = static_cast<std::uint64_t>(d);
  return d == static_cast<double>(n) && std::has_single_bit(n);
}

unsigned parse_divisions(std::string_view key, std::string_view value, std::string_view entry) {
  const double d = parse_double(key, entry);
  if (d != 0 && !is_power_of_two_up_to(d, 64)) {
    bad(key, value, detail::concat("divisions '", entry, "' must be 0 or a power of two up to 64"));
  }
  return static_cast<unsigned>(d);
}

// torch's list form: "[B:d,...,>:d]", B a power of two in MiB naming the interval that starts
// there (entry log2(B)); the first entry also covers every interval below it, ">" every one
// after the last entry named.
void parse_divisions_list(std::string_view key, std::string_view value,
                          std::array<unsigned, AllocatorConfig::kRoundupIntervals>& out) {
  std::string_view list = value.substr(1, value.size() - 2);
  bool first = true;
  std::size_t last = 0;
  while (!list.empty()) {
    const std::string_view entry = pop_item(list, list.find(','));
    const auto [bound, count, has_colon] = split_at_colon(entry);
    if (!has_colon) bad(key, value, detail::concat("entry '", entry, "' is not B:divisions"));
    const unsigned divisions = parse_divisions(key, value, count);
    if (bound == ">") {
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(std::min(last + 1, out.size())), out.end(), divisions);
      continue;
    }
    const double b = parse_double(key, bound);
    if (!is_power_of_two_up_to(b, std::uint64_t{1} << 63)) {
      bad(key, value, detail::concat("interval '", bound, "' must be a power of two (MiB)"));
    }
    const auto mib = static_cast<std::uint64_t>(b);
    const std::size_t index = std::min<std::size_t>(std::bit_width(mib) - 1, out.size() - 1);
    if (first) std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(index), divisions);
    first = false;
    out[index] = divisions;
    last = index;
  }
}

CrossStreamReuse parse_cross_stream_reuse(std::string_view key, std::string_view value) {
  for (auto mode : {CrossStreamReuse::off, CrossStreamReuse::opportunistic, CrossStreamReuse::dependencies}) {
    if (value == to_string(mode)) return mode;
  }
  bad(key, value, "expected off, opportunistic or dependencies");
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

unsigned AllocatorConfig::roundup_divisions(std::size_t bytes) const noexcept {
  const int log2 = std::bit_width(bytes) - 1;  // intervals start at 1 MiB = 2^20
  const std::size_t index = log2 > 20 ? std::min<std::size_t>(log2 - 20, kRoundupIntervals - 1) : 0;
  return roundup_power2_divisions[index];
}

AllocatorConfig AllocatorConfig::parse(std::string_view text, AllocatorConfig config) {
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
    const std::string_view item = pop_item(text, comma);
    if (item.empty()) continue;
    const auto [key, value, has_colon] = split_at_colon(item);
    if (!has_colon) bad(item, "", "expected key:value");
    if (key == "max_split_size_mb") {
      const double mb = parse_double(key, value);
      // torch: values at or below the large-segment size are meaningless; it requires > 20.
      if (mb <= 20) bad(key, value, "must be greater than 20 (MiB)");
      config.max_split_size = mib_to_bytes(key, value, mb);
    } else if (key == "max_non_split_rounding_mb") {
      const double mb = parse_double(key, value);
      if (mb < 20) bad(key, value, "must be at least 20 (MiB), the default");
      config.max_non_split_rounding = mib_to_bytes(key, value, mb);
    } else if (key == "garbage_collection_threshold") {
      const double t = parse_double(key, value);
      if (!(t > 0.0 && t < 1.0)) bad(key, value, "must lie strictly between 0 and 1");
      config.garbage_collection_threshold = t;
    } else if (key == "expandable_segments") {
      config.expandable_segments = parse_bool(key, value);
    } else if (key == "roundup_power2_divisions") {
      config.roundup_power2_divisions = {};
      if (value.starts_with('[') && value.ends_with(']')) {
        parse_divisions_list(key, value, config.roundup_power2_divisions);
      } else {
        config.roundup_power2_divisions.fill(parse_divisions(key, value, value));
      }
    } else if (key == "per_process_memory_fraction") {
      const double f = parse_double(key, value);
      if (!(f > 0.0 && f <= 1.0)) bad(key, value, "must lie in (0, 1]");
      config.per_process_memory_fraction = f;
    } else if (key == "cross_stream_reuse") {
      config.cross_stream_reuse = parse_cross_stream_reuse(key, value);
    } else if (key == "pinned_use_cuda_host_register") {
      config.pinned_use_host_register = parse_bool(key, value);
    } else if (key == "pinned_num_register_threads") {
      const double n = parse_double(key, value);
      if (!is_power_of_two_up_to(n, kMaxRegisterThreads)) {
        bad(key, value, detail::concat("must be a power of two from 1 to ", kMaxRegisterThreads));
      }
      config.pinned_num_register_threads = static_cast<unsigned>(n);
    } else if (key == "backend") {
      if (value == "native") {
        config.backend = Backend::native;
      } else if (value == "cudaMallocAsync") {
        config.backend = Backend::cuda_malloc_async;
      } else {
        bad(key, value, "unknown backend (accepted: native, cudaMallocAsync)");
      }
    } else if (const std::string_view why = unsupported_torch_key(key); !why.empty()) {
      bad(key, value, detail::concat("a PYTORCH_CUDA_ALLOC_CONF key that cudakit does not implement: ", why));
    } else {
      bad(key, value,
          "unknown key (known: max_split_size_mb, max_non_split_rounding_mb, "
          "garbage_collection_threshold, expandable_segments, roundup_power2_divisions, "
          "per_process_memory_fraction, cross_stream_reuse, pinned_use_cuda_host_register, "
          "pinned_num_register_threads, backend)");
    }
  }
  return config;
}

AllocatorConfig AllocatorConfig::parse(std::string_view text) { return parse(text, AllocatorConfig{}); }

AllocatorConfig AllocatorConfig::from_environment() {
  const char* text = std::getenv("CUDAKIT_ALLOC_CONF");
  return text ? parse(text) : AllocatorConfig{};
}

std::string AllocatorConfig::to_string() const {
  std::string out = detail::concat("expandable_segments:", expandable_segments ? "True" : "False");
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
  if (cross_stream_reuse != AllocatorConfig{}.cross_stream_reuse) {
    out += detail::concat(",cross_stream_reuse:", memory::to_string(cross_stream_reuse));
  }
  if (pinned_use_host_register) out += ",pinned_use_cuda_host_register:True";
  if (pinned_num_register_threads != 1) {
    out += detail::concat(",pinned_num_register_threads:", pinned_num_register_threads);
  }
  if (backend == Backend::cuda_malloc_async) out += ",backend:cudaMallocAsync";
  return out;
}

}  // namespace cudakit::memory
