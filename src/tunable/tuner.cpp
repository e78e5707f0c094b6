#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudakit/core/copy.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tolerance.hpp"
#include "tunable/detail/check_kernels.hpp"
#include "tunable/detail/cutlass_gemm.hpp"
#include "tunable/detail/device_buffer.hpp"
#include "tunable/detail/gemv.hpp"
#include "tunable/detail/operand_bytes.hpp"
#include "tunable/detail/plan.hpp"
#include "tunable/detail/results_store.hpp"

namespace cudakit::tunable {

// Note [Tuning one key]
// 1. Operands of the tuner's own, random in [-1, 1] (the caller's may be all zeros, which every
//    candidate gets right), several copies of A, B and C cycled through so that together they
//    exceed the L2 cache twice (ROTATING_BUFFER_SIZE to choose another size): each run reads its
//    inputs from HBM, as in a model where other layers' data has evicted them.
// 2. Candidates: Default; every algorithm cuBLASLt's heuristic returns when asked for 128; the
//    other cluster shapes and swizzle of its first ones (Note [Neighbours of the heuristic's
//    choices]); enumerated ones beyond (Note [Enumerating algorithms]); cudakit's decode-size kernels where
//    they apply (detail::gemv_candidates: Gemv_k1-k8, GemvStream_r4/r8, GemvMma_r16/r32, each at
//    1, 2 and 4 splits); CUTLASS's Hopper kernels where the build has them and they apply
//    (detail::cutlass_candidates, Note [CUTLASS candidates]).
// 3. Each runs once on the first copy; one that throws, or whose output is outside the
//    tolerance of Default's (Note [GEMM tolerance]; NUMERICAL_CHECK=0 skips the comparison), is
//    dropped.
// 4. The rest are timed (Note [Tuning rounds]) with CUDA events around each sample, within what
//    is left of max_shape_tuning_ms.
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

using detail::DeviceBuffer;

// The tuner's two scales share one buffer, scale_b at the first kScaleAlignment boundary after
// scale_a's floats (one slot each for scalar scales).
constexpr std::size_t kScaleSlot = kScaleAlignment / sizeof(float);

std::size_t scale_b_offset(const GemmKey& key) {  // in floats
  const auto a = static_cast<std::size_t>(scale_elements(key.scale_a_mode, key.m, key.k));
  return (a + kScaleSlot - 1) / kScaleSlot * kScaleSlot;
}

struct Operands {
  std::vector<DeviceBuffer> a, b, c;  // rotating copies
  DeviceBuffer reference;             // Default's output
  DeviceBuffer bias;
  DeviceBuffer scales;                // scale_a, and scale_b kScaleSlot floats after it
  DeviceBuffer flush;                 // written before each sample to evict L2 (ICACHE_FLUSH)
  std::size_t flush_bytes = 0;
  std::size_t c_bytes = 0;
};

Operands make_operands(const GemmKey& key, const TuningOptions& options, StreamRef stream) {
  const auto [a_bytes, b_bytes, c_bytes] = detail::gemm_operand_bytes(key);
  const std::size_t a_elements = a_bytes / element_size(key.a_type), b_elements = b_bytes / element_size(key.b_type);
  const std::size_t c_elements = c_bytes / element_size(key.c_type);
  const std::size_t per_copy = std::max<std::size_t>(a_bytes + b_bytes + c_bytes, 1);
  const DeviceProperties props = get_device_properties(stream.device());
  const std::size_t target = options.rotating_buffer_size_mb < 0
                                 ? 2 * static_cast<std::size_t>(props.l2_cache_size)
                                 : static_cast<std::size_t>(options.rotating_buffer_size_mb) << 20;
  // At most a quarter of the free memory, at most 64 copies.
  const std::size_t free_bytes = mem_get_info(stream.device()).first;
  std::size_t copies = std::clamp<std::size_t>((target + per_copy - 1) / per_copy, 1, 64);
  copies = std::max<std::size_t>(1, std::min(copies, free_bytes / 4 / per_copy));
  Operands o{.reference = DeviceBuffer(c_bytes, stream),
             .bias = DeviceBuffer(has_bias(key.epilogue) ? static_cast<std::size_t>(key.m) * element_size(key.c_type) : 0, stream),
             .scales = DeviceBuffer(key.op == GemmOp::scaled_gemm
                                        ? (scale_b_offset(key) + static_cast<std::size_t>(scale_elements(
                                               key.scale_b_mode, key.n, key.k))) * sizeof(float)
                                        : 0,
                                    stream),
             .flush = DeviceBuffer(options.icache_flush ? static_cast<std::size_t>(props.l2_cache_size) : 0, stream)};
  o.flush_bytes = options.icache_flush ? static_cast<std::size_t>(props.l2_cache_size) : 0;
  o.c_bytes = c_bytes;
  for (std::size_t i = 0; i < copies; ++i) {
    o.a.emplace_back(a_bytes, stream);
    o.b.emplace_back(b_bytes, stream);
    o.c.emplace_back(c_bytes, stream);
    detail::fill_random(o.a.back().get(), key.a_type, a_elements, 2 * i + 1, stream);
    detail::fill_random(o.b.back().get(), key.b_type, b_elements, 2 * i + 2, stream);
    detail::fill_value(o.c.back().get(), key.c_type, c_elements, 0.0f, stream);
  }
  if (o.bias.get()) detail::fill_random(o.bias.get(), key.c_type, static_cast<std::size_t>(key.m), 99, stream);
  if (o.scales.get()) {
    // scale_a 0.5 and scale_b 2 everywhere: the product is the unscaled one, whatever the modes.
    const std::size_t b_at = scale_b_offset(key);
    std::vector<float> scales(b_at + static_cast<std::size_t>(scale_elements(key.scale_b_mode, key.n, key.k)), 2.0f);
    std::fill(scales.begin(), scales.begin() + static_cast<std::ptrdiff_t>(b_at), 0.5f);
    memcpy_async(o.scales.get(), scales.data(), scales.size() * sizeof(float), cudaMemcpyHostToDevice,
                 stream);  // traced: the candidates read it
    CUDAKIT_CHECK_CUDA(cudaStreamSynchronize(stream.handle()));  // `scales` is on this stack
  }
  return o;
}

GemmArgs args_for(const GemmKey& key, const Operands& o, std::size_t copy, void* c) {
  GemmArgs args;
  args.key = key;
  args.a = o.a[copy].get();
  args.b = o.b[copy].get();
  args.c = c ? c : o.c[copy].get();
  args.bias = o.bias.get();
  if (o.scales.get()) {
    args.scale_a = static_cast<const float*>(o.scales.get());
    args.scale_b = args.scale_a + scale_b_offset(key);
  }
  return args;
}

// Note [The heuristic under smaller workspaces]
// cuBLASLt's heuristic ranks by a model that weighs the workspace it may use: asked with 32 MiB it
// can prefer a configuration that a smaller workspace would not have led it to, and its list of
// 128 does not always hold the other one: a bfloat16 shape was measured faster with the first
// choice of a 1 MiB query (torch's cuBLASLt workspace) than with cuBLAS's default or the 32 MiB
// query's (the run and its figures: notes/tunable.md, "2026-12-04: how torch 2.11 calls
// cuBLAS"). So the first choices of a 1 MiB and a workspace-free query are candidates too.
//
// Note [A lead run before each sample]
// A sample's start event is stamped when the GPU reaches it. On an idle stream the GPU then waits
// between it and the first run for as long as the host takes to issue that run, and the wait is
// timed: cublasGemmEx takes microseconds of host time, a cuBLASLt call or a decode kernel's
// launch less, so over a sample of ~0.1 ms (a few runs of a decode GEMM, one of a 4096^3 one)
// the candidates carried different biases of several percent. That is the likely cause of the
// tuner and the benchmark's graph replays disagreeing (the tuner chose a cuBLASLt algorithm that
// replays timed slower than Default: notes/figures.md, "TunableOp"). So a run of
// the same candidate on the previous copy goes first, untimed: the host issues the event and the
// first timed run while it executes, and the sample times runs back to back, as a graph replay
// or a busy stream runs them. Only for runs under 1 ms, where the bias is over ~1%; the lead
// costs one run a sample, which the tuner's budget leaves room for (half of it for the launches,
// synchronizations and leads the events do not count).
constexpr double kLeadRunBelowMs = 1.0;

// Default's back-to-back runs before the rounds (Note [Rounds under sustained load]): long enough
// for the clock to leave its burst state, a few percent of a shape's tuning budget.
constexpr double kPreheatMs = 50.0;

// Times the plans with CUDA events; a sample runs `repetitions` times, each on the next copy,
// behind a lead run (Note [A lead run before each sample]).
class EventTimer final : public CandidateTimer {
 public:
  EventTimer(std::vector<detail::Plan>& plans, const GemmKey& key, const Operands& operands, StreamRef stream)
      : plans_(plans), key_(key), operands_(operands), stream_(stream), last_ms_(plans.size(), 0) {}

