#include "exec/run_result.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace fusim::exec {

double quantile(std::vector<double> v, double q) {
  FUSIM_ASSERT(!v.empty(), "quantile of no values");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

StepSummary summarize_steps(const std::vector<Tick>& measured) {
  FUSIM_ASSERT(!measured.empty(), "a step summary of no measured steps");
  // Doubles hold step times exactly up to 2^53 ps (104 days).
  const std::vector<double> v(measured.begin(), measured.end());
  auto at = [&](double q) { return static_cast<Tick>(std::llround(quantile(v, q))); };
  return {at(0.5), at(0.25), at(0.75)};
}

void set_step_times(RunResult& r, std::vector<Tick> measured) {
  const StepSummary s = summarize_steps(measured);
  r.steps_measured = static_cast<int>(measured.size());
  r.step_times = std::move(measured);
  r.step_time = s.median;
  r.step_time_p25 = s.p25;
  r.step_time_p75 = s.p75;
}

RunResult result_header(const schedule::Schedule& s, std::string executor) {
  RunResult r;
  r.executor = std::move(executor);
  r.ordering = std::string(schedule::to_string(s.ordering));
  r.optimizer = s.optimizer;
  r.impl = std::string(schedule::to_string(s.impl));
  r.execution = std::string(schedule::to_string(s.execution));
  return r;
}

OpTiming op_timing(const schedule::Op& op, Tick start, Tick end, std::int64_t dram_bytes,
                   int units) {
  OpTiming t;
  t.id = op.id;
  t.kind = std::string(schedule::to_string(op.kind));
  t.layer = op.layer;
  t.step = op.step;
  t.stream = op.stream;
  t.start = start;
  t.end = end;
  t.dram_bytes = dram_bytes;
  t.units = units;
  return t;
}

}  // namespace fusim::exec
