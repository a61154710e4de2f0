#include "backend/run_plan.h"

#include <fmt/format.h>
#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace fusim::backend {

std::vector<schedule::Ordering> parse_orderings(const std::string& text) {
  using schedule::Ordering;
  if (text == "all") return {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused};
  std::vector<Ordering> out;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    auto o = schedule::parse_ordering(name);
    if (!o)
      throw InputError(fmt::format(
          "--ordering: expected all or a comma-separated list of eager, backward-fused, "
          "forward-fused, mixed, got \"{}\"",
          name));
    out.push_back(*o);
  }
  if (out.empty()) throw InputError("--ordering: expected at least one ordering, got \"\"");
  return out;
}

std::vector<schedule::Schedule> build_run_schedules(
    const workload::Trace& trace, const std::vector<schedule::Ordering>& orderings,
    const std::string& optimizer, schedule::OptimizerImpl impl, const RunOptions& options,
    const std::string& mixed_file) {
  const bool has_mixed =
      std::find(orderings.begin(), orderings.end(), schedule::Ordering::Mixed) != orderings.end();
  if (!mixed_file.empty() && !has_mixed) throw InputError("--mixed: only with --ordering mixed");
  std::vector<schedule::Schedule> out;
  for (auto ordering : orderings) {
    schedule::ScheduleOptions so;
    so.ordering = ordering;
    so.optimizer = optimizer;
    so.impl = impl;
    so.steps = schedule_steps_for(options);
    so.gpu_streams = options.device == "cuda";  // U on a side stream where backward-fused
    so.device = so.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
    if (ordering == schedule::Ordering::Mixed) so.mixed_file = mixed_file;
    out.push_back(schedule::build_schedule(trace, so));
  }
  return out;
}

}  // namespace fusim::backend
