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
#include "backend/memory_guard.h"
#include "backend/memory_probe.h"
#include "backend/speed_probe.h"
#include "backend/step_probe.h"
#include "backend/step_state.h"
#include "core/error.h"
#include "core/int_math.h"
#include "core/progress.h"
#include "exec/run_result.h"

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

struct MeasuredStep {
  Tick time = 0;
  int round = 0;  // the sampling round (one block of every ordering) it was measured in
  StepSample sample;
  std::vector<exec::OpTiming> ops;
};

struct OrderingRun {
  const schedule::Schedule* schedule = nullptr;
  std::unique_ptr<StepState> state;
  std::vector<std::size_t> boundaries;
  int next_iteration = 0;  // next iteration of the schedule to run
  int executed = 0;        // iterations run, repeats included (the per-op `step`)
  exec::RunResult result;
  std::vector<MeasuredStep> steps;
  std::int64_t peak_memory = 0;
};

std::vector<bool> dropped_steps(const OrderingRun& r, double min_cpu_ratio) {
  std::vector<StepSample> samples;
  for (const auto& s : r.steps) samples.push_back(s.sample);
  return drop_disturbed(samples, min_cpu_ratio);
}

std::vector<Tick> kept_times(const OrderingRun& r, const std::vector<bool>& drop) {
  std::vector<Tick> t;
  for (std::size_t i = 0; i < r.steps.size(); ++i)
    if (!drop[i]) t.push_back(r.steps[i].time);
  return t;
}

std::vector<int> kept_rounds(const OrderingRun& r, const std::vector<bool>& drop) {
  std::vector<int> t;
  for (std::size_t i = 0; i < r.steps.size(); ++i)
    if (!drop[i]) t.push_back(r.steps[i].round);
  return t;
}

double median_of(std::vector<double> v) {
  return v.empty() ? -1 : exec::quantile(std::move(v), 0.5);
}
}  // namespace

int schedule_steps_for(const RunOptions& o) {
  const int blocks = ceil_div(o.steps, o.block);
  return o.warmup + blocks + o.steps + 1;
}

std::vector<std::size_t> round_order(int round, std::size_t count) {
  if (count == 0) return {};
  const std::size_t rows = count % 2 == 0 ? count : 2 * count;
  const std::size_t row = std::size_t(round) % rows;
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) {
    // Row 0: 0, 1, count-1, 2, count-2, ...
    const std::size_t first = i % 2 == 1 ? (i + 1) / 2 : (count - i / 2) % count;
    order[i] = (first + row) % count;
  }
  if (row >= count) std::reverse(order.begin(), order.end());
  return order;
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

void check_run_options(const RunOptions& o) {
  check_device(o.device);
  if (o.warmup < 0 || o.steps < 2 || o.block < 1)
    throw InputError(fmt::format(
        "run: need --warmup >= 0, --measured-steps >= 2 and --steps-per-block >= 1, got "
        "{}, {}, {}",
        o.warmup, o.steps, o.block));
  if (o.max_time_s < 0)
    throw InputError(fmt::format("--max-time: expected seconds >= 0, got {}", o.max_time_s));
  if (!(o.ci_points > 0))
    throw InputError(fmt::format("--ci-points: expected points > 0, got {}", o.ci_points));
  if (o.min_cpu_ratio < 0 || o.min_cpu_ratio >= 1)
    throw InputError(
        fmt::format("--min-cpu-ratio: expected a share in [0, 1), got {}", o.min_cpu_ratio));
}

namespace {
// run_schedules once its options and the memory need are checked.
RunReport execute_schedules(const workload::Trace& trace,
                            const std::vector<schedule::Schedule>& schedules,
                            const OptimizerConfig& optimizer, const RunOptions& o) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  RunReport report;
  auto& cond = report.conditions;
  cond.load_before = load_average();
  const CpuReading cpu_before = read_cpu();
  cond.cpus = online_cpus();
  if (o.threads > 0) at::set_num_threads(o.threads);
  cond.threads = at::get_num_threads();
  keep_freed_memory_in_heap();
  const bool cuda = o.device == "cuda";
  PinnedThreads pinned;
  if (o.pin && !cuda) pinned = pin_threads(cond.threads);
  cond.pinned_cpus = pinned.cpus;
  cond.pin_note = pinned.note;
  const at::Device device(cuda ? at::kCUDA : at::kCPU);
  const int needed = schedule_steps_for(o);

