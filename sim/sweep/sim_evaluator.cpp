#include "sweep/sim_evaluator.h"

#include <fmt/format.h>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "exec/op_profile.h"
#include "exec/simulate.h"
#include "mem/residency/dram_curve.h"
#include "mem/residency/dram_curve_file.h"
#include "networks/networks.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::sweep {
namespace {

bool is_zoo_network(const std::string& name) {
  for (const std::string& n : networks::network_names())
    if (n == name) return true;
  return false;
}

std::string describe(const PointSetup& point) {
  std::string text;
  for (const auto& [path, value] : point.machine_overrides)
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", path, value_text(value));
  if (point.batch) text += fmt::format("{}batch={}", text.empty() ? "" : " ", *point.batch);
  return text;
}

}  // namespace

SimEvaluator::SimEvaluator(const Study& study, SimSweepOptions options)
    : options_(std::move(options)),
      document_(exec::read_machine_document(options_.machine)),
      base_(exec::parse_machine(document_)) {
  const Grid& grid = study.grid();
  std::vector<std::int64_t> batches;
  if (auto b = grid.batch_axis())
    for (const nlohmann::json& v : grid.axes()[*b].values) batches.push_back(v.get<std::int64_t>());

  if (exec::parse_fidelity_name(options_.fidelity) == exec::Fidelity::Tensor)
    dram_curves_ = std::make_shared<residency::DramCurveStore>(residency::default_cache_dir());
  if (options_.warmup_steps < 0)
    throw InputError("--warmup", "", fmt::format("a count >= 0, got {}", options_.warmup_steps));
  if (options_.steps < options_.warmup_steps + 2)
    throw InputError("--steps", "",
                     fmt::format("at least --warmup + 2 = {} (warm-up, a measured step, and the "
                                 "step that holds forward-fused's final flush), got {}",
                                 options_.warmup_steps + 2, options_.steps));
  schedule::ScheduleRequest request;
  request.impl = schedule::parse_impl_option(options_.impl);
  request.steps = options_.steps;  // the same for every ordering: a like-for-like step
  request.mixed_file = options_.mixed;
  request.gpu_streams = base_.kind == compute::UnitKind::Gpu;
  request.device = request.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  // The study's names in the --ordering grammar (schedule/request.h), eager added: the
  // baseline of every speedup.
  std::string listed;
  for (const std::string& name : study.orderings()) listed += (listed.empty() ? "" : ",") + name;
  const std::vector<schedule::Ordering> orderings =
      schedule::with_eager_baseline(schedule::parse_orderings(listed));
  schedule::check_mixed_option(orderings, options_.mixed);

  for (std::size_t t = 0; t < grid.traces().size(); ++t) {
    const std::string& name = grid.traces()[t];
    bool file = std::filesystem::is_regular_file(name);
    if (!file && !is_zoo_network(name))
      throw InputError("--trace", "",
                       fmt::format("a trace JSON file or a zoo network ({}), got {}",
                                   fmt::join(networks::network_names(), ", "), name));
    if (file && !batches.empty())
      throw InputError("--set batch", "",
                       fmt::format("zoo network names in --trace (a trace file has a fixed batch), "
                                   "got the file {}",
                                   name));
    std::vector<std::int64_t> trace_batches = batches;
    if (trace_batches.empty()) trace_batches.push_back(-1);
    for (std::int64_t batch : trace_batches) {
      workload::Trace trace;
      if (file) {
        trace = workload::load_trace(name);
      } else {
        networks::NetworkOptions net;
        net.batch = batch > 0 ? batch : options_.batch;
        net.source = fmt::format("fusim trace gen {} --batch {}", name, net.batch);
        trace = networks::make_network(name, net);
      }
      for (const schedule::Ordering ordering : orderings)
        for (const std::string& optimizer : study.optimizers()) {
          request.optimizer = optimizer;
          schedules_.emplace(
              ScheduleKey{t, batch, std::string(schedule::to_string(ordering)), optimizer},
              schedule::build_schedule(trace, schedule::schedule_options(ordering, request)));
        }
      traces_.emplace(TraceKey{t, batch}, std::move(trace));
    }
  }
  if (!options_.profile.empty()) {
    // Solved once, before any point: a profile that lacks an op fails here, by name.
    profile_ = std::make_unique<exec::OpProfile>(exec::read_op_profile(options_.profile));
    exec::SimOptions so;
    so.fidelity = exec::parse_fidelity_name(options_.fidelity);
    compute_ = std::make_unique<exec::ProfiledCompute>(*profile_, base_, so);
    for (const auto& [key, schedule] : schedules_)
      op_compute_.emplace(
          key,
          compute_->op_compute(traces_.at(TraceKey{std::get<0>(key), std::get<1>(key)}), schedule));
  }
}

void SimEvaluator::check_choices(const std::vector<std::string>&,
                                 const std::vector<std::string>&) const {
  // Done by the constructor: every ordering and optimizer has had its schedule built.
}

namespace {
std::vector<exec::Override> overrides_of(const PointSetup& point) {
  std::vector<exec::Override> overrides;
  for (const auto& [path, value] : point.machine_overrides)
    overrides.emplace_back(path, value_text(value));
  return overrides;
}

std::string machine_key(const PointSetup& point) {
  std::string key;
  for (const auto& [path, value] : overrides_of(point)) key += path + '=' + value + '\n';
  return key;
}
}  // namespace

exec::Machine SimEvaluator::build_machine(const PointSetup& point) const {
  return exec::parse_machine(document_, overrides_of(point));
}

SimEvaluator::TraceKey SimEvaluator::trace_key(const PointSetup& point) const {
  return {point.trace, point.batch.value_or(-1)};
}

std::vector<std::string> SimEvaluator::cache_levels() const {
  std::vector<std::string> names;
  for (const auto& level : base_.cache_levels) names.push_back(level.name);
  return names;
}

void SimEvaluator::check_point(const PointSetup& point) {
  try {
    // Every value is read now: a bad cache or DRAM value fails here instead of after
    // hours of other points.
    const std::string key = machine_key(point);
    if (!machines_.count(key)) machines_.emplace(key, build_machine(point));
  } catch (const InputError& e) {
    std::string where = describe(point);
    if (where.empty()) throw;  // no --set: the machine itself is at fault, as it says
    throw InputError(fmt::format("grid point {}: {}", where, e.what()));
  }
}

exec::RunResult SimEvaluator::run(const PointSetup& point, const std::string& ordering,
                                  const std::string& optimizer) const {
  const workload::Trace& trace = traces_.at(trace_key(point));
  const schedule::Schedule& schedule =
      schedules_.at(ScheduleKey{point.trace, point.batch.value_or(-1), ordering, optimizer});
  const auto it = machines_.find(machine_key(point));
  // Points are checked (and their machines built) first; a caller that did not gets the
  // same machine built here.
  std::optional<exec::Machine> built;
  const exec::Machine& machine =
      it != machines_.end() ? it->second : built.emplace(build_machine(point));
  exec::SimOptions so;
  so.fidelity = exec::parse_fidelity_name(options_.fidelity);
  so.warmup_steps = options_.warmup_steps;
  so.dram_curves = dram_curves_;
  const auto key = ScheduleKey{point.trace, point.batch.value_or(-1), ordering, optimizer};
  if (auto c = op_compute_.find(key); c != op_compute_.end())
    return exec::simulate_profiled(trace, schedule, machine, so, *compute_, c->second).result;
  return exec::simulate(trace, schedule, machine, so);
}

}  // namespace fusim::sweep
