#include "backend/op_profiler.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <algorithm>
#include <functional>
#include <map>

#include "backend/device_timer.h"
#include "backend/executor.h"
#include "backend/host_allocator.h"
#include "backend/memory_guard.h"
#include "backend/run_plan.h"
#include "backend/step_probe.h"
#include "backend/training_state.h"
#include "compute/op_signature.h"
#include "core/error.h"
#include "exec/run_result.h"
#include "schedule/request.h"

namespace fusim::backend {
namespace {

// The (kind, layer) that stands for a signature: what the backend executes for it.
using Representative = std::pair<schedule::OpKind, int>;

constexpr int kMaxColdRepeats = 9;

struct Needed {
  std::string signature, description;
  Representative rep;
  int per_step = 0;  // ops with this signature in one eager step
};

// Reads `buffer` (one word per 64 B line) on the op's own intra-op threads, so that every
// core's caches hold clean lines of it and none of the op's tensors; returns the sum so the
// reads are not optimized away. Read, not written: evicting a clean line writes nothing
// back, as with the simulation's empty caches. On the op's threads, not the main one: a
// private L2 is evicted only by its own core, and the pool's threads must not fall asleep
// during a long single-threaded sweep (a real step's ops follow each other without such
// gaps, and waking them costs tens of us per parallel region).
std::int64_t sweep(const std::vector<std::int64_t>& buffer) {
  constexpr std::int64_t kLine = 64 / sizeof(std::int64_t);
  const std::int64_t lines = std::int64_t(buffer.size()) / kLine;
  return at::parallel_reduce(
      0, lines, /*grain_size=*/4096, std::int64_t(0),
      [&](std::int64_t begin, std::int64_t end, std::int64_t sum) {
        for (std::int64_t l = begin; l < end; ++l) sum += buffer[std::size_t(l * kLine)];
        return sum;
      },
      std::plus<std::int64_t>());
}

// Times `op` run `reps` + 1 times, each from the step state `before`, the first run
// discarded; with a non-empty `evict`, the buffer is swept before each run (cold). Leaves
// the state as after one run from `before`.
std::vector<Tick> time_repeated(TrainingState& state, const TrainingState::OpInputs& before,
                                const schedule::Op& op, int reps, DeviceTimer& timer,
                                const std::vector<std::int64_t>& evict = {}) {
  std::vector<Tick> times;
  volatile std::int64_t sink = 0;
  for (int r = 0; r <= reps; ++r) {
    state.restore(before);
    if (!evict.empty()) sink = sink + sweep(evict);
    timer.begin_iteration();
    timer.begin_op(op);
    state.execute(op);
    timer.end_op(op);
    const IterationTimes t = timer.end_iteration();
    if (r > 0) times.push_back(t.ops.at(0).second - t.ops.at(0).first);
  }
  return times;
}

struct Quantiles {
  Tick median, p25, p75;
};
Quantiles quantiles(const std::vector<Tick>& times) {
  std::vector<double> v(times.begin(), times.end());
  return {Tick(exec::quantile(v, 0.5) + 0.5), Tick(exec::quantile(v, 0.25) + 0.5),
          Tick(exec::quantile(v, 0.75) + 0.5)};
}
}  // namespace

namespace {
exec::OpProfile measure_ops(const workload::Trace& trace,
                            const std::vector<schedule::Schedule>& schedules,
                            const OptimizerConfig& optimizer, const ProfileOptions& o) {
  check_device(o.device);
  FUSIM_ASSERT(!schedules.empty() && schedules[0].ordering == schedule::Ordering::Eager &&
                   schedules[0].steps >= 2,
               "profile_ops needs an eager schedule of at least 2 steps first");
  if (o.min_repeats < 1 || o.max_repeats < o.min_repeats)
    throw InputError(fmt::format("profile: need 1 <= min repeats <= max repeats, got {} and {}",
                                 o.min_repeats, o.max_repeats));
  if (o.evict_bytes < 0 || o.evict_bytes > (std::int64_t(1) << 36))
    throw InputError(
        fmt::format("profile: --evict: expected 0 to 64GiB, got {} bytes", o.evict_bytes));
  // Distinct values, written once, so the pages exist before any timed run.
  std::vector<std::int64_t> evict(std::size_t(o.evict_bytes) / sizeof(std::int64_t));
  for (std::size_t i = 0; i < evict.size(); ++i) evict[i] = std::int64_t(i);
  check_device_memory({schedules[0]}, o.device);
  if (o.threads > 0) at::set_num_threads(o.threads);
  keep_freed_memory_in_heap();  // as measured runs do (backend/host_allocator.h)
  const schedule::Schedule& eager = schedules[0];

  // Every signature of every schedule, in first-seen order, with its representative.
  std::vector<Needed> needed;
  std::map<std::string, std::size_t> index;
  for (const auto& s : schedules)
    for (const auto& op : s.ops) {
      if ((op.kernels == 0 && !o.views) || op.layer < 0 || (o.measure && !o.measure(op))) continue;
      const auto sig = compute::op_signature(trace, s, op);
      auto [it, fresh] = index.emplace(sig.key, needed.size());
      if (fresh) needed.push_back({sig.key, sig.description, {op.kind, op.layer}, 0});
      if (&s == &eager && op.step == 1) ++needed[it->second].per_step;
    }

  const bool cuda = o.device == "cuda";
  TrainingState state(trace, eager, optimizer, at::Device(cuda ? at::kCUDA : at::kCPU), o.seed);
  const std::vector<int> openers = schedule::step_openers(eager);
  const std::size_t step1 = std::size_t(openers.at(1));
  const std::size_t step2 = eager.steps > 2 ? std::size_t(openers.at(2)) : eager.ops.size();
  for (std::size_t i = 0; i < step1; ++i) state.execute(eager.ops[i]);  // grads, state

  DeviceTimer timer(cuda);
  std::map<Representative, exec::ProfiledOp> measured;
  std::map<Representative, int> wanted;
  for (const auto& n : needed) ++wanted[n.rep];
  int done = 0;
  for (std::size_t i = step1; i < step2; ++i) {
    const schedule::Op& op = eager.ops[i];
    const Representative rep{op.kind, op.layer};
    if ((op.kernels == 0 && !o.views) || !wanted.count(rep) || measured.count(rep)) {
      state.execute(op);
      continue;
    }
    // Enough runs for about target_s in all, from one trial run's time.
    const TrainingState::OpInputs before = state.step_state();
    const std::vector<Tick> trial = time_repeated(state, before, op, 1, timer);
    const double one = std::max(1e-7, to_ms(trial[0]) / 1e3);
    const int reps = std::clamp(int(o.target_s / one), o.min_repeats, o.max_repeats);
    exec::ProfiledOp p;
    const Quantiles warm = quantiles(time_repeated(state, before, op, reps, timer));
    p.median = warm.median;
    p.p25 = warm.p25;
    p.p75 = warm.p75;
    p.repeats = reps;
    if (!evict.empty()) {
      // Right after the warm runs, so that both see the machine in the same state. Each run
      // costs a sweep of the buffer: fewer of them.
      p.cold_repeats = std::min(reps, std::max(o.min_repeats, kMaxColdRepeats));
      const Quantiles cold =
          quantiles(time_repeated(state, before, op, p.cold_repeats, timer, evict));
      p.cold_median = cold.median;
      p.cold_p25 = cold.p25;
      p.cold_p75 = cold.p75;
    }
    p.layer = trace.layers.at(std::size_t(op.layer)).name;
    measured.emplace(rep, p);
    ++done;
    if (o.progress)
      o.progress(done, int(wanted.size()), compute::op_signature(trace, eager, op).description);
  }

  exec::OpProfile profile;
  profile.evict_bytes = o.evict_bytes;
  profile.device = o.device;
  profile.threads = o.threads > 0 ? o.threads : at::get_num_threads();
  profile.optimizer = eager.optimizer;
  profile.impl = std::string(schedule::to_string(eager.impl));
  for (const auto& n : needed) {
    auto it = measured.find(n.rep);
    FUSIM_ASSERT(it != measured.end(),
                 fmt::format("{}: no op of its kind and layer in step 1 of the eager schedule",
                             n.description));
    exec::ProfiledOp p = it->second;
    p.signature = n.signature;
    p.description = n.description;
    p.kind = std::string(schedule::to_string(n.rep.first));
    p.op = std::string(workload::to_string(trace.layers.at(std::size_t(n.rep.second)).op));
    p.per_step = n.per_step;
    profile.ops.push_back(std::move(p));
  }
  return profile;
}
}  // namespace

exec::OpProfile profile_ops(const workload::Trace& trace,
                            const std::vector<schedule::Schedule>& schedules,
                            const OptimizerConfig& optimizer, const ProfileOptions& o) {
  exec::OpProfile profile;
  // One state is executed: the eager schedule's (measure_ops checks that it comes first).
  const std::vector<schedule::Schedule> executed(schedules.begin(),
                                                 schedules.begin() + (schedules.empty() ? 0 : 1));
  guard_out_of_memory(executed, o.device,
                      [&] { profile = measure_ops(trace, schedules, optimizer, o); });
  return profile;
}

exec::OpProfile profile_trace(const workload::Trace& trace, const std::string& optimizer,
                              schedule::OptimizerImpl impl, ProfileOptions options) {
  schedule::ScheduleRequest request;
  request.optimizer = optimizer;
  request.impl = impl;
  request.steps = 4;
  request.gpu_streams = options.device == "cuda";
  request.device = request.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  const auto schedules =
      schedule::build_schedules(trace,
                                {schedule::Ordering::Eager, schedule::Ordering::BackwardFused,
                                 schedule::Ordering::ForwardFused},
                                request);
  // Not libtorch's own default, which can be 1: a profile must fit the calibrated machine
  // validate and simulate use with it (exec/op_profile.h checks the match).
  if (options.threads == 0 && options.device == "cpu") options.threads = allowed_cpus();
  return profile_ops(trace, schedules, optimizer_config(optimizer), options);
}

exec::OpProfile profile_in_step(const workload::Trace& trace, const std::string& optimizer,
                                schedule::OptimizerImpl impl, schedule::Execution execution,
                                RunOptions options) {
  if (options.threads == 0 && options.device == "cpu") options.threads = allowed_cpus();
  options.max_time_s = 0;
  options.executions = {execution};
  const auto schedules =
      build_run_schedules(trace, {schedule::Ordering::Eager}, optimizer, impl, options);
  const RunReport report = run_schedules(trace, schedules, optimizer_config(optimizer), options);
  exec::OpProfile p =
      exec::in_step_profile(trace, schedules.at(0), report.results.at(0), "--in-step");
  p.threads = options.threads;
  p.device = options.device;
  return p;
}

}  // namespace fusim::backend
