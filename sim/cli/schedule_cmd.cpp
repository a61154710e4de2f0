// fusim schedule: one ordering's op list (issue order, streams, dependencies) and its
// peak memory split by category, checked by the dependency checker.
#include <fmt/format.h>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "cli/plan_options.h"
#include "cli/plan_schedule.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "core/units.h"
#include "schedule/optimizer.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {
using namespace fusim::schedule;

struct ScheduleCmdOptions {
  std::string trace, ordering = "all", optimizer = "adam", impl = "foreach", mixed;
  ZooBatch batch;  // --batch of a zoo --trace
  int steps = 0;
  bool gpu_streams = false;
  // Issue 20: the memory model's precision, sharding, grad buffer and attention.
  bool mixed_precision = false;
  int optimizer_shards = 1;
  std::string grad_buffer = "per-tensor", attention = "flash";
  // Issue 19: a parallel plan on a cluster (cli/plan_options.h).
  parallel::PlanArgs plan;
  std::string cluster;
  bool with_plan = false, microbatch_given = false;
  OutputFormat format;
};

nlohmann::json peak_json(const MemoryPeak& p) {
  return {{"weights", p.weights},
          {"grads", p.grads},
          {"optimizer_state", p.optimizer_state},
          {"activations", p.activations},
          {"temporaries", p.temporaries},
          {"inputs", p.inputs}};
}

// The allocator model's tensors, for scripts/plot_memory.py: live from alloc_op to free_op
// inclusive (op indices in issue order, -1 = before the first / to the end).
nlohmann::json tensors_json(const Schedule& s) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : s.tensors)
    tensors.push_back({{"id", t.id},
                       {"name", t.name},
                       {"category", std::string(to_string(t.category))},
                       {"bytes", t.bytes},
                       {"alloc_bytes", t.alloc_bytes},
                       {"step", t.step},
                       {"alloc_op", t.alloc_op},
                       {"free_op", t.free_op}});
  return tensors;
}

// One schedule as JSON (the tensors for scripts/plot_memory.py) and as tables.
nlohmann::json schedule_json(const workload::Trace& trace, const Schedule& s) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : s.ops)
    ops.push_back({{"id", op.id},
                   {"kind", std::string(to_string(op.kind))},
                   {"layer", trace.layers[std::size_t(op.layer)].name},
                   {"step", op.step},
                   {"stream", op.stream},
                   {"deps", op.deps},
                   {"kernels", op.kernels},
                   {"passes", op.passes.size()},
                   {"flops", op.flops}});
  return {{"ordering", std::string(to_string(s.ordering))},
          {"optimizer", s.optimizer},
          {"impl", std::string(to_string(s.impl))},
          {"steps", s.steps},
          {"ops", ops},
          {"tensors", tensors_json(s)},
          {"peak_memory_bytes", s.peak.total},
          {"peak_by_category", peak_json(s.peak)},
          {"peak_reserved_bytes", s.peak.reserved},
          {"max_grad_bytes", s.peak.max_grads},
          {"grads_at_step_boundary_bytes", s.peak.grads_at_step_boundary},
          {"checker", "ok"}};
}

// The op table; with `ordering_column` (several orderings in one CSV) each row names it.
void add_op_rows(Table& table, const workload::Trace& trace, const Schedule& s,
                 bool ordering_column) {
  for (const auto& op : s.ops) {
    std::vector<std::string> row{std::to_string(op.id),
                                 std::string(to_string(op.kind)),
                                 trace.layers[std::size_t(op.layer)].name,
                                 std::to_string(op.step),
                                 std::to_string(op.stream),
                                 fmt::format("{}", fmt::join(op.deps, ",")),
                                 std::to_string(op.kernels),
                                 std::to_string(op.passes.size()),
                                 fmt::format("{:.3f}", double(op.flops) / 1e6)};
    if (ordering_column) row.insert(row.begin(), std::string(to_string(s.ordering)));
    table.add_row(std::move(row));
  }
}

std::vector<std::string> op_columns(bool ordering_column) {
  std::vector<std::string> c{"id",   "kind",    "layer",  "step", "stream",
                             "deps", "kernels", "passes", "MFLOP"};
  if (ordering_column) c.insert(c.begin(), "ordering");
  return c;
}

