#include "backend/model_context_probe.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/executor.h"
#include "backend/optimizer_config.h"
#include "backend/run_plan.h"
#include "backend/speed_probe.h"
#include "compute/op_cost_model.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"

namespace fusim::backend {

namespace {

// The ops the term is for: a kernel, not an update (model_context.h).
// The largest simulated time of an op the fit takes (calibrate_model_context).
constexpr double kContextFitMaxNs = 150e3;

bool in_term(const schedule::Op& op) {
  return op.kind != schedule::OpKind::Update && op.kernels > 0;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<ContextPoint> context_points(const workload::Trace& trace, const exec::Machine& model,
                                         int threads) {
  RunOptions ro;
  ro.threads = threads;
  ro.warmup = 2;
  ro.steps = 20;
  ro.min_cpu_ratio = 0;  // medians of 20: keep every step
  ro.dram_probe = false;
  ro.speed_probe = false;
  const std::string optimizer = "sgd";
  const auto schedules = build_run_schedules(trace, {schedule::Ordering::Eager}, optimizer,
                                             schedule::OptimizerImpl::Foreach, ro);
  const schedule::Schedule& s = schedules.at(0);
  const RunReport report = run_schedules(trace, schedules, optimizer_config(optimizer), ro);
  // Measured: each (kind, layer)'s median over the kept steps.
  std::map<std::pair<std::string, int>, std::vector<double>> times;
  for (const auto& t : report.results.at(0).per_op)
    if (t.measured) times[{t.kind, t.layer}].push_back(double(t.end - t.start));
  // Simulated: every op in start order, each family's last start carried along.
  exec::SimOptions sim;
  sim.fidelity = exec::Fidelity::Tensor;
  sim.warmup_steps = 1;
  exec::RunResult simulated = exec::simulate(trace, s, model, sim);
  std::vector<exec::OpTiming> ops = simulated.per_op;
  std::stable_sort(ops.begin(), ops.end(), [](const exec::OpTiming& a, const exec::OpTiming& b) {
    return a.start < b.start;
  });
  int last_step = 0;
  for (const auto& t : ops) last_step = std::max(last_step, t.step);
  std::map<std::string, Tick> last_start;
  std::vector<ContextPoint> out;
  for (const auto& t : ops) {
    const schedule::Op& op = s.ops.at(static_cast<std::size_t>(t.id));
    if (!in_term(op)) continue;
    const std::string family = compute::op_family(trace, s, op);
    if (family.empty()) continue;
    const auto last = last_start.find(family);
    const Tick since = last == last_start.end() ? -1 : t.start - last->second;
    last_start[family] = t.start;
    if (t.step != last_step) continue;
    const auto m = times.find({t.kind, t.layer});
    if (m == times.end() || m->second.empty()) continue;
    ContextPoint p;
    p.since_us = since < 0 ? -1 : double(since) / double(kTicksPerNs) / 1e3;
    p.measured_ns = median_of(m->second) / double(kTicksPerNs);
    p.simulated_ns = double(t.end - t.start) / double(kTicksPerNs);
    p.family = family;
    p.op = fmt::format("{} {}", t.kind, trace.layers.at(std::size_t(t.layer)).name);
    out.push_back(p);
  }
  return out;
}

compute::ModelContext calibrate_model_context(const std::vector<workload::Trace>& references,
                                              const exec::Machine& host, int threads,
                                              const std::function<double()>& speed_probe,
                                              double typical_us, std::vector<double>& speed_samples,
                                              std::string& how, std::vector<ProbePoint>* out) {
  std::vector<compute::ContextSample> samples;
  std::vector<ProbePoint> rows;
  std::vector<double> simulated;  // rows' simulated times
  std::vector<std::string> parts;
  for (const auto& trace : references) {
    std::vector<ContextPoint> points;
    const double factor = probe::speed_factor_around(speed_probe, typical_us, speed_samples, [&] {
      points = context_points(trace, host, threads);
    });
    std::vector<double> excess;
    int fitted = 0;
    for (const ContextPoint& p : points) {
      // The measured time at the speed the op costs describe, less the simulated.
      const double x = p.measured_ns / factor - p.simulated_ns;
      excess.push_back(x);
      ProbePoint row;
      row.family = "model_context." + p.family;
      row.probe = fmt::format("{} {}", trace.model, p.op);
      row.measured_ns = p.measured_ns;
      row.cost_ns = p.measured_ns / factor;  // what the fit targets: simulated + excess
      row.speed_factor = factor;
      row.since_us = p.since_us;
      // Ops simulated at 150 us and more are left out: their residual is the compute
      // model's (5% of a 2 ms convolution is 100 us) and would swamp the fixed costs
      // sought (a median 6 us). On a 2-core EPYC VM a fit over every op gave cold 44 us.
      row.used = p.simulated_ns < kContextFitMaxNs;
      rows.push_back(row);
      simulated.push_back(p.simulated_ns);
      if (!row.used) continue;
      samples.push_back({p.since_us, x});
      ++fitted;
    }
    parts.push_back(
        fmt::format("{} ({} ops, {} under 150 us, median excess {:.1f} us, speed "
                    "factor {:.2f})",
                    trace.model, points.size(), fitted,
                    excess.empty() ? 0.0 : median_of(excess) / 1e3, factor));
  }
  const compute::ModelContext c = compute::fit_model_context(samples, {1e3, 1e4, 1e5});
  if (out)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      ProbePoint& row = rows[i];
      const Tick since = row.since_us < 0 ? -1 : Tick(row.since_us * 1e3 * double(kTicksPerNs));
      row.fitted_ns = simulated[i] + double(c.extra(since)) / double(kTicksPerNs);
      out->push_back(row);
    }
  how = fmt::format(
      "each op with a kernel of the eager steps of {} (batch 8, 64x64, SGD foreach, 20 "
      "steps, updates aside) timed in its steps, less the same op simulated on this host's "
      "machine with the fitted op costs (tensor fidelity): base + cold_1 x (1 - exp(-dt / 1 "
      "ms)) + cold_10 x (1 - exp(-dt / 10 ms)) + cold_100 x (1 - exp(-dt / 100 ms)) by "
      "non-negative least squares over the {} ops simulated under 150 us, dt the simulated "
      "time since the op's family last started",
      fmt::join(parts, " and "), samples.size());
  return c;
}

}  // namespace fusim::backend
