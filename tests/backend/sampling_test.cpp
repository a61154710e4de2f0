// Measurements that can decide (issue 16, point 5): the rule that stops sampling, the rule
// that drops steps disturbed by other processes, and the sentences a run ends with, on
// synthetic samples whose outcome is worked out by hand.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>  // before Catch: c10's glog CHECK would replace Catch's
#include <pthread.h>
#include <sched.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "backend/executor.h"
#include "backend/run_plan.h"
#include "backend/speed_probe.h"
#include "backend/step_probe.h"
#include "backend/step_stats.h"
#include "core/error.h"
#include "workload/trace_io.h"

using namespace fusim;
using backend::StepSample;

namespace {
StepSample sample(Tick wall, Tick cpu, Tick waited = -1) {
  StepSample s;
  s.wall = wall;
  s.cpu = cpu;
  s.waited = waited;
  return s;
}
bool all_narrow(const std::vector<Tick>& base, const std::vector<Tick>& cand, double points) {
  return backend::bootstrap_speedup(base, cand).half_width_points() < points;
}
// Whether one of the notes contains `text`.
bool has(const std::vector<std::string>& notes, const std::string& text) {
  for (const auto& n : notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE(
    "A step is disturbed when its main thread ran < min share of its wall time, or its "
    "threads waited for a core > 1 - min share of it") {
  CHECK_FALSE(backend::disturbed(sample(1000, 950), 0.9));
  CHECK(backend::disturbed(sample(1000, 899), 0.9));  // preempted (or asleep on a worker)
  CHECK_FALSE(backend::disturbed(sample(1000, 1000, 99), 0.9));  // waited 0.099 of it
  CHECK(backend::disturbed(sample(1000, 1000, 101), 0.9));       // waited for a core
  CHECK_FALSE(backend::disturbed(sample(1000, 1000, -1), 0.9));  // wait unknown: CPU only
  CHECK_FALSE(backend::disturbed(sample(1000, 10, 900), 0.0));   // 0: never
}

TEST_CASE("Disturbed steps are dropped, unless fewer than 2 would be left") {
  const auto quiet = sample(1000, 1000), busy = sample(1000, 500);
  CHECK((backend::drop_disturbed({quiet, busy, quiet, busy}, 0.9) ==
         std::vector<bool>{false, true, false, true}));
  // One quiet step is no sample: all kept (the notes say the figures are from a busy host).
  CHECK((backend::drop_disturbed({busy, quiet, busy}, 0.9) ==
         std::vector<bool>{false, false, false}));
  CHECK((backend::drop_disturbed({busy, busy}, 0.0) == std::vector<bool>{false, false}));
}

TEST_CASE("Sampling stops at the first round whose speedup CI is within +-1 point") {
  // Candidate: always 100. Baseline: round 1 = 90, 110, 90, 110, 90 (its resampled median
  // is 90 or 110 nearly always: the CI spans about [0.9, 1.1], +-10 points); each later
  // round adds 20 steps of 100. After round 2, 5 of 25 baseline steps are off 100: a
  // resample's median (its 13th value) is off 100 only if 13 of 25 draws hit the 2 (or 3)
  // steps on one side, p = 0.08 or 0.12 each: never in 2000 seeded resamples. The CI is
  // [1, 1], and sampling stops after one extension round.
  std::vector<Tick> base{90, 110, 90, 110, 90}, cand{100, 100, 100, 100, 100};
  REQUIRE_FALSE(all_narrow(base, cand, 1.0));
  double clock = 0;
  int rounds_run = 0;
  auto round = [&] {
    ++rounds_run;
    for (int i = 0; i < 20; ++i) {
      base.push_back(100);
      cand.push_back(100);
    }
    clock += 1;
  };
  auto converged = [&] { return all_narrow(base, cand, 1.0); };
  auto elapsed = [&] { return clock; };
  CHECK(backend::extend_sampling(converged, elapsed, 100, round) == 1);
  CHECK(rounds_run == 1);
  CHECK(base.size() == 25);
  const auto s = backend::bootstrap_speedup(base, cand);
  CHECK(s.low == 1.0);
  CHECK(s.high == 1.0);
}

TEST_CASE("Sampling stops at --max-time when the CI never narrows, and never without it") {
  // Two orderings 10% apart in alternation: the baseline's median flips between 90 and 110
  // however many steps come, so the CI stays wide. One round lasts 1 s on this clock: with
  // --max-time 2.5, rounds start at 0, 1 and 2 s, and none at 3 s.
  std::vector<Tick> base{90, 110}, cand{100, 100};
  double clock = 0;
  auto round = [&] {
    base.push_back(90);
    base.push_back(110);
    cand.push_back(100);
    cand.push_back(100);
    clock += 1;
  };
  auto converged = [&] { return all_narrow(base, cand, 1.0); };
  auto elapsed = [&] { return clock; };
  CHECK(backend::extend_sampling(converged, elapsed, 2.5, round) == 3);
  CHECK(clock == 3);
  CHECK(backend::extend_sampling(converged, elapsed, 0, round) == 0);  // 0: no extension
  CHECK(clock == 3);
}

TEST_CASE("run: extension rounds add one block per schedule until the CI target or the time") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
  backend::RunOptions o;
  o.warmup = 1;
  o.steps = 2;
  o.block = 2;
  o.pin = false;
  o.min_cpu_ratio = 0;  // every step kept: the counts below are exact
  // No DRAM probe: its 128 MiB triad before each round (page faults included) took most of
  // the 0.5 s below on a loaded 2-core host, leaving no time for a second round.
  o.dram_probe = false;
  const auto schedules = backend::build_run_schedules(
      trace, {schedule::Ordering::Eager, schedule::Ordering::ForwardFused}, "sgd",
      schedule::OptimizerImpl::Foreach, o);
  SECTION("a target reached at once: no extension") {
    o.ci_points = 1e9;
    o.max_time_s = 100;
    const auto report =
        backend::run_schedules(trace, schedules, backend::optimizer_config("sgd"), o);
    CHECK(report.conditions.rounds == 1);
    CHECK(report.conditions.converged);
    for (const auto& r : report.results) CHECK(r.steps_measured == 2);
  }
  SECTION("a target no run of ~0.1 ms steps reaches in 0.5 s: rounds until the time is up") {
    o.ci_points = 1e-9;
    o.max_time_s = 0.5;
    const auto report =
        backend::run_schedules(trace, schedules, backend::optimizer_config("sgd"), o);
    const int rounds = report.conditions.rounds;
    CHECK(rounds >= 2);
    CHECK_FALSE(report.conditions.converged);
    CHECK(report.conditions.elapsed_s >= 0.5);
    for (std::size_t k = 0; k < report.results.size(); ++k) {
      const auto& r = report.results[k];
      CHECK(r.steps_measured == 2 * rounds);  // 2 + one block of 2 per extra round
      CHECK(report.quality[k].steps_run == 2 * rounds);
      // Iterations: warm-up 0, re-warm 1, measured 2-3, then per round a re-warm and 2
      // measured steps of the last steady iteration, numbered on: the last is 3 x rounds.
      CHECK(r.per_op.back().step == 3 * rounds);
    }
    // The schedule's own steps sufficed: forward-fused's flush ran after the repeats.
    CHECK(report.notes.back().find("still wider than +-1e-09") != std::string::npos);
  }
}

TEST_CASE("run's notes: the order within a round, when it moved a speedup") {
  // Two orderings: round_order puts eager first in the even rounds. Eager takes 1.25x the
  // fused ordering's time in those and 1.0x in the odd ones (a spread of 2% each way).
  backend::RunReport report;
  exec::RunResult eager, fused;
  eager.ordering = "eager";
  fused.ordering = "forward-fused";
  eager.execution = fused.execution = "layers";
  for (int round = 0; round < 6; ++round) {
    const double spread = 1 + 0.02 * (round / 2 - 1);
    eager.step_times.push_back(Tick((round % 2 == 0 ? 125000 : 100000) * spread));
    fused.step_times.push_back(100000);
    eager.step_rounds.push_back(round);
    fused.step_rounds.push_back(round);
  }
  report.results = {eager, fused};
  report.baseline = 0;
  report.baselines = {0, 0};
  report.speedups = {backend::SpeedupInterval{},
                     backend::paired_speedup(eager.step_times, eager.step_rounds, fused.step_times,
                                             fused.step_rounds)};
  report.quality.resize(2);
  backend::RunOptions o;
  auto has = [](const std::vector<std::string>& notes, const std::string& text) {
    for (const auto& n : notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(has(backend::describe_run(report, o),
            "forward-fused: the order within a round moved its speedup: 1.250 in the 3 rounds "
            "where eager ran first, 1.000 in the 3 where it ran after"));
  // The same ratio whichever ran first: nothing said.
  for (int round = 0; round < 6; ++round)
    report.results[0].step_times[std::size_t(round)] = Tick(110000 * (1 + 0.02 * (round / 2 - 1)));
  CHECK_FALSE(has(backend::describe_run(report, o), "the order within a round"));
}

TEST_CASE("run's notes: inside or outside the noise, busy machine, dropped steps, wide CIs") {
  backend::RunReport report;
  exec::RunResult eager, fused;
  eager.ordering = "eager";
  fused.ordering = "backward-fused";
  eager.execution = fused.execution = "layers";
  eager.step_times = {100, 101};
  fused.step_times = {95, 96};
  report.results = {eager, fused};
  report.baseline = 0;
  report.baselines = {0, 0};
  backend::SpeedupInterval one, s;
  s.speedup = 1.02;
  s.low = 0.99;
  s.high = 1.05;
  report.speedups = {one, s};
  backend::StepQuality quiet, disturbed;
  quiet.steps_run = 2;
  quiet.samples = {sample(1000, 1000), sample(1000, 1000)};
  disturbed.steps_run = 3;
  disturbed.steps_dropped = 1;
  disturbed.samples = {sample(1000, 1000), sample(1000, 400), sample(1000, 1000)};
  report.quality = {quiet, disturbed};
  report.conditions.cpus = 2;
  report.conditions.threads = 2;
  report.conditions.load_before = 1.2;  // > 2 - 2 + 0.5: someone else runs
  report.conditions.pin_note = "threads not pinned: 4 threads on the 2 cores this process may use";
  backend::RunOptions o;
  o.max_time_s = 0;
  const auto notes = backend::describe_run(report, o);
  auto has = [&](const std::string& text) {
    for (const auto& n : notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(has("busy machine: load average 1.20 before the run on 2 cores for 2 threads"));
  CHECK(has("dropped 1 of 5 measured steps as disturbed"));
  CHECK(has("threads not pinned: 4 threads"));
  // Two threads on two cores: libtorch's default used every core, nothing to say.
  CHECK_FALSE(has("libtorch's default here"));
  CHECK(
      has("backward-fused: 1.020x eager, 95% CI [0.990, 1.050]: inside the noise, this run "
          "cannot tell it from eager"));
  // Half width 3 points >= 1: said, with the way to narrow it.
  CHECK(
      has("95% CIs wider than +-1 point(s): backward-fused +-3.0 (raise --measured-steps or "
          "--max-time)"));
  report.speedups[1].low = 1.015;
  report.speedups[1].high = 1.025;
  report.conditions.load_before = 0.3;
  // /proc/stat's measurement over the run takes the place of the load average: a load of 2.4
  // (a run just before this one) with 0.1 cores used by others is quiet, 0.3 cores is not
  // (2 threads on 2 cores leave nothing free: 0.25 cores is the margin). Steal time is said
  // apart.
  {
    auto with = [&](double load, double others, double steal) {
      report.conditions.load_before = load;
      report.conditions.other_cores = others;
      report.conditions.steal_cores = steal;
      std::string all;
      for (const auto& n : backend::describe_run(report, o)) all += n + "\n";
      return all;
    };
    CHECK(with(2.4, 0.1, 0).find("busy machine") == std::string::npos);
    CHECK(with(0, 0.3, 0).find("busy machine: other processes kept 0.30 cores busy on average "
                               "during the run") != std::string::npos);
    CHECK(with(0, 0.1, 0.3).find("0.30 cores of steal time") != std::string::npos);
    CHECK(with(0, 0.1, 0.2).find("steal") == std::string::npos);
    // Three threads on four cores leave one free: 1.2 cores of others is within it.
    report.conditions.cpus = 4;
    report.conditions.threads = 3;
    CHECK(with(0, 1.2, 0).find("busy machine") == std::string::npos);
    CHECK(with(0, 1.3, 0).find("busy machine") != std::string::npos);
    report.conditions.cpus = 2;
    report.conditions.threads = 2;
    report.conditions.other_cores = report.conditions.steal_cores = -1;  // back to the load
    report.conditions.load_before = 0.3;
  }
  const auto quiet_notes = backend::describe_run(report, o);
  bool outside = false, busy = false, wide = false;
  for (const auto& n : quiet_notes) {
    outside |= n.find("faster than eager, outside the noise") != std::string::npos;
    busy |= n.find("busy machine") != std::string::npos;
    wide |= n.find("wider than") != std::string::npos;
  }
  CHECK(outside);
  CHECK_FALSE(busy);
  CHECK_FALSE(wide);  // +-0.5 points

  // libtorch's default of 1 thread on 2 cores (no --threads): said, with the way out; not
  // when the threads were asked for, nor on CUDA.
  report.conditions.threads = 1;
  auto says_default = [&](const backend::RunOptions& opts) {
    for (const auto& n : backend::describe_run(report, opts))
      if (n.find("libtorch's default here is 1 intra-op thread(s) on 2 online cores") !=
          std::string::npos)
        return true;
    return false;
  };
  CHECK(says_default(o));
  backend::RunOptions asked = o;
  asked.threads = 1;
  CHECK_FALSE(says_default(asked));
  backend::RunOptions cuda = o;
  cuda.device = "cuda";
  CHECK_FALSE(says_default(cuda));
}

TEST_CASE("run notes: the two cores' placement, when the core-to-core probe moved") {
  backend::RunReport report;
  backend::RunOptions o;
  // 13.5, 68 and 14 ns (one chiplet's L3, then two): 68 / 13.5 > kPlacementMoved, said, with
  // the median of the three (14).
  report.conditions.core_to_core_ns = {13.5, 68.0, 14.0};
  CHECK(has(backend::describe_run(report, o),
            "the two cores' placement moved during the run: a line one core had just written "
            "took the other 14 to 68 ns to read (median 14) over 3 rounds"));
  // 26.9 / 13.5 = 1.99: not said; nor with one sample or none.
  report.conditions.core_to_core_ns = {13.5, 26.9};
  CHECK_FALSE(has(backend::describe_run(report, o), "placement moved"));
  report.conditions.core_to_core_ns = {68.0};
  CHECK_FALSE(has(backend::describe_run(report, o), "placement moved"));
}

TEST_CASE("run notes: the DRAM probe's spread and its drift from calibration") {
  backend::RunConditions c;
  c.threads = 2;
  // No samples (CUDA, --no-dram-probe): nothing to say.
  CHECK(backend::dram_spread(c).samples == 0);
  CHECK(backend::dram_drift_note(c, 40.0, 2).empty());
  // Four rounds: sorted 20, 30, 34, 40 -> median (30 + 34) / 2 = 32, spread 40 / 20 = 2x.
  c.dram_triad_gbs = {34.0, 20.0, 40.0, 30.0};
  const auto d = backend::dram_spread(c);
  CHECK(d.samples == 4);
  CHECK(d.min == 20.0);
  CHECK(d.max == 40.0);
  CHECK(d.median == 32.0);
  backend::RunReport report;
  report.conditions = c;
  backend::RunOptions o;
  CHECK(has(backend::describe_run(report, o),
            "the host's DRAM bandwidth moved during the run: the probe read 20.0 to 40.0 GB/s "
            "(median 32.0) over 4 rounds"));
  // 40 / 36 = 1.11 < 1 + kDramMoved: steady, no sentence.
  report.conditions.dram_triad_gbs = {36.0, 40.0};
  CHECK_FALSE(has(backend::describe_run(report, o), "DRAM bandwidth moved"));
  // Median 32 against 40 calibrated: 80%, slower.
  CHECK(
      backend::dram_drift_note(c, 40.0, 2)
          .find(
              "median 32.0 GB/s, 80% of the 40.0 GB/s calibrate measured (host.dram_triad_gbs)") !=
      std::string::npos);
  CHECK(backend::dram_drift_note(c, 40.0, 2).find("slower than predicted") != std::string::npos);
  // 32 against 30: 107%, within kDramMoved: nothing.
  CHECK(backend::dram_drift_note(c, 30.0, 2).empty());
  // 32 against 25: 128%, faster.
  CHECK(backend::dram_drift_note(c, 25.0, 2).find("128% of the 25.0 GB/s") != std::string::npos);
  CHECK(backend::dram_drift_note(c, 25.0, 2).find("faster than predicted") != std::string::npos);
  // calibrate's warning: 54.3 / 23.1 / 26.9 (host_s, 2026-12-05) moved; 30.7 / 30.1 / 29.3
  // did not (30.7 / 29.3 = 1.05).
  CHECK(backend::calibration_drift_note({54.3, 23.1, 26.9})
            .find("moved during calibration: the probe read 23.1 to 54.3 GB/s") !=
        std::string::npos);
  CHECK(backend::calibration_drift_note({30.7, 30.1, 29.3}).empty());
  CHECK(backend::calibration_drift_note({30.0}).empty());
  // Calibrated with another thread count: said, not compared.
  CHECK(backend::dram_drift_note(c, 40.0, 1).find("not comparable") != std::string::npos);
}

TEST_CASE("run and validate: the op speed probe's spread and its distance from calibration") {
  backend::RunConditions c;
  c.threads = 2;
  CHECK(backend::speed_drift_note(c, 770.0, 2).empty());  // not probed: nothing to say
  // Sorted 700, 760, 1000, 1100: median 880, spread 1100 / 700 = 1.57x.
  c.op_probe_us = {1000.0, 700.0, 1100.0, 760.0};
  const auto s = backend::sample_spread(c.op_probe_us);
  CHECK(s.samples == 4);
  CHECK(s.min == 700.0);
  CHECK(s.max == 1100.0);
  CHECK(s.median == 880.0);
  backend::RunReport report;
  report.conditions = c;
  backend::RunOptions o;
  CHECK(has(backend::describe_run(report, o),
            "the host's speed moved during the run: the op speed probe took 700 to 1100 us "
            "(median 880) over 4 rounds"));
  report.conditions.op_probe_us = {760.0, 800.0};  // 800 / 760 = 1.05: steady
  CHECK_FALSE(has(backend::describe_run(report, o), "speed moved"));
  // Median 880 against 640 calibrated: 1.375x the time, slower.
  const std::string slow = backend::speed_drift_note(c, 640.0, 2);
  CHECK(slow.find("took 880 us (median), 1.38x the 640 us of calibration") != std::string::npos);
  CHECK(slow.find("slower than predicted") != std::string::npos);
  CHECK(backend::speed_drift_note(c, 800.0, 2).empty());  // 1.10x: within kDramMoved
  CHECK(backend::speed_drift_note(c, 1100.0, 2).find("0.80x") != std::string::npos);
  CHECK(backend::speed_drift_note(c, 1100.0, 2).find("faster than predicted") != std::string::npos);
  CHECK(backend::speed_drift_note(c, 880.0, 1).find("not comparable") != std::string::npos);
  CHECK(backend::calibration_speed_note({770.0, 1020.0, 790.0})
            .find("the op speed probe took 770 to 1020 us") != std::string::npos);
  CHECK(backend::calibration_speed_note({770.0, 800.0, 790.0}).empty());
  // Described at 523 us against a fastest sample of 405: 1.29x, a slow spell.
  const std::string slow_spell = backend::calibration_slow_note({405.0, 523.0, 560.0}, 523.0);
  CHECK(slow_spell.find("the op costs describe the host at 523 us an op speed probe, 1.29x the "
                        "fastest sample (405 us)") != std::string::npos);
  // 1.14x: not a slow spell; nothing from one sample or none.
  CHECK(backend::calibration_slow_note({405.0, 461.0, 470.0}, 461.0).empty());
  CHECK(backend::calibration_slow_note({405.0, 466.0}, 466.0).find("1.15x") != std::string::npos);
  CHECK(backend::calibration_slow_note({405.0}, 600.0).empty());
  CHECK(backend::calibration_slow_note({}, 600.0).empty());
}

TEST_CASE("the op speed probe leaves the run's random state and thread count as they were") {
  const int threads = at::get_num_threads();
  at::manual_seed(11);
  const at::Tensor expected = at::randn({4});
  at::manual_seed(11);
  const double us = backend::probe::op_speed_probe_us(threads == 1 ? 2 : 1);
  const at::Tensor after = at::randn({4});
  CHECK(at::equal(expected, after));
  CHECK(at::get_num_threads() == threads);
  CHECK(us > 0);
}

TEST_CASE("run: a thread competing for the core is seen, its steps dropped and counted") {
  // The run's one intra-op thread is pinned to the first allowed core, and so is a thread
  // that spins throughout: the scheduler shares that core between them in slices of a few
  // ms (CFS), so the main thread is off the core for part of some ~0.1 ms steps of 200,
  // and those steps' CPU time falls short of their wall time (or the wait shows in
  // schedstat). The test restores its own affinity and thread count afterwards.
  cpu_set_t saved;
  REQUIRE(sched_getaffinity(0, sizeof saved, &saved) == 0);
  const int threads_before = at::get_num_threads();
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &saved)) first = c;
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
  backend::RunOptions o;
  o.threads = 1;
  o.warmup = 2;
  o.steps = 200;
  o.block = 200;
  const auto schedules = backend::build_run_schedules(trace, {schedule::Ordering::Eager}, "sgd",
                                                      schedule::OptimizerImpl::Foreach, o);
  const auto report = backend::run_schedules(trace, schedules, backend::optimizer_config("sgd"), o);
  stop = true;
  spinner.join();
  sched_setaffinity(0, sizeof saved, &saved);
  at::set_num_threads(threads_before);

  CHECK((report.conditions.pinned_cpus == std::vector<int>{first}));
  const auto& q = report.quality.at(0);
  CHECK(q.steps_run == 200);
  CHECK(q.steps_dropped >= 1);
  CHECK(report.results[0].steps_measured == 200 - q.steps_dropped);
  bool said = false;
  for (const auto& n : report.notes) said |= n.find("as disturbed") != std::string::npos;
  CHECK(said);
}

TEST_CASE("pin_threads puts each intra-op thread on its own core, or pins none") {
  // The bug this guards: at::parallel_for compiled without OpenMP ran both pinning chunks
  // on the main thread, which ended on the last core, and every OpenMP thread created after
  // it inherited that core: 2 threads on 1 core, resnet18 steps 90 ms -> 4 s.
  cpu_set_t saved;
  REQUIRE(sched_getaffinity(0, sizeof saved, &saved) == 0);
  if (CPU_COUNT(&saved) < 2) return;  // one core: nothing to tell apart
  const int threads_before = at::get_num_threads();
  at::set_num_threads(2);
  const backend::PinnedThreads p = backend::pin_threads(2);
  // Every pool thread's own affinity, after a parallel op has surely started the pool.
  std::vector<int> cores(2, -1);
  at::parallel_for(0, 2, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t t = lo; t < hi; ++t) {
      cpu_set_t mine;
      sched_getaffinity(0, sizeof mine, &mine);
      cores[std::size_t(t)] = CPU_COUNT(&mine) == 1 ? sched_getcpu() : -2;  // -2: unpinned
    }
  });
  sched_setaffinity(0, sizeof saved, &saved);
  at::set_num_threads(threads_before);
  INFO(p.note);
  REQUIRE(p.note.empty());
  REQUIRE(p.cpus.size() == 2);
  CHECK(p.tids[0] != p.tids[1]);
  CHECK(cores[0] == p.cpus[0]);
  CHECK(cores[1] == p.cpus[1]);
  CHECK(cores[0] != cores[1]);
}

TEST_CASE("Bad measurement options are input errors naming the option") {
  backend::RunOptions o;
  CHECK_NOTHROW(backend::check_run_options(o));
  o.max_time_s = -1;
  CHECK_THROWS_WITH(backend::check_run_options(o),
                    Catch::Contains("--max-time: expected seconds >= 0, got -1"));
  o.max_time_s = 0;
  o.ci_points = 0;
  CHECK_THROWS_WITH(backend::check_run_options(o),
                    Catch::Contains("--ci-points: expected points > 0, got 0"));
  o.ci_points = 1;
  o.min_cpu_ratio = 1;
  CHECK_THROWS_WITH(backend::check_run_options(o),
                    Catch::Contains("--min-cpu-ratio: expected a share in [0, 1), got 1"));
}

TEST_CASE("other processes' cores between two CPU readings: the host's busy time less ours") {
  backend::CpuReading a, b;
  a.busy_s = 100;
  a.steal_s = 1;
  a.self_s = 10;
  a.wall_s = 50;
  b = a;
  b.busy_s = 103;  // 3 CPU-seconds busy in 2 s, 1 of them ours
  b.steal_s = 1.5;
  b.self_s = 11;
  b.wall_s = 52;
  const auto o = backend::other_cpu_between(a, b);
  CHECK(o.cores == Approx(1.0));
  CHECK(o.steal_cores == Approx(0.25));
  b.self_s = 13.1;  // our clock finer than the jiffies: never below 0
  CHECK(backend::other_cpu_between(a, b).cores == 0);
  b.busy_s = -1;  // /proc/stat not readable
  CHECK(backend::other_cpu_between(a, b).cores == -1);
  CHECK(backend::other_cpu_between(a, a).cores == -1);  // no time passed
  // And this host's own reading is one: its busy time counts up from boot.
  const auto now = backend::read_cpu();
  CHECK(now.busy_s > 0);
  CHECK(now.self_s > 0);
}

TEST_CASE("validate: the cores' placement against calibration's (host.core_to_core_ns)") {
  backend::RunConditions c;
  c.threads = 2;
  CHECK(backend::placement_drift_note(c, 13.0, 2).empty());  // not probed: nothing to say
  // Sorted 64, 65, 66, 110, 128: median 66, 5.08x the 13 ns of calibration.
  c.core_to_core_ns = {65.0, 110.0, 64.0, 128.0, 66.0};
  const std::string apart = backend::placement_drift_note(c, 13.0, 2);
  CHECK(apart.find("the two cores sat further apart during the steps than when calibrated: a "
                   "line one had just written took the other 66 ns to read (median), 5.1x the "
                   "13 ns of calibration (host.core_to_core_ns)") != std::string::npos);
  CHECK(apart.find("slower than predicted") != std::string::npos);
  // 2x exactly (kPlacementMoved) is moved; 1.99x is not; nor is a file without the probe.
  CHECK_FALSE(backend::placement_drift_note(c, 33.0, 2).empty());
  CHECK(backend::placement_drift_note(c, 66.0 / 1.99, 2).empty());
  CHECK(backend::placement_drift_note(c, 0.0, 2).empty());
  // The reverse: calibrated apart, run together.
  c.core_to_core_ns = {12.0, 13.0, 14.0};
  const std::string together = backend::placement_drift_note(c, 66.0, 2);
  CHECK(together.find("closer together") != std::string::npos);
  CHECK(together.find("0.2x the 66 ns") != std::string::npos);
  CHECK(together.find("faster than predicted") != std::string::npos);
  CHECK(backend::placement_drift_note(c, 26.0, 2).find("closer together") != std::string::npos);
  CHECK(backend::placement_drift_note(c, 25.9, 2).empty());  // 13 / 25.9 > 1 / 2
  CHECK(backend::placement_drift_note(c, 66.0, 1).find("not comparable") != std::string::npos);
}
