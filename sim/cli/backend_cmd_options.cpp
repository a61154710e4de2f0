#ifdef FUSIM_WITH_TORCH
#include "cli/backend_cmd_options.h"

#include <fmt/format.h>
#include <algorithm>
#include <memory>

#include "backend/run_plan.h"
#include "cli/option_checks.h"
#include "core/progress.h"
#include "schedule/request.h"

namespace fusim::cli {

void add_backend_options(CLI::App* cmd, BackendCmdOptions& opt, const BackendOptionHelp& help) {
  // The commands extend sampling by default (RunOptions' 0 keeps library callers' step
  // counts exact): a minute at most.
  opt.run.max_time_s = 60;
  cmd->add_option("--device", opt.device, "cpu | cuda (needs a CUDA libtorch and a GPU)")
      ->capture_default_str();
  cmd->add_option("--ordering", opt.ordering,
                  "all | comma-separated eager,backward-fused,forward-fused,mixed (mixed: "
                  "with --mixed)")
      ->capture_default_str();
  cmd->add_option("--mixed", opt.mixed, "Per-layer ordering JSON for --ordering mixed");
  cmd->add_option("--optimizer", opt.optimizer, help.optimizer)->capture_default_str();
  cmd->add_option("--impl", opt.impl, help.impl)->capture_default_str();
  // Ranges checked at parse time (option_checks.h): --block 0 divided by zero, --threads
  // beyond the host's hardware threads made libtorch's pool hang, -1 was taken silently.
  // One meaning per option name (issue 23, point 1): --steps is the simulated schedule's
  // steps in schedule, simulate and sweep; the steps measured here are --measured-steps.
  // The old spelling stays for a release, with a warning (shared_options.cpp).
  cmd->add_option("--measured-steps", opt.run.steps, help.steps)
      ->capture_default_str()
      ->check(int_range(2, 100000, "a median and quartiles need two steps at least"));
  cmd->add_option("--steps", opt.run.steps,
                  "Deprecated spelling of --measured-steps (--steps is the simulated steps in "
                  "simulate, sweep and schedule)")
      ->check(int_range(2, 100000, "a median and quartiles need two steps at least"))
      ->each([](const std::string&) {
        fmt::print(stderr,
                   "fusim: warning: --steps is deprecated here, say --measured-steps (--steps "
                   "is the simulated steps in simulate, sweep and schedule)\n");
      });
  cmd->add_option("--warmup", opt.run.warmup,
                  "Unmeasured steps per ordering before the --measured-steps")
      ->capture_default_str()
      ->check(int_range(0, 100000));
  // One meaning per option name (issue 23, point 1): --block is the block-fidelity unit in
  // simulate; here the measured steps of one ordering before the next are
  // --steps-per-block. The old spelling stays for a release, with a warning.
  cmd->add_option("--steps-per-block", opt.run.block, help.block)
      ->capture_default_str()
      ->check(int_range(1, 100000));
  cmd->add_option("--block", opt.run.block,
                  "Deprecated spelling of --steps-per-block (--block is the unit of block "
                  "fidelity in simulate)")
      ->check(int_range(1, 100000))
      ->each([](const std::string&) {
        fmt::print(stderr,
                   "fusim: warning: --block is deprecated here, say --steps-per-block (--block "
                   "is the unit of block fidelity in simulate)\n");
      });
  cmd->add_option("--threads", opt.run.threads, help.threads)
      ->capture_default_str()
      ->check(int_range(0, host_threads(),
                        fmt::format("0: the default (the machine model's threads_per_op, "
                                    "else libtorch's); at most this host's {} hardware threads",
                                    host_threads())));
  cmd->add_option("--execution", opt.execution, help.execution)->capture_default_str();
  cmd->add_option("--max-time", opt.run.max_time_s,
                  "After --measured-steps, keep sampling in rounds of one block per schedule until "
                  "every speedup's 95% CI is within +-(--ci-points) or the run has lasted this "
                  "many seconds (0: no extension)")
      ->capture_default_str();
  cmd->add_option("--ci-points", opt.run.ci_points,
                  "Target half width of each speedup's 95% CI, in points (0.01x)")
      ->capture_default_str();
  cmd->add_option("--min-cpu-ratio", opt.run.min_cpu_ratio,
                  "Drop a measured step as disturbed by other processes when its main thread "
                  "ran less than this share of its wall time, or its threads waited for a "
                  "core longer than 1 - this share of it (0: keep every step)")
      ->capture_default_str();
  cmd->add_flag("--no-pin", opt.no_pin,
                "Leave the intra-op threads unpinned (default: one per core, thread t on the "
                "t-th allowed core)");
  cmd->add_flag("--no-dram-probe", opt.no_dram_probe,
                "Skip the DRAM bandwidth probe before each round of blocks (default on CPU: a "
                "128 MiB triad, ~20-40 ms outside the measured steps, reported as "
                "conditions.dram_triad_gbs; validate compares it with the machine file's "
                "host.dram_triad_gbs), and with it the core-to-core probe (the second pinned "
                "core chasing 64 KiB the first just wrote, ~1 ms, conditions.core_to_core_ns; "
                "a note says when it moved by 2x: the two cores shared a cache in some rounds "
                "and not in others; validate says when its median is 2x the machine file's "
                "host.core_to_core_ns or half of it)");
  cmd->add_flag("--no-speed-probe", opt.no_speed_probe,
                "Skip the op speed probe before each round of blocks (default on CPU: a "
                "convolution, batch norm, relu and Adam mini-step, ~15-25 ms outside the "
                "measured steps, reported as conditions.op_probe_us; validate compares it with "
                "the machine file's host.op_probe_us)");
}

BackendPlan resolve_backend_options(BackendCmdOptions& opt) {
  opt.run.device = opt.device;
  backend::check_device(opt.device);  // before any work: a clear one-line error
  BackendPlan plan;
  plan.orderings = schedule::parse_orderings(opt.ordering);
  plan.impl = schedule::parse_impl_option(opt.impl);
  plan.executions = schedule::parse_executions(opt.execution);
  opt.run.executions = plan.executions;
  opt.run.pin = !opt.no_pin;
  opt.run.dram_probe = !opt.no_dram_probe;
  opt.run.speed_probe = !opt.no_speed_probe;
  backend::check_run_options(opt.run);
  plan.config = backend::optimizer_config(opt.optimizer);
  return plan;
}

exec::OpProfile profile_with_progress(const std::string& label, const workload::Trace& trace,
                                      const std::string& optimizer, schedule::OptimizerImpl impl,
                                      backend::ProfileOptions options) {
  std::unique_ptr<Progress> bar;
  int reported = 0;
  options.progress = [&](int done, int total, const std::string&) {
    if (!bar) bar = std::make_unique<Progress>(label, std::size_t(total), 0, true, "ops");
    bar->advance(std::size_t(std::max(0, done - reported)));
    reported = std::max(reported, done);
  };
  exec::OpProfile profile = backend::profile_trace(trace, optimizer, impl, options);
  if (bar) bar->finish();
  return profile;
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH
