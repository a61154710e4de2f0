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
#include "backend/run_plan.h"
#include "backend/step_probe.h"
#include "cli/backend_cmd_options.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "cli/trace_option.h"
#include "core/error.h"
#include "core/json_view.h"
#include "core/output_file.h"
#include "core/progress.h"
#include "core/units.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct ProfileCmdOptions {
  std::string trace, output, optimizer = "adam", impl = "foreach", device = "cpu", evict;
  ZooBatch batch;                     // --batch of a zoo --trace
  std::vector<std::string> from_run;  // one run, or two taken before and after
  std::string execution = "layers";
  bool in_step = false, optimizer_given = false, impl_given = false;
  int measured_steps = 10, warmup = 3;
  backend::ProfileOptions profile;
  OutputFormat format;
};

// The eager result of a `fusim run --json` file, as the executor reported it (the per-op
// timings of its kept steps), with the run's threads: what --from-run turns into a step
// profile. Strict: a file that is not a run's output, or has no eager run of `execution`
// with per-op timings, is refused by JSON path.
struct RunFile {
  exec::RunResult eager;
  int threads = 0, last_step = 0;
};
RunFile read_run_file(const std::string& path, const std::string& execution) {
  const nlohmann::json doc = load_json_file(path);
  JsonView v(doc, path);
  v.require_object();
  RunFile out;
  out.threads = static_cast<int>(v.at("conditions").at("threads").as_int_at_least(1));
  const std::string device = v.at("device").as_nonempty_string();
  JsonView results = v.at("results");
  results.require_array();
  for (const auto& r : results.elements()) {
    if (r.at("ordering").as_string() != "eager" || r.at("execution").as_string() != execution)
      continue;
    exec::RunResult& e = out.eager;
    e.executor = device;
    e.ordering = "eager";
    e.execution = execution;
    e.optimizer = r.at("optimizer").as_nonempty_string();
    e.impl = r.at("impl").as_nonempty_string();
    JsonView ops = r.at("per_op");  // absent: run with --no-per-op
    ops.require_array();
    for (const auto& o : ops.elements()) {
      exec::OpTiming t;
      t.id = static_cast<int>(o.at("id").as_int_at_least(0));
      t.kind = o.at("kind").as_nonempty_string();
      t.layer = static_cast<int>(o.at("layer").as_int_at_least(-1));
      t.step = static_cast<int>(o.at("step").as_int_at_least(0));
      t.start = ns(1000.0 * o.at("start_us").as_number_in(0, 1e15));
      t.end = ns(1000.0 * o.at("end_us").as_number_in(0, 1e15));
      if (t.end < t.start) o.at("end_us").fail("an end no earlier than start_us");
      out.last_step = std::max(out.last_step, t.step);
      e.per_op.push_back(t);
    }
    if (e.per_op.empty()) ops.fail("the per-op timings of measured steps, got none");
    return out;
  }
  results.fail(
      fmt::format("an eager run of execution \"{}\" (`fusim run --ordering eager "
                  "--execution {} --json`)",
                  execution, execution));
}

exec::OpProfile step_profile_from_run(const ProfileCmdOptions& opt, const workload::Trace& trace,
                                      const std::string& file) {
  const RunFile run = read_run_file(file, opt.execution);
  const auto& e = run.eager;
  if (opt.optimizer_given && opt.optimizer != e.optimizer)
    throw InputError(file, "results",
                     fmt::format("a run of --optimizer {}, got {}", opt.optimizer, e.optimizer));
  if (opt.impl_given && opt.impl != e.impl)
    throw InputError(file, "results", fmt::format("a run of --impl {}, got {}", opt.impl, e.impl));
  // The run's eager schedule, as long as its last timed step: op ids are the run's.
  backend::RunOptions ro;
  ro.device = e.executor;
  ro.warmup = 0;
  ro.steps = ro.block = run.last_step + 1;
  ro.executions = {*schedule::parse_execution(opt.execution)};
  const auto schedules = backend::build_run_schedules(
      trace, {schedule::Ordering::Eager}, e.optimizer, schedule::parse_impl_option(e.impl), ro);
  exec::OpProfile p = exec::in_step_profile(trace, schedules.at(0), e, file);
  p.threads = run.threads;
  return p;
}

