#include "cudakit/tunable/tuning_loop.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "cudakit/tunable/tolerance.hpp"

namespace cudakit::tunable {
namespace {

// Times from a list per candidate, cycled; records what was asked.
class ListTimer final : public CandidateTimer {
 public:
  explicit ListTimer(std::vector<std::vector<double>> times) : times_(std::move(times)) {}
  double time_ms(std::size_t candidate, int repetitions) override {
    calls.push_back(candidate);
    reps[candidate] = repetitions;
    const std::vector<double>& list = times_[candidate];
    return list[counts_[candidate]++ % list.size()];
  }
  std::vector<std::size_t> calls;
  std::map<std::size_t, int> reps;

 private:
  std::vector<std::vector<double>> times_;
  std::map<std::size_t, std::size_t> counts_;
};

TuningBudget budget() {
  TuningBudget b;
  b.max_iterations = 20;
  b.max_duration_ms = 1e9;
  b.max_total_ms = 1e9;
  return b;
}

TEST(TuningLoop, PicksAClearlyFasterCandidate) {
  ListTimer timer({{1.0, 1.01, 0.99}, {0.8, 0.81, 0.79}, {0.9}});
  const TuningDecision d = choose_fastest(3, timer, budget());
  EXPECT_EQ(d.chosen, 1u);
  EXPECT_NEAR(d.candidates[1].median_ms, 0.8, 1e-12);
  EXPECT_TRUE(d.candidates[2].rejected);  // 0.9 > 1.05 x 0.8
}

// Per candidate, one time for samples of fewer than `sustained_from` runs (the rounds') and
// another for longer ones (the confirmation's): a GPU at a burst clock against back-to-back work.
class BurstTimer final : public CandidateTimer {
 public:
  BurstTimer(std::vector<double> burst, std::vector<double> sustained, int sustained_from)
      : burst_(std::move(burst)), sustained_(std::move(sustained)), sustained_from_(sustained_from) {}
  double time_ms(std::size_t candidate, int repetitions) override {
    calls.emplace_back(candidate, repetitions);
    return repetitions >= sustained_from_ ? sustained_[candidate] : burst_[candidate];
  }
  std::vector<std::pair<std::size_t, int>> calls;

