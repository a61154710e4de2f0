#pragma once
// `--profile P.json` of simulate and validate: the measured profile (exec/op_profile.h),
// the host machine its compute times are solved on, and the solved compute times, held
// for the command's schedules. Wiring only.
#include <memory>
#include <string>

#include "exec/machine.h"
#include "exec/op_profile.h"
#include "exec/simulate.h"

namespace fusim::cli {

class ProfileOption {
 public:
  // Empty path: no profile (op_compute returns nothing, the machine's cost model applies).
  // `host`: the machine the profile was measured on, before any --set.
  ProfileOption(const std::string& path, const exec::Machine& host, const exec::SimOptions& sim);
  bool active() const { return compute_ != nullptr; }
  // SimOptions::op_compute for one schedule ({} without a profile).
  std::vector<Tick> op_compute(const workload::Trace& trace, const schedule::Schedule& schedule);
  // One line on stderr: how many distinct ops were solved, and each whose measured time
  // the simulated memory alone exceeds (its compute is then 0 and the op slower than
  // measured), at most 5 of them.
  void report() const;

 private:
  std::unique_ptr<exec::OpProfile> profile_;
  std::unique_ptr<exec::Machine> host_;
  std::unique_ptr<exec::ProfiledCompute> compute_;
};

}  // namespace fusim::cli
