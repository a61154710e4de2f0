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
// One op's regula falsi (Illinois) state for f(c) = sim(c) - measured on [lo, hi]: f(lo) <
// 0 <= f(hi) (sim is non-decreasing in c and sim(c) >= c), and the c closest to the
// measured time so far.
struct Bracket {
  Tick lo = 0, hi = 0, f_lo = 0, f_hi = 0;
  Tick best = 0, best_f = 0;
  int side = 0;  // Illinois: halve the weight of an end that stays twice in a row

  void start(Tick f0, Tick c_hi, Tick f1) {
    lo = 0, f_lo = f0, hi = c_hi, f_hi = f1;
    best = hi, best_f = f_hi;
    if (-f_lo < f_hi) best = lo, best_f = f_lo;
  }
  bool open() const { return hi - lo > 1; }
  Tick next() const {
    const double wl = double(f_lo), wh = double(f_hi);
    const Tick c = static_cast<Tick>(double(hi) - wh * double(hi - lo) / (wh - wl));
    return std::clamp<Tick>(c, lo + 1, hi - 1);
  }
  void take(Tick c, Tick f) {
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
};

Tick tolerance_of(Tick measured, double rel_tolerance) {
  return std::max<Tick>(ns(1), Tick(double(measured) * rel_tolerance));
}

// Regula falsi (Illinois) for sim(c) = measured on c in [0, measured].
template <typename Sim>
SolvedCompute solve_for(Tick measured, double rel_tolerance, Sim&& simulate_at) {
  FUSIM_ASSERT(measured >= 0, "a measured time >= 0");
  SolvedCompute out;
  auto sim = [&](Tick c) {
    ++out.simulations;
    return simulate_at(c);
  };
  const Tick tolerance = tolerance_of(measured, rel_tolerance);
  const Tick f_lo = sim(0) - measured;
  if (f_lo >= -tolerance) {
    out.compute = 0;
    out.simulated = f_lo + measured;
    out.exact = f_lo <= tolerance;
    out.hidden = true;
    return out;
  }
  // sim_alone(T) >= T: the chunks' compute alone runs one after another for T.
  const Tick hi = std::max<Tick>(1, measured), f_hi = sim(hi) - measured;
  FUSIM_ASSERT(f_hi >= 0, "the simulated op alone is at least its compute time");
  Bracket b;
  b.start(f_lo, hi, f_hi);
  for (int it = 0; it < 64 && b.open() && std::abs(b.best_f) > tolerance; ++it) {
    const Tick c = b.next();
    b.take(c, sim(c) - measured);
  }
  out.compute = b.best;
  out.simulated = measured + b.best_f;
  out.exact = std::abs(b.best_f) <= tolerance;
  out.hidden = b.best <= 2 * tolerance;
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

std::vector<SolvedCompute> solve_computes_in_schedule(
    const workload::Trace& trace, const schedule::Schedule& schedule, const std::vector<int>& ops,
    const Machine& machine, const SimOptions& options, const std::vector<Tick>& measured,
    double rel_tolerance) {
  const std::size_t n = ops.size();
  FUSIM_ASSERT(measured.size() == n, "one measured time per op");
  for (std::size_t i = 0; i < n; ++i)
    FUSIM_ASSERT(ops[i] >= 0 && ops[i] < int(schedule.ops.size()) && measured[i] >= 0,
                 "ops of the schedule with measured times >= 0");
  if (n == 0) return {};
  SimOptions o = options;
  o.progress = nullptr;
  o.op_compute.assign(schedule.ops.size(), -1);
  std::vector<Tick> c(n, 0), f(n, 0), tolerance(n);
  int simulations = 0;
  auto run = [&] {
    for (std::size_t i = 0; i < n; ++i) o.op_compute[std::size_t(ops[i])] = c[i];
    const RunResult r = simulate(trace, schedule, machine, o);
    ++simulations;
    for (std::size_t i = 0; i < n; ++i) {
      const OpTiming& t = r.per_op[std::size_t(ops[i])];
      f[i] = t.end - t.start - measured[i];
    }
  };
  std::vector<Bracket> b(n);
  std::vector<char> hidden(n, 0), moved(n, 0);
  run();  // every c at 0: an op at or past its time is memory-bound (hidden), as alone
  bool searching = false;
  for (std::size_t i = 0; i < n; ++i) {
    tolerance[i] = tolerance_of(measured[i], rel_tolerance);
    hidden[i] = f[i] >= -tolerance[i];
    if (!hidden[i]) c[i] = std::max<Tick>(1, measured[i]), searching = true;
  }
  if (searching) {
    const std::vector<Tick> f0 = f;
    run();
    for (std::size_t i = 0; i < n; ++i)
      if (!hidden[i]) {
        FUSIM_ASSERT(f[i] >= 0, "the simulated op is at least its compute time");
        b[i].start(f0[i], c[i], f[i]);
      }
    for (int it = 0; it < 64; ++it) {
      bool any = false;
      for (std::size_t i = 0; i < n; ++i) {
        moved[i] = !hidden[i] && std::abs(f[i]) > tolerance[i] && b[i].open();
        if (moved[i]) c[i] = b[i].next(), any = true;
      }
      if (!any) break;
      run();
      for (std::size_t i = 0; i < n; ++i)
        if (moved[i]) b[i].take(c[i], f[i]);
    }
  }
  std::vector<SolvedCompute> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    SolvedCompute& r = out[i];
    r.simulations = simulations;
    if (!hidden[i] && std::abs(f[i]) > tolerance[i]) {
      // Its function moved with the others' c: alone, the others held where they ended.
      SimOptions alone = o;
      for (std::size_t k = 0; k < n; ++k) alone.op_compute[std::size_t(ops[k])] = c[k];
      const std::size_t id = std::size_t(ops[i]);
      r = solve_for(measured[i], rel_tolerance, [&](Tick ci) {
        alone.op_compute[id] = ci;
        const RunResult run_alone = simulate(trace, schedule, machine, alone);
        return run_alone.per_op[id].end - run_alone.per_op[id].start;
      });
      r.simulations += simulations;
      continue;
    }
    r.compute = c[i];
    r.simulated = measured[i] + f[i];
    r.exact = std::abs(f[i]) <= tolerance[i];
    r.hidden = hidden[i] || c[i] <= 2 * tolerance[i];
  }
  return out;
}

}  // namespace fusim::exec
