// fusim validate: the same orderings predicted by the simulator on a machine model and
// measured on this machine by the real backend, side by side, with the step-time error and
// both speedups over eager. The check that makes every prediction falsifiable.
// Built only with libtorch (FUSIM_WITH_TORCH), into fusim-backend (sim/cli/backend_main.cpp).
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>

#include "backend/executor.h"
#include "backend/optimizer_config.h"
#include "backend/run_plan.h"
#include "cli/backend_cmd_options.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/op_comparison_output.h"
#include "cli/output_format.h"
#include "cli/profile_option.h"
#include "cli/run_report_output.h"
#include "core/compare.h"
#include "core/error.h"
#include "exec/machine.h"
#include "exec/op_comparison.h"
#include "exec/simulate.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct ValidateCmdOptions {
  std::string trace, machine, fidelity = "block", profile;
  int sim_steps = 4;  // as simulate: forward-fused's measured step is past its first updates
  bool per_op = false, per_layer = false;
  BackendCmdOptions backend;
  OutputFormat format;
};

struct Row {
  std::string ordering, execution;
  double predicted_ms = 0, measured_ms = 0, p25_ms = 0, p75_ms = 0;
  double predicted_speedup = 0, measured_speedup = 0, ci_low = 0, ci_high = 0;
  bool outside_noise = false, has_base = false;
};