  std::vector<OrderingRun> runs(schedules.size());
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    auto& r = runs[k];
    r.schedule = &schedules[k];
    FUSIM_ASSERT(
        schedules[k].steps >= needed,
        fmt::format("schedule has {} steps, the run needs {}", schedules[k].steps, needed));
    r.state = make_step_state(trace, schedules[k], optimizer, device, o.seed);
    r.boundaries = iteration_boundaries(schedules[k]);
    r.result = exec::result_header(schedules[k], o.device);
  }

  DeviceTimer timer(cuda);
  MemoryCounter memory(cuda);
  StepProbe probe(pinned.tids);
  // The shared progress reporter (core/progress.h; issue 23, point 5): the planned
  // iterations of every ordering (warm-up, one re-warm per block, the measured steps), with
  // rate and ETA; then the sampling rounds as a share of --max-time (an upper bound: they
  // stop as soon as every CI is narrow enough).
  const int blocks = ceil_div(o.steps, o.block);
  Progress planned("run: measuring", runs.size() * std::size_t(o.warmup + blocks + o.steps), 0,
                   o.progress, "steps");
  // Runs `count` iterations of a schedule; measured ones are kept with their samples.
  // `repeat`: past the schedule's last steady iteration (the one before the final
  // flush), run that one again. `round`: the sampling round of the measured ones.
  auto run_iterations = [&](OrderingRun& r, int count, bool measured, bool repeat, int round = 0) {
    const int last = int(r.boundaries.size()) - 2;  // the final iteration's index
    for (int n = 0; n < count; ++n) {
      int it = r.next_iteration;
      if (repeat && it >= last) {
        it = last - 1;
      } else {
        ++r.next_iteration;
      }
      FUSIM_ASSERT(it >= 0 && it + 1 < int(r.boundaries.size()), "ran past the schedule's steps");
      // Every ordering's state is resident at once: its own peak is what it holds between
      // iterations plus the most it allocates on top within one (nothing else runs then).
      const std::int64_t resident = measured ? r.state->resident_bytes() : 0;
      const std::int64_t before = memory.allocated();
      memory.reset_peak();
      probe.begin();
      timer.begin_iteration();
      for (std::size_t i = r.boundaries[it]; i < r.boundaries[it + 1]; ++i) {
        const auto& op = r.schedule->ops[i];
        timer.begin_op(op);
        r.state->execute(op);
        timer.end_op(op);
      }
      IterationTimes times = timer.end_iteration();
      planned.advance();  // past the plan (sampling rounds, the final flush): no effect
      const StepSample sample = probe.end(times.iteration);
      const int executed = r.executed++;
      // Graph execution: ops that ran inside others (B inside L's backward) take the
      // spans its hooks measured.
      for (const auto& inner : r.state->take_inner_spans()) {
        const auto at = static_cast<std::size_t>(inner.op);
        FUSIM_ASSERT(at >= r.boundaries[it] && at < r.boundaries[it + 1],
                     "an inner span of an op of the iteration");
        times.ops[at - r.boundaries[it]] = {timer.ticks_at(inner.start), timer.ticks_at(inner.end)};
      }
      if (!measured) continue;
      r.peak_memory = std::max(r.peak_memory, resident + memory.peak() - before);
      MeasuredStep step{times.iteration, round, sample, {}};
      for (std::size_t i = r.boundaries[it]; i < r.boundaries[it + 1]; ++i) {
        const auto& span = times.ops[i - r.boundaries[it]];
        step.ops.push_back(exec::op_timing(r.schedule->ops[i], span.first, span.second));
        step.ops.back().step += executed - it;  // repeats of a steady step count on
      }
      r.steps.push_back(std::move(step));
    }
  };

  // Baselines: the eager schedule of each execution.
  report.baselines.assign(schedules.size(), -1);
  for (std::size_t k = 0; k < schedules.size(); ++k)
    for (std::size_t b = 0; b < schedules.size(); ++b)
      if (schedules[b].ordering == schedule::Ordering::Eager &&
          schedules[b].execution == schedules[k].execution) {
        report.baselines[k] = int(b);
        break;
      }
  for (std::size_t k = 0; k < schedules.size() && report.baseline < 0; ++k)
    if (schedules[k].ordering == schedule::Ordering::Eager) report.baseline = int(k);
  // Every speedup CI within +-ci_points with the steps kept so far.
  auto converged = [&] {
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const int b = report.baselines[k];
      if (b < 0 || b == int(k)) continue;
      const auto& base = runs[std::size_t(b)];
      const auto drop_base = dropped_steps(base, o.min_cpu_ratio);
      const auto drop_cand = dropped_steps(runs[k], o.min_cpu_ratio);
      if (paired_speedup(kept_times(base, drop_base), kept_rounds(base, drop_base),
                         kept_times(runs[k], drop_cand), kept_rounds(runs[k], drop_cand))
              .half_width_points() >= o.ci_points)
        return false;
    }
    return true;
  };
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };

  // The host's conditions before each round: its DRAM bandwidth and its speed at small ops.
  auto probe_dram = [&] {
    if (o.dram_probe && !cuda)
      cond.dram_triad_gbs.push_back(probe::dram_probe_gbs(cond.threads, pinned.cpus));
    if (o.speed_probe && !cuda) cond.op_probe_us.push_back(probe::op_speed_probe_us(0));
    if (o.dram_probe && !cuda && pinned.cpus.size() >= 2)
      cond.core_to_core_ns.push_back(probe::core_to_core_ns(pinned.cpus));
  };
  for (auto& r : runs) run_iterations(r, o.warmup, false, false);
  for (int b = 0; b < blocks; ++b) {
    const int measured = std::min(o.block, o.steps - b * o.block);
    probe_dram();
    for (const std::size_t k : round_order(b, runs.size())) {
      run_iterations(runs[k], 1, false, false);  // re-warm: the other orderings ran in between
      run_iterations(runs[k], measured, true, false, b);
    }
  }
  planned.finish();
  int extra_rounds = 0;
  {
    const bool extends = o.max_time_s > 0 && !converged() && elapsed() < o.max_time_s;
    auto share = [&] { return std::min(1.0, elapsed() / o.max_time_s); };
    Progress sampling(fmt::format("run: sampling until every speedup's 95% CI is within +-{} "
                                  "points, or --max-time {} s",
                                  o.ci_points, o.max_time_s),
                      100, extends ? std::size_t(100 * share()) : 0, o.progress && extends, "%");
    int round = blocks;
    extra_rounds = extend_sampling(converged, elapsed, o.max_time_s, [&] {
      probe_dram();
      for (const std::size_t k : round_order(round, runs.size())) {
        run_iterations(runs[k], 1, false, true);
        run_iterations(runs[k], o.block, true, true, round);
      }
      ++round;
      sampling.set_fraction(share());
    });
  }
  cond.rounds += extra_rounds;
  cond.converged = converged();
  if (o.progress && extra_rounds > 0)
    fmt::print(stderr, "run: {} sampling round(s) of {} step(s) per schedule in {:.1f} s: {}\n",
               extra_rounds, o.block, elapsed(),
               cond.converged ? "every speedup's CI is narrow enough" : "--max-time spent");
  for (auto& r : runs)  // the rest, e.g. forward-fused's final flush; never measured
    run_iterations(r, int(r.boundaries.size()) - 1 - r.next_iteration, false, false);
  cond.load_after = load_average();
  const OtherCpu others = other_cpu_between(cpu_before, read_cpu());
  cond.other_cores = others.cores;
  cond.steal_cores = others.steal_cores;
  cond.elapsed_s = elapsed();

  for (std::size_t k = 0; k < runs.size(); ++k) {
    auto& run = runs[k];
    auto& res = run.result;
    StepQuality q;
    q.dropped = dropped_steps(run, o.min_cpu_ratio);
    std::vector<double> ratios, waits, faults;
    for (std::size_t i = 0; i < run.steps.size(); ++i) {
      const auto& s = run.steps[i];
      q.samples.push_back(s.sample);
      if (q.dropped[i]) {
        ++q.steps_dropped;
        continue;
      }
      ratios.push_back(s.sample.cpu_ratio());
      if (s.sample.waited >= 0) waits.push_back(double(s.sample.waited) / double(s.sample.wall));
      faults.push_back(double(s.sample.minor_faults));
      res.per_op.insert(res.per_op.end(), s.ops.begin(), s.ops.end());
    }
    q.steps_run = int(run.steps.size());
    q.cpu_ratio = median_of(ratios);
    q.waited_share = median_of(waits);
    q.minor_faults = median_of(faults);
    exec::set_step_times(res, kept_times(run, q.dropped));
    res.step_rounds = kept_rounds(run, q.dropped);
    res.peak_memory_bytes = run.peak_memory;
    report.results.push_back(std::move(res));
    report.quality.push_back(std::move(q));
  }
  if (std::any_of(report.baselines.begin(), report.baselines.end(), [](int b) { return b >= 0; }))
    for (std::size_t k = 0; k < report.results.size(); ++k) {
      const int b = report.baselines[k];
      if (b < 0) {
        report.speedups.emplace_back();
        continue;
      }
      const auto& base = report.results[std::size_t(b)];
      const auto& cand = report.results[k];
      report.speedups.push_back(
          paired_speedup(base.step_times, base.step_rounds, cand.step_times, cand.step_rounds));
    }
  report.notes = describe_run(report, o);
  return report;
}
}  // namespace

RunReport run_schedules(const workload::Trace& trace,
                        const std::vector<schedule::Schedule>& schedules,
                        const OptimizerConfig& optimizer, const RunOptions& o) {
  check_run_options(o);
  check_device_memory(schedules, o.device);
  RunReport report;
  guard_out_of_memory(schedules, o.device,
                      [&] { report = execute_schedules(trace, schedules, optimizer, o); });
  return report;
}

}  // namespace fusim::backend
