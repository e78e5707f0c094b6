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
  std::size_t candidate = 0;  // index of the candidate to run (0 is Default)
  int repetitions = 1;        // back-to-back runs timed together
};

// What choose_fastest() times candidates with: the GPU's event timer in the tuner, any
// deterministic source in tests. Called from the tuning thread only.
class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  // Runs `candidate` `repetitions` times and returns the mean time of one run in ms; a negative
  // value or NaN when the candidate failed (it is dropped).
  // @param candidate index of the candidate (0 is Default)
  // @param repetitions back-to-back runs to time together, at least 1
  // @return the mean ms of one run, or a negative value or NaN for a failure
  virtual double time_ms(std::size_t candidate, int repetitions) = 0;
  // A round's samples in order, each as time_ms would time it. A timer that can queue them all
  // before it waits (the GPU's) keeps the device busy across the round (Note [Rounds under
  // sustained load]); this one times them one by one.
  // @param samples the round's samples, in the order they are to run
  // @return one time per sample, in the same order, as time_ms() returns it
  virtual std::vector<double> time_round(const std::vector<SampleRequest>& samples) {
    std::vector<double> times;
    times.reserve(samples.size());
    for (const SampleRequest& s : samples) times.push_back(time_ms(s.candidate, s.repetitions));
    return times;
  }
};

// How long the tuning loop may time candidates, and how it samples them. The tuner fills it from
// TuningOptions.
struct TuningBudget {
  double max_duration_ms = 30;     // timed per candidate, at most
  int max_iterations = 100;        // rounds, at most
  double max_warmup_duration_ms = 0;  // per candidate; 0: iterations only
  int max_warmup_iterations = 1;   // warm-up runs per candidate, at most (at least one is made)
  double max_total_ms = 2000;      // all candidates together, warm-up included
  double sample_target_ms = 0.1;   // one sample times enough repetitions to last about this long
  int min_rounds = 5;              // before a decision is allowed to stop early
  // A switch away from Default is confirmed with samples of back-to-back runs lasting about
  // confirm_sample_ms, Default and the winner alternating, confirm_rounds each (Note [Confirming
  // a switch under sustained load]); 0 rounds, or rounds' samples already that long: none.
  double confirm_sample_ms = 10;
  int confirm_rounds = 3;  // confirmation samples each of Default and the winner take
  // Before the rounds, Default runs back to back for about this long, untimed, so that the rounds
  // start from the clock and power state of sustained work (0: not at all). See Note [Rounds
  // under sustained load].
  double preheat_ms = 0;
};

// How one candidate fared in choose_fastest().
struct CandidateOutcome {
  std::vector<double> samples;  // mean ms per run, one per round it was timed in
  double median_ms = 0;         // of samples (0 when rejected before timing)
  bool rejected = false;        // dropped before the end (never Default)
  std::string why;              // when rejected: "failed", "slower than ...", ...
};

// The sustained samples of Default and of the rounds' winner, when the rounds chose a switch.
struct SwitchConfirmation {
  // default_samples: Default's sustained samples; best_samples: the winner's.
  std::vector<double> default_samples, best_samples;  // mean ms per run
  // default_ms: the median of default_samples; best_ms: that of best_samples.
  double default_ms = 0, best_ms = 0;                  // their medians
  double threshold = 0;                                // the gain the best needed here
  bool confirmed = false;                              // whether the switch held
};

// What choose_fastest() decided, and how.
struct TuningDecision {
  std::size_t chosen = 0;  // 0: Default
  std::vector<CandidateOutcome> candidates;  // one per candidate, in the candidates' order
  double noise = 0;        // relative spread of Default's and the best's samples
  double threshold = 0;    // the gain the best needed over Default to be chosen
  int rounds = 0;          // rounds timed
  double spent_ms = 0;     // timed work, warm-up and confirmation included
  std::size_t rounds_winner = 0;  // what the rounds chose, before the confirmation
  std::optional<SwitchConfirmation> confirmation;  // set when a switch of the rounds was re-timed
};

// Times candidates 0..count-1 (0 is Default, never rejected) and picks one. Runs on the calling
// thread; every run and wait is the timer's.
// @param count the number of candidates (0: nothing is timed)
// @param timer runs and times the candidates
// @param budget the limits and sampling of the loop
// @return the choice, every candidate's outcome and what the loop spent.
[[nodiscard]] TuningDecision choose_fastest(std::size_t count, CandidateTimer& timer,
                                            const TuningBudget& budget);

// The median of `values` (0 for none).
// @param values the samples (taken by value: reordered)
// @return the middle value, or the mean of the two middle ones for an even count; 0 for none.
[[nodiscard]] double median(std::vector<double> values);

}  // namespace cudakit::tunable
