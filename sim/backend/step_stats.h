#pragma once
// A bootstrap confidence interval for the speedup of one ordering over another, from
// measured step times. Medians and quartiles are exec::summarize_steps / exec::quantile
// (run_result.h), the one definition both executors use. No torch here.
#include <cstdint>
#include <functional>
#include <vector>

#include "backend/step_probe.h"
#include "core/time.h"

namespace fusim::backend {

struct SpeedupInterval {
  double speedup = 1;        // median(baseline) / median(candidate): > 1 means faster
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

}  // namespace fusim::backend