void run_profile(ProfileCmdOptions opt) {
  check_output_path(opt.output, "-o");  // before measuring
  if (opt.in_step && !opt.from_run.empty())
    throw InputError(
        "--from-run: expected either --in-step (measure now) or --from-run (times "
        "of a run measured before), not both");
  if ((opt.in_step || !opt.from_run.empty()) && opt.profile.evict_bytes > 0)
    throw InputError(
        "--evict: expected only without --in-step and --from-run (cold times are "
        "measured in isolation)");
  if (!schedule::parse_execution(opt.execution))
    throw InputError(
        fmt::format("--execution: expected layers or graph, got \"{}\"", opt.execution));
  if (opt.from_run.empty()) backend::check_device(opt.device);
  backend::optimizer_config(opt.optimizer);  // an unknown name fails before the trace loads
  const auto trace = load_trace_option(opt.trace, opt.batch);
  opt.profile.device = opt.device;
  exec::OpProfile profile;
  if (!opt.from_run.empty()) {
    profile = step_profile_from_run(opt, trace, opt.from_run.front());
    if (opt.from_run.size() == 2) {
      // Runs before and after other measurements: their mean, as validate --profile in-step.
      const exec::OpProfile after = step_profile_from_run(opt, trace, opt.from_run.back());
      if (after.optimizer != profile.optimizer || after.impl != profile.impl ||
          after.threads != profile.threads || after.ops.size() != profile.ops.size() ||
          !std::equal(after.ops.begin(), after.ops.end(), profile.ops.begin(),
                      [](const exec::ProfiledOp& a, const exec::ProfiledOp& b) {
                        return a.kind == b.kind && a.layer_index == b.layer_index;
                      }))
        throw InputError(
            opt.from_run.back(), "results",
            fmt::format("a run like {} (optimizer, impl, threads and ops)", opt.from_run.front()));
      const double drift = exec::profile_drift(profile, after);
      profile = exec::bracket_profiles(profile, after);
      fmt::print(stderr,
                 "profile: the run {} took {:+.1f}% of the time of {}: the mean of the two\n",
                 opt.from_run.back(), 100.0 * drift, opt.from_run.front());
    }
  } else if (opt.in_step) {
    backend::RunOptions ro;
    ro.device = opt.device;
    ro.threads = opt.profile.threads;
    ro.seed = opt.profile.seed;
    ro.warmup = opt.warmup;
    ro.steps = opt.measured_steps;
    ro.block = opt.measured_steps;
    ro.progress = true;
    backend::check_run_options(ro);
    profile = backend::profile_in_step(trace, opt.optimizer, schedule::parse_impl_option(opt.impl),
                                       *schedule::parse_execution(opt.execution), ro);
  } else {
    // The shared progress reporter (core/progress.h): ops measured, rate and ETA.
    profile = profile_with_progress("profile", trace, opt.optimizer,
                                    schedule::parse_impl_option(opt.impl), opt.profile);
  }
  profile.trace = opt.trace;
  const nlohmann::json doc = exec::op_profile_json(profile);
  write_file_atomically(opt.output, doc.dump(1) + "\n", "-o");

  Table table({"kind", "op", "layer", "per step", "median ms", "p25-p75 ms",
               profile.in_step() ? "steps" : "repeats"});
  for (const auto& op : profile.ops)
    table.add_row({op.kind, op.op, op.layer, std::to_string(op.per_step),
                   fmt::format("{:.4f}", to_ms(op.median)),
                   fmt::format("{:.4f}-{:.4f}", to_ms(op.p25), to_ms(op.p75)),
                   std::to_string(op.repeats)});
  print_result(opt.format, doc, table,
               {{doc["ops"],
                 {"signature", "kind", "op", "layer", "description", "per_step", "median_ns",
                  "p25_ns", "p75_ns", "repeats", "cold_median_ns", "cold_p25_ns", "cold_p75_ns",
                  "cold_repeats", "layer_index"}}});
  if (!opt.format.json && !opt.format.csv)
    fmt::print("{} {} of {} measured on {} ({} threads) into {}\n", profile.ops.size(),
               profile.in_step() ? "ops of the eager step" : "distinct ops", opt.trace,
               profile.device, profile.threads, opt.output);
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto opt = std::make_shared<ProfileCmdOptions>();
  auto* cmd = app.add_subcommand("profile", kProfileDescription);
  cmd->add_option("--trace", opt->trace, kTraceOptionHelp)->required();
  add_batch_option(cmd, opt->batch);
  cmd->add_option("--optimizer", opt->optimizer,
                  "sgd | momentum | nesterov | adam | adamw | adagrad | rmsprop | lamb")
      ->capture_default_str();
  cmd->add_option("--impl", opt->impl, "loop | foreach | fused")->capture_default_str();
  cmd->add_option("--device", opt->device, "cpu | cuda (needs a CUDA libtorch and a GPU)")
      ->capture_default_str();
  cmd->add_option("--threads", opt->profile.threads,
                  "Intra-op threads (0: every core this process may use, the threads_per_op "
                  "`fusim calibrate` writes without --threads); must equal the threads_per_op "
                  "of the machine the profile is used with (calibrate --threads 1: profile "
                  "--threads 1)")
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
  cmd->add_flag("--in-step", opt->in_step,
                "Time every op inside measured eager steps, as `fusim run` runs them, instead of "
                "alone: a step profile (each op's time in the step's own context)");
  cmd->add_option("--from-run", opt->from_run,
                  "Make the step profile from the eager per-op timings of a `fusim run --json` "
                  "file (measured before) instead of measuring; two files (runs before and after "
                  "other measurements): the mean of the two")
      ->type_name("FILE")
      ->expected(1, 2)
      ->check(existing_file("a `fusim run --json` output file"));
  cmd->add_option("--measured-steps", opt->measured_steps,
                  "--in-step: eager steps measured (the median of each op over them)")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", opt->warmup, "--in-step: unmeasured eager steps first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--execution", opt->execution,
                  "--in-step, --from-run: the execution whose steps are timed: layers | graph")
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Profile file to write (JSON)")->required();
  add_output_flags(cmd, opt->format);
  cmd->callback([opt, cmd] {
    opt->optimizer_given = cmd->count("--optimizer") > 0;
    opt->impl_given = cmd->count("--impl") > 0;
    if (!opt->evict.empty()) opt->profile.evict_bytes = parse_size_option("--evict", opt->evict);
    run_profile(*opt);
  });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
