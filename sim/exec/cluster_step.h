#pragma once
// The simulated executor on a cluster (issue 19, point 6): one training step of a parallel
// plan timed as many devices running their pipeline stages (sim/parallel/step_timing.h),
// each stage's pass costs from this single-device engine (simulate.h) on the cluster's GPU
// machine, scaled to the layer shares one GPU of the plan runs (parallel/stage_work.h).
// Each ordering is simulated on one device in full (F, Bx, Bw and U of every layer in that
// ordering's cache context), so a fused update's cost is the fused one.
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
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

// The single-device half: each layer's op times of one microbatch on `gpu` under the
// request's ordering. It depends on the trace, the GPU machine, the ordering, optimizer,
// implementation, memory options and engine options only: not on the plan or the cluster
// (stage_work scales the times to each plan), so a caller may keep it across plans
// (LayerTimesCache).
std::vector<parallel::LayerTimes> single_device_layer_times(const workload::Trace& trace,
                                                            const Machine& gpu,
                                                            const ClusterStepRequest& request);

// The multi-device half: the plan's step from those times. The plan is checked by the caller
// (parallel_schedule.h: plan_schedule).
parallel::StepTiming time_cluster_step(const workload::Trace& trace,
                                       const std::vector<parallel::LayerTimes>& times,
                                       const ClusterStepRequest& request);

// Both: `trace` is one microbatch, `gpu` the machine of one GPU.
parallel::StepTiming simulate_cluster_step(const workload::Trace& trace, const Machine& gpu,
                                           const ClusterStepRequest& request);

// Layer times computed once per key and shared by every caller that asks for the same key,
// from any thread (a sweep's points that differ only in parallel.* or link settings). The
// key must name everything single_device_layer_times depends on. A computation that throws
// rethrows in every caller of its key.
class LayerTimesCache {
 public:
  using Times = std::vector<parallel::LayerTimes>;
  std::shared_ptr<const Times> get(const std::string& key, const std::function<Times()>& compute);
  int computed() const;  // keys computed so far (tests)

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<std::shared_ptr<const Times>>> entries_;
};

}  // namespace fusim::exec
