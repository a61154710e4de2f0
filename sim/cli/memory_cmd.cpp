// fusim memory: per-GPU memory of a training step under a parallel plan and an ordering
// (sim/parallel/stage_memory.h), or --search for the plans that fit. Wiring only.
#include <fmt/format.h>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "cli/plan_options.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "core/units.h"
#include "networks/networks.h"
#include "parallel/memory_json.h"
#include "parallel/memory_search.h"
#include "parallel/pipeline_order.h"
#include "schedule/optimizer.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {
using namespace fusim::parallel;

struct MemoryCmdOptions {
  std::string trace, model, ordering = "eager", optimizer = "adam", impl = "fused", gpu;
  std::string attention = "flash", grad_buffer, precision = "mixed", dtype;
  networks::NetworkOptions net;
  PlanArgs plan;
  bool search = false;
  int gpus = 0;
  OutputFormat format;
};

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f}", double(bytes) / double(std::int64_t{1} << 30));
}

template <typename T>
T parsed(std::optional<T> value, const char* option, const std::string& text,
         const char* expected) {
  if (!value) throw InputError(fmt::format("{}: expected {}, got \"{}\"", option, expected, text));
  return *value;
}

// --csv: the records' keys as columns (docs/output_schema.md), in their JSON order.
CsvRecords records(const nlohmann::json& rows) {
  CsvRecords csv{rows, {}};
  if (!rows.empty())
    for (const auto& [key, value] : rows.front().items()) csv.columns.push_back(key);
  return csv;
}

// Issue 20's schedules: the asynchronous ones (weight versions) are issue 19's, on `schedule`.
parallel::ParallelPlan synchronous_plan(const parallel::PlanArgs& args) {
  parallel::ParallelPlan plan = parse_plan(args);
  if (is_asynchronous(plan.schedule))
    throw InputError(fmt::format(
        "--pipeline-schedule: expected one of gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v for "
        "fusim memory, got {} (asynchronous schedules keep weight versions: fusim schedule)",
        to_string(plan.schedule)));
  return plan;
}

