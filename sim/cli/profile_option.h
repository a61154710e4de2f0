#pragma once
// `--profile P.json` of simulate and validate: the measured profile (exec/op_profile.h),
// the host machine its compute times are solved on, and the solved compute times, held
// for the command's schedules. Wiring only.
#include <memory>
#include <string>

#include "exec/machine.h"
#include "exec/profiled_compute.h"
#include "exec/simulate.h"

namespace fusim::cli {

// The --profile option's help, the same on simulate, validate and sweep.
inline constexpr const char* kProfileOptionHelp =
    "Measured per-op profile of the trace (`fusim profile`, same --optimizer and --impl): each "
    "op's compute time is solved on --machine (before --set) so that the op alone reproduces "
    "its measured time; the simulated caches and DRAM decide the memory time in the schedule's "
    "context. A profile with cold times (`fusim profile --evict SIZE`) also scales each op's "
    "simulated cost of finding its tensors uncached to the measured one (two simulations). A "
    "step profile (`fusim profile --in-step`) makes each op of the simulated eager step take "
    "its time measured in the step, and predicts the other orderings as the same ops in their "
    "own simulated context";

class ProfileOption {
 public:
  // Empty path: no profile (op_compute returns nothing, the machine's cost model applies).
  // `host`: the machine the profile was measured on, before any --set.
  ProfileOption(const std::string& path, const exec::Machine& host, const exec::SimOptions& sim);
  // A profile measured by the command itself (validate --profile auto).
  ProfileOption(exec::OpProfile profile, const exec::Machine& host, const exec::SimOptions& sim);
  bool active() const { return compute_ != nullptr; }
  // The schedule simulated with the profile's compute (exec::simulate_profiled), or with
  // the machine's cost model without a profile.
  exec::SimulationDetail simulate(const workload::Trace& trace, const schedule::Schedule& schedule,
                                  const exec::Machine& machine, const exec::SimOptions& sim);
  // One line on stderr: how many distinct ops were solved, and each whose measured time
  // the simulated memory alone exceeds (its compute is then 0 and the op slower than
  // measured), at most 5 of them.
  void report() const;

 private:
  void init(exec::OpProfile profile, const exec::Machine& host, const exec::SimOptions& sim);
  std::unique_ptr<exec::OpProfile> profile_;
  std::unique_ptr<exec::Machine> host_;
  std::unique_ptr<exec::ProfiledCompute> compute_;
};

}  // namespace fusim::cli
