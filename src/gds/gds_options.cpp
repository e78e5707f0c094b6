#include "cudakit/gds/gds_options.hpp"

#include <cstdlib>
#include <limits>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::gds {
namespace {

using detail::concat;

[[noreturn]] void refuse(const std::string& name, const std::string& value, const char* takes) {
  throw InvalidArgumentError("GdsOptions", concat("CUDAKIT_GDS_", name, "=\"", value, "\": takes ", takes));
}

// "8388608", "8M", "512K", "1G": a byte count.
std::size_t parse_bytes(const std::string& name, const std::string& value) {
  std::size_t digits = 0;
  unsigned long long number = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') {
    const unsigned digit = static_cast<unsigned>(value[digits] - '0');
    if (number > (std::numeric_limits<unsigned long long>::max() - digit) / 10) refuse(name, value, "a byte count that fits");
    number = number * 10 + digit;
    ++digits;
  }
  if (digits == 0) refuse(name, value, "a byte count such as 8388608, 512K, 8M or 1G");
  const std::string suffix = value.substr(digits);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) refuse(name, value, "a byte count such as 8388608, 512K, 8M or 1G");
  if (number > (std::numeric_limits<std::size_t>::max() >> shift)) refuse(name, value, "a byte count that fits");
  return static_cast<std::size_t>(number) << shift;
}

int parse_count(const std::string& name, const std::string& value, int most) {
  const bool digits_only = !value.empty() && value.size() <= 6 &&
                           value.find_first_not_of("0123456789") == std::string::npos;
  const int number = digits_only ? std::atoi(value.c_str()) : 0;
  if (number < 1 || number > most) refuse(name, value, concat("a whole number from 1 to ", most).c_str());
  return number;
}

bool parse_flag(const std::string& name, const std::string& value) {
  if (value == "1" || value == "true" || value == "True") return true;
  if (value == "0" || value == "false" || value == "False") return false;
  refuse(name, value, "0 or 1");
}

}  // namespace

void GdsOptions::set(const std::string& name, const std::string& value) {
  if (name == "CHUNK_BYTES") {
    chunk_bytes = parse_bytes(name, value);
    if (chunk_bytes == 0 || chunk_bytes % 4096 != 0) refuse(name, value, "a positive multiple of 4096 bytes");
  } else if (name == "IO_THREADS") {
    io_threads = parse_count(name, value, 256);
  } else if (name == "BUFFERS_PER_THREAD") {
    buffers_per_thread = parse_count(name, value, 16);
  } else if (name == "O_DIRECT") {
    o_direct = parse_flag(name, value);
  } else if (name == "PAGE_CACHE_CHECK") {
    page_cache_check = parse_flag(name, value);
  } else if (name == "COLD_READS") {
    if (value == "auto") cold_reads = ColdReads::automatic;
    else if (value == "direct") cold_reads = ColdReads::direct;
    else if (value == "buffered") cold_reads = ColdReads::buffered;
    else refuse(name, value, "auto, direct or buffered");
  } else if (name == "FSYNC") {
    fsync = parse_flag(name, value);
  } else if (name == "CUFILE") {
    if (value == "auto") cufile = CuFileUse::automatic;
    else if (value == "never") cufile = CuFileUse::never;
    else if (value == "required") cufile = CuFileUse::required;
    else refuse(name, value, "auto, never or required");
  } else {
    throw InvalidArgumentError("GdsOptions", concat("unknown setting CUDAKIT_GDS_", name,
                                                    " (known: CHUNK_BYTES, IO_THREADS, BUFFERS_PER_THREAD, "
                                                    "O_DIRECT, PAGE_CACHE_CHECK, COLD_READS, FSYNC, CUFILE)"));
  }
}

GdsOptions GdsOptions::from_environment() {
  GdsOptions options;
  for (const char* name : {"CHUNK_BYTES", "IO_THREADS", "BUFFERS_PER_THREAD", "O_DIRECT",
                           "PAGE_CACHE_CHECK", "COLD_READS", "FSYNC", "CUFILE"}) {
    if (const char* value = std::getenv(concat("CUDAKIT_GDS_", name).c_str()); value && *value) {
      options.set(name, value);
    }
  }
  return options;
}

}  // namespace cudakit::gds