void print_text(const workload::Trace& trace, const Schedule& s) {
  Table table(op_columns(false));
  add_op_rows(table, trace, s, false);
  Table memory({"category", "bytes at peak", "size"});
  auto row = [&](const char* name, std::int64_t bytes) {
    memory.add_row({name, std::to_string(bytes), format_bytes(bytes)});
  };
  row("weights", s.peak.weights);
  row("grads", s.peak.grads);
  row("optimizer_state", s.peak.optimizer_state);
  row("activations", s.peak.activations);
  row("temporaries", s.peak.temporaries);
  row("inputs", s.peak.inputs);
  row("total (peak allocated)", s.peak.total);
  row("reserved (segments)", s.peak.reserved);
  row("max grads live", s.peak.max_grads);
  row("grads live at step boundary", s.peak.grads_at_step_boundary);
  fmt::print("{} x {} ({}), {} step{}, {} ops; checker: ok\n\n{}\nPeak memory\n{}",
             to_string(s.ordering), s.optimizer, to_string(s.impl), s.steps,
             s.steps == 1 ? "" : "s", s.ops.size(), table.to_text(), memory.to_text());
}

void run_schedule(const ScheduleCmdOptions& opt) {
  const auto orderings = parse_orderings(opt.ordering);
  auto trace = load_trace_option(opt.trace, opt.batch);
  ScheduleRequest request;
  request.optimizer = opt.optimizer;
  request.impl = parse_impl_option(opt.impl);
  request.steps = opt.steps;
  request.mixed_file = opt.mixed;
  request.gpu_streams = opt.gpu_streams;
  request.device = opt.gpu_streams ? DeviceKind::Gpu : DeviceKind::Cpu;
  request.memory.mixed_precision = opt.mixed_precision;
  request.memory.optimizer_shards = opt.optimizer_shards;
  auto grad_buffer = parse_grad_buffer(opt.grad_buffer);
  if (!grad_buffer)
    throw InputError(fmt::format("--grad-buffer: expected per-tensor or persistent, got \"{}\"",
                                 opt.grad_buffer));
  request.memory.grad_buffer = *grad_buffer;
  auto attention = parse_attention_memory(opt.attention);
  if (!attention)
    throw InputError(
        fmt::format("--attention: expected flash or materialized, got \"{}\"", opt.attention));
  request.memory.attention = *attention;
  if (opt.with_plan) {
    if (!opt.mixed.empty()) throw InputError("--mixed: expected no --mixed with a parallel plan");
    parallel::PlanArgs args = opt.plan;
    if (!opt.microbatch_given) args.microbatch = trace.batch;  // the trace is one microbatch
    parallel::MemoryQuery q;
    q.plan = parallel::parse_plan(args);
    q.optimizer = opt.optimizer;
    q.impl = request.impl;
    q.mixed_precision = opt.mixed_precision;
    q.attention = *attention;
    q.grad_buffer = *grad_buffer;
    if (q.plan.microbatch != trace.batch)
      throw InputError(fmt::format("--microbatch: expected the batch {} of {}, got {}", trace.batch,
                                   opt.trace, q.plan.microbatch));
    print_plan_schedules(trace, orderings, q, opt.cluster, opt.format);
    return;
  }
  const std::vector<Schedule> schedules = build_schedules(trace, orderings, request);
  for (const auto& s : schedules) {
    auto problems = check_schedule(trace, s);
    // A built schedule the checker rejects is a bug in fusim, not bad input.
    FUSIM_ASSERT(problems.empty(), "the checker rejects the built schedule: " + problems.front());
  }
  // One ordering: the object (and table) of that schedule; several: a JSON array of them,
  // and one table whose rows name their ordering.
  const bool several = schedules.size() > 1;
  nlohmann::json json = nlohmann::json::array();
  Table table(op_columns(several));
  // --csv, whatever the number of orderings: the ops (each with its ordering), then a block
  // of each schedule's peak memory (the JSON's scalars and peak_by_category).
  CsvRecords ops{
      nlohmann::json::array(),
      {"ordering", "id", "kind", "layer", "step", "stream", "deps", "kernels", "passes", "flops"}};
  CsvRecords peaks{nlohmann::json::array(),
                   {"ordering", "optimizer", "impl", "steps", "peak_memory_bytes"}};
  for (const char* c :
       {"weights", "grads", "optimizer_state", "activations", "temporaries", "inputs"})
    peaks.columns.push_back(std::string("peak_by_category.") + c);
  for (const char* c : {"peak_reserved_bytes", "max_grad_bytes", "grads_at_step_boundary_bytes"})
    peaks.columns.emplace_back(c);
  for (const auto& s : schedules) {
    json.push_back(schedule_json(trace, s));
    add_op_rows(table, trace, s, several);
    for (nlohmann::json op : json.back()["ops"]) {
      op["ordering"] = json.back()["ordering"];
      ops.rows.push_back(std::move(op));
    }
    peaks.rows.push_back(json.back());
  }
  if (opt.format.json || opt.format.csv) {
    print_result(opt.format, several ? json : json.front(), table, {ops, peaks});
    return;
  }
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    if (i > 0) fmt::print("\n");
    print_text(trace, schedules[i]);
  }
}
}  // namespace

