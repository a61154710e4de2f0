// fusim validate: the same orderings predicted by the simulator on a machine model and
// measured on this machine by the real backend, side by side, with the step-time error and
// both speedups over eager. The check that makes every prediction falsifiable.
// Built only with libtorch (FUSIM_WITH_TORCH), into fusim-backend (sim/cli/backend_main.cpp).
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>
#include <algorithm>
#include <optional>

#include "backend/executor.h"
#include "backend/memory_guard.h"
#include "backend/op_profiler.h"
#include "backend/optimizer_config.h"
#include "backend/run_plan.h"
#include "cli/backend_cmd_options.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "cli/profile_option.h"
#include "cli/run_report_output.h"
#include "cli/trace_option.h"
#include "cli/validate_report.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/progress.h"
#include "core/units.h"
#include "exec/machine.h"
#include "exec/op_profile.h"
#include "exec/simulate.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct ValidateCmdOptions {
  std::string trace, machine, fidelity = "block", profile, evict;
  std::string save_profile;  // --save-profile: the measured profile the prediction used
  std::string host_speed = "calibrated";  // --host-speed: calibrated | run
  ZooBatch batch;                         // --batch of a zoo --trace
  int sim_steps = 4;  // as simulate: forward-fused's measured step is past its first updates
  bool per_op = false, per_layer = false, force = false;
  BackendCmdOptions backend;
  OutputFormat format;
};

