#include "backend/executor.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <algorithm>
#include <chrono>
#include <memory>

#include "backend/device_timer.h"
#include "backend/host_allocator.h"
#include "backend/memory_counter.h"
#include "backend/training_state.h"
#include "core/error.h"
#include "core/int_math.h"

namespace fusim::backend {
namespace {
using Clock = std::chrono::steady_clock;

// boundaries[s] = index of the first op of iteration s: op 0 for s = 0, else the op that
// opens step s (schedule::step_openers, where the simulator cuts steps too);
// boundaries[K] = the end of the op list.
std::vector<std::size_t> iteration_boundaries(const schedule::Schedule& s) {
  const std::vector<int> openers = schedule::step_openers(s);
  std::vector<std::size_t> b{0};
  for (int step = 1; step < s.steps; ++step) {
    const int at = openers[static_cast<std::size_t>(step)];
    FUSIM_ASSERT(at >= 0 && static_cast<std::size_t>(at) > b.back(),
                 fmt::format("schedule '{}' has no forward op of step {} after step {}'s",
                             to_string(s.ordering), step, step - 1));
    b.push_back(static_cast<std::size_t>(at));
  }
  b.push_back(s.ops.size());
  return b;
}

struct OrderingRun {
  const schedule::Schedule* schedule = nullptr;
  std::unique_ptr<TrainingState> state;
  std::vector<std::size_t> boundaries;
  int next_iteration = 0;
  exec::RunResult result;
  std::vector<Tick> step_times;
  std::int64_t peak_memory = 0;
};
}  // namespace

int schedule_steps_for(const RunOptions& o) {
  const int blocks = ceil_div(o.steps, o.block);
  return o.warmup + blocks + o.steps + 1;
}

void check_device(const std::string& device) {
  if (device == "cpu") return;
  if (device != "cuda")
    throw InputError(fmt::format("unknown device '{}': expected cpu or cuda", device));
#ifndef FUSIM_TORCH_CUDA
  throw InputError(
      "--device cuda: this fusim was built against a libtorch without CUDA (CPU only); rebuild "
      "against the CUDA libtorch (scripts/gpu_validate.sh does)");
#else
  if (!torch::cuda::is_available())
    throw InputError(
        "--device cuda: no CUDA device is visible (torch::cuda::is_available() "
        "is false)");
#endif
}

RunReport run_schedules(const workload::Trace& trace,
                        const std::vector<schedule::Schedule>& schedules,
                        const OptimizerConfig& optimizer, const RunOptions& o) {
  check_device(o.device);
  if (o.warmup < 0 || o.steps < 2 || o.block < 1)
    throw InputError(
        fmt::format("run: need --warmup >= 0, --steps >= 2 and --block >= 1, got "
                    "{}, {}, {}",
                    o.warmup, o.steps, o.block));
  if (o.threads > 0) at::set_num_threads(o.threads);
  keep_freed_memory_in_heap();
  const bool cuda = o.device == "cuda";
  const at::Device device(cuda ? at::kCUDA : at::kCPU);
  const int needed = schedule_steps_for(o);

  std::vector<OrderingRun> runs(schedules.size());
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    auto& r = runs[k];
    r.schedule = &schedules[k];
    FUSIM_ASSERT(
        schedules[k].steps >= needed,
        fmt::format("schedule has {} steps, the run needs {}", schedules[k].steps, needed));
    r.state = std::make_unique<TrainingState>(trace, schedules[k], optimizer, device, o.seed);
    r.boundaries = iteration_boundaries(schedules[k]);
    r.result = exec::result_header(schedules[k], o.device);
  }

  DeviceTimer timer(cuda);
  MemoryCounter memory(cuda);
  // Runs `count` iterations of ordering k; measured ones go into its RunResult.
  auto run_iterations = [&](OrderingRun& r, int count, bool measured) {
    for (int n = 0; n < count; ++n) {
      const int it = r.next_iteration++;
      FUSIM_ASSERT(it + 1 < int(r.boundaries.size()), "ran past the schedule's steps");
      // Every ordering's state is resident at once: its own peak is what it holds between
      // iterations plus the most it allocates on top within one (nothing else runs then).
      const std::int64_t resident = measured ? r.state->resident_bytes() : 0;
      const std::int64_t before = memory.allocated();
      memory.reset_peak();
      timer.begin_iteration();
      for (std::size_t i = r.boundaries[it]; i < r.boundaries[it + 1]; ++i) {
        const auto& op = r.schedule->ops[i];
        timer.begin_op(op);
        r.state->execute(op);
        timer.end_op(op);
      }
      const IterationTimes times = timer.end_iteration();
      if (!measured) continue;
      r.peak_memory = std::max(r.peak_memory, resident + memory.peak() - before);
      r.step_times.push_back(times.iteration);
      for (std::size_t i = r.boundaries[it]; i < r.boundaries[it + 1]; ++i) {
        const auto& span = times.ops[i - r.boundaries[it]];
        r.result.per_op.push_back(exec::op_timing(r.schedule->ops[i], span.first, span.second));
      }
    }
  };

  for (auto& r : runs) run_iterations(r, o.warmup, false);
  const int blocks = ceil_div(o.steps, o.block);
  for (int b = 0; b < blocks; ++b) {
    const int measured = std::min(o.block, o.steps - b * o.block);
    for (auto& r : runs) {
      if (o.progress)
        fmt::print(stderr, "run: block {}/{}: {} ({} steps)\n", b + 1, blocks, r.result.ordering,
                   measured);
      run_iterations(r, 1, false);  // re-warm: the other orderings ran in between
      run_iterations(r, measured, true);
    }
  }
  for (auto& r : runs)  // the rest, e.g. forward-fused's final flush; never measured
    run_iterations(r, int(r.boundaries.size()) - 1 - r.next_iteration, false);

  RunReport report;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    auto& res = runs[k].result;
    exec::set_step_times(res, std::move(runs[k].step_times));
    res.peak_memory_bytes = runs[k].peak_memory;
    if (report.baseline < 0 && schedules[k].ordering == schedule::Ordering::Eager)
      report.baseline = int(k);
    report.results.push_back(std::move(res));
  }
  if (report.baseline >= 0) {
    for (const auto& r : report.results)
      report.speedups.push_back(
          bootstrap_speedup(report.results[report.baseline].step_times, r.step_times));
  }
  return report;
}

}  // namespace fusim::backend
