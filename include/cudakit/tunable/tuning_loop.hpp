#pragma once
// @brief The tuning loop's decisions: how candidates are timed (warm-up, rounds, budgets), which are
// rejected early, and when the fastest replaces Default. See Note [Tuning rounds] in
// src/tunable/tuning_loop.cpp. The times come from a CandidateTimer: CUDA events around the
// candidate's launches on a GPU (src/tunable/event_timer), any deterministic source elsewhere.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cudakit::tunable {

// One sample of a round: `repetitions` back-to-back runs of `candidate`.
struct SampleRequest {
  std::size_t candidate = 0;
  int repetitions = 1;
};

class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  // Runs `candidate` `repetitions` times and returns the mean time of one run in ms; a negative
  // value or NaN when the candidate failed (it is dropped).
  virtual double time_ms(std::size_t candidate, int repetitions) = 0;
  // A round's samples in order, each as time_ms would time it. A timer that can queue them all
  // before it waits (the GPU's) keeps the device busy across the round (Note [Rounds under
  // sustained load]); this one times them one by one.
  virtual std::vector<double> time_round(const std::vector<SampleRequest>& samples) {
    std::vector<double> times;
    times.reserve(samples.size());
    for (const SampleRequest& s : samples) times.push_back(time_ms(s.candidate, s.repetitions));
    return times;
  }
};

struct TuningBudget {
  double max_duration_ms = 30;     // timed per candidate, at most
  int max_iterations = 100;        // rounds, at most
  double max_warmup_duration_ms = 0;  // per candidate; 0: iterations only
  int max_warmup_iterations = 1;
  double max_total_ms = 2000;      // all candidates together, warm-up included
  double sample_target_ms = 0.1;   // one sample times enough repetitions to last about this long
  int min_rounds = 5;              // before a decision is allowed to stop early
  // A switch away from Default is confirmed with samples of back-to-back runs lasting about
  // confirm_sample_ms, Default and the winner alternating, confirm_rounds each (Note [Confirming
  // a switch under sustained load]); 0 rounds, or rounds' samples already that long: none.
  double confirm_sample_ms = 10;
  int confirm_rounds = 3;
  // Before the rounds, Default runs back to back for about this long, untimed, so that the rounds
  // start from the clock and power state of sustained work (0: not at all). See Note [Rounds
  // under sustained load].
  double preheat_ms = 0;
};

struct CandidateOutcome {
  std::vector<double> samples;  // mean ms per run, one per round it was timed in
  double median_ms = 0;         // of samples (0 when rejected before timing)
  bool rejected = false;
  std::string why;              // when rejected: "failed", "slower than ...", ...
};

// The sustained samples of Default and of the rounds' winner, when the rounds chose a switch.
struct SwitchConfirmation {
  std::vector<double> default_samples, best_samples;  // mean ms per run
  double default_ms = 0, best_ms = 0;                  // their medians
  double threshold = 0;                                // the gain the best needed here
  bool confirmed = false;
};

struct TuningDecision {
  std::size_t chosen = 0;  // 0: Default
  std::vector<CandidateOutcome> candidates;
  double noise = 0;        // relative spread of Default's and the best's samples
  double threshold = 0;    // the gain the best needed over Default to be chosen
  int rounds = 0;
  double spent_ms = 0;     // timed work, warm-up and confirmation included
  std::size_t rounds_winner = 0;  // what the rounds chose, before the confirmation
  std::optional<SwitchConfirmation> confirmation;  // set when a switch of the rounds was re-timed
};

// Times candidates 0..count-1 (0 is Default, never rejected) and picks one.
[[nodiscard]] TuningDecision choose_fastest(std::size_t count, CandidateTimer& timer,
                                            const TuningBudget& budget);

// The median of `values` (0 for none).
[[nodiscard]] double median(std::vector<double> values);

}  // namespace cudakit::tunable
