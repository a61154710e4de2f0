#include "schedule/request.h"

#include <fmt/format.h>
#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/suggest.h"

namespace fusim::schedule {

std::vector<Ordering> parse_orderings(const std::string& text) {
  if (text == "all") return {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused};
  std::vector<Ordering> out;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    auto o = parse_ordering(name);
    if (!o)
      throw InputError(fmt::format(
          "--ordering: expected all or a comma-separated list of eager, backward-fused, "
          "forward-fused, mixed, got \"{}\"{}",
          name, did_you_mean(name, {"all", "eager", "backward-fused", "forward-fused", "mixed"})));
    if (std::find(out.begin(), out.end(), *o) != out.end())
      throw InputError(fmt::format("--ordering: expected each ordering once, got {} twice", name));
    out.push_back(*o);
  }
  if (out.empty()) throw InputError("--ordering: expected at least one ordering, got \"\"");
  return out;
}

std::vector<std::string> ordering_names(const std::vector<Ordering>& orderings) {
  std::vector<std::string> names;
  for (Ordering o : orderings) names.emplace_back(to_string(o));
  return names;
}

std::vector<Ordering> with_eager_baseline(const std::vector<Ordering>& orderings) {
  std::vector<Ordering> out{Ordering::Eager};
  for (Ordering o : orderings)
    if (o != Ordering::Eager) out.push_back(o);
  return out;
}

OptimizerImpl parse_impl_option(const std::string& text) {
  auto impl = parse_optimizer_impl(text);
  if (!impl)
    throw InputError(fmt::format("--impl: expected loop, foreach or fused, got \"{}\"", text));
  return *impl;
}

std::vector<Execution> parse_executions(const std::string& text) {
  if (text == "both") return {Execution::Layers, Execution::Graph};
  std::vector<Execution> out;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) {
    auto e = parse_execution(name);
    if (!e)
      throw InputError(fmt::format(
          "--execution: expected layers, graph, both or a comma-separated list of layers, "
          "graph, got \"{}\"",
          name));
    if (std::find(out.begin(), out.end(), *e) != out.end())
      throw InputError(
          fmt::format("--execution: expected each execution once, got {} twice", name));
    out.push_back(*e);
  }
  if (out.empty()) throw InputError("--execution: expected at least one execution, got \"\"");
  return out;
}

ScheduleOptions schedule_options(Ordering ordering, const ScheduleRequest& r) {
  ScheduleOptions so;
  so.memory = r.memory;
  so.ordering = ordering;
  so.optimizer = r.optimizer;
  so.impl = r.impl;
  so.steps = r.steps;
  so.gpu_streams = r.gpu_streams;
  so.device = r.device;
  so.execution = r.execution;
  if (ordering == Ordering::Mixed) so.mixed_file = r.mixed_file;
  return so;
}

void check_mixed_option(const std::vector<Ordering>& orderings, const std::string& mixed_file) {
  const bool has_mixed =
      std::find(orderings.begin(), orderings.end(), Ordering::Mixed) != orderings.end();
  if (!mixed_file.empty() && !has_mixed) throw InputError("--mixed: only with --ordering mixed");
  // (mixed without a file: build_schedule says "ordering mixed needs a per-layer file")
}

std::vector<Schedule> build_schedules(const workload::Trace& trace,
                                      const std::vector<Ordering>& orderings,
                                      const ScheduleRequest& request) {
  check_mixed_option(orderings, request.mixed_file);
  std::vector<Schedule> out;
  for (Ordering o : orderings) out.push_back(build_schedule(trace, schedule_options(o, request)));
  return out;
}

}  // namespace fusim::schedule
