#include "cudakit/memory/allocator_config.hpp"

#include <charconv>
#include <cstdlib>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad(std::string_view key, std::string_view value, std::string_view why) {
  throw InvalidArgumentError("AllocatorConfig::parse",
                             detail::concat("'", key, ":", value, "': ", why));
}

double parse_double(std::string_view key, std::string_view value) {
  // from_chars for double is in GCC 12's libstdc++.
  double out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size()) bad(key, value, "not a number");
  return out;
}

bool parse_bool(std::string_view key, std::string_view value) {
  if (value == "True" || value == "true" || value == "1") return true;
  if (value == "False" || value == "false" || value == "0") return false;
  bad(key, value, "expected True or False");
}

}  // namespace

AllocatorConfig AllocatorConfig::parse(std::string_view text, AllocatorConfig config) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) bad(item, "", "expected key:value");
    const std::string_view key = trim(item.substr(0, colon));
    const std::string_view value = trim(item.substr(colon + 1));
    if (key == "max_split_size_mb") {
      const double mb = parse_double(key, value);
      // torch: values at or below the large-segment size are meaningless; it requires > 20.
      if (mb <= 20) bad(key, value, "must be greater than 20 (MiB)");
      config.max_split_size = static_cast<std::size_t>(mb * 1048576.0);
    } else if (key == "garbage_collection_threshold") {
      const double t = parse_double(key, value);
      if (!(t > 0.0 && t < 1.0)) bad(key, value, "must lie strictly between 0 and 1");
      config.garbage_collection_threshold = t;
    } else if (key == "expandable_segments") {
      config.expandable_segments = parse_bool(key, value);
    } else if (key == "roundup_power2_divisions") {
      const double d = parse_double(key, value);
      const auto n = static_cast<unsigned>(d);
      if (d != n || (n != 0 && (n & (n - 1)) != 0) || n > 64) {
        bad(key, value, "must be 0 or a power of two up to 64");
      }
      config.roundup_power2_divisions = n;
    } else if (key == "per_process_memory_fraction") {
      const double f = parse_double(key, value);
      if (!(f > 0.0 && f <= 1.0)) bad(key, value, "must lie in (0, 1]");
      config.per_process_memory_fraction = f;
    } else {
      bad(key, value,
          "unknown key (known: max_split_size_mb, garbage_collection_threshold, "
          "expandable_segments, roundup_power2_divisions, per_process_memory_fraction)");
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
  if (garbage_collection_threshold > 0) {
    out += detail::concat(",garbage_collection_threshold:", garbage_collection_threshold);
  }
  if (roundup_power2_divisions) {
    out += detail::concat(",roundup_power2_divisions:", roundup_power2_divisions);
  }
  if (per_process_memory_fraction < 1.0) {
    out += detail::concat(",per_process_memory_fraction:", per_process_memory_fraction);
  }
  return out;
}

}  // namespace cudakit::memory