void run_memory(const CLI::App& cmd, MemoryCmdOptions& o) {
  if (o.trace.empty() == o.model.empty())
    throw InputError("--trace, --model: expected exactly one of them");
  if (!o.dtype.empty())
    o.net.dtype =
        parsed(workload::parse_dtype(o.dtype), "--dtype", o.dtype, "float16, bfloat16 or float32");
  // The model at a microbatch size: generated (--model), or the trace file at its own batch.
  std::optional<workload::Trace> file;
  if (!o.trace.empty()) {
    file = load_trace_option(o.trace);  // a file or a zoo name, as everywhere (trace_option.h)
    if (!cmd.count("--microbatch")) o.plan.microbatch = file->batch;
    if (o.plan.microbatch != file->batch)
      throw InputError(
          fmt::format("--microbatch: expected the batch {} of {} (regenerate it "
                      "with --batch, or use --model), got {}",
                      file->batch, o.trace, o.plan.microbatch));
  }
  auto make_trace = [&](std::int64_t b) {
    if (file) {
      if (b != file->batch)
        throw InputError(
            fmt::format("--search: a trace file has one batch ({}); use --model", file->batch));
      return *file;
    }
    networks::NetworkOptions net = o.net;
    net.batch = b;
    return networks::make_network(o.model, net);
  };
  MemoryQuery q;
  q.ordering = parsed(schedule::parse_ordering(o.ordering), "--ordering", o.ordering,
                      "eager, backward-fused or forward-fused");
  if (!schedule::find_optimizer(o.optimizer))
    throw InputError(fmt::format("--optimizer: expected one of {}, got \"{}\"",
                                 schedule::optimizer_names(), o.optimizer));
  q.optimizer = o.optimizer;
  q.impl =
      parsed(schedule::parse_optimizer_impl(o.impl), "--impl", o.impl, "loop, foreach or fused");
  q.attention = parsed(schedule::parse_attention_memory(o.attention), "--attention", o.attention,
                       "flash or materialized");
  if (!o.grad_buffer.empty())
    q.grad_buffer = parsed(schedule::parse_grad_buffer(o.grad_buffer), "--grad-buffer",
                           o.grad_buffer, "persistent or per-tensor");
  if (o.precision != "mixed" && o.precision != "pure")
    throw InputError(fmt::format("--precision: expected mixed or pure, got \"{}\"", o.precision));
  q.mixed_precision = o.precision == "mixed";
  q.gpu_memory = gpu_memory_bytes(o.gpu);

  if (!o.search && cmd.count("--gpus"))
    warn_no_effect("--gpus", "without --search (the plan's GPUs are --tp x --pp x --dp x --cp)");
  if (o.search) {
    if (o.gpus < 1) throw InputError("--gpus: expected a positive GPU count with --search");
    q.plan = synchronous_plan(o.plan);  // schedule, distributed optimizer, global batch
    SearchSpace space;
    space.gpus = o.gpus;
    space.global_batch = o.plan.global_batch;
    space.progress = true;  // stderr; a 1024-GPU search of a 70B model takes seconds
    if (!o.trace.empty()) space.microbatch = {file->batch};
    const auto results = search_plans(make_trace, q, space);
    Table table(
        {"rank", "tp", "pp", "dp", "cp", "mb", "recompute", "ordering", "max GiB", "headroom %"});
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& p = results[i].query.plan;
      table.add_row({std::to_string(i + 1), std::to_string(p.tp), std::to_string(p.pp),
                     std::to_string(p.dp), std::to_string(p.cp), std::to_string(p.microbatch),
                     std::string(to_string(p.recompute)),
                     std::string(schedule::to_string(results[i].query.ordering)),
                     gib(results[i].max_total), fmt::format("{:.1f}", 100 * results[i].headroom)});
    }
    if (o.format.json || o.format.csv) {
      const nlohmann::json doc = search_json(results, space);
      print_result(o.format, doc, table, {records(doc["fitting"])});
      return;
    }
    fmt::print("{} plans of {} GPUs fit {} GiB by the 80% rule (<= {} GiB), by headroom:\n\n{}",
               results.size(), o.gpus, gib(q.gpu_memory),
               gib(std::int64_t(kUsableFraction * double(q.gpu_memory))), table.to_text());
    return;
  }
  q.plan = synchronous_plan(o.plan);
  const workload::Trace trace = make_trace(q.plan.microbatch);
  const MemoryReport r = estimate_memory(trace, q);
  Table table({"stage", "layers", "in flight", "weights", "grads", "optimizer", "activations",
               "buffers", "total GiB"});
  for (const auto& s : r.stages)
    table.add_row({std::to_string(s.stage), std::to_string(s.layers),
                   fmt::format("{:.2f}", s.in_flight), gib(s.weights), gib(s.grads),
                   gib(s.optimizer_state), gib(s.activations), gib(s.buffers), gib(s.total)});
  if (o.format.json || o.format.csv) {
    const nlohmann::json doc = memory_json(r, q);
    print_result(o.format, doc, table, {records(doc["stages"])});
    return;
  }
  const double used = double(r.max_total) / double(r.gpu_memory);
  fmt::print(
      "{} ({} params) on {} GPUs: tp {} pp {} dp {} cp {}, {} x microbatch {}, {}, recompute "
      "{}, {}\nGiB per GPU at each stage's peak:\n\n{}\nmax {} GiB of {} GiB ({:.1f}%): {} "
      "(80% rule, Fujii et al. 2024: fits when <= {} GiB)\n",
      r.model, r.params, q.plan.gpus(), q.plan.tp, q.plan.pp, q.plan.dp, q.plan.cp,
      q.plan.microbatches(), q.plan.microbatch, to_string(q.plan.schedule),
      to_string(q.plan.recompute), schedule::to_string(q.ordering), table.to_text(),
      gib(r.max_total), gib(r.gpu_memory), 100 * used, r.fits ? "fits" : "does NOT fit",
      gib(std::int64_t(kUsableFraction * double(r.gpu_memory))));
}
}  // namespace

