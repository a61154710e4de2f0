#pragma once
// The numbers that compare runs, computed in one place for simulate, sweep and validate:
// speedups of an ordering over the baseline, the error of a prediction against a
// measurement, and its mean over orderings.
#include <vector>

#include "core/time.h"

namespace fusim {

// baseline / candidate: > 1 means the candidate is faster. 0 when the candidate took no
// time (nothing to compare).
double speedup(Tick baseline, Tick candidate);
double speedup(double baseline, double candidate);

// Signed error of a prediction in percent of the measurement:
// 100 (predicted - measured) / measured (> 0: predicted too slow). measured > 0.
double error_pct(double predicted, double measured);

// Mean of |x| over `values` (MAPE of error_pct values; mean |speedup error| in points).
// 0 for no values.
double mean_absolute(const std::vector<double>& values);

}  // namespace fusim
