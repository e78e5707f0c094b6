#include "cudakit/tunable/solution.hpp"

#include <charconv>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::tunable {

namespace {

// The schedules' words in a Cutlass solution's name.
constexpr std::pair<CutlassSchedule, std::string_view> kSchedules[] = {
    {CutlassSchedule::cooperative, "coop"}, {CutlassSchedule::pingpong, "pingpong"}, {CutlassSchedule::stream_k, "streamk"}};

std::string_view schedule_word(CutlassSchedule schedule) {
  for (const auto& [s, word] : kSchedules) {
    if (s == schedule) return word;
  }
  return "unknown";
}

}  // namespace

std::string Solution::name() const {
  switch (kind) {
    case Kind::default_: return "Default";
    case Kind::cutlass:
      return cudakit::detail::concat("Cutlass_t", cutlass.tile_m, "x", cutlass.tile_n, "x", cutlass.tile_k, "_g",
                                     cutlass.cluster_m, "x", cutlass.cluster_n, "_", schedule_word(cutlass.schedule),
                                     "_s", cutlass.swizzle);
    case Kind::gemv:
      switch (gemv_kernel) {
        case GemvKernel::stream: return cudakit::detail::concat("GemvStream_r", gemv_rows, "_k", gemv_splits);
        case GemvKernel::mma: return cudakit::detail::concat("GemvMma_r", gemv_rows, "_k", gemv_splits);
        case GemvKernel::split_k: break;
      }
      return cudakit::detail::concat("Gemv_k", gemv_splits);
    case Kind::lt: break;
  }
  return cudakit::detail::concat("Lt_a", lt.algo_id, "_t", lt.tile, "_s", lt.stages, "_k", lt.splitk, "_r",
                        lt.reduction, "_w", lt.swizzle, "_c", lt.custom, "_i", lt.inner_shape,
                        "_g", lt.cluster_shape);
}

Solution Solution::parse(std::string_view text) {
  const auto fail = [&](std::string_view why) -> Solution {
    throw InvalidArgumentError("Solution::parse",
                               cudakit::detail::concat("solution \"", text, "\": ", why,
                                              " (expected Default, Gemv_kN, GemvStream_rR_kN, GemvMma_rR_kN, "
                                              "Cutlass_tMxNxK_gMxN_{coop,pingpong,streamk}_sS or Lt_a..._t..._s..._k..."
                                              "_r..._w..._c..._i..._g...)"));
  };
  std::string_view rest = text;
  // "_<letter><non-negative integer>" (the first field without '_').
  const auto field = [&](char letter, bool first, int min_value, int& out) {
    if (!first) {
      if (rest.empty() || rest[0] != '_') return false;
      rest.remove_prefix(1);
    }
    if (rest.empty() || rest[0] != letter) return false;
    rest.remove_prefix(1);
    int value = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || end == rest.data() || value < min_value) return false;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    out = value;
    return true;
  };
  // "<positive integer><separator>" (no separator at the end: '\0').
  const auto number = [&](int& out, char separator) {
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), out);
    if (ec != std::errc() || end == rest.data() || out < 1) return false;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (separator == '\0') return true;
    if (rest.empty() || rest[0] != separator) return false;
    rest.remove_prefix(1);
    return true;
  };
  Solution s;
  if (text == "Default") return s;
  if (text.substr(0, 9) == "Cutlass_t") {
    rest.remove_prefix(9);
    s.kind = Kind::cutlass;
    CutlassConfig& c = s.cutlass;
    if (!number(c.tile_m, 'x') || !number(c.tile_n, 'x') || !number(c.tile_k, '_') || rest.substr(0, 1) != "g") {
      return fail("a malformed Cutlass solution");
    }
    rest.remove_prefix(1);
    if (!number(c.cluster_m, 'x') || !number(c.cluster_n, '_')) return fail("a malformed Cutlass solution");
    for (const auto& [schedule, word] : kSchedules) {
      if (rest.substr(0, word.size()) == word && rest.substr(word.size(), 2) == "_s") {
        rest.remove_prefix(word.size() + 2);
        c.schedule = schedule;
        if (!number(c.swizzle, '\0') || !rest.empty()) return fail("a malformed Cutlass solution");
        return s;
      }
    }
    return fail("a Cutlass solution with an unknown schedule (coop, pingpong or streamk) or no swizzle");
  }
  for (const auto& [prefix, kernel] : {std::pair{std::string_view("GemvStream_"), GemvKernel::stream},
                                       std::pair{std::string_view("GemvMma_"), GemvKernel::mma}}) {
    if (text.substr(0, prefix.size()) != prefix) continue;
    rest.remove_prefix(prefix.size());
    s.kind = Kind::gemv;
    s.gemv_kernel = kernel;
    if (!field('r', true, 1, s.gemv_rows) || !field('k', false, 1, s.gemv_splits) || !rest.empty()) {
      return fail("a malformed Gemv solution");
    }
    return s;
  }
  if (text.substr(0, 5) == "Gemv_") {
    rest.remove_prefix(5);
    s.kind = Kind::gemv;
    if (!field('k', true, 1, s.gemv_splits) || !rest.empty()) return fail("a malformed Gemv solution");
    return s;
  }
  if (text.substr(0, 3) == "Lt_") {
    rest.remove_prefix(3);
    s.kind = Kind::lt;
    LtAlgoConfig& c = s.lt;
    if (!field('a', true, 0, c.algo_id) || !field('t', false, 0, c.tile) ||
        !field('s', false, 0, c.stages) || !field('k', false, 1, c.splitk) ||
        !field('r', false, 0, c.reduction) || !field('w', false, 0, c.swizzle) ||
        !field('c', false, 0, c.custom) || !field('i', false, 0, c.inner_shape) ||
        !field('g', false, 0, c.cluster_shape) || !rest.empty()) {
      return fail("a malformed cuBLASLt solution");
    }
    return s;
  }
  return fail("an unknown kind of solution");
}

}  // namespace cudakit::tunable
