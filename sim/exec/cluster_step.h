#pragma once
// The simulated executor on a cluster (issue 19, point 6): one training step of a parallel
// plan timed as many devices running their pipeline stages (sim/parallel/step_timing.h),
// each stage's pass costs from this single-device engine (simulate.h) on the cluster's GPU
// machine, scaled to the layer shares one GPU of the plan runs (parallel/stage_work.h).
// Each ordering is simulated on one device in full (F, Bx, Bw and U of every layer in that
// ordering's cache context), so a fused update's cost is the fused one.
#include <string>
#include <vector>

#include "exec/machine.h"
#include "exec/run_result.h"
#include "exec/simulate.h"
#include "parallel/stage_work.h"
#include "parallel/step_timing.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

// Per trace layer, the compute of one microbatch by op kind, averaged over the measured
// steps of a single-device run; a whole-model update (foreach and fused implementations:
// one op for all params) shared out by the layers' trained elements.
std::vector<parallel::LayerTimes> layer_times(const workload::Trace& trace, const RunResult& run);

struct ClusterStepRequest {
  parallel::ParallelPlan plan;
  parallel::ClusterSpec cluster;
  schedule::Ordering ordering = schedule::Ordering::Eager;
  std::string optimizer = "adam";
  schedule::OptimizerImpl impl = schedule::OptimizerImpl::Fused;
  schedule::MemoryOptions memory;  // precision and attention of the single-device schedule
  SimOptions sim;                  // of the single-device engine (warm-up: 1 step of 4)
  bool record_links = false;       // keep link messages for a timeline
};

// `trace`: one microbatch; `gpu`: the machine of one GPU. The plan is checked by the caller
// (parallel_schedule.h: plan_schedule).
parallel::StepTiming simulate_cluster_step(const workload::Trace& trace, const Machine& gpu,
                                           const ClusterStepRequest& request);

}  // namespace fusim::exec
