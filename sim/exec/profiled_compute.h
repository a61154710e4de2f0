#pragma once
// How `simulate|validate|sweep --profile P.json` use a measured profile (exec/op_profile.h):
// each op's compute (and, for step profiles, a fixed delay) comes from the measurement, and
// the simulated caches and DRAM decide its memory time in the schedule's context.
//
// Isolated profiles (`fusim profile`): each op's compute time is solved on the host's machine
// model once per signature (exec/compute_solver.h: the c for which the op simulated alone, in
// its measured cache state, takes the measured time) and reused for every schedule of the
// trace (orderings share their ops).
//
// With cold times (`fusim profile --evict`), each signature also gets a penalty scale: the
// measured cost of running cold, T_cold - T_warm, over the simulated one, S_cold - S_warm
// (the op simulated alone on empty caches, and warm, at the solved compute c). In a step an
// op finds some of its tensors cached and some not; the simulation says how much that costs
// it over running warm, t_ctx - S_warm, and the measurement says how far the model's cache
// and DRAM costs are from this host's for this op. The prediction then runs the schedule
// twice: first with c, to find every op's t_ctx, then with (k - 1) (t_ctx - S_warm) added
// to the op's time (a delay before its work, SimOptions::op_delay, so it adds one for one;
// where k < 1, taken off its compute instead, never below 0), so that each op's in-context
// penalty is the simulated one scaled to what was measured, and nothing is counted twice. On the
// host, an op that is fully cold in the step then takes T_cold and one that is fully warm T_warm;
// on a what-if machine the simulated penalty changes and k keeps the host's correction. An op whose
// simulated penalty is negligible (below 1% of T_warm) keeps k = 1: the model cannot tell how cold
// it is.
//
// Step profiles (`fusim profile --in-step`): each op's time T was measured inside the eager
// step, so it already holds everything the step's context does to it (cache state, the
// allocator, the framework's cost between calls). The eager schedule is simulated on the host
// with the machine's own cost model, and each op's residual T - S_eager (median over the
// simulated measured steps) is made part of the op: a positive residual is a delay before its
// work (SimOptions::op_delay: host time that does not overlap memory), a negative one is taken
// off its compute (never below 0); three more passes of the eager schedule absorb what the first
// correction changed (secant steps where compute is taken off). Every op of the simulated eager
// step then takes its measured time (an op the model's memory alone makes slower than measured at
// compute 0 is reported inexact). Any other ordering is the same ops with the same compute and
// delays, so its predicted change from eager is the simulated change of the memory side (a
// backward-fused update finding its gradient and weights cached) and of the schedule's structure:
// the model only has to get the difference right. Ops are matched across orderings by (kind, trace
// layer).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "exec/machine.h"
#include "exec/op_profile.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

class ProfiledCompute {
 public:
  // `host`: the machine the profile was measured on (for a what-if sweep, the base machine
  // before --set: the compute stays what this host does, the memory system changes).
  ProfiledCompute(const OpProfile& profile, const Machine& host, const SimOptions& options);

  // The compute and delay of each op by its id (SimOptions::op_compute, op_delay: -1 / 0 keep
  // the model's). An op the profile lacks throws InputError naming it and the profile; so does
  // a schedule of another optimizer, impl or (step profiles) execution.
  struct OpTimes {
    std::vector<Tick> compute, delay;
  };
  OpTimes op_times(const workload::Trace& trace, const schedule::Schedule& schedule);

  // Whether predictions take two passes (the profile has cold times).
  bool scales_penalties() const { return profile_.evict_bytes > 0; }
  // The compute and delay of each op for the second pass, from the first pass's result
  // (`first`, the schedule simulated with `times` = op_times(...)). Const: safe to call from
  // threads once op_times has solved the schedule.
  OpTimes in_context(const workload::Trace& trace, const schedule::Schedule& schedule,
                     const OpTimes& times, const RunResult& first) const;

  // Ops (signatures, or step entries) solved so far whose simulation could not reach the
  // measured time (c = 0 and the simulated memory alone is slower), with the two times.
  struct Inexact {
    std::string description;
    Tick measured = 0, simulated = 0;
  };
  const std::vector<Inexact>& inexact() const { return inexact_; }
  int solved() const {
    return static_cast<int>(profile_.in_step() ? step_.size() : compute_.size());
  }
  bool in_step() const { return profile_.in_step(); }
  // Penalty scales k of the signatures solved so far whose simulated penalty is not
  // negligible (empty without cold times).
  std::vector<double> penalty_scales() const;

 private:
  std::vector<Tick> solved_compute(const workload::Trace& trace,
                                   const schedule::Schedule& schedule);
  OpTimes step_times(const workload::Trace& trace, const schedule::Schedule& schedule);
  void solve_step(const workload::Trace& trace, const schedule::Schedule& schedule);

  struct Solved {
    Tick compute = 0;
    Tick sim_warm = 0;    // S_warm: the op simulated alone, warm, at `compute`
    double scale = 1.0;   // k
    bool scaled = false;  // k measured (the simulated penalty is not negligible)
  };
  struct StepSolved {
    Tick compute = -1;  // -1: the machine's cost model
    Tick delay = 0;
    Tick prev_compute = -1, prev_time = -1;  // the last pass that took compute off, for secants
  };
  const OpProfile& profile_;
  const Machine& host_;
  SimOptions options_;
  std::map<std::string, Solved> compute_;
  std::map<std::pair<std::string, int>, StepSolved> step_;  // by (kind, trace layer)
  bool step_solved_ = false;
  std::vector<Inexact> inexact_;
};

// Simulates `schedule` with `compute`'s times (null: the machine's cost model), in two passes
// when it scales penalties (above): the one way simulate, validate and sweep predict from a
// profile. `options.op_compute` and `op_delay` are ignored (set from `compute`).
SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   ProfiledCompute* compute);
// The same from times solved before (a sweep solves them once per schedule).
SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   const ProfiledCompute& compute,
                                   const ProfiledCompute::OpTimes& times);

}  // namespace fusim::exec
