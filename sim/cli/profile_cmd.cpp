// fusim profile: measures every distinct op of a trace in isolation on this host
// (backend/op_profiler.h) into a profile file that `simulate|validate --profile` read
// (exec/op_profile.h). Built only with libtorch (FUSIM_WITH_TORCH).
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>
#include <algorithm>
#include <memory>

#include "backend/executor.h"
#include "backend/op_profiler.h"
#include "backend/optimizer_config.h"
#include "backend/step_probe.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/progress.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct ProfileCmdOptions {
  std::string trace, output, optimizer = "adam", impl = "foreach", device = "cpu";
  backend::ProfileOptions profile;
  OutputFormat format;
};

void run_profile(ProfileCmdOptions opt) {
  check_output_path(opt.output, "-o");  // before measuring
  backend::check_device(opt.device);
  const auto config = backend::optimizer_config(opt.optimizer);
  const auto trace = load_trace_option(opt.trace);
  // The ops of every ordering as simulate and validate build them (their default 4 steps:
  // forward-fused's first updates and final flush included).
  schedule::ScheduleRequest request;
  request.optimizer = opt.optimizer;
  request.impl = schedule::parse_impl_option(opt.impl);
  request.steps = 4;
  request.gpu_streams = opt.device == "cuda";
  request.device = request.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  const auto schedules =
      schedule::build_schedules(trace,
                                {schedule::Ordering::Eager, schedule::Ordering::BackwardFused,
                                 schedule::Ordering::ForwardFused},
                                request);
  opt.profile.device = opt.device;
  // 0: every core this process may use, as `fusim calibrate` sets a host's threads_per_op
  // (not libtorch's own default, which can be 1), so that a profile fits the calibrated
  // machine validate and simulate use with it (exec/op_profile.h checks the match).
  if (opt.profile.threads == 0 && opt.device == "cpu")
    opt.profile.threads = backend::allowed_cpus();
  // The shared progress reporter (core/progress.h): ops measured, rate and ETA.
  std::unique_ptr<Progress> bar;
  int reported = 0;
  opt.profile.progress = [&](int done, int total, const std::string&) {
    if (!bar) bar = std::make_unique<Progress>("profile", std::size_t(total), 0, true, "ops");
    bar->advance(std::size_t(std::max(0, done - reported)));
    reported = std::max(reported, done);
  };
  exec::OpProfile profile = backend::profile_ops(trace, schedules, config, opt.profile);
  if (bar) bar->finish();
  profile.trace = opt.trace;
  const nlohmann::json doc = exec::op_profile_json(profile);
  write_file_atomically(opt.output, doc.dump(1) + "\n", "-o");

  Table table({"kind", "op", "layer", "per step", "median ms", "p25-p75 ms", "repeats"});
  for (const auto& op : profile.ops)
    table.add_row({op.kind, op.op, op.layer, std::to_string(op.per_step),
                   fmt::format("{:.4f}", to_ms(op.median)),
                   fmt::format("{:.4f}-{:.4f}", to_ms(op.p25), to_ms(op.p75)),
                   std::to_string(op.repeats)});
  print_result(opt.format, doc, table,
               {{doc["ops"],
                 {"signature", "kind", "op", "layer", "description", "per_step", "median_ns",
                  "p25_ns", "p75_ns", "repeats"}}});
  if (!opt.format.json && !opt.format.csv)
    fmt::print("{} distinct ops of {} measured on {} ({} threads) into {}\n", profile.ops.size(),
               opt.trace, profile.device, profile.threads, opt.output);
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto opt = std::make_shared<ProfileCmdOptions>();
  auto* cmd = app.add_subcommand("profile", kProfileDescription);
  cmd->add_option("--trace", opt->trace, kTraceOptionHelp)->required();
  cmd->add_option("--optimizer", opt->optimizer,
                  "sgd | momentum | nesterov | adam | adamw | adagrad | rmsprop | lamb")
      ->capture_default_str();
  cmd->add_option("--impl", opt->impl, "loop | foreach | fused")->capture_default_str();
  cmd->add_option("--device", opt->device, "cpu | cuda (needs a CUDA libtorch and a GPU)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->profile.threads,
                  "Intra-op threads (0: every core this process may use, the threads_per_op "
                  "`fusim calibrate` writes); must equal the threads_per_op of the machine "
                  "the profile is used with")
      ->capture_default_str();
  cmd->add_option("--min-repeats", opt->profile.min_repeats, "Timed runs per op, at least")
      ->capture_default_str();
  cmd->add_option("--max-repeats", opt->profile.max_repeats, "Timed runs per op, at most")
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Profile file to write (JSON)")->required();
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_profile(*opt); });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
