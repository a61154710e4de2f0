#pragma once
// A bootstrap confidence interval for the speedup of one ordering over another, from
// measured step times. Medians and quartiles are exec::summarize_steps / exec::quantile
// (run_result.h), the one definition both executors use. No torch here.
#include <cstdint>
#include <vector>

#include "core/time.h"

namespace fusim::backend {

struct SpeedupInterval {
  double speedup = 1;        // median(baseline) / median(candidate): > 1 means faster
  double low = 1, high = 1;  // the interval's bounds
  // The interval excludes 1: the difference is outside the measured noise.
  bool outside_noise() const { return low > 1 || high < 1; }
};

// Percentile bootstrap (Efron & Tibshirani, "An Introduction to the Bootstrap", ch. 13):
// resample both sets of step times with replacement `resamples` times, take the ratio of
// medians each time, report its (1-confidence)/2 and (1+confidence)/2 quantiles. Seeded
// (deterministic output); needs at least 2 values in each set.
SpeedupInterval bootstrap_speedup(const std::vector<Tick>& baseline,
                                  const std::vector<Tick>& candidate, double confidence = 0.95,
                                  int resamples = 2000, std::uint64_t seed = 12345);

}  // namespace fusim::backend
