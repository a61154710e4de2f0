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

namespace {
// Per round both orderings have steps in: log(median baseline / median candidate), by
// round. Empty when the rounds do not match the steps.
std::map<int, double> round_log_ratios(const std::vector<Tick>& baseline,
                                       const std::vector<int>& baseline_rounds,
                                       const std::vector<Tick>& candidate,
                                       const std::vector<int>& candidate_rounds) {
  std::map<int, double> out;
  if (baseline_rounds.size() != baseline.size() || candidate_rounds.size() != candidate.size())
    return out;
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> rounds;
  for (std::size_t i = 0; i < baseline.size(); ++i)
    rounds[baseline_rounds[i]].first.push_back(double(baseline[i]));
  for (std::size_t i = 0; i < candidate.size(); ++i)
    rounds[candidate_rounds[i]].second.push_back(double(candidate[i]));
  for (const auto& [round, steps] : rounds) {
    if (steps.first.empty() || steps.second.empty()) continue;
    out[round] = std::log(exec::quantile(steps.first, 0.5) / exec::quantile(steps.second, 0.5));
  }
  return out;
}

struct MeanSpread {
  double n = 0, mean = 0, var = 0;  // var: the sample variance (n - 1)
};
MeanSpread mean_spread(const std::vector<double>& x) {
  MeanSpread m;
  m.n = double(x.size());
  for (double v : x) m.mean += v / m.n;
  for (double v : x) m.var += (v - m.mean) * (v - m.mean) / (m.n - 1);
  return m;
}

double t_quantile(double df, double confidence) {
  const boost::math::students_t t(df);
  return boost::math::quantile(boost::math::complement(t, (1 - confidence) / 2));
}
}  // namespace

SpeedupInterval paired_speedup(const std::vector<Tick>& baseline,
                               const std::vector<int>& baseline_rounds,
                               const std::vector<Tick>& candidate,
                               const std::vector<int>& candidate_rounds, double confidence) {
  std::vector<double> logs;
  for (const auto& [round, lr] :
       round_log_ratios(baseline, baseline_rounds, candidate, candidate_rounds))
    logs.push_back(lr);
  if (logs.size() < 2) return bootstrap_speedup(baseline, candidate, confidence);
  const MeanSpread m = mean_spread(logs);
  // The spread from batch means (step_stats.h): floor(sqrt(n)) batches of consecutive
  // rounds, as equal as they divide, or the rounds themselves below 3 batches.
  const std::size_t n = logs.size();
  std::size_t b = std::max<std::size_t>(1, std::size_t(std::sqrt(double(n))));
  if (n / b < kMinBatches) b = 1;
  const std::size_t batches = n / b;
  std::vector<double> means;
  for (std::size_t k = 0; k < batches; ++k) {
    const std::size_t lo = k * n / batches, hi = (k + 1) * n / batches;
    double sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += logs[i];
    means.push_back(sum / double(hi - lo));
  }
  const MeanSpread bm = mean_spread(means);
  const double half = t_quantile(bm.n - 1, confidence) * std::sqrt(bm.var / bm.n);
  SpeedupInterval out;
  out.speedup = std::exp(m.mean);
  out.low = std::exp(m.mean - half);
  out.high = std::exp(m.mean + half);
  return out;
}

OrderEffect order_effect(const std::vector<Tick>& baseline, const std::vector<int>& baseline_rounds,
                         const std::vector<Tick>& candidate,
                         const std::vector<int>& candidate_rounds,
                         const std::function<bool(int)>& baseline_first, double confidence) {
  std::vector<double> first, after;
  for (const auto& [round, lr] :
       round_log_ratios(baseline, baseline_rounds, candidate, candidate_rounds))
    (baseline_first(round) ? first : after).push_back(lr);
  OrderEffect out;
  out.first_rounds = int(first.size());
  out.after_rounds = int(after.size());
  if (first.size() < 2 || after.size() < 2) return out;
  const MeanSpread a = mean_spread(first), b = mean_spread(after);
  out.first_speedup = std::exp(a.mean);
  out.after_speedup = std::exp(b.mean);
  // Welch's t over the two groups of rounds (Welch, Biometrika 34, 1947): their spreads
  // need not be equal.
  const double va = a.var / a.n, vb = b.var / b.n;
  const double se = std::sqrt(va + vb);
  if (se <= 0) {
    out.differs = a.mean != b.mean;
    return out;
  }
  const double df = (va + vb) * (va + vb) / (va * va / (a.n - 1) + vb * vb / (b.n - 1));
  const double half = t_quantile(df, confidence) * se;
  out.differs = std::abs(a.mean - b.mean) > half;
  return out;
}

}  // namespace fusim::backend
