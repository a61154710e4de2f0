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
//             "median_ns": 812345.0, "p25_ns": 801000.0, "p75_ns": 830000.0, "repeats": 9}]}
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
};

struct OpProfile {
  std::string file;  // where it was read from ("" in memory)
  std::string trace, device = "cpu", optimizer, impl;
  int threads = 0;
  std::vector<ProfiledOp> ops;
  const ProfiledOp* find(const std::string& signature) const;
};

// Strict reader (InputError naming the file and JSON path) and writer.
OpProfile read_op_profile(const std::string& path);
OpProfile parse_op_profile(const nlohmann::json& document, const std::string& file);
nlohmann::json op_profile_json(const OpProfile& profile);

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
class ProfiledCompute {
 public:
  // `host`: the machine the profile was measured on (for a what-if sweep, the base machine
  // before --set: the compute stays what this host does, the memory system changes).
  ProfiledCompute(const OpProfile& profile, const Machine& host, const SimOptions& options);

  // SimOptions::op_compute for `schedule`. An op whose signature the profile lacks throws
  // InputError naming it and the profile.
  std::vector<Tick> op_compute(const workload::Trace& trace, const schedule::Schedule& schedule);

  // Signatures solved so far whose isolated simulation could not reach the measured time
  // (c = 0 and the simulated memory alone is slower), with the two times.
  struct Inexact {
    std::string description;
    Tick measured = 0, simulated = 0;
  };
  const std::vector<Inexact>& inexact() const { return inexact_; }
  int solved() const { return static_cast<int>(compute_.size()); }

 private:
  const OpProfile& profile_;
  const Machine& host_;
  SimOptions options_;
  std::map<std::string, Tick> compute_;
  std::vector<Inexact> inexact_;
};

}  // namespace fusim::exec
