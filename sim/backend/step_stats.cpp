#include "backend/step_stats.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "exec/run_result.h"

namespace fusim::backend {

SpeedupInterval bootstrap_speedup(const std::vector<Tick>& baseline,
                                  const std::vector<Tick>& candidate, double confidence,
                                  int resamples, std::uint64_t seed) {
  FUSIM_ASSERT(baseline.size() >= 2 && candidate.size() >= 2,
               "a bootstrap needs at least 2 steps per ordering");
  auto median = [](const std::vector<double>& v) { return exec::quantile(v, 0.5); };
  std::vector<double> b(baseline.begin(), baseline.end());
  std::vector<double> c(candidate.begin(), candidate.end());
  SpeedupInterval out;
  out.speedup = median(b) / median(c);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick_b(0, b.size() - 1), pick_c(0, c.size() - 1);
  std::vector<double> ratios, rb(b.size()), rc(c.size());
  ratios.reserve(std::size_t(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : rb) x = b[pick_b(rng)];
    for (auto& x : rc) x = c[pick_c(rng)];
    ratios.push_back(median(rb) / median(rc));
  }
  out.low = exec::quantile(ratios, (1 - confidence) / 2);
  out.high = exec::quantile(ratios, (1 + confidence) / 2);
  return out;
}

}  // namespace fusim::backend
