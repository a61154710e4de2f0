#include "backend/run_plan.h"

#include "schedule/request.h"

namespace fusim::backend {

std::vector<schedule::Schedule> build_run_schedules(
    const workload::Trace& trace, const std::vector<schedule::Ordering>& orderings,
    const std::string& optimizer, schedule::OptimizerImpl impl, const RunOptions& options,
    const std::string& mixed_file) {
  schedule::ScheduleRequest request;
  request.optimizer = optimizer;
  request.impl = impl;
  request.steps = schedule_steps_for(options);
  request.mixed_file = mixed_file;
  request.gpu_streams = options.device == "cuda";  // U on a side stream where backward-fused
  request.device = request.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  std::vector<schedule::Schedule> out;
  for (auto execution : options.executions) {
    request.execution = execution;
    for (auto& s : schedule::build_schedules(trace, orderings, request))
      out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fusim::backend