void run_validate(ValidateCmdOptions opt) {
  auto& be = opt.backend;
  const auto plan = resolve_backend_options(be);
  const auto& orderings = plan.orderings;
  const auto trace = workload::load_trace(opt.trace);
  const auto machine = exec::load_machine(opt.machine);
  if (opt.sim_steps < 2) throw InputError("--sim-steps: expected an integer >= 2");
  // The measurement uses as many threads per op as the model assumes, unless told.
  if (be.run.threads == 0 && machine.kind == compute::UnitKind::Cpu)
    be.run.threads = machine.compute.threads_per_op;
  // Both schedules of every ordering are built (the mixed file read) before any work.
  const auto schedules =
      backend::build_run_schedules(trace, orderings, be.optimizer, plan.impl, be.run, be.mixed);

  // Predicted: a short schedule per ordering (warm-up step, measured steps, flush excluded).
  exec::SimOptions sim;
  sim.fidelity = exec::parse_fidelity_name(opt.fidelity);
  sim.warmup_steps = 1;
  schedule::ScheduleRequest request;
  request.optimizer = be.optimizer;
  request.impl = plan.impl;
  request.steps = opt.sim_steps;
  request.mixed_file = be.mixed;
  request.gpu_streams = machine.kind == compute::UnitKind::Gpu;
  request.device = request.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  ProfileOption profile(opt.profile, machine, sim);
  std::vector<exec::RunResult> predicted;
  for (const auto& measured : schedules) {  // per execution, per ordering
    request.execution = measured.execution;
    fmt::print(stderr, "validate: simulating {} ({}) on {}\n", to_string(measured.ordering),
               to_string(measured.execution), machine.name);
    const auto schedule =
        schedule::build_schedule(trace, schedule::schedule_options(measured.ordering, request));
    sim.op_compute = profile.op_compute(trace, schedule);
    predicted.push_back(exec::simulate(trace, schedule, machine, sim));
  }

  profile.report();
  // Measured: all orderings interleaved in blocks.
  be.run.progress = true;
  const auto report = backend::run_schedules(trace, schedules, plan.config, be.run);

  std::vector<Row> rows;
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    const auto& m = report.results[k];
    Row row{m.ordering,
            m.execution,
            to_ms(predicted[k].step_time),
            to_ms(m.step_time),
            to_ms(m.step_time_p25),
            to_ms(m.step_time_p75)};
    const int base = report.speedups.empty() ? -1 : report.baselines[k];
    if (base >= 0) {
      row.has_base = true;
      row.predicted_speedup =
          speedup(predicted[std::size_t(base)].step_time, predicted[k].step_time);
      const auto& s = report.speedups[k];
      row.measured_speedup = s.speedup;
      row.ci_low = s.low;
      row.ci_high = s.high;
      row.outside_noise = s.outside_noise();
    }
    rows.push_back(row);
  }

  Table table({"ordering", "execution", "optimizer", "predicted ms", "measured ms", "p25-p75 ms",
               "error %", "pred speedup", "meas speedup", "95% CI", "speedup err pts"});
  nlohmann::json results = nlohmann::json::array();
  std::vector<double> errors, speedup_errors;
  OpGroupTable per_op_table(false), per_layer_table(true);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    const double error = error_pct(r.predicted_ms, r.measured_ms);
    // In points: 100 x the difference of the two speedups.
    const double speedup_error = 100.0 * (r.predicted_speedup - r.measured_speedup);
    errors.push_back(error);
    speedup_errors.push_back(speedup_error);
    const bool has_base = r.has_base;
    table.add_row({r.ordering, r.execution, be.optimizer, fmt::format("{:.3f}", r.predicted_ms),
                   fmt::format("{:.3f}", r.measured_ms),
                   fmt::format("{:.3f}-{:.3f}", r.p25_ms, r.p75_ms), fmt::format("{:+.1f}", error),
                   has_base ? fmt::format("{:.3f}", r.predicted_speedup) : "-",
                   has_base ? fmt::format("{:.3f}", r.measured_speedup) : "-",
                   has_base ? fmt::format("[{:.3f}, {:.3f}]", r.ci_low, r.ci_high) : "-",
                   has_base ? fmt::format("{:+.1f}", speedup_error) : "-"});
    nlohmann::json j{{"ordering", r.ordering},
                     {"execution", r.execution},
                     {"optimizer", be.optimizer},
                     {"impl", be.impl},
                     {"predicted_ms", r.predicted_ms},
                     {"measured_ms", r.measured_ms},
                     {"measured_p25_ms", r.p25_ms},
                     {"measured_p75_ms", r.p75_ms},
                     {"error_pct", error}};
    j["measurement"] = quality_json(report.quality[results.size()]);
    if (has_base) {
      j["predicted_speedup"] = r.predicted_speedup;
      j["measured_speedup"] = r.measured_speedup;
      j["measured_speedup_ci"] = {r.ci_low, r.ci_high};
      j["speedup_outside_noise"] = r.outside_noise;
    }
    if (opt.per_op) {
      const auto groups = exec::compare_per_op_kind(trace, predicted[k], report.results[k]);
      j["per_op_kinds"] = op_groups_json(groups, false);
      per_op_table.add(r.ordering, groups);
    }
    if (opt.per_layer) {
      const auto groups = exec::compare_per_layer(trace, predicted[k], report.results[k]);
      j["per_layer"] = op_groups_json(groups, true);
      per_layer_table.add(r.ordering, groups);
    }
    results.push_back(j);
  }
  const double mape = mean_absolute(errors);
  const double speedup_mae = mean_absolute(speedup_errors);
  nlohmann::json json{
      {"trace", opt.trace},
      {"machine", machine.name},
      {"profile", opt.profile.empty() ? nlohmann::json() : nlohmann::json(opt.profile)},
      {"device", be.device},
      {"threads", be.run.threads},
      {"conditions", conditions_json(report, be.run)},
      {"results", results},
      {"mape", mape},
      {"speedup_mae_points", speedup_mae},
      {"notes", report.notes}};
  print_result(opt.format, json, table);
  print_notes(opt.format, report);
  if (opt.format.json) return;
  if (!opt.format.csv)
    fmt::print("MAPE {:.1f}% (step time), mean |speedup error| {:.1f} points\n", mape, speedup_mae);
  // The per-op views follow the step table (--csv: as further CSV blocks, a blank line
  // before each).
  for (const Table* t : {opt.per_op ? &per_op_table.table() : nullptr,
                         opt.per_layer ? &per_layer_table.table() : nullptr}) {
    if (!t) continue;
    fmt::print("\n{}", opt.format.csv ? t->to_csv() : t->to_text());
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto opt = std::make_shared<ValidateCmdOptions>();
  auto* cmd = app.add_subcommand("validate", kValidateDescription);
  cmd->add_option("--trace", opt->trace, "Layer trace (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--machine", opt->machine,
                  "Machine model: a preset name of models/machines or a JSON path")
      ->required();
  add_backend_options(
      cmd, opt->backend,
      {"sgd | momentum | nesterov | adam | adamw | adagrad | rmsprop | lamb",
       "loop | foreach | fused", "Measured steps per ordering", "Measured steps per block",
       "Intra-op threads (0: the machine's threads_per_op)",
       "layers | graph | both (= layers,graph): the execution measured, each predicted with "
       "its own host costs. Default layers: it runs exactly the simulated op list, each op "
       "its own call, so every per-op time is that op's alone; graph (a PyTorch user's "
       "loop) runs all B ops inside one backward call, timed per layer by hooks"});
  cmd->add_option("--fidelity", opt->fidelity,
                  "Simulation fidelity: line | block. block here, not simulate's line: it "
                  "agrees with line within 2% in step time (tests/exec/test_fidelity.cpp) at "
                  "~6x less CPU, far below the measurement's noise")
      ->capture_default_str();
  cmd->add_option("--profile", opt->profile,
                  "Predict from a measured per-op profile (`fusim profile` of this trace, same "
                  "--optimizer and --impl): measured compute, simulated memory")
      ->check(CLI::ExistingFile);
  cmd->add_option("--sim-steps", opt->sim_steps,
                  "Simulated steps (the first is warm-up, forward-fused's last is the flush)")
      ->capture_default_str();
  cmd->add_flag("--per-op", opt->per_op,
                "Also compare per (op kind F/Bx/Bw/U/L x layer op): predicted and measured ms "
                "per step, their ratio and share of each step (--json: \"per_op_kinds\" of "
                "each result); ordered by measured time");
  cmd->add_flag("--per-layer", opt->per_layer,
                "Also compare per layer (all of its ops), in trace order (--json: "
                "\"per_layer\")");
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_validate(*opt); });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
