// fusim validate: the same orderings predicted by the simulator on a machine model and
// measured on this machine by the real backend, side by side, with the step-time error and
// both speedups over eager. The check that makes every prediction falsifiable.
// Built only with libtorch (FUSIM_WITH_TORCH); main.cpp registers it under the same guard.
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>

#include "backend/executor.h"
#include "backend/optimizer_config.h"
#include "backend/run_plan.h"
#include "cli/backend_cmd_options.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/compare.h"
#include "core/error.h"
#include "exec/machine.h"
#include "exec/simulate.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct ValidateCmdOptions {
  std::string trace, machine, fidelity = "block";
  int sim_steps = 4;  // as simulate: forward-fused's measured step is past its first updates
  BackendCmdOptions backend;
  OutputFormat format;
};

struct Row {
  std::string ordering;
  double predicted_ms = 0, measured_ms = 0, p25_ms = 0, p75_ms = 0;
  double predicted_speedup = 0, measured_speedup = 0, ci_low = 0, ci_high = 0;
  bool outside_noise = false;
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
  std::vector<Tick> predicted;
  for (auto ordering : orderings) {
    fmt::print(stderr, "validate: simulating {} on {}\n", to_string(ordering), machine.name);
    const auto schedule =
        schedule::build_schedule(trace, schedule::schedule_options(ordering, request));
    predicted.push_back(exec::simulate(trace, schedule, machine, sim).step_time);
  }

  // Measured: all orderings interleaved in blocks.
  be.run.progress = true;
  const auto report = backend::run_schedules(trace, schedules, plan.config, be.run);

  std::vector<Row> rows;
  for (std::size_t k = 0; k < orderings.size(); ++k) {
    const auto& m = report.results[k];
    Row row{m.ordering, to_ms(predicted[k]), to_ms(m.step_time), to_ms(m.step_time_p25),
            to_ms(m.step_time_p75)};
    if (report.baseline >= 0) {
      row.predicted_speedup = speedup(predicted[std::size_t(report.baseline)], predicted[k]);
      const auto& s = report.speedups[k];
      row.measured_speedup = s.speedup;
      row.ci_low = s.low;
      row.ci_high = s.high;
      row.outside_noise = s.outside_noise();
    }
    rows.push_back(row);
  }

  Table table({"ordering", "optimizer", "predicted ms", "measured ms", "p25-p75 ms", "error %",
               "pred speedup", "meas speedup", "95% CI", "speedup err pts"});
  nlohmann::json results = nlohmann::json::array();
  std::vector<double> errors, speedup_errors;
  for (const auto& r : rows) {
    const double error = error_pct(r.predicted_ms, r.measured_ms);
    // In points: 100 x the difference of the two speedups.
    const double speedup_error = 100.0 * (r.predicted_speedup - r.measured_speedup);
    errors.push_back(error);
    speedup_errors.push_back(speedup_error);
    const bool has_base = report.baseline >= 0;
    table.add_row({r.ordering, be.optimizer, fmt::format("{:.3f}", r.predicted_ms),
                   fmt::format("{:.3f}", r.measured_ms),
                   fmt::format("{:.3f}-{:.3f}", r.p25_ms, r.p75_ms), fmt::format("{:+.1f}", error),
                   has_base ? fmt::format("{:.3f}", r.predicted_speedup) : "-",
                   has_base ? fmt::format("{:.3f}", r.measured_speedup) : "-",
                   has_base ? fmt::format("[{:.3f}, {:.3f}]", r.ci_low, r.ci_high) : "-",
                   has_base ? fmt::format("{:+.1f}", speedup_error) : "-"});
    nlohmann::json j{{"ordering", r.ordering},
                     {"optimizer", be.optimizer},
                     {"impl", be.impl},
                     {"predicted_ms", r.predicted_ms},
                     {"measured_ms", r.measured_ms},
                     {"measured_p25_ms", r.p25_ms},
                     {"measured_p75_ms", r.p75_ms},
                     {"error_pct", error}};
    if (has_base) {
      j["predicted_speedup"] = r.predicted_speedup;
      j["measured_speedup"] = r.measured_speedup;
      j["measured_speedup_ci"] = {r.ci_low, r.ci_high};
      j["speedup_outside_noise"] = r.outside_noise;
    }
    results.push_back(j);
  }
  const double mape = mean_absolute(errors);
  const double speedup_mae = mean_absolute(speedup_errors);
  nlohmann::json json{{"trace", opt.trace},
                      {"machine", machine.name},
                      {"device", be.device},
                      {"threads", be.run.threads},
                      {"results", results},
                      {"mape", mape},
                      {"speedup_mae_points", speedup_mae}};
  print_result(opt.format, json, table);
  if (!opt.format.json && !opt.format.csv)
    fmt::print("MAPE {:.1f}% (step time), mean |speedup error| {:.1f} points\n", mape, speedup_mae);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto opt = std::make_shared<ValidateCmdOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Predict (simulate on --machine) and measure (run on this host with libtorch) the\n"
      "same orderings of a trace, side by side: predicted ms, measured median ms and\n"
      "quartiles, error %, predicted and measured speedup vs eager (with the measured\n"
      "speedup's 95% bootstrap interval), and the MAPE over orderings. Use a machine\n"
      "measured by `fusim calibrate` for this host.");
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
       "Intra-op threads (0: the machine's threads_per_op)"});
  cmd->add_option("--fidelity", opt->fidelity,
                  "Simulation fidelity: line | block. block here, not simulate's line: it "
                  "agrees with line within 2% in step time (tests/exec/test_fidelity.cpp) at "
                  "~6x less CPU, far below the measurement's noise")
      ->capture_default_str();
  cmd->add_option("--sim-steps", opt->sim_steps,
                  "Simulated steps (the first is warm-up, forward-fused's last is the flush)")
      ->capture_default_str();
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_validate(*opt); });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
