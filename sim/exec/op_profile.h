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
//
// Two contexts ("context", absent in older files: "isolated"):
//   isolated  `fusim profile`: one entry per distinct op, timed alone and repeated (above).
//   step      `fusim profile --in-step`: one entry per op of the eager step, keyed by its
//             "kind" and "layer_index" (the trace layer), timed inside measured eager steps
//             of the given "execution" (median over the steps: "repeats" is their count), as
//             Proteus and Lumos start from kernel times taken in real iterations. Its use is
//             exec/profiled_compute.h's step mode.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "exec/run_result.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

struct ProfiledOp {
  std::string signature, kind, op, layer, description;
  int per_step = 1;      // ops of the trace's step with this signature (step context: 1)
  int layer_index = -1;  // step context: the op's trace layer (-1 for a whole-model op)
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
  std::string context = "isolated";  // "isolated" | "step" (above)
  std::string execution = "layers";  // step context: the execution the steps ran in
  int threads = 0;
  std::int64_t evict_bytes = 0;  // the --evict buffer of the cold times (0: none measured)
  std::vector<ProfiledOp> ops;
  const ProfiledOp* find(const std::string& signature) const;
  bool in_step() const { return context == "step"; }
  // Step context: the entry of the op of this kind on this trace layer, or null.
  const ProfiledOp* find_in_step(const std::string& kind, int layer_index) const;
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

// A step-context profile from a measured run of the eager schedule `eager` (its measured
// ops, RunResult::per_op with measured set, in the order they ran): per (kind, layer) the
// op's time (end - start) as "median_ns": its mean over the quarter of the steps nearest the
// median step (so that the ops add up to the median step; op_profile.cpp says why), and the
// quartiles of all its times, views included (their measured time is the host's cost of the
// call). `measured` must be a run of `eager` (same op ids); an op
// with no measured timing throws InputError naming `source`.
OpProfile in_step_profile(const workload::Trace& trace, const schedule::Schedule& eager,
                          const RunResult& measured, const std::string& source);

}  // namespace fusim::exec
