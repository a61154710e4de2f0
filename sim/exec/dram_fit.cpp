#include "exec/dram_fit.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "core/error.h"
#include "exec/compute_solver.h"
#include "exec/machine.h"
#include "exec/simulate.h"
#include "mem/dram/dram_spec.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

namespace fusim::exec {
using nlohmann::json;

// Two read streams and one written: the traffic of STREAM's add and triad kernels.
workload::Trace stream_add_trace(std::int64_t bytes) {
  const std::int64_t n = std::max<std::int64_t>(1, bytes / 4);
  const json doc{
      {"format", "fusim-trace"},
      {"version", 1},
      {"model", "stream-add"},
      {"batch", 1},
      {"dtype", "float32"},
      {"source", "fusim calibrate (DRAM channels)"},
      {"inputs",
       {{{"name", "x"}, {"shape", {1, n}}},
        {{"name", "y"}, {"shape", {1, n}}},
        {{"name", "target"}, {"shape", {1}}, {"dtype", "int64"}}}},
      // (a trace has a loss; only the add is simulated)
      {"layers",
       {{{"id", 0}, {"name", "add"}, {"op", "add"}, {"inputs", {"x", "y"}}, {"output", {1, n}}},
        {{"id", 1},
         {"name", "loss"},
         {"op", "cross_entropy"},
         {"inputs", {0, "target"}},
         {"output", json::array()}}}}};
  return workload::parse_trace(doc, "the DRAM channel probe");
}

DramChannelFit fit_dram_channels(const json& machine, double measured_gbs,
                                 std::int64_t array_bytes) {
  FUSIM_ASSERT(measured_gbs > 0 && array_bytes > 0, "a measured triad");
  const workload::Trace trace = stream_add_trace(array_bytes);
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const schedule::Schedule s = schedule::build_schedule(trace, so);
  int op = -1;
  for (const auto& o : s.ops)
    if (o.kind == schedule::OpKind::Forward && o.layer == 0) op = o.id;
  FUSIM_ASSERT(op >= 0, "the probe's add is in its schedule");
  // Repeated once before the timed run, as a STREAM kernel is: what stays cached of one
  // pass (the last level's worth, of arrays far larger) is what the next finds.
  const schedule::Schedule iso = isolated_schedule(s, op, kIsolationRepeats);
  SimOptions options;
  options.fidelity = Fidelity::Tensor;
  const double counted = 3.0 * double(std::max<std::int64_t>(1, array_bytes / 4) * 4);
  // rate 0: the preset's data rate.
  auto simulate_at = [&](int channels, std::int64_t rate) {
    json doc = machine;
    doc["dram"]["channels"] = channels;
    if (rate > 0) doc["dram"]["data_rate_mts"] = rate;
    const Machine m = parse_machine(doc, "the calibrated machine");
    const Tick t = simulate_isolated(trace, iso, m, options, 0);
    return counted / to_seconds(t) / 1e9;
  };
  // Every count from 1 up, not a walk from a guess: the bandwidth is not monotone in them
  // (dram_fit.h). Where the cores' reads in flight, not the channels, bound it, more
  // channels stop adding: the search ends after kSaturated counts without a new highest.
  DramChannelFit fit;
  double best = HUGE_VAL, highest = 0;
  int reached = 0, flat = 0;
  for (int c = 1; c <= kMaxChannels && reached < 2 && flat < kSaturated; ++c) {
    const double gbs = simulate_at(c, 0);
    fit.trials.push_back({c, gbs});
    reached = gbs >= measured_gbs ? reached + 1 : 0;
    flat = gbs > highest * 1.01 ? 0 : flat + 1;
    highest = std::max(highest, gbs);
    const double d = std::abs(std::log(gbs / measured_gbs));
    if (d < best) best = d, fit.channels = c, fit.simulated_gbs = gbs;
  }
  fit.channel_gbs = fit.simulated_gbs;
  // Then the data rate at that count (dram_fit.h): whole channels move the bandwidth in
  // steps of 1/c, the rate closes the rest.
  const Machine preset = parse_machine(machine, "the calibrated machine");
  const auto* spec = std::get_if<dram::DramSpec>(&preset.memory);
  if (!spec) return fit;
  const double r0 = double(spec->data_rate_mts);
  double r_a = r0, g_a = fit.simulated_gbs;
  fit.data_rate_mts = spec->data_rate_mts;
  double r_b = r0 * measured_gbs / g_a;  // first step: bandwidth proportional to the rate
  for (int i = 0; i < kRateSteps && best > kRateTolerance; ++i) {
    const auto rate = std::int64_t(std::lround(std::clamp(r_b, r0 / kRateRange, r0 * kRateRange)));
    if (double(rate) == r_a) break;
    double g_b = 0;
    try {
      g_b = simulate_at(fit.channels, rate);
    } catch (const InputError&) {
      break;  // a preset whose clock-counted timings no longer fit at this rate (tRC < tRAS + tRP)
    }
    fit.rate_trials.push_back({rate, g_b});
    const double d = std::abs(std::log(g_b / measured_gbs));
    if (d < best) best = d, fit.data_rate_mts = rate, fit.simulated_gbs = g_b;
    const double slope = std::log(g_b / g_a) / std::log(double(rate) / r_a);
    if (!(slope > 0.05)) break;  // the rate no longer moves it (the cores bound it)
    r_a = double(rate), g_a = g_b;
    r_b = r_a * std::exp(std::log(measured_gbs / g_a) / slope);
  }
  return fit;
}

}  // namespace fusim::exec