  double time_ms(std::size_t candidate, int repetitions) override {
    return time_round({{candidate, repetitions}}).front();
  }

  // Every sample queued before the host waits: the device works from the first to the last
  // (Note [Rounds under sustained load]); one pair of events a sample, read at the end.
  std::vector<double> time_round(const std::vector<SampleRequest>& samples) override {
    while (events_.size() < 2 * samples.size()) events_.emplace_back(EventFlags{.enable_timing = true});
    std::vector<double> times(samples.size(), std::nan(""));
    std::vector<bool> queued(samples.size(), false);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const std::size_t candidate = samples[i].candidate;
      try {
        if (operands_.flush_bytes) {
          memset_async(operands_.flush.get(), flushes_++ & 0xff, operands_.flush_bytes, stream_);
        }
        const auto run_on_next_copy = [&] {
          detail::run_plan(plans_[candidate], args_for(key_, operands_, next_++ % operands_.a.size(), nullptr),
                           stream_);
        };
        // The first sample of a candidate (its warm-up) has no estimate yet and no lead.
        if (last_ms_[candidate] > 0 && last_ms_[candidate] < kLeadRunBelowMs) run_on_next_copy();
        events_[2 * i].record(stream_);
        for (int r = 0; r < samples[i].repetitions; ++r) run_on_next_copy();
        events_[2 * i + 1].record(stream_);
        queued[i] = true;
      } catch (const Error& e) {
        CUDAKIT_LOG(debug, "TunableOp: ", plans_[candidate].solution.name(), " failed: ", e.what());
      }
    }
    try {
      CUDAKIT_CHECK_CUDA(cudaStreamSynchronize(stream_.handle()));
      for (std::size_t i = 0; i < samples.size(); ++i) {
        if (!queued[i]) continue;
        times[i] = static_cast<double>(events_[2 * i].elapsed_time(events_[2 * i + 1])) / samples[i].repetitions;
        last_ms_[samples[i].candidate] = times[i];
      }
    } catch (const Error& e) {
      CUDAKIT_LOG(debug, "TunableOp: a round failed: ", e.what());
      std::fill(times.begin(), times.end(), std::nan(""));
    }
    return times;
  }

