#pragma once
// The speedup of one ordering over another and its confidence interval, from measured step
// times: paired by sampling round where the steps have rounds, else a bootstrap. Medians and
// quartiles are exec::summarize_steps / exec::quantile (run_result.h), the one definition both
// executors use. No torch here.
#include <cstdint>
#include <functional>
#include <vector>

#include "backend/step_probe.h"
#include "core/time.h"

namespace fusim::backend {

struct SpeedupInterval {
  double speedup = 1;        // baseline over candidate time (below): > 1 means faster
  double low = 1, high = 1;  // the interval's bounds
  // The interval excludes 1: the difference is outside the measured noise.
  bool outside_noise() const { return low > 1 || high < 1; }
  // Half the interval's width in points of speedup (0.01 = 1 point).
  double half_width_points() const { return 100 * (high - low) / 2; }
};

// "faster" | "slower" (outside the noise) | "within noise".
const char* speedup_verdict(const SpeedupInterval& s);

// A step that other processes disturbed: its main thread ran less than `min_cpu_ratio` of
// the step's wall time (preempted, or asleep waiting for a preempted worker), or the
// pinned threads together waited for a core longer than (1 - min_cpu_ratio) of it.
// min_cpu_ratio 0: never.
bool disturbed(const StepSample& step, double min_cpu_ratio);

// Which of one schedule's measured steps to drop: the disturbed ones, unless fewer than 2
// would be left (then none: a bootstrap needs 2; the run's notes say the figures are from
// a busy machine).
std::vector<bool> drop_disturbed(const std::vector<StepSample>& steps, double min_cpu_ratio);

// Sampling that can decide (issue 16, point 5): after the first round, one more round at a
// time while `converged()` is false and fewer than `max_time_s` seconds have elapsed (0:
// never extend). Returns the rounds added.
int extend_sampling(const std::function<bool()>& converged,
                    const std::function<double()>& elapsed_s, double max_time_s,
                    const std::function<void()>& round);

// Percentile bootstrap (Efron & Tibshirani, "An Introduction to the Bootstrap", ch. 13):
// resample both sets of step times with replacement `resamples` times, take the ratio of
// medians each time, report its (1-confidence)/2 and (1+confidence)/2 quantiles. Seeded
// (deterministic output); needs at least 2 values in each set.
SpeedupInterval bootstrap_speedup(const std::vector<Tick>& baseline,
                                  const std::vector<Tick>& candidate, double confidence = 0.95,
                                  int resamples = 2000, std::uint64_t seed = 12345);

// The speedup of steps measured in rounds that every ordering shares (run's sampling
// rounds: one block of each ordering after one probe of the host) and its interval, as
// a randomized block design has them: per round, the log of the ratio of the two medians;
// the speedup is the exponential of their mean (the geometric mean of the rounds'
// ratios), the interval exp(mean +- t(confidence, rounds - 1) sd / sqrt(rounds)), Student's
// t over the rounds. Two things on a shared host ask for it (2-core EPYC VM, mobilenet_v2
// SGD, 24 rounds of 5 steps):
//  - the host's speed moves between rounds by more than the orderings differ (round
//    medians of 114-175 ms for one resnet18 step); both orderings of a round meet the same
//    speed, so the drift leaves both the speedup and its interval;
//  - it also moves between the blocks of one round: the rounds' log ratios spread by 0.095
//    where independent steps (their spread within blocks, 0.069) would give 0.054. Steps
//    are not independent draws, so an interval that resamples them (bootstrap_speedup) is
//    too narrow by that much: +-2.4 points there against +-4.0 by rounds.
// Simulated (11 rounds of 5 steps, step noise 8%, round drift 15%): the pooled ratio of
// medians is off by 2.7 points RMS, this one by 1.8; this interval covers the true speedup
// 95% of the time.
// The rounds are not independent either: a shared host drifts over tens of seconds, and
// the orderings' ratio with it (2-core EPYC VM, googlenet AdamW backward-fused, 208 rounds
// in 150 s: lag-1 to lag-10 autocorrelations of the rounds' log ratios 0.05-0.20, quarters
// of the run 0.991 to 1.025 with intervals of +-1 point). So the interval's spread is that of
// batch means (Flegal & Jones, Ann. Statist. 38(2), 2010; Law & Kelton ch. 9): the n rounds,
// in round order, cut into floor(sqrt(n)) batches of consecutive rounds (sizes differing by
// at most one), Student's t over the batches' mean log ratios, and the speedup still the
// mean over all rounds; with fewer than kMinBatches batches the rounds themselves. Cut into
// six runs of 34 rounds, that run's two speedups disagreed beyond their intervals in 10 of
// 30 pairs with the rounds' spread and in 4 with the batches'; four separate 30-s runs,
// 3 and 2 of 12.
// `*_rounds[i]`: the round of step i. Rounds without steps of both
// orderings (all dropped as disturbed) are left out; without rounds for both, or fewer
// than 2 shared rounds, bootstrap_speedup above.
constexpr std::size_t kMinBatches = 3;
SpeedupInterval paired_speedup(const std::vector<Tick>& baseline,
                               const std::vector<int>& baseline_rounds,
                               const std::vector<Tick>& candidate,
                               const std::vector<int>& candidate_rounds, double confidence = 0.95);

// Whether the order within a round moved a paired speedup: the rounds in which the
// baseline ran before the candidate (`baseline_first(round)`) against the others, each
// group's speedup as paired_speedup takes it (the exponential of its rounds' mean log
// ratio), and whether the two differ at `confidence` (Welch's t on the two groups' log
// ratios). The run's rounds balance the orders (executor.h, round_order), so the paired
// speedup is their mean either way; this says whether the host carries one ordering's
// state into the next (2-core EPYC VM, squeezenet1_1 SGD: forward-fused 1.0195 in the
// rounds where eager ran first, 0.990 in the others). Fewer than 2 rounds in either
// group: both speedups 1, `differs` false.
struct OrderEffect {
  int first_rounds = 0, after_rounds = 0;  // rounds with the baseline first / after
  double first_speedup = 1, after_speedup = 1;
  bool differs = false;
};
OrderEffect order_effect(const std::vector<Tick>& baseline, const std::vector<int>& baseline_rounds,
                         const std::vector<Tick>& candidate,
                         const std::vector<int>& candidate_rounds,
                         const std::function<bool(int)>& baseline_first, double confidence = 0.95);

}  // namespace fusim::backend
