#include "exec/cluster_step.h"

#include <algorithm>

#include "schedule/request.h"

namespace fusim::exec {

std::vector<parallel::LayerTimes> layer_times(const workload::Trace& trace, const RunResult& run) {
  const std::size_t n = trace.layers.size();
  std::vector<parallel::LayerTimes> out(n);
  Tick whole_model_update = 0;
  for (const auto& op : run.per_op) {
    if (!op.measured) continue;
    const Tick d = op.end - op.start;
    if (op.layer < 0 || std::size_t(op.layer) >= n) {
      if (op.kind == "U") whole_model_update += d;
      continue;
    }
    parallel::LayerTimes& t = out[std::size_t(op.layer)];
    if (op.kind == "F") t.forward += d;
    if (op.kind == "Bx" || op.kind == "L") t.backward_input += d;
    if (op.kind == "Bw") t.backward_weight += d;
    if (op.kind == "U") t.update += d;
  }
  // The whole-model update by trained elements (an elementwise optimizer: time ~ bytes).
  std::vector<double> trained(n, 0);
  double all = 0;
  for (std::size_t l = 0; l < n; ++l)
    for (const auto& p : trace.layers[l].params)
      if (p.requires_grad && p.tied_to.empty()) {
        trained[l] += double(workload::numel(p.shape));
        all += double(workload::numel(p.shape));
      }
  const int steps = std::max(1, run.steps_measured);
  for (std::size_t l = 0; l < n; ++l) {
    parallel::LayerTimes& t = out[l];
    if (all > 0) t.update += Tick(double(whole_model_update) * trained[l] / all + 0.5);
    t.forward /= steps;
    t.backward_input /= steps;
    t.backward_weight /= steps;
    t.update /= steps;
  }
  return out;
}

std::vector<parallel::LayerTimes> single_device_layer_times(const workload::Trace& trace,
                                                            const Machine& gpu,
                                                            const ClusterStepRequest& r) {
  schedule::ScheduleRequest request;
  request.optimizer = r.optimizer;
  request.impl = r.impl;
  request.steps = 4;  // as `fusim simulate`: warm-up, measured steps, a trailing one
  // One stream: the multi-device step runs a stage's updates on its compute in sequence
  // (step_timing.h), so their costs are taken without overlap (a second stream's U would
  // stretch the B it overlaps and count twice); the fused orderings keep their cache context.
  request.gpu_streams = false;
  request.device =
      gpu.kind == compute::UnitKind::Gpu ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  request.memory = r.memory;
  request.memory.optimizer_shards = 1;  // stage_work shards the update's time
  const auto s = schedule::build_schedule(trace, schedule::schedule_options(r.ordering, request));
  SimOptions sim = r.sim;
  sim.warmup_steps = 1;
  return layer_times(trace, simulate(trace, s, gpu, sim));
}

parallel::StepTiming time_cluster_step(const workload::Trace& trace,
                                       const std::vector<parallel::LayerTimes>& times,
                                       const ClusterStepRequest& r) {
  const std::int64_t bucket =
      r.plan.bucket_size > 0 ? r.plan.bucket_size : parallel::kDefaultBucketBytes;
  parallel::StepQuery q;
  q.plan = r.plan;
  q.cluster = r.cluster;
  q.ordering = r.ordering;
  q.record_links = r.record_links;
  q.work = parallel::stage_work(trace, r.plan, times, bucket, r.memory);
  return parallel::time_step(q);
}

parallel::StepTiming simulate_cluster_step(const workload::Trace& trace, const Machine& gpu,
                                           const ClusterStepRequest& r) {
  return time_cluster_step(trace, single_device_layer_times(trace, gpu, r), r);
}

std::shared_ptr<const LayerTimesCache::Times> LayerTimesCache::get(
    const std::string& key, const std::function<Times()>& compute) {
  std::promise<std::shared_ptr<const Times>> promise;
  std::shared_future<std::shared_ptr<const Times>> entry;
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      entry = promise.get_future().share();
      entries_.emplace(key, entry);
      mine = true;
    } else {
      entry = it->second;
    }
  }
  // Computed outside the lock: other keys proceed; callers of this key wait on its future.
  if (mine) {
    try {
      promise.set_value(std::make_shared<const Times>(compute()));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return entry.get();
}

int LayerTimesCache::computed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return int(entries_.size());
}

}  // namespace fusim::exec