 private:
  std::vector<detail::Plan>& plans_;
  const GemmKey& key_;
  const Operands& operands_;
  StreamRef stream_;
  std::vector<Event> events_;  // two a sample of the round being timed
  std::size_t next_ = 0;
  int flushes_ = 0;
  std::vector<double> last_ms_;  // per candidate, its last sample's time per run (0: none yet)
};

}  // namespace

TuningReport tune(const GemmKey& key, OptionalStream stream_arg) {
  const Clock::time_point start = Clock::now();
  const StreamRef stream = stream_or_current(stream_arg);
  DeviceGuard guard(stream.device());
  key.validate("tunable::tune");
  std::lock_guard tuning(detail::tuning_mutex(stream.device()));
  const TuningOptions options = detail::current_options();
  TuningReport report;
  report.key = key;
  if (key.m == 0 || key.n == 0 || key.k == 0) {
    detail::store_result(stream.device(), key, {Solution::default_solution(), 0});
    return report;
  }
  const Operands operands = make_operands(key, options, stream);

  // Candidates.
  std::vector<Solution> solutions{Solution::default_solution()};
  std::vector<detail::Plan> plans;
  plans.push_back(detail::make_plan(key, Solution::default_solution()));
  std::size_t first_heuristic = 0;
  {
    detail::LtDescriptors descriptors(key);
    std::vector<LtAlgoConfig> known;
    if (plans[0].algo) known.push_back(plans[0].algo->config);  // Default is the heuristic's first
    // Each cuBLASLt candidate is timed as rebuilt from its configuration, the form a results
    // file keeps: what is timed is what later runs, here and in other processes.
    const auto add_lt = [&](const detail::LtAlgo& found) {
      std::optional<detail::LtAlgo> algo = detail::algo_from_config(descriptors, found.config);
      if (!algo) {
        report.dropped.push_back(cudakit::detail::concat("Lt ", Solution{Solution::Kind::lt, found.config, 1}.name(),
                                                         ": not rebuilt from its configuration"));
        return false;
      }
      Solution s;
      s.kind = Solution::Kind::lt;
      s.lt = algo->config;
      detail::Plan plan;
      plan.solution = s;
      plan.lt = std::make_unique<detail::LtDescriptors>(key);
      plan.algo = *algo;
      solutions.push_back(s);
      plans.push_back(std::move(plan));
      return true;
    };
    // first_heuristic: the heuristic's first choice among the candidates (0: Default is it).
    for (const detail::LtAlgo& algo : detail::heuristic_algos(descriptors, 128)) {
      if (std::find(known.begin(), known.end(), algo.config) != known.end()) continue;
      const bool first = known.empty() && !plans[0].algo;
      known.push_back(algo.config);
      if (add_lt(algo) && first) first_heuristic = solutions.size() - 1;
    }
    // Note [The heuristic under smaller workspaces]: its first choices with 1 MiB (torch's
    // cuBLASLt workspace) and none.
    for (const std::size_t limit : {std::size_t{1} << 20, std::size_t{0}}) {
      for (const detail::LtAlgo& algo : detail::heuristic_algos(descriptors, 4, limit)) {
        if (std::find(known.begin(), known.end(), algo.config) != known.end()) continue;
        known.push_back(algo.config);
        (void)add_lt(algo);
      }
    }
    const std::vector<LtAlgoConfig> seeds = known;  // the heuristic's, best first
    for (const detail::LtAlgo& algo :
         detail::neighbour_algos(descriptors, seeds, known, options.max_neighbour_candidates)) {
      known.push_back(algo.config);
      (void)add_lt(algo);
    }
    for (const detail::LtAlgo& algo : detail::enumerated_algos(descriptors, known, options.max_enumerated_candidates)) {
      (void)add_lt(algo);
    }
  }
  for (const Solution& s : detail::gemv_candidates(key)) {
    solutions.push_back(s);
    plans.push_back(detail::make_plan(key, s));
  }
  const auto [major, minor] = get_device_capability(stream.device());
  for (const Solution& s : detail::cutlass_candidates(key, major * 10 + minor)) {
    solutions.push_back(s);
    plans.push_back(detail::make_plan(key, s));
  }

  // The numerical check (and a first run of each).
  std::vector<bool> keep(plans.size(), true);
  detail::run_plan(plans[0], args_for(key, operands, 0, operands.reference.get()), stream);
  const Tolerance tolerance = gemm_tolerance(key);
  for (std::size_t i = 1; i < plans.size(); ++i) {
    try {
      detail::run_plan(plans[i], args_for(key, operands, 0, nullptr), stream);
      if (options.numerical_check) {
        const double ratio = detail::max_tolerance_ratio(operands.c[0].get(), operands.reference.get(), key.c_type,
                                                         key.m, key.n, key.ldc, key.batch, key.stride_c, tolerance,
                                                         stream);
        if (!(ratio <= 1)) {
          keep[i] = false;
          report.dropped.push_back(cudakit::detail::concat(solutions[i].name(), ": differs from Default (",
                                                           ratio, "x the tolerance)"));
        }
      }
    } catch (const Error& e) {
      keep[i] = false;
      report.dropped.push_back(cudakit::detail::concat(solutions[i].name(), ": ", e.what()));
    }
  }
  CUDAKIT_CHECK_CUDA(cudaStreamSynchronize(stream.handle()));
  std::vector<detail::Plan> timed_plans;
  std::vector<Solution> timed;
  std::size_t timed_first_heuristic = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!keep[i]) continue;
    if (i == first_heuristic && i != 0) timed_first_heuristic = timed.size();
    timed.push_back(solutions[i]);
    timed_plans.push_back(std::move(plans[i]));
  }

  // Timing.
  TuningBudget budget;
  budget.max_duration_ms = options.max_tuning_duration_ms;
  budget.max_iterations = options.max_tuning_iterations;
  budget.max_warmup_duration_ms = options.max_warmup_duration_ms;
  budget.max_warmup_iterations = options.max_warmup_iterations;
  budget.preheat_ms = kPreheatMs;
  // The events' time is below the wall time (launches, synchronizations and the lead runs of
  // Note [A lead run before each sample]): leave half of what remains for them.
  budget.max_total_ms = std::max(1.0, (options.max_shape_tuning_ms - ms_since(start)) / 2.0);
  EventTimer timer(timed_plans, key, operands, stream);
  report.decision = choose_fastest(timed_plans.size(), timer, budget);
  report.candidates = timed;
  report.chosen = timed[report.decision.chosen];
  report.chosen_ms = report.decision.candidates[report.decision.chosen].median_ms;
  report.default_ms = report.decision.candidates[0].median_ms;
  if (first_heuristic != 0) report.first_heuristic = solutions[first_heuristic];
  if (timed_first_heuristic != 0) {
    report.first_heuristic_ms = report.decision.candidates[timed_first_heuristic].median_ms;
  } else if (detail::default_is_lt(key)) {
    report.first_heuristic_ms = report.default_ms;  // Default is the heuristic's first there
  }
  report.tuning_ms = ms_since(start);
  detail::store_result(stream.device(), key, {report.chosen, report.chosen_ms});
  if (options.verbose >= 1) {
    CUDAKIT_LOG(info, "TunableOp: ", key.op_name(), ",", key.signature(), ": ", report.chosen.name(), " ",
                report.chosen_ms, " ms (Default ", report.default_ms, " ms), ", timed.size(), " of ", solutions.size(),
                " candidates timed in ", report.decision.rounds, " rounds, ", report.tuning_ms, " ms");
  }
  if (options.verbose >= 2) {
    for (std::size_t i = 0; i < timed.size(); ++i) {
      const CandidateOutcome& c = report.decision.candidates[i];
      CUDAKIT_LOG(info, "TunableOp:   ", timed[i].name(), " ", c.median_ms, " ms", c.rejected ? " rejected: " : "",
                  c.why);
    }
    for (const std::string& d : report.dropped) CUDAKIT_LOG(info, "TunableOp:   dropped ", d);
    if (const auto& c = report.decision.confirmation) {
      CUDAKIT_LOG(info, "TunableOp:   sustained samples: ", timed[report.decision.rounds_winner].name(), " ", c->best_ms,
                  " ms, Default ", c->default_ms, " ms (threshold ", c->threshold * 100, "%): ",
                  c->confirmed ? "switch confirmed" : "Default kept");
    }
  }
  return report;
}

}  // namespace cudakit::tunable
