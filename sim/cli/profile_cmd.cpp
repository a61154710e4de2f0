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
#include "cli/backend_cmd_options.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/progress.h"
#include "core/units.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct ProfileCmdOptions {
  std::string trace, output, optimizer = "adam", impl = "foreach", device = "cpu", evict;
  backend::ProfileOptions profile;
  OutputFormat format;
};

void run_profile(ProfileCmdOptions opt) {
  check_output_path(opt.output, "-o");  // before measuring
  backend::check_device(opt.device);
  backend::optimizer_config(opt.optimizer);  // an unknown name fails before the trace loads
  const auto trace = load_trace_option(opt.trace);
  opt.profile.device = opt.device;
  // The shared progress reporter (core/progress.h): ops measured, rate and ETA.
  exec::OpProfile profile = profile_with_progress(
      "profile", trace, opt.optimizer, schedule::parse_impl_option(opt.impl), opt.profile);
  profile.trace = opt.trace;
  const nlohmann::json doc = exec::op_profile_json(profile);
  write_file_atomically(opt.output, doc.dump(1) + "\n", "-o");

  Table table({"kind", "op", "layer", "per step", "median ms", "p25-p75 ms", "repeats"});
  for (const auto& op : profile.ops)
    table.add_row({op.kind, op.op, op.layer, std::to_string(op.per_step),
                   fmt::format("{:.4f}", to_ms(op.median)),
                   fmt::format("{:.4f}-{:.4f}", to_ms(op.p25), to_ms(op.p75)),
                   std::to_string(op.repeats)});
  print_result(
      opt.format, doc, table,
      {{doc["ops"],
        {"signature", "kind", "op", "layer", "description", "per_step", "median_ns", "p25_ns",
         "p75_ns", "repeats", "cold_median_ns", "cold_p25_ns", "cold_p75_ns", "cold_repeats"}}});
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
  cmd->add_option("--evict", opt->evict,
                  "Also time each op cold: read a buffer of SIZE (2x the last cache or more, "
                  "e.g. 512MiB) before each run, so the caches hold none of its tensors. "
                  "--profile then scales each op's simulated cache penalty in a step to the "
                  "measured one (the profile takes ~2x longer)")
      ->type_name("SIZE");
  cmd->add_option("-o,--output", opt->output, "Profile file to write (JSON)")->required();
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] {
    if (!opt->evict.empty()) opt->profile.evict_bytes = parse_size_option("--evict", opt->evict);
    run_profile(*opt);
  });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
