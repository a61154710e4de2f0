#pragma once
// The sweep's binding to the simulator: traces (files, or zoo networks regenerated at each
// swept batch size), schedules (one per trace x ordering x optimizer, built once), machines
// (the preset with the point's --set overrides) and exec::simulate.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "exec/cluster_step.h"
#include "exec/machine.h"
#include "exec/profiled_compute.h"
#include "parallel/plan.h"
#include "schedule/schedule.h"
#include "sweep/evaluator.h"
#include "sweep/study.h"
#include "workload/trace.h"

namespace fusim::residency {
class DramCurveStore;
}

namespace fusim::sweep {

struct SimSweepOptions {
  std::string machine;           // preset name or path (models/machines/SCHEMA.md)
  std::string impl = "foreach";  // optimizer implementation: loop | foreach | fused
  std::string mixed;             // per-layer file of the `mixed` ordering (--mixed)
  // block | line | tensor (exec/simulate.h). Tensor by default (issue 17: the default once
  // it held within 2% of block on the full bundled traces on a CPU and a GPU preset, and of
  // line where line finishes: README, Fidelity and speed).
  std::string fidelity = "tensor";
  std::int64_t batch = 32;  // zoo networks when batch= is not swept
  int steps = 4;            // simulated steps: warm-up, forward-fused's first updates,
                            // the measured step, and one more so that
  int warmup_steps = 1;     // forward-fused's final flush is outside the measurement
  // --profile: a measured profile of the (single) trace on the base machine's host; each
  // op's compute time is solved once on the base machine (before --set), and every grid
  // point simulates its memory around it (exec/op_profile.h).
  std::string profile;
  // Issue 19: a parallel plan on a cluster (the sweep's --tp, --pp, ... and --cluster); the
  // grid's parallel.* paths set its fields per point. Each point is then one multi-device
  // step (exec/cluster_step.h) with --machine as the GPU.
  parallel::PlanArgs plan;
  std::string cluster;
  bool with_plan = false;  // plan options given (parallel.* axes turn it on too)
};

class SimEvaluator : public Evaluator {
 public:
  // Loads or generates every trace and builds every schedule the study needs, and reads
  // the base machine; any bad trace, name or option throws InputError here, before work.
  SimEvaluator(const Study& study, SimSweepOptions options);
  // Not copied: compute_ refers to base_ and *profile_.
  SimEvaluator(const SimEvaluator&) = delete;
  SimEvaluator& operator=(const SimEvaluator&) = delete;

  void check_choices(const std::vector<std::string>& orderings,
                     const std::vector<std::string>& optimizers) const override;
  // Builds the point's machine from the base machine's document and the point's --set
  // values, and keeps it: run() reads no file and parses nothing.
  void check_point(const PointSetup& point) override;
  std::vector<std::string> cache_levels() const override;
  exec::RunResult run(const PointSetup& point, const std::string& ordering,
                      const std::string& optimizer) const override;

 private:
  using TraceKey = std::pair<std::size_t, std::int64_t>;  // --trace index, batch
  using ScheduleKey = std::tuple<std::size_t, std::int64_t, std::string, std::string>;

  exec::Machine build_machine(const PointSetup& point) const;
  // The multi-device step of a plan point (with_plan).
  exec::RunResult run_plan(const PointSetup& point, const workload::Trace& trace,
                           const exec::Machine& machine, const std::string& ordering,
                           const std::string& optimizer) const;
  TraceKey trace_key(const PointSetup& point) const;

  SimSweepOptions options_;
  exec::MachineDocument document_;                 // the --machine file as read, before overrides
  exec::Machine base_;                             // parsed without overrides
  std::map<std::string, exec::Machine> machines_;  // by the point's overrides, check_point
  std::map<TraceKey, workload::Trace> traces_;
  std::map<ScheduleKey, schedule::Schedule> schedules_;
  // Tensor fidelity: the DRAM curves of every point's DRAM configuration, measured once
  // for the whole sweep (thread-safe) and kept in the curve cache folder.
  std::shared_ptr<residency::DramCurveStore> dram_curves_;
  // --profile only: the profile, its solved compute (penalty scales applied per point) and
  // the compute times of each schedule, all solved before any point.
  std::unique_ptr<exec::OpProfile> profile_;
  std::unique_ptr<exec::ProfiledCompute> compute_;
  std::map<ScheduleKey, exec::ProfiledCompute::OpTimes> op_compute_;
  // With a plan: each point's single-device layer times, shared by the points that differ
  // only in parallel.* values (thread-safe; a memo that changes no result).
  mutable exec::LayerTimesCache layer_times_;
};

}  // namespace fusim::sweep