 private:
  std::vector<double> burst_, sustained_;
  int sustained_from_;
};

TEST(TuningLoop, ASwitchFasterOnlyInShortSamplesIsNotConfirmed) {
  // 10% faster in the rounds' 0.1 ms samples, 2% slower over 10 ms of back-to-back runs.
  BurstTimer timer({1.0, 0.9}, {1.0, 1.02}, 5);
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_EQ(d.rounds_winner, 1u);
  EXPECT_EQ(d.chosen, 0u);
  ASSERT_TRUE(d.confirmation.has_value());
  EXPECT_FALSE(d.confirmation->confirmed);
  EXPECT_DOUBLE_EQ(d.confirmation->default_ms, 1.0);
  EXPECT_DOUBLE_EQ(d.confirmation->best_ms, 1.02);
  // Three rounds each, sized from the rounds' medians to ~10 ms: 10 runs of Default, 12 of the
  // winner (ceil(10 / 0.9)), Default first, then the winner first, alternating.
  ASSERT_GE(timer.calls.size(), 6u);
  const std::vector<std::pair<std::size_t, int>> last(timer.calls.end() - 6, timer.calls.end());
  EXPECT_EQ(last, (std::vector<std::pair<std::size_t, int>>{{0, 10}, {1, 12}, {1, 12}, {0, 10}, {0, 10}, {1, 12}}));
}

TEST(TuningLoop, ASwitchFasterInSustainedSamplesToo) {
  BurstTimer timer({1.0, 0.9}, {1.0, 0.93}, 5);
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_EQ(d.chosen, 1u);
  ASSERT_TRUE(d.confirmation.has_value());
  EXPECT_TRUE(d.confirmation->confirmed);
  EXPECT_DOUBLE_EQ(d.confirmation->threshold, 0.01);
}

TEST(TuningLoop, KeepingDefaultNeedsNoConfirmationAndZeroRoundsSkipIt) {
  BurstTimer slower({1.0, 1.1}, {1.0, 0.5}, 5);
  const TuningDecision kept = choose_fastest(2, slower, budget());
  EXPECT_EQ(kept.chosen, 0u);
  EXPECT_FALSE(kept.confirmation.has_value());
  TuningBudget b = budget();
  b.confirm_rounds = 0;
  BurstTimer faster({1.0, 0.9}, {1.0, 1.02}, 5);
  const TuningDecision d = choose_fastest(2, faster, b);
  EXPECT_EQ(d.chosen, 1u);
  EXPECT_FALSE(d.confirmation.has_value());
}

TEST(TuningLoop, RoundsOfSustainedSamplesNeedNoConfirmation) {
  // 20 ms a run: each of the rounds' samples is one run, already longer than 10 ms.
  BurstTimer timer({20.0, 18.0}, {20.0, 30.0}, 1000);
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_EQ(d.chosen, 1u);
  EXPECT_FALSE(d.confirmation.has_value());
}

TEST(TuningLoop, AWinnerFailingInTheConfirmationIsNotChosen) {
  BurstTimer timer({1.0, 0.5}, {1.0, std::nan("")}, 5);
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_EQ(d.chosen, 0u);
  ASSERT_TRUE(d.confirmation.has_value());
  EXPECT_FALSE(d.confirmation->confirmed);
}

TEST(TuningLoop, EarlyRejectionComparesSamplesOfTheSameRound) {
  // Candidate 1 was timed fast in its warm-up and first two rounds (a clock boost when its turn
  // came), then ran as Default does; candidate 7 is 4% faster than both throughout. Against
  // candidate 1's median after three rounds (0.85) candidate 7's best sample (0.96) is over 5%
  // slower, but beside it in the same rounds it is not always: it stays, and wins. 2-6 are 20%
  // slower in every round and go.
  std::vector<double> boosted_then_steady{0.85, 0.85, 0.85};
  boosted_then_steady.resize(40, 1.0);
  ListTimer timer({{1.0}, boosted_then_steady, {1.2}, {1.2}, {1.2}, {1.2}, {1.2}, {0.96}});
  const TuningDecision d = choose_fastest(8, timer, budget());
  EXPECT_FALSE(d.candidates[7].rejected) << d.candidates[7].why;
  EXPECT_EQ(d.chosen, 7u);
  for (std::size_t c = 2; c <= 6; ++c) {
    EXPECT_TRUE(d.candidates[c].rejected) << c;
    EXPECT_NE(d.candidates[c].why.find("in each of"), std::string::npos) << d.candidates[c].why;
  }
}

TEST(TuningLoop, KeepsDefaultForAGainWithinTheThreshold) {
  // 0.5% faster: under the 1% floor of the threshold.
  ListTimer timer({{1.0}, {0.995}});
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_EQ(d.chosen, 0u);
  EXPECT_DOUBLE_EQ(d.threshold, 0.01);
}

TEST(TuningLoop, NoisyTimingsRaiseTheThreshold) {
  // Default's samples spread by 10% around 1.0; a 5% gain is within twice that noise.
  ListTimer timer({{0.9, 1.1, 1.0, 0.9, 1.1}, {0.95}});
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_GT(d.noise, 0.05);
  EXPECT_GE(d.threshold, 2 * d.noise);
  EXPECT_EQ(d.chosen, 0u);
}

TEST(TuningLoop, FailedCandidatesAreDroppedAndDefaultIsNever) {
  ListTimer timer({{1.0}, {std::nan("")}, {-1.0}, {0.5}});
  const TuningDecision d = choose_fastest(4, timer, budget());
  EXPECT_TRUE(d.candidates[1].rejected);
  EXPECT_EQ(d.candidates[1].why, "failed");
  EXPECT_TRUE(d.candidates[2].rejected);
  EXPECT_FALSE(d.candidates[0].rejected);
  EXPECT_EQ(d.chosen, 3u);
}

TEST(TuningLoop, SlowWarmupsAreRejectedBeforeAnyRound) {
  ListTimer timer({{1.0}, {3.5, 0.1}});  // its warm-up is over 3x Default's
  const TuningDecision d = choose_fastest(2, timer, budget());
  EXPECT_TRUE(d.candidates[1].rejected);
  EXPECT_TRUE(d.candidates[1].samples.empty());
  EXPECT_EQ(d.chosen, 0u);
}

TEST(TuningLoop, RoundsRotateTheOrderAndStopEarlyWhenTwoRemain) {
  ListTimer timer({{1.0}, {0.5}, {0.6}, {2.0}});
  const TuningDecision d = choose_fastest(4, timer, budget());
  EXPECT_EQ(d.chosen, 1u);
  // Warm-up: 0, 1, 2, 3 (3 rejected: 2.0 > 3 x 0.5? no: 2.0 < 1.5 is false -> rejected).
  ASSERT_GE(timer.calls.size(), 4u + 3u + 3u);
  EXPECT_EQ(std::vector<std::size_t>(timer.calls.begin(), timer.calls.begin() + 4), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(d.candidates[3].rejected);
  // Round 0 starts at candidate 0, round 1 at the second live one.
  EXPECT_EQ(timer.calls[4], 0u);
  EXPECT_EQ(timer.calls[7], 1u);
  // Candidate 2 (0.6 > 1.05 x 0.5) is rejected at the third round; then 0 and 1 remain and the
  // loop stops at min_rounds.
  EXPECT_TRUE(d.candidates[2].rejected);
  EXPECT_EQ(d.rounds, budget().min_rounds);
}

TEST(TuningLoop, StopsAtTheTotalBudget) {
  TuningBudget b = budget();
  b.max_total_ms = 10;
  b.sample_target_ms = 1;  // one repetition per sample of 1 ms
  ListTimer timer({{1.0}, {1.0}});
  const TuningDecision d = choose_fastest(2, timer, b);
  EXPECT_LE(d.spent_ms, 10.0 + 1.0);
  EXPECT_LE(timer.calls.size(), 11u);
}

TEST(TuningLoop, SamplesAreSizedFromTheWarmup) {
  TuningBudget b = budget();
  b.sample_target_ms = 0.1;
  ListTimer timer({{0.005}, {0.01}});
  (void)choose_fastest(2, timer, b);
  EXPECT_EQ(timer.reps[0], 20);
  EXPECT_EQ(timer.reps[1], 10);
}

TEST(TuningLoop, PerCandidateDurationCapsItsSamples) {
  TuningBudget b = budget();
  b.max_duration_ms = 3;
  b.sample_target_ms = 1;
  ListTimer timer({{1.0}, {0.6}});  // 0.6 ms: two runs a sample
  const TuningDecision d = choose_fastest(2, timer, b);
  EXPECT_EQ(d.candidates[0].samples.size(), 3u);
  EXPECT_EQ(d.candidates[1].samples.size(), 3u);  // 1.2, 2.4, 3.6 ms
  EXPECT_EQ(d.rounds, 4);                          // the fourth timed nothing
}

TEST(TuningLoop, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(Tolerance, ScalesWithTheOutputTypeAndK) {
  GemmKey key;
  key.k = 4096;
  key.a_type = key.b_type = key.c_type = GemmDType::bfloat16;
  const Tolerance bf16 = gemm_tolerance(key);
  key.a_type = key.b_type = key.c_type = GemmDType::float32;
  const Tolerance f32 = gemm_tolerance(key);
  key.tf32 = true;
  const Tolerance tf32 = gemm_tolerance(key);
  key.k = 16;
  const Tolerance tf32_short = gemm_tolerance(key);
  EXPECT_GT(bf16.rtol, f32.rtol);
  EXPECT_GT(tf32.atol, f32.atol);
  EXPECT_GT(tf32.atol, tf32_short.atol);
  EXPECT_DOUBLE_EQ(bf16.rtol, 2 * std::ldexp(1.0, -7));
}

TEST(Tolerance, RatioPassesRoundingAndFailsWrongResults) {
  const Tolerance t{1e-3, 1e-4};
  EXPECT_LE(tolerance_ratio(1.0005, 1.0, 1.0, t), 1.0);
  EXPECT_GT(tolerance_ratio(1.01, 1.0, 1.0, t), 1.0);
  // Near zero the rms-scaled part carries it.
  EXPECT_LE(tolerance_ratio(5e-5, 0.0, 1.0, t), 1.0);
  EXPECT_TRUE(std::isnan(tolerance_ratio(std::nan(""), 1.0, 1.0, t)));
  EXPECT_TRUE(std::isnan(tolerance_ratio(1.0, INFINITY, 1.0, t)));
  EXPECT_EQ(tolerance_ratio(INFINITY, INFINITY, 1.0, t), 0.0);
  EXPECT_EQ(tolerance_ratio(0.0, 0.0, 0.0, {0, 0}), 0.0);
}

}  // namespace
// Records the rounds as the loop hands them over (Note [Rounds under sustained load]).
class RoundTimer final : public CandidateTimer {
 public:
  explicit RoundTimer(std::vector<double> per_run) : per_run_(std::move(per_run)) {}
  double time_ms(std::size_t candidate, int repetitions) override {
    singles.emplace_back(candidate, repetitions);
    return per_run_[candidate];
  }
  std::vector<double> time_round(const std::vector<SampleRequest>& samples) override {
    std::vector<std::size_t> round;
    std::vector<double> times;
    for (const SampleRequest& s : samples) {
      round.push_back(s.candidate);
      times.push_back(per_run_[s.candidate]);
    }
    rounds.push_back(round);
    return times;
  }
  std::vector<std::pair<std::size_t, int>> singles;
  std::vector<std::vector<std::size_t>> rounds;

 private:
  std::vector<double> per_run_;
};

TEST(TuningLoop, ARoundIsHandedOverWholeAfterThePreheat) {
  RoundTimer timer({0.02, 0.019, 0.0195});
  TuningBudget b = budget();
  b.max_iterations = 3;
  b.preheat_ms = 5;
  (void)choose_fastest(3, timer, b);
  // Warm-up: one run each; then Default for ~5 ms (ceil(5 / 0.02) runs) before the first round.
  ASSERT_GE(timer.singles.size(), 4u);
  EXPECT_EQ(timer.singles[3], (std::pair<std::size_t, int>{0, 250}));
  // Each round's samples arrive together, every candidate once, the order rotating by one.
  ASSERT_EQ(timer.rounds.size(), 3u);
  EXPECT_EQ(timer.rounds[0], (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(timer.rounds[1], (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(timer.rounds[2], (std::vector<std::size_t>{2, 0, 1}));
}

TEST(TuningLoop, ARoundIsCutWhereTheBudgetIsExpectedToEnd) {
  // Warm-ups of 1 ms each; samples of ~0.1 ms would be one run each (1 ms): a budget of 4.5 ms
  // leaves room after the warm-ups (3 ms) for two samples of the first round, not three.
  RoundTimer timer({1.0, 1.0, 1.0});
  TuningBudget b = budget();
  b.max_total_ms = 4.5;
  (void)choose_fastest(3, timer, b);
  ASSERT_FALSE(timer.rounds.empty());
  EXPECT_EQ(timer.rounds[0].size(), 2u);
}

}  // namespace cudakit::tunable
