// `fusim trace show|validate` (and `gen`, added by trace_gen_cmd.cpp): inspect and check
// layer traces (traces/SCHEMA.md).
#include <fmt/format.h>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "workload/cost.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

using workload::LayerCost;
using workload::Trace;

struct ShowOptions {
  std::string file;
  ZooBatch batch;  // --batch of a zoo FILE
  OutputFormat format;
};

struct ValidateOptions {
  std::vector<std::string> files;
};

void run_show(const ShowOptions& opt) {
  Trace trace = load_trace_option(opt.file, opt.batch);
  Table table(
      {"id", "name", "op", "output", "params", "activation_bytes", "flops_fwd", "flops_bwd"});
  nlohmann::json layers = nlohmann::json::array();
  LayerCost total;
  for (const auto& layer : trace.layers) {
    LayerCost c = workload::layer_cost(trace, layer);
    total.param_elements += c.param_elements;
    total.output_bytes += c.output_bytes;
    total.flops_fwd += c.flops_fwd;
    total.flops_bwd_input += c.flops_bwd();
    table.add_row({std::to_string(layer.id), layer.name, std::string(workload::to_string(layer.op)),
                   workload::to_string(layer.output), std::to_string(c.param_elements),
                   std::to_string(c.output_bytes), std::to_string(c.flops_fwd),
                   std::to_string(c.flops_bwd())});
    layers.push_back({{"id", layer.id},
                      {"name", layer.name},
                      {"op", workload::to_string(layer.op)},
                      {"output", layer.output},  // the shape, as in the trace file
                      {"params", c.param_elements},
                      {"activation_bytes", c.output_bytes},
                      {"flops_fwd", c.flops_fwd},
                      {"flops_bwd", c.flops_bwd()}});
  }
  table.add_row({"total", fmt::format("{} layers", trace.layers.size()), "", "",
                 std::to_string(total.param_elements), std::to_string(total.output_bytes),
                 std::to_string(total.flops_fwd), std::to_string(total.flops_bwd_input)});
  nlohmann::json json = {{"model", trace.model},
                         {"batch", trace.batch},
                         {"layers", layers},
                         {"totals",
                          {{"layers", trace.layers.size()},
                           {"params", total.param_elements},
                           {"activation_bytes", total.output_bytes},
                           {"flops_fwd", total.flops_fwd},
                           {"flops_bwd", total.flops_bwd_input}}}};
  // --csv: the layers (the totals are their sums).
  print_result(
      opt.format, json, table,
      {{json["layers"],
        {"id", "name", "op", "output", "params", "activation_bytes", "flops_fwd", "flops_bwd"}}});
}

// Every file is checked even after a failure; exit code 2 if any failed.
void run_validate(const ValidateOptions& opt) {
  int failed = 0;
  for (const auto& file : opt.files) {
    try {
      Trace trace = workload::load_trace(file);
      std::fputs(fmt::format("{}: ok ({} layers, {} params)\n", file, trace.layers.size(),
                             trace.param_count())
                     .c_str(),
                 stdout);
    } catch (const InputError& e) {
      if (opt.files.size() == 1) throw;  // one file: its error is the one line
      // On stderr, one line each, like every error; the ok lines stay on stdout.
      ++failed;
      std::fflush(stdout);
      std::fputs(fmt::format("fusim: {}\n", e.what()).c_str(), stderr);
    }
  }
  std::fflush(stdout);
  if (failed > 0)
    throw InputError(fmt::format("{} of {} trace{} failed validation", failed, opt.files.size(),
                                 opt.files.size() == 1 ? "" : "s"));
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto* trace = app.add_subcommand(
      "trace",
      "Inspect, check and generate layer traces (format: traces/SCHEMA.md).\n"
      "Example:\n"
      "  fusim trace gen resnet50 --batch 16 -o r50.json && fusim trace show r50.json");
  trace->require_subcommand(1);

  auto show_opt = std::make_shared<ShowOptions>();
  auto* show = trace->add_subcommand(
      "show",
      "Print one row per layer (in topological order): id, name, op, output shape, params\n"
      "(elements), activation bytes (the output tensor), FLOPs forward and backward\n"
      "(input + weight gradients; conventions in sim/workload/cost.h), and a totals row.\n"
      "The trace is fully validated first.\n"
      "Example:\n"
      "  fusim trace show traces/resnet18.json --csv");
  show->add_option("FILE", show_opt->file, kTraceOptionHelp)->required();
  add_batch_option(show, show_opt->batch);
  add_output_flags(show, show_opt->format);
  show->callback([show_opt] { run_show(*show_opt); });

  auto validate_opt = std::make_shared<ValidateOptions>();
  auto* validate = trace->add_subcommand(
      "validate",
      "Check traces completely (schema, shapes along every edge, acyclic and connected\n"
      "layer graph with the loss as the only sink, params matching their op). Prints\n"
      "\"FILE: ok (N layers, P params)\" on stdout or the file's first error with its JSON\n"
      "path on stderr; exits with code 2 if any file failed.\n"
      "Example:\n"
      "  fusim trace validate traces/*.json");
  validate->add_option("FILE", validate_opt->files, "Trace JSON files")->required();
  validate->callback([validate_opt] { run_validate(*validate_opt); });

  add_trace_gen_command(*trace);
}

}  // namespace fusim::cli
