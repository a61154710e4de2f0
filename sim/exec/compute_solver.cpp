#include "exec/compute_solver.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"

namespace fusim::exec {

schedule::Schedule isolated_schedule(const schedule::Schedule& s, int op, int repeats) {
  FUSIM_ASSERT(op >= 0 && op < int(s.ops.size()) && repeats >= 1, "an op of the schedule");
  schedule::Schedule iso;
  iso.ordering = schedule::Ordering::Eager;  // no flush trails it
  iso.optimizer = s.optimizer;
  iso.impl = s.impl;
  iso.steps = 1;
  iso.tensors = s.tensors;
  iso.gpu_streams = false;
  for (int r = 0; r < repeats; ++r) {
    schedule::Op copy = s.ops[std::size_t(op)];
    copy.id = r;
    copy.step = 0;
    copy.stream = 0;
    copy.deps.clear();
    copy.dep_kinds.clear();
    if (r > 0) {
      copy.deps.push_back(r - 1);
      copy.dep_kinds.push_back(schedule::DepKind::Control);
    }
    iso.ops.push_back(std::move(copy));
  }
  return iso;
}

Tick simulate_isolated(const workload::Trace& trace, const schedule::Schedule& isolated,
                       const Machine& machine, const SimOptions& options, Tick compute) {
  SimOptions o = options;
  o.progress = nullptr;
  o.warmup_steps = 0;
  o.op_compute.assign(isolated.ops.size(), compute);
  const RunResult r = simulate(trace, isolated, machine, o);
  const OpTiming& last = r.per_op.back();
  return last.end - last.start;
}

namespace {
// Regula falsi (Illinois) for sim(c) = measured on c in [0, measured]: sim is
// non-decreasing in c and sim(c) >= c (the op's compute alone runs that long).
template <typename Sim>
SolvedCompute solve_for(Tick measured, double rel_tolerance, Sim&& simulate_at) {
  FUSIM_ASSERT(measured >= 0, "a measured time >= 0");
  SolvedCompute out;
  auto sim = [&](Tick c) {
    ++out.simulations;
    return simulate_at(c);
  };
  const Tick tolerance = std::max<Tick>(ns(1), Tick(double(measured) * rel_tolerance));
  Tick lo = 0, f_lo = sim(0) - measured;
  if (f_lo >= -tolerance) {
    out.compute = 0;
    out.simulated = f_lo + measured;
    out.exact = f_lo <= tolerance;
    out.hidden = true;
    return out;
  }
  // sim_alone(T) >= T: the chunks' compute alone runs one after another for T.
  Tick hi = std::max<Tick>(1, measured), f_hi = sim(hi) - measured;
  FUSIM_ASSERT(f_hi >= 0, "the simulated op alone is at least its compute time");
  Tick best = hi, best_f = f_hi;  // the c closest to T so far and its sim_alone(c) - T
  if (-f_lo < f_hi) best = lo, best_f = f_lo;
  int side = 0;  // Illinois: halve the weight of an end that stays twice in a row
  for (int it = 0; it < 64 && hi - lo > 1 && std::abs(best_f) > tolerance; ++it) {
    double wl = double(f_lo), wh = double(f_hi);
    Tick c = static_cast<Tick>(double(hi) - wh * double(hi - lo) / (wh - wl));
    c = std::clamp<Tick>(c, lo + 1, hi - 1);
    const Tick f = sim(c) - measured;
    if (std::abs(f) < std::abs(best_f)) best = c, best_f = f;
    if (f < 0) {
      lo = c, f_lo = f;
      if (side == -1) f_hi /= 2;
      side = -1;
    } else {
      hi = c, f_hi = f;
      if (side == 1) f_lo /= 2;
      side = 1;
    }
  }
  out.compute = best;
  out.simulated = measured + best_f;
  out.exact = std::abs(best_f) <= tolerance;
  out.hidden = best <= 2 * tolerance;
  return out;
}
}  // namespace

SolvedCompute solve_compute_time(const workload::Trace& trace, const schedule::Schedule& schedule,
                                 int op, const Machine& machine, const SimOptions& options,
                                 Tick measured, double rel_tolerance) {
  const schedule::Schedule iso = isolated_schedule(schedule, op, kIsolationRepeats);
  return solve_for(measured, rel_tolerance,
                   [&](Tick c) { return simulate_isolated(trace, iso, machine, options, c); });
}

SolvedCompute solve_compute_in_schedule(const workload::Trace& trace,
                                        const schedule::Schedule& schedule, int op,
                                        const Machine& machine, const SimOptions& options,
                                        Tick measured, double rel_tolerance) {
  FUSIM_ASSERT(op >= 0 && op < int(schedule.ops.size()), "an op of the schedule");
  SimOptions o = options;
  o.progress = nullptr;
  o.op_compute.assign(schedule.ops.size(), -1);
  return solve_for(measured, rel_tolerance, [&](Tick c) {
    o.op_compute[std::size_t(op)] = c;
    const RunResult r = simulate(trace, schedule, machine, o);
    const OpTiming& t = r.per_op[std::size_t(op)];
    return t.end - t.start;
  });
}

}  // namespace fusim::exec
