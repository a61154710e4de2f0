#include "backend/step_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include <boost/math/distributions/students_t.hpp>

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

SpeedupInterval paired_speedup(const std::vector<Tick>& baseline,
                               const std::vector<int>& baseline_rounds,
                               const std::vector<Tick>& candidate,
                               const std::vector<int>& candidate_rounds, double confidence) {
  if (baseline_rounds.size() != baseline.size() || candidate_rounds.size() != candidate.size())
    return bootstrap_speedup(baseline, candidate, confidence);
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> rounds;
  for (std::size_t i = 0; i < baseline.size(); ++i)
    rounds[baseline_rounds[i]].first.push_back(double(baseline[i]));
  for (std::size_t i = 0; i < candidate.size(); ++i)
    rounds[candidate_rounds[i]].second.push_back(double(candidate[i]));
  std::vector<double> logs;  // per shared round: log(median baseline / median candidate)
  for (const auto& [round, steps] : rounds) {
    if (steps.first.empty() || steps.second.empty()) continue;
    logs.push_back(std::log(exec::quantile(steps.first, 0.5) / exec::quantile(steps.second, 0.5)));
  }
  if (logs.size() < 2) return bootstrap_speedup(baseline, candidate, confidence);
  const double n = double(logs.size());
  double mean = 0, ss = 0;
  for (double x : logs) mean += x / n;
  for (double x : logs) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / (n - 1));
  const boost::math::students_t t(n - 1);
  const double half =
      boost::math::quantile(boost::math::complement(t, (1 - confidence) / 2)) * sd / std::sqrt(n);
  SpeedupInterval out;
  out.speedup = std::exp(mean);
  out.low = std::exp(mean - half);
  out.high = std::exp(mean + half);
  return out;
}

}  // namespace fusim::backend
