#pragma once
// The options `fusim run` and `fusim validate` share (what to execute and how to measure
// it), defined once so that both commands name, bind and default them alike, and their
// resolution into orderings, optimizer implementation and hyper-parameters, checked before
// any work. Only with libtorch (FUSIM_WITH_TORCH), like the two commands.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "backend/executor.h"
#include "backend/op_profiler.h"
#include "backend/optimizer_config.h"
#include "schedule/schedule.h"

namespace fusim::cli {

struct BackendCmdOptions {
  std::string device = "cpu", ordering = "all", optimizer = "adam", impl = "foreach";
  std::string mixed;                 // per-layer file of --ordering mixed (schedule/mixed.h)
  std::string execution = "layers";  // --execution (schedule::parse_executions)
  bool no_pin = false;
  bool no_dram_probe = false;
  bool no_speed_probe = false;
  backend::RunOptions run;
};

// The help texts in which the two commands differ (each says what its default means there).
struct BackendOptionHelp {
  std::string optimizer, impl, steps, block, threads, execution;
};

// Adds --device --ordering --mixed --optimizer --impl --execution --measured-steps (--steps:
// its deprecated spelling) --warmup --steps-per-block (--block: its deprecated spelling)
// --threads and the measurement's --max-time --ci-points --min-cpu-ratio --no-pin.
void add_backend_options(CLI::App* command, BackendCmdOptions& options,
                         const BackendOptionHelp& help);

struct BackendPlan {
  std::vector<schedule::Ordering> orderings;
  schedule::OptimizerImpl impl = schedule::OptimizerImpl::Foreach;
  std::vector<schedule::Execution> executions;  // also set in options.run.executions
  backend::OptimizerConfig config;
};

// Sets options.run.device, checks the device (one clear line when it cannot run here) and
// resolves the names; bad values throw InputError (exit code 2). The mixed file itself is
// read where the schedules are built (backend::build_run_schedules), also before any work.
BackendPlan resolve_backend_options(BackendCmdOptions& options);

// Measures every op of `trace` (backend::profile_trace) with a progress bar on stderr
// (core/progress.h) labelled `label`: `fusim profile` and `validate --profile auto`.
exec::OpProfile profile_with_progress(const std::string& label, const workload::Trace& trace,
                                      const std::string& optimizer, schedule::OptimizerImpl impl,
                                      backend::ProfileOptions options);

}  // namespace fusim::cli