void add_schedule_command(CLI::App& app) {
  auto opt = std::make_shared<ScheduleCmdOptions>();
  auto* cmd = app.add_subcommand(
      "schedule",
      "Build each ordering of a training step as an op DAG, prove it with the dependency\n"
      "checker, and print its ops in issue order (kind, layer, step, stream, deps, kernels,\n"
      "memory passes, FLOPs) and its peak memory split by category.\n"
      "Ops: F forward, L loss (forward + seed of backward), Bx input gradient, Bw weight\n"
      "gradient, U optimizer update of one layer's params. Orderings, for layers 1..3:\n"
      "  eager           F1 F2 F3 L | Bx3 Bw3 Bx2 Bw2 Bw1 | U1 U2 U3\n"
      "  backward-fused  F1 F2 F3 L | Bx3 Bw3 U3 Bx2 Bw2 U2 Bw1 U1   (--gpu-streams: U on stream "
      "1)\n"
      "  forward-fused   F1 F2 F3 L | Bx3..Bw1 || U1 F1 U2 F2 U3 F3 L | ... || flush U1 U2 U3\n"
      "  mixed           each layer eager|backward|forward, from --mixed FILE\n"
      "Mixed file: {\"layers\": {\"fc1\": \"forward\", \"fc2\": \"backward\"}, \"default\": "
      "\"eager\"}\n"
      "Memory: PyTorch caching-allocator model (512 B rounding, best fit, block reuse);\n"
      "grads are freed after their U (set_to_none), so backward-fused frees each grad at\n"
      "once and forward-fused keeps the grads of step t alive into step t+1.\n"
      "Example:\n"
      "  fusim schedule --trace traces/examples/mlp_tiny.json --ordering backward-fused");
  cmd->add_option("--trace", opt->trace, kTraceOptionHelp)->required();
  add_batch_option(cmd, opt->batch);
  cmd->add_option("--ordering", opt->ordering,
                  "all | comma-separated eager,backward-fused,forward-fused,mixed (mixed: with "
                  "--mixed); several: one schedule after the other (--json: an array)")
      ->capture_default_str();
  cmd->add_option("--optimizer", opt->optimizer, "One of: " + optimizer_names())
      ->capture_default_str();
  cmd->add_option("--impl", opt->impl,
                  "loop (one kernel per op per tensor) | foreach (one kernel per op per group on\n"
                  "a GPU, per tensor on a CPU) | fused (one pass per tensor per stage; one kernel\n"
                  "per stage on a GPU, per tensor on a CPU); docs/optimizer_update.md")
      ->capture_default_str();
  cmd->add_option("--steps", opt->steps,
                  "Training steps to unroll (default 1; 2 when an update is forward-fused;\n"
                  "forward-fused needs >= 2)")
      ->check(int_range(1, 1000));
  cmd->add_option("--mixed", opt->mixed, "Per-layer ordering JSON file for --ordering mixed");
  cmd->add_flag("--gpu-streams", opt->gpu_streams,
                "A GPU schedule: backward-fused updates on stream 1 (U_i overlaps B_{i-1}),\n"
                "optimizer kernels counted as GPU launches");
  // Issue 20: the memory model (schedule/memory_options.h).
  cmd->add_flag("--mixed-precision", opt->mixed_precision,
                "Megatron mixed precision for a 16-bit trace: fp32 main grads, fp32 master\n"
                "weights and optimizer state");
  cmd->add_option("--optimizer-shards", opt->optimizer_shards,
                  "Distributed optimizer: master weights and state split over N ranks (this\n"
                  "rank's shard)")
      ->capture_default_str();
  cmd->add_option("--grad-buffer", opt->grad_buffer,
                  "per-tensor (freed after U) | persistent (Megatron's contiguous buffer)")
      ->capture_default_str();
  cmd->add_option("--attention", opt->attention,
                  "flash (logsumexp saved) | materialized (softmax, dropout mask and copy)")
      ->capture_default_str();
  // Issue 19: with a plan, each pipeline stage's schedule on a cluster instead of the ops.
  add_plan_options(cmd, opt->plan);
  add_cluster_options(cmd, opt->plan, opt->cluster);
  add_output_flags(cmd, opt->format);
  cmd->callback([cmd, opt] {
    opt->with_plan = plan_requested(*cmd);
    opt->microbatch_given = cmd->count("--microbatch") > 0;
    run_schedule(*opt);
  });
}

}  // namespace fusim::cli
