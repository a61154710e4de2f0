// fusim run: executes the schedules' op lists on real hardware with libtorch (CPU here,
// CUDA against a CUDA libtorch), orderings interleaved in blocks, and reports each like
// `fusim simulate` does, plus each ordering's speedup over eager with a 95% confidence
// interval, paired by sampling round (backend/step_stats.h), and whether it is outside the noise.
// Built only with libtorch (FUSIM_WITH_TORCH), into fusim-backend (sim/cli/backend_main.cpp).
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>

#include "backend/executor.h"
#include "backend/optimizer_config.h"
#include "backend/run_plan.h"
#include "cli/backend_cmd_options.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/run_report_output.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "core/output_file.h"
#include "exec/run_result_json.h"
#include "exec/timeline.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct RunCmdOptions {
  std::string trace, timeline;
  ZooBatch batch;  // --batch of a zoo --trace
  BackendCmdOptions backend;
  bool per_op = true;  // as `fusim simulate`: the JSON results have the same keys
  OutputFormat format;
};

// The measured ops as a Chrome/Perfetto timeline, in the shape of `fusim simulate
// --timeline` (exec/timeline.h): one process per ordering, one track per stream.
void write_timeline(const std::string& path, const std::string& trace_file,
                    const workload::Trace& trace, const std::vector<schedule::Schedule>& schedules,
                    const backend::RunReport& report, const std::string& device) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t k = 0; k < report.results.size(); ++k) {
    const auto& r = report.results[k];
    exec::append_timeline(events, static_cast<int>(k) + 1, trace,
                          {exec::timeline_process_name(r), &r, &schedules[k], nullptr});
  }
  write_file_atomically(
      path,
      exec::timeline_document(std::move(events), "fusim run", device, trace_file).dump() + "\n",
      "--timeline");
}

void run_run(RunCmdOptions opt) {
  auto& be = opt.backend;
  check_output_path(opt.timeline, "--timeline");  // before any work
  const auto plan = resolve_backend_options(be);
  const auto trace = load_trace_option(opt.trace, opt.batch);
  const auto schedules = backend::build_run_schedules(trace, plan.orderings, be.optimizer,
                                                      plan.impl, be.run, be.mixed);
  be.run.progress = true;
  const auto report = backend::run_schedules(trace, schedules, plan.config, be.run);
  if (!opt.timeline.empty())
    write_timeline(opt.timeline, opt.trace, trace, schedules, report, be.device);

  Table table({"ordering", "execution", "optimizer", "impl", "median ms", "p25 ms", "p75 ms",
               "IQR %", "steps", "speedup", "95% CI", "verdict"});
  nlohmann::json results = nlohmann::json::array(), speedups = nlohmann::json::array();
  for (std::size_t k = 0; k < report.results.size(); ++k) {
    const auto& r = report.results[k];
    const auto& q = report.quality[k];
    nlohmann::json j = exec::to_json(r, opt.per_op);
    j["measurement"] = quality_json(q);
    // As in `fusim simulate --json`: the measured medians' ratio; null without eager.
    // The CI too, one value per key (the CSV's columns), null without eager.
    j["speedup_vs_eager"] = nullptr;
    j["speedup_ci_low"] = nullptr;
    j["speedup_ci_high"] = nullptr;
    j["speedup_outside_noise"] = nullptr;
    std::string speedup = "-", ci = "-", verdict = "-";
    const int base = report.speedups.empty() ? -1 : report.baselines[k];
    if (base >= 0) {
      const auto& s = report.speedups[k];
      j["speedup_vs_eager"] = s.speedup;
      j["speedup_ci_low"] = s.low;
      j["speedup_ci_high"] = s.high;
      j["speedup_outside_noise"] = s.outside_noise();
      speedup = fmt::format("{:.3f}", s.speedup);
      ci = fmt::format("[{:.3f}, {:.3f}]", s.low, s.high);
      verdict = base == int(k) ? "baseline" : backend::speedup_verdict(s);
      speedups.push_back({{"ordering", r.ordering},
                          {"execution", r.execution},
                          {"speedup", s.speedup},
                          {"ci_low", s.low},
                          {"ci_high", s.high},
                          {"ci_half_width_points", s.half_width_points()},
                          {"outside_noise", s.outside_noise()}});
    }
    results.push_back(std::move(j));
    table.add_row({r.ordering, r.execution, r.optimizer, r.impl,
                   fmt::format("{:.3f}", to_ms(r.step_time)),
                   fmt::format("{:.3f}", to_ms(r.step_time_p25)),
                   fmt::format("{:.3f}", to_ms(r.step_time_p75)),
                   fmt::format("{:.1f}", 100.0 * double(r.step_time_p75 - r.step_time_p25) /
                                             double(r.step_time)),
                   q.steps_dropped > 0 ? fmt::format("{} of {}", r.steps_measured, q.steps_run)
                                       : fmt::format("{}", r.steps_measured),
                   speedup, ci, verdict});
  }
  nlohmann::json json{{"trace", opt.trace},
                      {"device", be.device},
                      {"conditions", conditions_json(report, be.run)},
                      {"results", results},
                      {"notes", report.notes}};
  if (!speedups.empty()) json["speedups"] = speedups;
  CsvRecords csv{json["results"], exec::csv_columns(report.results.front(),
                                                    {"speedup_vs_eager", "speedup_ci_low",
                                                     "speedup_ci_high", "speedup_outside_noise"})};
  for (const char* q : {"steps_run", "steps_dropped", "cpu_wall_median", "run_queue_wait_median",
                        "minor_faults_median"})
    csv.columns.push_back(std::string("measurement.") + q);
  print_result(opt.format, json, table, {csv});
  print_notes(opt.format, report);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunCmdOptions>();
  auto* cmd = app.add_subcommand("run", kRunDescription);
  cmd->add_option("--trace", opt->trace, kTraceOptionHelp)->required();
  add_batch_option(cmd, opt->batch);
  add_backend_options(
      cmd, opt->backend,
      {"sgd | momentum | nesterov | adam | adamw | adagrad | rmsprop | lamb "
       "(torch defaults; lamb: timm's)",
       "Optimizer implementation: loop | foreach | fused", "Measured steps per ordering (>= 2)",
       "Measured steps of one ordering before switching to the next",
       "Intra-op threads (0, one meaning everywhere: the threads the prediction assumes, the "
       "--machine model's threads_per_op where the command has a --machine, else "
       "libtorch's default)",
       "layers | graph | both (= layers,graph): how the step is driven (layers: each op its "
       "own call, as simulated; graph: as a PyTorch user's loop)"});
  cmd->add_option("--seed", opt->backend.run.seed, "Seed of weights, inputs and dropout masks")
      ->capture_default_str();
  cmd->add_option("--timeline", opt->timeline,
                  "Write the measured ops as a Chrome/Perfetto trace-event JSON file");
  cmd->add_flag("--per-op", opt->per_op,
                "Include every measured op's timing in --json (the default, as in simulate)");
  cmd->add_flag("!--no-per-op", opt->per_op, "Leave the per-op list out of --json");
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_run(*opt); });
}

}  // namespace fusim::cli

#endif  // FUSIM_WITH_TORCH
