#include "exec/profiled_compute.h"

#include <fmt/format.h>
#include <algorithm>

#include "compute/op_signature.h"
#include "core/error.h"
#include "exec/compute_solver.h"

namespace fusim::exec {
namespace {
// A measured cold penalty beyond 10x the simulated one is a model that misses the op's
// memory traffic altogether (or a disturbed measurement), not a scale to extrapolate.
constexpr double kMaxPenaltyScale = 10.0;
// Passes of the eager schedule that fit a step profile's residuals (profiled_compute.h): the
// first moves every op's positive residual into its delay exactly (a delay adds one for one);
// the others finish, by secant steps, what taking compute off a memory-bound op does less
// than one for one.
constexpr int kStepPasses = 4;

// Per (kind, layer) of the measured ops of a simulated run: the median of the op's time and
// of the compute it was given.
struct StepOpStats {
  std::vector<double> time, compute;
};
std::map<std::pair<std::string, int>, StepOpStats> step_op_stats(const RunResult& r) {
  std::map<std::pair<std::string, int>, StepOpStats> out;
  for (const OpTiming& t : r.per_op) {
    if (!t.measured) continue;
    auto& s = out[{t.kind, t.layer}];
    s.time.push_back(double(t.end - t.start));
    s.compute.push_back(double(std::max<Tick>(0, t.compute)));
  }
  return out;
}
}  // namespace

ProfiledCompute::ProfiledCompute(const OpProfile& profile, const Machine& host,
                                 const SimOptions& options)
    : profile_(profile), host_(host), options_(options) {
  // A CPU op's time depends on its intra-op threads: measured on other threads than the
  // simulated op runs on, the solved compute would be the wrong op's.
  if (host.compute.kind == compute::UnitKind::Cpu && profile.device == "cpu" &&
      profile.threads != host.compute.threads_per_op)
    throw InputError(profile.file, "threads",
                     fmt::format("{} (compute.threads_per_op of machine {}, the threads each "
                                 "simulated op runs on: measure with `fusim profile --threads "
                                 "{}`), got {}",
                                 host.compute.threads_per_op, host.name,
                                 host.compute.threads_per_op, profile.threads));
  options_.progress = nullptr;
  options_.op_compute.clear();
  options_.op_delay.clear();
}

ProfiledCompute::OpTimes ProfiledCompute::op_times(const workload::Trace& trace,
                                                   const schedule::Schedule& schedule) {
  if (schedule.optimizer != profile_.optimizer)
    throw InputError(profile_.file, "optimizer",
                     fmt::format("\"{}\" (the --optimizer it is used with), got \"{}\"",
                                 schedule.optimizer, profile_.optimizer));
  if (schedule::to_string(schedule.impl) != profile_.impl)
    throw InputError(profile_.file, "impl",
                     fmt::format("\"{}\" (the --impl it is used with), got \"{}\"",
                                 schedule::to_string(schedule.impl), profile_.impl));
  if (profile_.in_step()) return step_times(trace, schedule);
  return {solved_compute(trace, schedule), {}};
}

std::vector<Tick> ProfiledCompute::solved_compute(const workload::Trace& trace,
                                                  const schedule::Schedule& schedule) {
  std::vector<Tick> out(schedule.ops.size(), -1);
  std::vector<std::string> missing;
  for (const auto& op : schedule.ops) {
    if (op.kernels == 0) continue;
    const compute::OpSignature s = compute::op_signature(trace, schedule, op);
    auto it = compute_.find(s.key);
    if (it == compute_.end()) {
      const ProfiledOp* measured = profile_.find(s.key);
      if (!measured) {
        if (missing.size() < 3) missing.push_back(fmt::format("{} ({})", s.description, s.key));
        continue;
      }
      const SolvedCompute c =
          solve_compute_time(trace, schedule, op.id, host_, options_, measured->median);
      if (!c.exact) inexact_.push_back({s.description, measured->median, c.simulated});
      Solved solved{c.compute, c.simulated};
      if (measured->has_cold()) {
        // The first run of the op alone is the cold one: nothing cached, nothing dirty.
        const Tick sim_cold = simulate_isolated(trace, isolated_schedule(schedule, op.id, 1), host_,
                                                options_, c.compute);
        const double simulated = double(sim_cold - c.simulated);
        const double penalty = double(measured->cold_median - measured->median);
        if (simulated > std::max(double(ns(1)), 0.01 * double(measured->median))) {
          solved.scale = std::clamp(penalty / simulated, 0.0, kMaxPenaltyScale);
          solved.scaled = true;
        }
      }
      it = compute_.emplace(s.key, solved).first;
    }
    out[std::size_t(op.id)] = it->second.compute;
  }
  if (!missing.empty())
    throw InputError(profile_.file, "ops",
                     fmt::format("a measurement of every op of the schedule ({} {}, impl {}), "
                                 "missing {}; measure this trace with `fusim profile --trace ... "
                                 "--optimizer {} --impl {}`",
                                 schedule.optimizer, schedule::to_string(schedule.ordering),
                                 schedule::to_string(schedule.impl), fmt::join(missing, "; "),
                                 schedule.optimizer, schedule::to_string(schedule.impl)));
  return out;
}

ProfiledCompute::OpTimes ProfiledCompute::step_times(const workload::Trace& trace,
                                                     const schedule::Schedule& schedule) {
  if (schedule::to_string(schedule.execution) != profile_.execution)
    throw InputError(profile_.file, "execution",
                     fmt::format("\"{}\" (the execution it predicts: a step profile holds the "
                                 "op times of one execution), got \"{}\"",
                                 schedule::to_string(schedule.execution), profile_.execution));
  if (!step_solved_) solve_step(trace, schedule);
  OpTimes out{std::vector<Tick>(schedule.ops.size(), -1),
              std::vector<Tick>(schedule.ops.size(), 0)};
  for (const auto& op : schedule.ops) {
    const auto it = step_.find({std::string(schedule::to_string(op.kind)), op.layer});
    if (it == step_.end())
      throw InputError(profile_.file, "ops",
                       fmt::format("an entry for every op of the step, missing {} on layer {} (a "
                                   "profile of another trace?)",
                                   schedule::to_string(op.kind), op.layer));
    out.compute[std::size_t(op.id)] = it->second.compute;
    out.delay[std::size_t(op.id)] = it->second.delay;
  }
  return out;
}

void ProfiledCompute::solve_step(const workload::Trace& trace, const schedule::Schedule& schedule) {
  // The residuals are fitted on the eager schedule of the same steps, optimizer and execution
  // (the one the profile was measured on).
  schedule::Schedule built;
  if (schedule.ordering != schedule::Ordering::Eager) {
    schedule::ScheduleOptions so;
    so.ordering = schedule::Ordering::Eager;
    so.optimizer = schedule.optimizer;
    so.impl = schedule.impl;
    so.steps = schedule.steps;
    so.gpu_streams = schedule.gpu_streams;
    so.device = schedule.device;
    so.execution = schedule.execution;
    so.memory = schedule.memory;
    built = schedule::build_schedule(trace, so);
  }
  const schedule::Schedule& eager =
      schedule.ordering == schedule::Ordering::Eager ? schedule : built;
  std::map<std::pair<std::string, int>, Tick> measured;
  std::vector<std::string> missing;
  for (const auto& op : eager.ops) {
    const std::string kind(schedule::to_string(op.kind));
    const ProfiledOp* p = profile_.find_in_step(kind, op.layer);
    if (!p) {
      if (missing.size() < 3) missing.push_back(fmt::format("{} on layer {}", kind, op.layer));
      continue;
    }
    if (op.layer >= 0 && !p->layer.empty() &&
        p->layer != trace.layers.at(std::size_t(op.layer)).name)
      throw InputError(profile_.file, "ops",
                       fmt::format("a profile of this trace: its {} on layer {} is of layer "
                                   "\"{}\", the trace's layer {} is \"{}\"",
                                   kind, op.layer, p->layer, op.layer,
                                   trace.layers.at(std::size_t(op.layer)).name));
    measured[{kind, op.layer}] = p->median;
    step_.emplace(std::make_pair(kind, op.layer), StepSolved{});
  }
  if (!missing.empty())
    throw InputError(profile_.file, "ops",
                     fmt::format("an entry for every op of the eager step, missing {}; measure "
                                 "this trace with `fusim profile --in-step --trace ... "
                                 "--optimizer {} --impl {}`",
                                 fmt::join(missing, "; "), schedule.optimizer,
                                 schedule::to_string(schedule.impl)));
  for (int pass = 0; pass < kStepPasses; ++pass) {
    SimOptions o = options_;
    o.op_compute.assign(eager.ops.size(), -1);
    o.op_delay.assign(eager.ops.size(), 0);
    for (const auto& op : eager.ops) {
      const StepSolved& s = step_.at({std::string(schedule::to_string(op.kind)), op.layer});
      o.op_compute[std::size_t(op.id)] = s.compute;
      o.op_delay[std::size_t(op.id)] = s.delay;
    }
    const auto stats = step_op_stats(simulate(trace, eager, host_, o));
    for (auto& [key, s] : step_) {
      const auto st = stats.find(key);
      if (st == stats.end()) continue;  // not in a measured step of the simulation
      const Tick target = measured.at(key);
      const Tick residual = target - Tick(quantile(st->second.time, 0.5) + 0.5);
      if (residual >= 0) {
        s.delay += residual;  // host time that does not overlap memory
        continue;
      }
      // Slower than measured: first less delay, then less compute (never below 0).
      const Tick from_delay = std::min(s.delay, -residual);
      s.delay -= from_delay;
      const Tick rest = -residual - from_delay;
      if (rest == 0) continue;
      // The compute this pass used, and a secant step from the pass before: taking compute
      // off a memory-bound op shortens it by less than one for one.
      const Tick compute = Tick(quantile(st->second.compute, 0.5) + 0.5);
      const Tick time = target - residual;
      double slope = 1.0;
      if (s.prev_compute >= 0 && s.prev_compute != compute)
        slope =
            std::clamp(double(time - s.prev_time) / double(compute - s.prev_compute), 0.05, 1.0);
      s.prev_compute = compute;
      s.prev_time = time;
      s.compute = std::max<Tick>(0, compute - Tick(double(rest) / slope + 0.5));
      const Tick tolerance = std::max<Tick>(ns(1), target / 100);
      if (pass + 1 == kStepPasses && s.compute == 0 && rest > tolerance) {
        const auto& [kind, layer] = key;
        inexact_.push_back(
            {fmt::format("{} on layer {}", kind,
                         layer >= 0 ? trace.layers.at(std::size_t(layer)).name : "(model)"),
             target, target + rest});
      }
    }
  }
  step_solved_ = true;
}

ProfiledCompute::OpTimes ProfiledCompute::in_context(const workload::Trace& trace,
                                                     const schedule::Schedule& schedule,
                                                     const OpTimes& times,
                                                     const RunResult& first) const {
  OpTimes out{times.compute, std::vector<Tick>(times.compute.size(), 0)};
  for (const OpTiming& t : first.per_op) {
    const auto id = static_cast<std::size_t>(t.id);
    if (id >= times.compute.size() || times.compute[id] < 0) continue;
    const auto& op = schedule.ops.at(id);
    const auto it = compute_.find(compute::op_signature(trace, schedule, op).key);
    FUSIM_ASSERT(it != compute_.end(), "in_context after op_times solved the schedule");
    const Solved& s = it->second;
    if (!s.scaled) continue;
    const double penalty = double(std::max<Tick>(0, (t.end - t.start) - s.sim_warm));
    const Tick extra = Tick((s.scale - 1.0) * penalty + (s.scale >= 1.0 ? 0.5 : -0.5));
    if (extra >= 0) {
      out.delay[id] = extra;
    } else {
      out.compute[id] = std::max<Tick>(0, times.compute[id] + extra);
    }
  }
  return out;
}

std::vector<double> ProfiledCompute::penalty_scales() const {
  std::vector<double> out;
  for (const auto& [key, s] : compute_)
    if (s.scaled) out.push_back(s.scale);
  return out;
}

SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   const ProfiledCompute& compute,
                                   const ProfiledCompute::OpTimes& times) {
  options.op_compute = times.compute;
  options.op_delay = times.delay;
  if (!compute.scales_penalties()) return simulate_detailed(trace, schedule, machine, options);
  // The first pass only finds each op's time in context: no progress for it.
  SimOptions first = options;
  first.progress = nullptr;
  ProfiledCompute::OpTimes second =
      compute.in_context(trace, schedule, times, simulate(trace, schedule, machine, first));
  options.op_compute = std::move(second.compute);
  options.op_delay = std::move(second.delay);
  return simulate_detailed(trace, schedule, machine, options);
}

SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   ProfiledCompute* compute) {
  if (!compute) {
    options.op_compute.clear();
    options.op_delay.clear();
    return simulate_detailed(trace, schedule, machine, options);
  }
  const ProfiledCompute::OpTimes times = compute->op_times(trace, schedule);
  return simulate_profiled(trace, schedule, machine, std::move(options), *compute, times);
}

}  // namespace fusim::exec
