#include "cudakit/tunable/tuning_loop.hpp"

#include <algorithm>
#include <cmath>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit::tunable {

// Note [Tuning rounds]
// - Warm-up: each candidate runs max_warmup_iterations times (at least once) before anything is
//   timed: the first launch of a kernel loads its module, and cuBLASLt builds state on first use.
//   The warm-up's time also sizes the samples: a sample is `repetitions` back-to-back runs lasting
//   about sample_target_ms (0.1 ms: 200x the ~0.5 us resolution of CUDA events, so a 5 us GEMV
//   is timed 20 at a time).
// - A candidate whose warm-up took over 3x the fastest warm-up is dropped at once: first runs
//   carry one-time costs, so only a large gap says it is slower.
// - Rounds: every live candidate gives one sample per round, in an order that rotates by one
//   each round, so clock changes (boost, heat) over the tuning spread over all of them instead of
//   favouring whoever ran while the clock was high.
// - Early rejection, from the third round: a candidate more than 5% slower than the current
//   leader (by median) in every round both were timed in cannot win by more than noise; it stops
//   being timed. Round by round, not a candidate's best sample against the leader's median: the
//   GPU's clock moves within the first rounds (the leader's early median can be ten percent
//   below every candidate's median over all rounds), and against such an early median
//   candidates were rejected that ended faster than Default (notes/figures.md, "TunableOp").
//   Within a round the candidates run a few milliseconds apart, so the same round's samples
//   share the clock's state.
// - Stopping: at max_iterations rounds; when the candidates' time runs out (max_total_ms in all,
//   max_duration_ms each); or after min_rounds when Default and at most one other remain.
// - Choosing: the lowest median wins, but replaces Default only when it is faster by more than
//   threshold = max(1%, 2 x noise), noise being the larger median absolute deviation / median of
//   the two. A gain under 1% is within the run-to-run variation of one shape on an H200 (clocks
//   and L2 state), and a switch costs a chance of being slower in production for no gain that a
//   benchmark could show; 2 x the measured spread keeps a noisy measurement from switching.
//
// Note [Rounds under sustained load]
// An H200 runs a GEMM that follows a rest at a higher clock than the same GEMM in a stream of
// them: its power limit (700 W) holds the clock down under sustained tensor-core work, and the
// controller takes tens to hundreds of milliseconds to get there. Which candidate is fastest
// depends on that state: measured in one process, interleaved, a square bfloat16 GEMM ran
// markedly slower in back-to-back rounds than in the short bursts of another phase, and under
// sustained load a cuBLASLt kernel beat cuBLAS's choice that the tuner, whose samples each
// followed a synchronization (the GPU resting while the host read the events and issued the next
// sample), had kept (the run and its figures: notes/tunable.md, "2026-12-04: how torch 2.11
// calls cuBLAS").
// So a round's samples are queued all together (CandidateTimer::time_round: the events are read
// once the round has run), the device working from the round's first sample to its last, and
// Default runs for preheat_ms before the first round. A model's GEMMs run in such streams, and
// that is where a tuned choice must be fastest.
//
// Note [Confirming a switch under sustained load]
// The rounds' samples are short (~0.1 ms, one run of a 4096^3 GEMM) and each follows a
// synchronization, an L2 flush and the host's issue of the next sample: the GPU rests between
// them, and an H200 runs short bursts at a clock that back-to-back work does not keep (Note
// [Sustained samples] in bench/tunable_bench.cpp). Candidates do not lose the same share when the
// clock drops: the tuner switched a shape to a cuBLASLt algorithm that 10 ms samples of
// back-to-back calls timed slower than Default (notes/figures.md, "TunableOp"). So a switch the
// rounds choose is timed again before it stands: confirm_rounds samples each of Default and the
// winner, each sample runs back to back for about confirm_sample_ms, the two alternating and the
// first of each pair alternating too; the winner replaces Default only if its median there is
// faster by max(1%, 2 x the spread of those samples) as well. 3 rounds of 10 ms: 60 ms a switched
// shape, within the tuning budget of 2 s, and what a training step or a batch of decode steps
// sees. Where the rounds' samples already lasted confirm_sample_ms (GEMMs of 10 ms and more),
// they were sustained work themselves and nothing is timed again.
namespace {

double relative_spread(const std::vector<double>& samples) {
  const double m = median(samples);
  if (samples.size() < 2 || m <= 0) return 0;
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (const double s : samples) deviations.push_back(std::fabs(s - m));
  return median(std::move(deviations)) / m;
}

bool failed(double t) { return !(t >= 0) || !std::isfinite(t); }

// How many back-to-back runs of `per_run_ms` make a sample of about `target_ms`, in [1, most].
int runs_lasting(double target_ms, double per_run_ms, int most) {
  return std::clamp(static_cast<int>(std::ceil(target_ms / std::max(per_run_ms, 1e-6))), 1, most);
}

// Note [Confirming a switch under sustained load]: true when the rounds' winner stands.
bool confirm_switch(TuningDecision& d, CandidateTimer& timer, const TuningBudget& budget) {
  const std::size_t best = d.rounds_winner;
  SwitchConfirmation& c = d.confirmation.emplace();
  const int default_reps = runs_lasting(budget.confirm_sample_ms, d.candidates[0].median_ms, 100000);
  const int best_reps = runs_lasting(budget.confirm_sample_ms, d.candidates[best].median_ms, 100000);
  for (int round = 0; round < budget.confirm_rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      const bool default_now = (k == 0) == (round % 2 == 0);
      const double t = default_now ? timer.time_ms(0, default_reps) : timer.time_ms(best, best_reps);
      if (failed(t)) {
        // A candidate that ran in every round and fails now is not one to switch to; Default
        // failing here keeps the rounds' evidence, which is all there is.
        c.confirmed = default_now;
        return c.confirmed;
      }
      (default_now ? c.default_samples : c.best_samples).push_back(t);
      d.spent_ms += t * (default_now ? default_reps : best_reps);
    }
  }
  c.default_ms = median(c.default_samples);
  c.best_ms = median(c.best_samples);
  c.threshold = std::max(0.01, 2 * std::max(relative_spread(c.default_samples), relative_spread(c.best_samples)));
  c.confirmed = c.best_ms < c.default_ms * (1 - c.threshold);
  return c.confirmed;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

TuningDecision choose_fastest(std::size_t count, CandidateTimer& timer, const TuningBudget& budget) {
  TuningDecision d;
  d.candidates.resize(count);
  if (count == 0) return d;
  std::vector<int> repetitions(count, 1);
  std::vector<double> timed_ms(count, 0);  // per candidate, rounds only
  std::vector<std::vector<int>> sample_rounds(count);  // the round of each of a candidate's samples
  const auto reject = [&](std::size_t c, std::string why) {
    if (c == 0) return;  // Default is the baseline, always kept
    d.candidates[c].rejected = true;
    d.candidates[c].why = std::move(why);
  };

  // Warm-up.
  std::vector<double> warmup(count, 0);
  for (std::size_t c = 0; c < count; ++c) {
    const int iterations = std::max(budget.max_warmup_iterations, 1);
    double spent = 0, last = 0;
    for (int i = 0; i < iterations; ++i) {
      last = timer.time_ms(c, 1);
      if (failed(last)) break;
      spent += last;
      if (budget.max_warmup_duration_ms > 0 && spent >= budget.max_warmup_duration_ms) break;
    }
    d.spent_ms += failed(last) ? 0 : spent;
    if (failed(last)) {
      if (c == 0) {
        // Default failing is the caller's error to see, not the tuner's to hide: keep it chosen.
        d.candidates[0].why = "failed";
        return d;
      }
      reject(c, "failed");
      continue;
    }
    warmup[c] = last;
    repetitions[c] = runs_lasting(budget.sample_target_ms, last, 1000);
  }
  double fastest_warmup = warmup[0];
  for (std::size_t c = 1; c < count; ++c) {
    if (!d.candidates[c].rejected) fastest_warmup = std::min(fastest_warmup, warmup[c]);
  }
  for (std::size_t c = 1; c < count; ++c) {
    if (!d.candidates[c].rejected && warmup[c] > 3 * fastest_warmup) {
      reject(c, cudakit::detail::concat("warm-up ", warmup[c], " ms, over 3x the fastest's ", fastest_warmup, " ms"));
    }
  }

  // Rounds.
  const auto live = [&] {
    std::vector<std::size_t> ids;
    for (std::size_t c = 0; c < count; ++c) {
      if (!d.candidates[c].rejected) ids.push_back(c);
    }
    return ids;
  };
  // See Note [Rounds under sustained load].
  if (budget.preheat_ms > 0 && warmup[0] > 0) {
    const double t = timer.time_ms(0, runs_lasting(budget.preheat_ms, warmup[0], 1000000));
    if (!failed(t)) d.spent_ms += t * runs_lasting(budget.preheat_ms, warmup[0], 1000000);
  }
  for (int round = 0; round < std::max(budget.max_iterations, 1); ++round) {
    const std::vector<std::size_t> ids = live();
    bool timed_any = false;
    // The round's samples, in an order that rotates by one each round, as many as the budget
    // left is expected to cover (a candidate's last time per run, or its warm-up's).
    std::vector<SampleRequest> requests;
    double planned_ms = d.spent_ms;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::size_t c = ids[(i + static_cast<std::size_t>(round)) % ids.size()];
      if (planned_ms >= budget.max_total_ms) break;
      if (budget.max_duration_ms > 0 && timed_ms[c] >= budget.max_duration_ms && !d.candidates[c].samples.empty()) continue;
      requests.push_back({c, repetitions[c]});
      const double per_run = d.candidates[c].samples.empty() ? warmup[c] : d.candidates[c].samples.back();
      planned_ms += per_run * repetitions[c];
    }
    const std::vector<double> times = requests.empty() ? std::vector<double>{} : timer.time_round(requests);
    for (std::size_t i = 0; i < requests.size() && i < times.size(); ++i) {
      const std::size_t c = requests[i].candidate;
      const double t = times[i];
      if (failed(t)) {
        if (c == 0) continue;  // see above: Default stays
        reject(c, "failed");
        continue;
      }
      timed_any = true;
      d.candidates[c].samples.push_back(t);
      sample_rounds[c].push_back(round);
      timed_ms[c] += t * repetitions[c];
      d.spent_ms += t * repetitions[c];
    }
    d.rounds = round + 1;
    if (!timed_any) break;
    // The leader by median, among candidates timed this far.
    std::size_t leader = 0;
    double leader_median = median(d.candidates[0].samples);
    for (const std::size_t c : live()) {
      const double m = median(d.candidates[c].samples);
      if (!d.candidates[c].samples.empty() && (leader_median <= 0 || m < leader_median)) {
        leader = c;
        leader_median = m;
      }
    }
    if (round >= 2 && leader_median > 0) {
      std::vector<double> leader_at(static_cast<std::size_t>(round) + 1, 0);  // 0: not timed that round
      for (std::size_t k = 0; k < sample_rounds[leader].size(); ++k) {
        leader_at[static_cast<std::size_t>(sample_rounds[leader][k])] = d.candidates[leader].samples[k];
      }
      for (const std::size_t c : live()) {
        if (c == leader) continue;
        double best_ratio = 0;
        int paired = 0;
        for (std::size_t k = 0; k < sample_rounds[c].size(); ++k) {
          const double beside = leader_at[static_cast<std::size_t>(sample_rounds[c][k])];
          if (beside <= 0) continue;
          const double ratio = d.candidates[c].samples[k] / beside;
          best_ratio = paired++ == 0 ? ratio : std::min(best_ratio, ratio);
        }
        if (paired >= 3 && best_ratio > 1.05) {
          reject(c, cudakit::detail::concat("over 5% slower than the leader in each of ", paired,
                                            " rounds (", best_ratio, "x at best)"));
        }
      }
    }
    if (d.spent_ms >= budget.max_total_ms) break;
    if (round + 1 >= budget.min_rounds && live().size() <= 2) break;
  }

