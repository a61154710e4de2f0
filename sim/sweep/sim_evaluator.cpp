#include "sweep/sim_evaluator.h"

#include <fmt/format.h>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "exec/cluster_step.h"
#include "exec/op_profile.h"
#include "exec/simulate.h"
#include "mem/residency/dram_curve.h"
#include "mem/residency/dram_curve_file.h"
#include "networks/networks.h"
#include "parallel/parallel_schedule.h"
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
  for (const auto& [path, value] : point.plan_overrides)
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", path, value_text(value));
  return text;
}

// The plan of a grid point: the sweep's plan options with the point's parallel.* values, as
// the command line would give them (parse_plan checks them the same way).
parallel::PlanArgs plan_at(parallel::PlanArgs a, const PointSetup& point) {
  for (const auto& entry : point.plan_overrides) {
    // Not a structured binding: C++17 lambdas cannot capture one (clang refuses it).
    const std::string& path = entry.first;
    const auto& v = entry.second;
    const std::string option = "--set " + path;
    const std::string field = path.substr(kParallelPrefix.size());
    auto integer = [&]() -> std::int64_t {
      if (!v.is_number_integer())
        throw InputError(option, "", fmt::format("an integer, got {}", value_text(v)));
      return v.get<std::int64_t>();
    };
    auto small = [&]() -> int {
      const std::int64_t i = integer();
      if (i < -(1 << 20) || i > (1 << 20))
        throw InputError(option, "", fmt::format("a count of at most 2^20, got {}", i));
      return int(i);
    };
    auto text = [&]() -> std::string {
      if (!v.is_string())
        throw InputError(option, "", fmt::format("a name, got {}", value_text(v)));
      return v.get<std::string>();
    };
    auto flag = [&]() -> bool {
      if (!v.is_boolean())
        throw InputError(option, "", fmt::format("true or false, got {}", value_text(v)));
      return v.get<bool>();
    };
    if (field == "tp")
      a.tp = small();
    else if (field == "pp")
      a.pp = small();
    else if (field == "dp")
      a.dp = small();
    else if (field == "cp")
      a.cp = small();
    else if (field == "global_batch")
      a.global_batch = integer();
    else if (field == "pipeline_schedule")
      a.schedule = text();
    else if (field == "virtual_stages")
      a.virtual_stages = small();
    else if (field == "recompute")
      a.recompute = text();
    else if (field == "sequence_parallel")
      a.sequence_parallel = flag();
    else if (field == "distributed_optimizer")
      a.distributed_optimizer = flag();
    else if (field == "bucket_size")
      a.bucket_size = integer();
    else
      throw InputError(
          "--set", "",
          fmt::format("a parallel path of parallel.tp, parallel.pp, parallel.dp, parallel.cp, "
                      "parallel.global_batch, parallel.pipeline_schedule, parallel.virtual_stages, "
                      "parallel.recompute, parallel.sequence_parallel, "
                      "parallel.distributed_optimizer, parallel.bucket_size, got {}",
                      path));
  }
  return a;
}

// The checked plan of a point for one ordering: the plan's own rules, the model's, the
// cluster's and the memory per GPU (parallel_schedule.h), as `fusim simulate` checks them.
parallel::ParallelSchedule plan_layout(const parallel::PlanArgs& base, const PointSetup& point,
                                       const workload::Trace& trace, schedule::Ordering ordering,
                                       const std::string& optimizer, const std::string& impl,
                                       const std::string& cluster) {
  parallel::PlanArgs args = plan_at(base, point);
  args.microbatch = trace.batch;  // the trace is one microbatch
  parallel::MemoryQuery q;
  q.plan = parallel::parse_plan(args);
  q.ordering = ordering;
  q.optimizer = optimizer;
  q.impl = schedule::parse_impl_option(impl);
  return parallel::plan_schedule(trace, q, parallel::cluster_preset(cluster));
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
  options_.with_plan = options_.with_plan || grid.has_plan_axis();
  if (options_.with_plan) {
    if (options_.cluster.empty())
      throw InputError("--cluster", "",
                       fmt::format("a cluster preset ({}) with a parallel plan or parallel.* paths",
                                   parallel::cluster_presets()));
    parallel::cluster_preset(options_.cluster);
    for (const std::string& name : study.orderings())
      if (name == "mixed")
        throw InputError("--ordering", "",
                         "eager, backward-fused or forward-fused with a parallel plan, got mixed");
  }
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
    if (options_.with_plan)
      for (const auto& entry : schedules_) {
        const ScheduleKey& k = entry.first;
        if (std::get<0>(k) == point.trace && std::get<1>(k) == point.batch.value_or(-1))
          plan_layout(options_.plan, point, traces_.at(trace_key(point)),
                      *schedule::parse_ordering(std::get<2>(k)), std::get<3>(k), options_.impl,
                      options_.cluster);
      }
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
  if (options_.with_plan) return run_plan(point, trace, machine, ordering, optimizer);
  exec::SimOptions so;
  so.fidelity = exec::parse_fidelity_name(options_.fidelity);
  so.warmup_steps = options_.warmup_steps;
  so.dram_curves = dram_curves_;
  const auto key = ScheduleKey{point.trace, point.batch.value_or(-1), ordering, optimizer};
  if (auto c = op_compute_.find(key); c != op_compute_.end())
    return exec::simulate_profiled(trace, schedule, machine, so, *compute_, c->second).result;
  return exec::simulate(trace, schedule, machine, so);
}

exec::RunResult SimEvaluator::run_plan(const PointSetup& point, const workload::Trace& trace,
                                       const exec::Machine& machine, const std::string& ordering,
                                       const std::string& optimizer) const {
  const schedule::Ordering o = *schedule::parse_ordering(ordering);
  const parallel::ParallelSchedule layout =
      plan_layout(options_.plan, point, trace, o, optimizer, options_.impl, options_.cluster);
  exec::ClusterStepRequest q;
  q.plan = layout.plan;
  q.cluster = parallel::cluster_preset(options_.cluster);
  q.ordering = o;
  q.optimizer = optimizer;
  q.impl = schedule::parse_impl_option(options_.impl);
  q.memory.mixed_precision = true;  // Megatron-LM's recipe, as the memory check has it
  q.sim.fidelity = exec::parse_fidelity_name(options_.fidelity);
  q.sim.dram_curves = dram_curves_;
  // The single-device layer times depend on the trace, the machine (the point's --set
  // values), the ordering and the optimizer, the rest being the sweep's own options; not on
  // the parallel.* values: points that differ only in those share them.
  const std::string key = fmt::format("{}\n{}\n{}{}\n{}", point.trace, point.batch.value_or(-1),
                                      machine_key(point), ordering, optimizer);
  const auto times =
      layer_times_.get(key, [&] { return exec::single_device_layer_times(trace, machine, q); });
  const parallel::StepTiming timing = exec::time_cluster_step(trace, *times, q);
  exec::RunResult r;
  r.executor = "sim";
  r.ordering = ordering;
  r.optimizer = optimizer;
  r.impl = options_.impl;
  r.execution = "layers";
  exec::set_step_times(r, {timing.step_time});
  r.peak_memory_bytes = layout.memory.max_total;  // the fullest GPU's estimate
  return r;
}

}  // namespace fusim::sweep