void add_memory_command(CLI::App& app) {
  auto opt = std::make_shared<MemoryCmdOptions>();
  auto* cmd = app.add_subcommand(
      "memory",
      "Per-GPU memory of LLM training under tensor, pipeline, data and context parallelism,\n"
      "per ordering, without simulation: for each pipeline stage the weights, gradients,\n"
      "optimizer state, activations of the microbatches the pipeline schedule holds at once\n"
      "and the buffers (temporaries, collective buffers), at the stage's peak; and the\n"
      "verdict against the GPU by the 80% rule (Fujii et al. 2024). The recipe is Megatron-\n"
      "LM's: 16-bit weights, float32 main grads in a persistent buffer, float32 master\n"
      "weights and Adam state (18 bytes/param; 6 + 12/d with --distributed-optimizer).\n"
      "backward-fused frees each layer's grads at the update fused into the last\n"
      "microbatch's backward; forward-fused at the update fused before the next step's first\n"
      "forward. --search lists the plans of --gpus GPUs that fit, by headroom.\n"
      "Example: fusim memory --model llama-3.1-70b --tp 8 --pp 4 --dp 2 --microbatch 1\n"
      "  --global-batch 64 --recompute selective --sequence-parallel --gpu h100-sxm5");
  cmd->add_option("--trace", opt->trace,
                  std::string(kTraceOptionHelp) + "; its batch is the microbatch b");
  cmd->add_option("--model", opt->model,
                  "An LLM of fusim trace gen: gpt, llama or a preset (llama-3.1-8b, "
                  "gpt3-175b, ...)");
  cmd->add_option("--layers", opt->net.layers, "--model: transformer blocks")
      ->check(positive_int());
  cmd->add_option("--hidden", opt->net.hidden, "--model: hidden size")->check(positive_int());
  cmd->add_option("--heads", opt->net.heads, "--model: attention heads")->check(positive_int());
  cmd->add_option("--kv-heads", opt->net.kv_heads, "--model: key/value heads")
      ->check(positive_int());
  cmd->add_option("--ffn", opt->net.ffn, "--model: MLP width")->check(positive_int());
  cmd->add_option("--vocab", opt->net.vocab, "--model: vocabulary")->check(positive_int());
  cmd->add_option("--seq", opt->net.seq, "--model: sequence length (default: the preset's)")
      ->check(positive_int());
  cmd->add_option("--dtype", opt->dtype, "--model: float16 | bfloat16 | float32");
  cmd->add_flag("--tied-embeddings", opt->net.tied_embeddings, "--model: tie the LM head");
  cmd->add_flag("--bidirectional", opt->net.bidirectional, "--model: masked-diffusion LM");
  add_plan_options(cmd, opt->plan);
  cmd->add_option("--ordering", opt->ordering, "eager | backward-fused | forward-fused")
      ->capture_default_str();
  cmd->add_option("--optimizer", opt->optimizer, "One of: " + schedule::optimizer_names())
      ->capture_default_str();
  cmd->add_option("--impl", opt->impl, "loop | foreach | fused (Megatron's FusedAdam)")
      ->capture_default_str();
  cmd->add_option("--gpu", opt->gpu, "GPU preset (" + gpu_memory_presets() + ") or a size")
      ->required();
  cmd->add_option("--attention", opt->attention,
                  "flash (no stored scores) | materialized (softmax, mask, dropped copy)")
      ->capture_default_str();
  cmd->add_option("--grad-buffer", opt->grad_buffer,
                  "persistent (Megatron's DDP buffer; eager's default) | per-tensor (freed\n"
                  "after the update; the fused orderings' default)");
  cmd->add_option("--precision", opt->precision,
                  "mixed (Megatron: fp32 main grads, master weights, optimizer state) | pure\n"
                  "(everything in the trace's dtype)")
      ->capture_default_str();
  cmd->add_flag("--search", opt->search, "List the plans of --gpus GPUs that fit, by headroom");
  cmd->add_option("--gpus", opt->gpus, "--search: the GPU count");
  add_output_flags(cmd, opt->format);
  cmd->callback([cmd, opt] { run_memory(*cmd, *opt); });
}

}  // namespace fusim::cli
