// `fusim sweep`: what-if grids over machine fields and batch sizes, on threads and MPI ranks.
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "cli/plan_options.h"
#include "cli/profile_option.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/table.h"
#include "networks/networks.h"
#include "schedule/request.h"
#include "sweep/result_file.h"
#include "sweep/run_study.h"
#include "sweep/sim_evaluator.h"
#include "sweep/study.h"

namespace fusim::cli {
namespace {

struct SweepCommandOptions {
  std::vector<std::string> traces, sets, orderings{"all"}, optimizers{"adam"};
  sweep::SimSweepOptions sim;
  int jobs = 0;
  std::string output;
  bool resume = false, quiet = false;
  OutputFormat format;
};

void run_sweep(const SweepCommandOptions& o) {
  if (o.resume && o.output.empty())
    throw InputError("--resume", "", "-o FILE too (resuming continues a results file)");
  if (o.jobs < 0) throw InputError("--jobs", "", fmt::format("a count >= 1, got {}", o.jobs));
  std::vector<sweep::Axis> axes;
  for (const std::string& spec : o.sets) axes.push_back(sweep::parse_axis(spec));
  // --ordering in the grammar of every command (schedule/request.h); repeated options join.
  std::string orderings;
  for (const auto& part : o.orderings) orderings += (orderings.empty() ? "" : ",") + part;
  sweep::Study study(sweep::Grid(o.traces, std::move(axes)),
                     schedule::ordering_names(schedule::parse_orderings(orderings)), o.optimizers);
  if (!o.output.empty()) {  // a bad name or folder fails before work
    sweep::format_for_path(o.output);
    check_output_path(o.output, "-o");
  }

  // Every trace, schedule and grid point's machine is checked before the first simulation.
  sweep::SimEvaluator evaluator(study, o.sim);
  study.check(evaluator, !o.quiet);
  study.set_cache_levels(evaluator.cache_levels());

  sweep::RunOptions run;
  run.jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run.progress = !o.quiet;
  Table table(study.columns());
  nlohmann::json rows = nlohmann::json::array();
  auto on_rows = [&](const sweep::UnitRows& unit) {
    if (!o.output.empty()) return;
    for (const sweep::Cells& cells : unit) {
      std::vector<std::string> text;
      nlohmann::ordered_json object;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        text.push_back(cells[i].is_null() ? "" : sweep::value_text(cells[i]));
        object[study.columns()[i]] = cells[i];
      }
      table.add_row(std::move(text));
      rows.push_back(nlohmann::json::parse(object.dump()));
    }
  };
  auto start = std::chrono::steady_clock::now();
  sweep::SweepSummary summary =
      sweep::run_study(study, evaluator, {o.output, o.resume}, run, on_rows);
  if (!summary.writes_output) return;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.quiet)
    std::fprintf(stderr,
                 "sweep: %zu points x %zu optimizer(s) x %zu ordering(s) = %zu rows%s in %.1f s "
                 "(%zu rank(s) x %d thread(s))\n",
                 study.grid().size(), study.optimizers().size(), study.orderings().size(),
                 study.units() * study.rows_per_unit(),
                 summary.units_resumed
                     ? fmt::format(" ({} units resumed)", summary.units_resumed).c_str()
                     : "",
                 seconds, summary.ranks, run.jobs);
  if (o.output.empty()) print_result(o.format, rows, table, {{rows, study.columns()}});
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepCommandOptions>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "What-if grid: simulate every combination of --set values, for each ordering and\n"
      "optimizer, and write one row per grid point x optimizer x ordering (long format):\n"
      "  trace, each swept path (sizes in bytes), ordering, optimizer, step_time_ms,\n"
      "  speedup_vs_eager (eager at the same point and optimizer), dram_bytes (per step),\n"
      "  llc_hit_rate, peak_memory_bytes, then hit_rate.<level> for each cache level of the\n"
      "  machine (hit_rate.L1, hit_rate.L2, ...; all instances of a level together).\n"
      "Every point's machine is built and checked before any simulation starts. Points run\n"
      "on --jobs threads and, under mpirun/srun (when built with MPI), over ranks with rank 0\n"
      "writing; the output is byte-identical whatever the threads and ranks. -o files are\n"
      "written as units finish, in grid order; after an interruption, --resume keeps the\n"
      "finished units and computes the rest.\n"
      "Example:\n"
      "  fusim sweep --trace resnet50 --machine h100-sxm5 --optimizer adam \\\n"
      "      --set caches.L2.size=12MiB,25MiB,50MiB,100MiB --set dram.channels=40,80 \\\n"
      "      --jobs 2 -o l2.csv");
  cmd->add_option("--trace", o->traces,
                  "Trace JSON file, or a zoo network (resnet50, bert-base, ...) generated at\n"
                  "--batch or at each swept batch= value; repeatable (an outer grid axis)")
      ->required();
  cmd->add_option("--machine", o->sim.machine,
                  "Machine preset (models/machines) or machine JSON file")
      ->required();
  cmd->add_option(
      "--set", o->sets,
      "PATH=V1,V2,...: a machine field by dotted path, cache levels by name\n"
      "(caches.LLC.size=8MiB,32MiB  caches.L2.assoc=8,16  dram.channels=1,2,4,8\n"
      "dram.preset=ddr4-3200,ddr5-5600,hbm3  dram.scheduler=fcfs,frfcfs,stream-aware),\n"
      "or batch=16,32,64 for zoo networks, or parallel.tp=1,2,4 (parallel.pp, .dp,\n"
      ".cp, .global_batch, .pipeline_schedule, ...: a plan on --cluster, the\n"
      "multi-device step). Sizes take KiB/MiB/GiB. Repeatable; the\n"
      "grid is the cross product, the last --set varying fastest");
  cmd->add_option("--ordering", o->orderings,
                  "all | comma-separated eager,backward-fused,forward-fused,mixed (mixed: with "
                  "--mixed); eager is always simulated, the speedup baseline")
      ->capture_default_str();
  cmd->add_option("--mixed", o->sim.mixed, "Per-layer ordering JSON for --ordering mixed");
  cmd->add_option("--profile", o->sim.profile, kProfileOptionHelp)
      ->check(existing_file("a profile JSON file (fusim profile -o)"));
  cmd->add_option("--optimizer", o->optimizers, "Comma list of optimizers (sgd, adam, adamw, ...)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--impl", o->sim.impl, "Optimizer implementation: loop | foreach | fused")
      ->capture_default_str();
  cmd->add_option("--fidelity", o->sim.fidelity,
                  "tensor (range residency and DRAM curves, no lines: the default, for\n"
                  "studies) | block (4 KiB units through the caches and the DRAM controller) |\n"
                  "line (every cache line, the reference)")
      ->check(CLI::IsMember({"block", "line", "tensor"}))
      ->capture_default_str();
  cmd->add_option("--steps", o->sim.steps,
                  "Training steps simulated per run: --warmup steps, the measured step(s), and\n"
                  "a last one (forward-fused flushes its pending updates there)")
      ->capture_default_str()
      ->check(int_range(1, 1000));
  cmd->add_option("--warmup", o->sim.warmup_steps, "Leading steps excluded from the measurement")
      ->capture_default_str()
      ->check(int_range(0, 100));
  cmd->add_option("--batch", o->sim.batch, "Batch size of zoo networks when batch= is not swept")
      ->capture_default_str()
      ->check(positive_int());
  cmd->add_option("--jobs,-j", o->jobs,
                  "Worker threads per process (default: all hardware threads)");
  cmd->add_option(
      "-o,--output", o->output,
      "results.csv or results.json, written incrementally (default: a table on stdout)");
  cmd->add_flag("--resume", o->resume, "Continue an interrupted -o file of the same sweep");
  cmd->add_flag("--quiet,-q", o->quiet, "No progress bar or summary on stderr");
  // Issue 19: a parallel plan on a cluster; --set parallel.tp=1,2,4 (parallel.pp, .dp, .cp,
  // .global_batch, .pipeline_schedule, .virtual_stages, .recompute, .sequence_parallel,
  // .distributed_optimizer, .bucket_size) sweeps its fields, each point a multi-device step
  // with --machine as the GPU.
  add_plan_options(cmd, o->sim.plan);
  add_cluster_options(cmd, o->sim.plan, o->sim.cluster);
  add_output_flags(cmd, o->format);
  cmd->callback([o, cmd] {
    o->sim.with_plan = plan_requested(*cmd);
    // --batch sizes the zoo networks only: on trace files alone it was ignored silently.
    const auto& zoo = networks::network_names();
    if (cmd->count("--batch") && std::none_of(o->traces.begin(), o->traces.end(), [&](auto& t) {
          return std::find(zoo.begin(), zoo.end(), t) != zoo.end();
        }))
      warn_no_effect("--batch", "on trace files (it sizes the zoo networks: --trace resnet50)");
    run_sweep(*o);
  });
}

}  // namespace fusim::cli
