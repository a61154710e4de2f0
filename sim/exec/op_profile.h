#pragma once
// A measured profile (`fusim profile -o P.json`, format "fusim-profile" version 1): the
// time of every distinct op of a trace (compute/op_signature.h) run in isolation on a host,
// median of repeats, and its use by `simulate|validate|sweep --profile P.json`: each op's
// compute time is solved from its measured time on the host's machine model
// (exec/compute_solver.h: the c for which the op simulated alone in its measured cache
// state takes the measured time, once per distinct op), and the schedule is simulated with
// those compute times while the simulated caches and DRAM decide every op's memory time in
// the schedule's context.
//
//   {"format": "fusim-profile", "version": 1, "trace": "r18.json", "device": "cpu",
//    "threads": 2, "optimizer": "adam", "impl": "foreach",
//    "ops": [{"signature": "9f3c...", "kind": "F", "op": "conv2d", "layer": "conv1",
//             "description": "conv2d F [8, 3, 64, 64] -> [8, 64, 32, 32]", "per_step": 1,
//             "median_ns": 812345.0, "p25_ns": 801000.0, "p75_ns": 830000.0, "repeats": 9,
//             "cold_median_ns": 1290000.0, "cold_p25_ns": ..., "cold_p75_ns": ...,
//             "cold_repeats": 9}]}
// The cold_* fields and the top-level "evict_bytes" are there when it was measured with
// --evict (both, or neither).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "exec/machine.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

struct ProfiledOp {
  std::string signature, kind, op, layer, description;
  int per_step = 1;  // ops of the trace's step with this signature
  Tick median = 0, p25 = 0, p75 = 0;
  int repeats = 0;
  // Measured cold (`fusim profile --evict SIZE`: a buffer of SIZE read before each run, so
  // the caches hold none of the op's tensors, only clean lines of other data): -1 when not
  // measured.
  Tick cold_median = -1, cold_p25 = -1, cold_p75 = -1;
  int cold_repeats = 0;
  bool has_cold() const { return cold_median >= 0; }
};

struct OpProfile {
  std::string file;  // where it was read from ("" in memory)
  std::string trace, device = "cpu", optimizer, impl;
  int threads = 0;
  std::int64_t evict_bytes = 0;  // the --evict buffer of the cold times (0: none measured)
  std::vector<ProfiledOp> ops;
  const ProfiledOp* find(const std::string& signature) const;
};

// Strict reader (InputError naming the file and JSON path) and writer.
OpProfile read_op_profile(const std::string& path);
OpProfile parse_op_profile(const nlohmann::json& document, const std::string& file);
nlohmann::json op_profile_json(const OpProfile& profile);

// Two profiles of the same trace measured before and after the steps they predict
// (`validate --profile auto` brackets its measured steps with them, since a VM's speed
// drifts by 10-20% over minutes): per op, the mean of the two medians (a drift linear in
// time cancels), the quartiles widened to cover both, the cold times likewise; the repeats
// add up. Both must hold the same signatures, in the same order.
OpProfile bracket_profiles(const OpProfile& before, const OpProfile& after);
// The machine's drift between them: the per-step total of `after` over that of `before`,
// minus 1 (each op's median times its ops per step).
double profile_drift(const OpProfile& before, const OpProfile& after);

// The first op of each distinct signature of a schedule, in issue order (views, which run
// nothing, left out): what `fusim profile` measures.
struct DistinctOp {
  int op = 0;     // id of the first op with this signature
  int count = 0;  // ops with it in the schedule
  std::string signature, description;
};
std::vector<DistinctOp> distinct_ops(const workload::Trace& trace,
                                     const schedule::Schedule& schedule);

// The compute times of a profile, solved on the host's machine model once per signature
// and reused for every schedule of the trace (orderings share their ops).
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
class ProfiledCompute {
 public:
  // `host`: the machine the profile was measured on (for a what-if sweep, the base machine
  // before --set: the compute stays what this host does, the memory system changes).
  ProfiledCompute(const OpProfile& profile, const Machine& host, const SimOptions& options);

  // SimOptions::op_compute for `schedule`. An op whose signature the profile lacks throws
  // InputError naming it and the profile.
  std::vector<Tick> op_compute(const workload::Trace& trace, const schedule::Schedule& schedule);

  // Whether predictions take two passes (the profile has cold times).
  bool scales_penalties() const { return profile_.evict_bytes > 0; }
  // The compute and delay of each op for the second pass, from the first pass's result
  // (`first`, the schedule simulated with `compute` = op_compute(...)). Const: safe to
  // call from threads once op_compute has solved the schedule.
  struct OpTimes {
    std::vector<Tick> compute, delay;  // SimOptions::op_compute, op_delay
  };
  OpTimes in_context(const workload::Trace& trace, const schedule::Schedule& schedule,
                     const std::vector<Tick>& compute, const RunResult& first) const;

  // Signatures solved so far whose isolated simulation could not reach the measured time
  // (c = 0 and the simulated memory alone is slower), with the two times.
  struct Inexact {
    std::string description;
    Tick measured = 0, simulated = 0;
  };
  const std::vector<Inexact>& inexact() const { return inexact_; }
  int solved() const { return static_cast<int>(compute_.size()); }
  // Penalty scales k of the signatures solved so far whose simulated penalty is not
  // negligible (empty without cold times).
  std::vector<double> penalty_scales() const;

 private:
  struct Solved {
    Tick compute = 0;
    Tick sim_warm = 0;    // S_warm: the op simulated alone, warm, at `compute`
    double scale = 1.0;   // k
    bool scaled = false;  // k measured (the simulated penalty is not negligible)
  };
  const OpProfile& profile_;
  const Machine& host_;
  SimOptions options_;
  std::map<std::string, Solved> compute_;
  std::vector<Inexact> inexact_;
};

// Simulates `schedule` with `compute`'s times (null: the machine's cost model), in two passes
// when it scales penalties (above): the one way simulate, validate and sweep predict from a
// profile. `options.op_compute` is ignored (set from `compute`).
SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   ProfiledCompute* compute);
// The same from compute times solved before (a sweep solves them once per schedule).
SimulationDetail simulate_profiled(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, SimOptions options,
                                   const ProfiledCompute& compute,
                                   const std::vector<Tick>& op_compute);

}  // namespace fusim::exec
