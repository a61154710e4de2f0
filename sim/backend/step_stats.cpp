#include "backend/step_stats.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "exec/run_result.h"

namespace fusim::backend {

const char* speedup_verdict(const SpeedupInterval& s) {
  if (!s.outside_noise()) return "within noise";
  return s.speedup > 1 ? "faster" : "slower";
}

bool disturbed(const StepSample& step, double min_cpu_ratio) {
  if (min_cpu_ratio <= 0 || step.wall <= 0) return false;
  if (step.cpu_ratio() < min_cpu_ratio) return true;
  return step.waited >= 0 && double(step.waited) > (1 - min_cpu_ratio) * double(step.wall);
}

std::vector<bool> drop_disturbed(const std::vector<StepSample>& steps, double min_cpu_ratio) {
  std::vector<bool> drop;
  std::size_t kept = 0;
  for (const auto& s : steps) {
    drop.push_back(disturbed(s, min_cpu_ratio));
    kept += drop.back() ? 0 : 1;
  }
  if (kept < 2) drop.assign(drop.size(), false);
  return drop;
}

int extend_sampling(const std::function<bool()>& converged,
                    const std::function<double()>& elapsed_s, double max_time_s,
                    const std::function<void()>& round) {
  int rounds = 0;
  while (max_time_s > 0 && !converged() && elapsed_s() < max_time_s) {
    round();
    ++rounds;
  }
  return rounds;
}

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