  // Choosing.
  for (CandidateOutcome& c : d.candidates) c.median_ms = median(c.samples);
  std::size_t best = 0;
  for (const std::size_t c : live()) {
    if (d.candidates[c].samples.empty()) continue;
    if (d.candidates[best].samples.empty() || d.candidates[c].median_ms < d.candidates[best].median_ms) best = c;
  }
  d.noise = std::max(relative_spread(d.candidates[0].samples), relative_spread(d.candidates[best].samples));
  d.threshold = std::max(0.01, 2 * d.noise);
  if (best == 0) return d;
  if (d.candidates[0].samples.empty()) {
    // Default could not be timed in the rounds (it failed there): the best runs, unconfirmed.
    d.chosen = d.rounds_winner = best;
    return d;
  }
  if (!(d.candidates[best].median_ms < d.candidates[0].median_ms * (1 - d.threshold))) return d;
  d.chosen = d.rounds_winner = best;
  // Samples of the rounds that already ran back to back for confirm_sample_ms were sustained.
  const bool short_samples = std::min(repetitions[0] * d.candidates[0].median_ms,
                                      repetitions[best] * d.candidates[best].median_ms) < budget.confirm_sample_ms;
  if (budget.confirm_rounds > 0 && short_samples) d.chosen = confirm_switch(d, timer, budget) ? best : 0;
  return d;
}

}  // namespace cudakit::tunable
