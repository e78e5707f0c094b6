#include "cudakit/tunable/options.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::tunable {

TuningOptions TuningOptions::from_environment(const std::function<const char*(const char*)>& getenv) {
  const auto get = [&](const char* name) -> const char* {
    return getenv ? getenv(name) : std::getenv(name);
  };
  TuningOptions o;
  const auto fail = [](const std::string& variable, std::string_view value, std::string_view expected) {
    throw InvalidArgumentError("TuningOptions::from_environment",
                               cudakit::detail::concat(variable, "=\"", value, "\": expected ", expected));
  };
  const auto read_switch = [&](const char* suffix, bool& out) {
    const std::string variable = cudakit::detail::concat("CUDAKIT_TUNABLEOP_", suffix);
    const char* value = get(variable.c_str());
    if (!value || !*value) return;
    const std::string_view v(value);
    if (v == "1") out = true;
    else if (v == "0") out = false;
    else fail(variable, v, "0 or 1");
  };
  const auto read_int = [&](const char* suffix, int& out, int min_value) {
    const std::string variable = cudakit::detail::concat("CUDAKIT_TUNABLEOP_", suffix);
    const char* value = get(variable.c_str());
    if (!value || !*value) return;
    const std::string_view v(value);
    int parsed = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
    if (ec != std::errc() || end != v.data() + v.size() || parsed < min_value) {
      fail(variable, v, cudakit::detail::concat("an integer of at least ", min_value));
    }
    out = parsed;
  };
  const auto read_string = [&](const char* suffix, std::string& out) {
    const char* value = get(cudakit::detail::concat("CUDAKIT_TUNABLEOP_", suffix).c_str());
    if (value && *value) out = value;
  };
  read_switch("ENABLED", o.enabled);
  read_switch("TUNING", o.tuning);
  read_switch("RECORD_UNTUNED", o.record_untuned);
  read_string("FILENAME", o.filename);
  read_string("UNTUNED_FILENAME", o.untuned_filename);
  read_switch("NUMERICAL_CHECK", o.numerical_check);
  read_int("MAX_TUNING_DURATION_MS", o.max_tuning_duration_ms, 0);
  read_int("MAX_TUNING_ITERATIONS", o.max_tuning_iterations, 1);
  read_int("MAX_WARMUP_DURATION_MS", o.max_warmup_duration_ms, 0);
  read_int("MAX_WARMUP_ITERATIONS", o.max_warmup_iterations, 0);
  read_switch("ICACHE_FLUSH_ENABLED", o.icache_flush);
  read_int("ROTATING_BUFFER_SIZE", o.rotating_buffer_size_mb, -1);
  read_int("VERBOSE", o.verbose, 0);
  read_int("MAX_SHAPE_TUNING_MS", o.max_shape_tuning_ms, 1);
  read_int("MAX_ENUMERATED_CANDIDATES", o.max_enumerated_candidates, 0);
  read_int("MAX_NEIGHBOUR_CANDIDATES", o.max_neighbour_candidates, 0);
  return o;
}

}  // namespace cudakit::tunable