void run_validate(ValidateCmdOptions opt) {
  auto& be = opt.backend;
  const auto plan = resolve_backend_options(be);
  const auto& orderings = plan.orderings;
  const auto trace = load_trace_option(opt.trace, opt.batch);
  const auto machine = exec::load_machine(opt.machine);
  if (opt.sim_steps < 2) throw InputError("--sim-steps: expected an integer >= 2");
  const bool at_run_speed = opt.host_speed == "run";
  if (at_run_speed && !opt.profile.empty())
    throw InputError(fmt::format(
        "--host-speed run: expected no --profile (got {}): a measured profile already has the "
        "host's speed; run is for the calibrated op costs",
        opt.profile));
  if (at_run_speed && (machine.host.op_probe_us <= 0 || machine.kind != compute::UnitKind::Cpu))
    throw InputError(fmt::format(
        "--host-speed run: expected a machine file with host.op_probe_us (a CPU calibrated by "
        "`fusim calibrate` since 2026-12-06), got {} without it",
        opt.machine));
  if (at_run_speed && be.no_speed_probe)
    throw InputError("--host-speed run: expected the op speed probe, got --no-speed-probe");
  if (!opt.evict.empty() && opt.profile != "auto")
    throw InputError(
        "--evict: expected only with --profile auto (a profile file keeps the cold times "
        "`fusim profile --evict` measured)");
  if (!opt.save_profile.empty() && opt.profile != "auto" && opt.profile != "in-step" &&
      opt.profile != "in-run")
    throw InputError(fmt::format(
        "--save-profile: expected --profile auto, in-step or in-run (the profile this run "
        "measures), got {}",
        opt.profile.empty() ? std::string("no --profile") : "--profile " + opt.profile));
  if (!opt.save_profile.empty()) check_output_path(opt.save_profile, "--save-profile");
  // Written before the prediction takes the profile, atomically (core/output_file.h).
  auto save = [&](const exec::OpProfile& p) {
    if (!opt.save_profile.empty())
      write_file_atomically(opt.save_profile, exec::op_profile_json(p).dump(1) + "\n",
                            "--save-profile");
  };
  const std::int64_t evict_bytes = opt.evict.empty() ? 0 : parse_size_option("--evict", opt.evict);
  // A GPU model against CPU measurements (or the reverse) compares two different machines:
  // refused, unless asked for (issue 21, point 2).
  const bool gpu_model = machine.kind == compute::UnitKind::Gpu;
  if (gpu_model != (be.device == "cuda") && !opt.force)
    throw InputError(fmt::format(
        "--machine: {} is a {} model, measured here on --device {}: the prediction would be "
        "compared with another kind of machine; give a {} machine (--machine host after `fusim "
        "calibrate`) or --force to compare anyway",
        machine.name, gpu_model ? "GPU" : "CPU", be.device, be.device == "cuda" ? "GPU" : "CPU"));
  // The measurement uses as many threads per op as the model assumes, unless told.
  if (be.run.threads == 0 && machine.kind == compute::UnitKind::Cpu)
    be.run.threads = machine.compute.threads_per_op;
  // Both schedules of every ordering are built (the mixed file read) before any work.
  const auto schedules =
      backend::build_run_schedules(trace, orderings, be.optimizer, plan.impl, be.run, be.mixed);
  backend::check_device_memory(schedules, be.device);  // before predicting

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
  std::vector<exec::RunResult> predicted;
  auto predict = [&](ProfileOption& profile, const exec::Machine& on) {
    {
      // The shared progress reporter (core/progress.h), as the measurement's below.
      Progress bar("validate: predicting on " + on.name, schedules.size(), 0, true, "schedules");
      for (const auto& measured : schedules) {  // per execution, per ordering
        request.execution = measured.execution;
        const auto schedule =
            schedule::build_schedule(trace, schedule::schedule_options(measured.ordering, request));
        predicted.push_back(profile.simulate(trace, schedule, on, sim).result);
        bar.advance();
      }
    }
    profile.report();
  };
  // --profile auto / in-step: measured here just before and just after the steps, so that
  // the prediction sees the machine as the measurement did (a VM drifts by 10-20% over
  // minutes); a file is read, and predicted from, before any measurement.
  // --profile in-run: the step profile is the measured eager steps themselves (interleaved
  // with the other orderings', so the machine's drift is the same for all): eager is then a
  // replay, and only the other orderings are predicted.
  const bool in_step = opt.profile == "in-step";
  const bool in_run = opt.profile == "in-run";
  const bool auto_profile = opt.profile == "auto" || in_step;
  if ((in_step || in_run) && plan.executions.size() != 1)
    throw InputError(
        fmt::format("--profile: expected one --execution with {} (a step profile "
                    "holds the op times of one execution)",
                    opt.profile));
  const auto eager_at = std::find_if(schedules.begin(), schedules.end(), [](const auto& s) {
    return s.ordering == schedule::Ordering::Eager;
  });
  if (in_run && eager_at == schedules.end())
    throw InputError(
        "--profile: expected eager among --ordering with in-run (its measured steps "
        "are the profile)");
  std::optional<ProfileOption> file_profile;
  if (!auto_profile && !in_run && !at_run_speed) {
    file_profile.emplace(opt.profile, machine, sim);
    predict(*file_profile, machine);
  }
  backend::ProfileOptions po;
  po.device = be.device;
  po.threads = be.run.threads;
  po.evict_bytes = evict_bytes;
  auto measure_profile = [&](const char* when) {
    exec::OpProfile p;
    if (in_step) {
      backend::RunOptions ro = be.run;
      ro.progress = true;
      fmt::print(stderr, "validate: eager steps timed per op ({})\n", when);
      p = backend::profile_in_step(trace, be.optimizer, plan.impl, plan.executions.front(), ro);
    } else {
      p = profile_with_progress(fmt::format("validate: profiling ({})", when), trace, be.optimizer,
                                plan.impl, po);
    }
    p.file = "--profile " + opt.profile;
    p.trace = opt.trace;
    return p;
  };
  std::optional<exec::OpProfile> before;
  if (auto_profile) before = measure_profile("before the steps");
  // Measured: all orderings interleaved in blocks.
  be.run.progress = true;
  auto report = backend::run_schedules(trace, schedules, plan.config, be.run);
  std::optional<double> drift;
  if (auto_profile) {
    const exec::OpProfile after = measure_profile("after the steps");
    drift = exec::profile_drift(*before, after);
    report.notes.push_back(fmt::format(
        "--profile {}: the ops measured after the steps took {:+.1f}% of their time before "
        "them (the machine's drift); predicted from the mean of the two",
        opt.profile, 100.0 * *drift));
    exec::OpProfile bracket = exec::bracket_profiles(*before, after);
    save(bracket);
    ProfileOption profile(std::move(bracket), machine, sim);
    predict(profile, machine);
  }
  if (in_run) {
    const auto k = std::size_t(eager_at - schedules.begin());
    exec::OpProfile p = exec::in_step_profile(trace, schedules[k], report.results[k], opt.profile);
    p.file = "--profile in-run";
    p.trace = opt.trace;
    p.threads = be.run.threads;
    p.device = be.device;
    report.notes.push_back(
        "--profile in-run: eager's prediction replays its own measured op times (not a "
        "prediction); the other orderings are predicted from them");
    save(p);
    ProfileOption profile(std::move(p), machine, sim);
    predict(profile, machine);
  }
  // --host-speed run: the calibrated op costs for the host at the speed its steps ran (the
  // op speed probe's median during the run against the calibrated one).
  std::optional<double> speed_ratio;
  if (at_run_speed) {
    const auto speed = backend::sample_spread(report.conditions.op_probe_us);
    if (speed.samples == 0)
      throw InputError("--host-speed run: the op speed probe took no sample (CUDA run?)");
    speed_ratio = speed.median / machine.host.op_probe_us;
    exec::Machine at_speed = machine;
    at_speed.compute = compute::with_compute_time_scaled(machine.compute, *speed_ratio);
    report.notes.push_back(fmt::format(
        "--host-speed run: predicted for the host at the speed its steps ran: the op speed "
        "probe took {:.0f} us (median) against {:.0f} us when calibrated, so every op's compute "
        "cost is {:.2f}x the calibrated one (memory as calibrated)",
        speed.median, machine.host.op_probe_us, *speed_ratio));
    ProfileOption analytic(std::string(), at_speed, sim);
    predict(analytic, at_speed);
  }

  const std::string dram_note = backend::dram_drift_note(
      report.conditions, machine.host.dram_triad_gbs, machine.host.threads);
  if (!dram_note.empty()) report.notes.push_back(dram_note);
  const std::string speed_note =
      backend::speed_drift_note(report.conditions, machine.host.op_probe_us, machine.host.threads);
  if (!speed_note.empty()) report.notes.push_back(speed_note);
  const std::string placement_note = backend::placement_drift_note(
      report.conditions, machine.host.core_to_core_ns, machine.host.threads);
  if (!placement_note.empty()) report.notes.push_back(placement_note);

  nlohmann::json header = {
      {"trace", opt.trace},
      {"machine", machine.name},
      {"profile", opt.profile.empty() ? nlohmann::json() : nlohmann::json(opt.profile)},
      {"profile_drift", drift ? nlohmann::json(*drift) : nlohmann::json()},
      {"device", be.device},
      {"threads", be.run.threads},
      {"conditions", conditions_json(report, be.run)},
      {"calibrated_dram_triad_gbs", machine.host.dram_triad_gbs > 0
                                        ? nlohmann::json(machine.host.dram_triad_gbs)
                                        : nlohmann::json()},
      {"host_speed",
       {{"mode", opt.host_speed},
        {"ratio", speed_ratio ? nlohmann::json(*speed_ratio) : nlohmann::json()}}},
      {"calibrated_op_probe_us",
       machine.host.op_probe_us > 0 ? nlohmann::json(machine.host.op_probe_us) : nlohmann::json()},
      {"calibrated_core_to_core_ns", machine.host.core_to_core_ns > 0
                                         ? nlohmann::json(machine.host.core_to_core_ns)
                                         : nlohmann::json()}};
  print_validate(ValidateComparison{trace, predicted, report, be.optimizer, be.impl, opt.per_op,
                                    opt.per_layer, std::move(header)},
                 opt.format);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto opt = std::make_shared<ValidateCmdOptions>();
  auto* cmd = app.add_subcommand("validate", kValidateDescription);
  cmd->add_option("--trace", opt->trace, kTraceOptionHelp)->required();
  add_batch_option(cmd, opt->batch);
  cmd->add_option("--machine", opt->machine,
                  "Machine model: a preset name of models/machines or a JSON path")
      ->required();
  add_backend_options(
      cmd, opt->backend,
      {"sgd | momentum | nesterov | adam | adamw | adagrad | rmsprop | lamb",
       "loop | foreach | fused", "Measured steps per ordering", "Measured steps per block",
       "Intra-op threads (0, one meaning everywhere: the threads the prediction assumes, the "
       "--machine model's threads_per_op where the command has a --machine, else "
       "libtorch's default)",
       "layers | graph | both (= layers,graph): the execution measured, each predicted with "
       "its own host costs. Default layers: it runs exactly the simulated op list, each op "
       "its own call, so every per-op time is that op's alone; graph (a PyTorch user's "
       "loop) runs all B ops inside one backward call, timed per layer by hooks"});
  cmd->add_option("--fidelity", opt->fidelity,
                  "Simulation fidelity: line | block | tensor. block here, not simulate's "
                  "tensor: it agrees with line within 2% in step time "
                  "(tests/exec/test_fidelity.cpp) at ~6x less CPU, far below the "
                  "measurement's noise; tensor (no lines moved) agrees with line within 2% on "
                  "most cases of tests/exec/test_tensor_fidelity.cpp and runs in seconds")
      ->capture_default_str();
  cmd->add_option("--host-speed", opt->host_speed,
                  "calibrated: predict with the machine file's op costs as calibrated | run: "
                  "with every op's compute cost scaled by how much slower or faster the host ran "
                  "its steps than when it was calibrated (the op speed probe's median during the "
                  "run against host.op_probe_us; memory as calibrated). On a shared VM the speed "
                  "of small ops moves by 1.5x within minutes: run separates the model's error "
                  "from the host's. Analytic path only (no --profile)")
      ->check(CLI::IsMember({"calibrated", "run"}))
      ->capture_default_str();
  cmd->add_option("--profile", opt->profile,
                  std::string(kProfileOptionHelp) +
                      ". `auto`: measure the profile here, just before and just after the "
                      "measured steps, and predict from the mean of the two (the machine's "
                      "drift between them is reported). `in-step`: the same with step profiles "
                      "(`fusim profile --in-step`: each op timed inside eager steps of "
                      "--measured-steps, every eager op then takes its measured time and the "
                      "other orderings are the simulated change). `in-run`: the step profile "
                      "is the measured eager steps of this run themselves (interleaved with "
                      "the other orderings, so they share the machine's drift): eager replays, "
                      "the other orderings are predicted")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "auto" || text == "in-step" || text == "in-run") return "";
            return existing_file("auto, in-step, in-run or a profile JSON file (fusim profile -o)")(
                text);
          },
          "auto|in-step|in-run|FILE"));
  cmd->add_option("--save-profile", opt->save_profile,
                  "With --profile auto, in-step or in-run: also write the measured profile the "
                  "prediction used (in-run: eager's measured steps, as `fusim profile --in-step "
                  "-o` writes a step profile), so that `fusim simulate --profile FILE` predicts "
                  "other machine models from the very steps this run measured");
  cmd->add_option("--evict", opt->evict,
                  "With --profile auto: also time each op cold, as `fusim profile --evict SIZE`")
      ->type_name("SIZE");
  cmd->add_option("--sim-steps", opt->sim_steps,
                  "Simulated steps (the first is warm-up, forward-fused's last is the flush)")
      ->capture_default_str();
  cmd->add_flag("--per-op", opt->per_op,
                "Also compare per (op kind F/Bx/Bw/U/L x layer op): predicted and measured ms "
                "per step, their ratio and share of each step (--json: \"per_op_kinds\" of "
                "each result); ordered by measured time");
  cmd->add_flag("--force", opt->force,
                "Compare even when --machine is a GPU model and --device cpu (or the reverse)");
  cmd->add_flag("--per-layer", opt->per_layer,
                "Also compare per layer (all of its ops), in trace order (--json: "
                "\"per_layer\")");
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_validate(*opt); });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
