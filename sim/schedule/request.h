#pragma once
// What the commands that build schedules (schedule, simulate, run, validate, sweep) ask
// for, in one grammar and one builder, so that they accept the same words and build the
// same schedules from them:
//   --ordering  all | a comma-separated list of eager, backward-fused, forward-fused, mixed
//               (all = eager, backward-fused, forward-fused; each name at most once)
//   --impl      loop | foreach | fused
//   --execution layers | graph | both (= layers,graph): how the backend drives the step
//   --mixed     the per-layer file of `mixed` (mixed.h): needed by mixed, only with mixed
// Bad words throw InputError naming the option.
#include <string>
#include <vector>

#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::schedule {

std::vector<Ordering> parse_orderings(const std::string& text);
std::vector<std::string> ordering_names(const std::vector<Ordering>& orderings);
// Eager first (the baseline of every speedup), then the others in their order.
std::vector<Ordering> with_eager_baseline(const std::vector<Ordering>& orderings);
OptimizerImpl parse_impl_option(const std::string& text);
// --execution: layers | graph | both, or a comma-separated list of layers, graph (each once).
std::vector<Execution> parse_executions(const std::string& text);

// Everything about the schedules of one command but the ordering.
struct ScheduleRequest {
  std::string optimizer = "adam";
  OptimizerImpl impl = OptimizerImpl::Foreach;
  int steps = 0;             // 0: each ordering's default (ScheduleOptions::steps)
  std::string mixed_file;    // --mixed
  bool gpu_streams = false;  // updates of backward-fused layers on stream 1 (GPU machines)
  MemoryOptions memory;      // issue 20: precision, sharding, grad buffer, attention
  DeviceKind device = DeviceKind::Cpu;      // what runs it: kernels per optimizer impl
  Execution execution = Execution::Layers;  // --execution: the backend's host costs
};

// The options of one ordering (the mixed file only for `mixed`).
ScheduleOptions schedule_options(Ordering ordering, const ScheduleRequest& request);
// --mixed against the orderings: given without mixed among them, or mixed without it.
void check_mixed_option(const std::vector<Ordering>& orderings, const std::string& mixed_file);
// One schedule per ordering, after check_mixed_option.
std::vector<Schedule> build_schedules(const workload::Trace& trace,
                                      const std::vector<Ordering>& orderings,
                                      const ScheduleRequest& request);

}  // namespace fusim::schedule
