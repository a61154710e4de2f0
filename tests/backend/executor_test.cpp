// The timing loop: how many steps it measures, which ops it reports, and its statistics.
// Times themselves are never asserted (they depend on the machine).
#include <catch2/catch.hpp>

#include <cmath>

#include "backend/executor.h"
#include "backend/run_plan.h"
#include "backend/step_stats.h"
#include "core/error.h"
#include "exec/run_result.h"
#include "workload/trace_io.h"

using namespace fusim;

TEST_CASE("A constant 2x faster candidate is a speedup of 2, outside the noise") {
  auto s = backend::bootstrap_speedup({10, 10, 10, 10}, {5, 5, 5, 5});
  CHECK(s.speedup == Approx(2.0));
  CHECK(s.low == Approx(2.0));
  CHECK(s.high == Approx(2.0));
  CHECK(s.outside_noise());
}

TEST_CASE("Overlapping step times give an interval around 1: within the noise") {
  std::vector<Tick> a{100, 110, 90, 105, 95, 100}, b{101, 109, 91, 104, 96, 99};
  auto s = backend::bootstrap_speedup(a, b);
  CHECK(s.speedup == Approx(1.0));  // both medians are 100
  CHECK(s.low < 1.0);
  CHECK(s.high > 1.0);
  CHECK_FALSE(s.outside_noise());
  // Seeded: the same inputs give the same interval.
  auto again = backend::bootstrap_speedup(a, b);
  CHECK(again.low == s.low);
  CHECK(again.high == s.high);
}

TEST_CASE("Rounds: drift the orderings share leaves the speedup and its interval") {
  // Three rounds at host speeds 100, 150 and 200 (ms-like units); in each, the candidate's
  // steps are the baseline's over 1.25. Every round's ratio is 1.25: so are the speedup and
  // both bounds. Unpaired, the rounds' drift (100 vs 200) is resampled too and the
  // interval is wide.
  const std::vector<Tick> base{100, 100, 150, 150, 200, 200}, cand{80, 80, 120, 120, 160, 160};
  const std::vector<int> rounds{0, 0, 1, 1, 2, 2};
  const auto paired = backend::paired_speedup(base, rounds, cand, rounds);
  CHECK(paired.speedup == Approx(1.25));
  CHECK(paired.low == Approx(1.25));
  CHECK(paired.high == Approx(1.25));
  const auto unpaired = backend::bootstrap_speedup(base, cand);
  CHECK(unpaired.speedup == Approx(1.25));
  CHECK(unpaired.low < 1.0);  // a resample of the slow rounds against the fast ones
  CHECK(unpaired.high > 1.5);
}

TEST_CASE("Rounds: the geometric mean of the rounds' ratios, Student's t over the rounds") {
  // Round ratios of medians e^0.1, e^0 and e^0.2 (each round's own medians: 110517 of
  // {110000, 111034} over 100000, ...): log mean 0.1, sd 0.1, 3 rounds, t(0.975, 2) =
  // 4.3027, half width 4.3027 x 0.1 / sqrt(3) = 0.24842 in logs.
  const std::vector<Tick> base{110000, 111034, 50000, 50000, 122140, 122140};
  const std::vector<Tick> cand{100000, 100000, 50000, 50000, 100000, 100000};
  const std::vector<int> rounds{3, 3, 5, 5, 8, 8};
  const auto s = backend::paired_speedup(base, rounds, cand, rounds);
  CHECK(s.speedup == Approx(std::exp(0.1)).epsilon(1e-4));
  CHECK(s.low == Approx(std::exp(0.1 - 0.24842)).epsilon(1e-4));
  CHECK(s.high == Approx(std::exp(0.1 + 0.24842)).epsilon(1e-4));
  CHECK_FALSE(s.outside_noise());
  // A round without steps of one ordering (all dropped as disturbed) is left out: the same.
  auto base2 = base, cand2 = cand;
  auto rb = rounds, rc = rounds;
  base2.push_back(1), rb.push_back(9);
  const auto again = backend::paired_speedup(base2, rb, cand2, rc);
  CHECK(again.low == s.low);
  CHECK(again.high == s.high);
}

TEST_CASE("Rounds: the spread of batch means over consecutive rounds") {
  // 16 rounds, one step of each ordering per round, candidate 100000. A drift: the first 8
  // rounds' ratio is 1, the last 8 rounds' e^0.04. Batches of floor(sqrt(16)) = 4 rounds:
  // means 0, 0, 0.04, 0.04; log mean 0.02, sd 0.023094, t(0.975, 3) = 3.18245, half width
  // 3.18245 x 0.023094 / 2 = 0.036748. (The rounds as independent: t(0.975, 15) = 2.13145 x
  // 0.020656 / 4 = 0.011007, an interval that would exclude 1.)
  std::vector<Tick> base, cand(16, 100000);
  std::vector<int> rounds;
  for (int r = 0; r < 16; ++r) {
    base.push_back(r < 8 ? 100000 : 104081);  // 100000 e^0.04 = 104081.08
    rounds.push_back(r);
  }
  const auto s = backend::paired_speedup(base, rounds, cand, rounds);
  CHECK(s.speedup == Approx(std::exp(0.02)).epsilon(1e-5));
  CHECK(s.low == Approx(std::exp(0.02 - 0.036748)).epsilon(1e-4));
  CHECK(s.high == Approx(std::exp(0.02 + 0.036748)).epsilon(1e-4));
  CHECK_FALSE(s.outside_noise());
  // Alternating ratios e^0.02, e^-0.02: every batch of 4 averages 0, so the interval is the
  // point 1 (the rounds alone: +-1.1 points).
  std::vector<Tick> alt;
  for (int r = 0; r < 16; ++r) alt.push_back(r % 2 == 0 ? 102020 : 98020);  // 1e5 e^+-0.02
  const auto a = backend::paired_speedup(alt, rounds, cand, rounds);
  CHECK(a.low == Approx(a.speedup).epsilon(1e-4));
  CHECK(a.high == Approx(a.speedup).epsilon(1e-4));
  CHECK(a.speedup == Approx(1.0).epsilon(1e-4));
  // 5 rounds make 2 batches of floor(sqrt(5)) = 2: fewer than 3, so the rounds themselves.
  std::vector<Tick> b5(base.begin() + 6, base.begin() + 11), c5(5, 100000);
  std::vector<int> r5(rounds.begin(), rounds.begin() + 5);
  const auto e = backend::paired_speedup(b5, r5, c5, r5);
  // Logs 0, 0, 0.04, 0.04, 0.04: mean 0.024, sd 0.021909, t(0.975, 4) = 2.77645, half
  // width 2.77645 x 0.021909 / sqrt(5) = 0.027204.
  CHECK(e.low == Approx(std::exp(0.024 - 0.027204)).epsilon(1e-4));
  CHECK(e.high == Approx(std::exp(0.024 + 0.027204)).epsilon(1e-4));
}

TEST_CASE("Rounds: without two shared rounds, the unpaired bootstrap") {
  const std::vector<Tick> a{100, 110, 90, 105, 95, 100}, b{101, 109, 91, 104, 96, 99};
  const auto unpaired = backend::bootstrap_speedup(a, b);
  // No rounds, rounds of the wrong length, and a single shared round.
  for (const auto& [ra, rb] : std::vector<std::pair<std::vector<int>, std::vector<int>>>{
           {{}, {}}, {{0, 0, 1}, {0, 0, 1, 1, 2, 2}}, {{0, 0, 1, 2, 3, 4}, {0, 5, 6, 7, 8, 9}}}) {
    const auto s = backend::paired_speedup(a, ra, b, rb);
    CHECK(s.speedup == unpaired.speedup);
    CHECK(s.low == unpaired.low);
    CHECK(s.high == unpaired.high);
  }
}

TEST_CASE("Rounds: the order within a round, Welch's t on the two groups of rounds") {
  // The candidate takes 100000 in every round; the baseline 1.20, 1.25, 1.30 of it in the
  // rounds where it ran first (0, 2, 4) and 0.95, 1.00, 1.05 in the others (1, 3, 5).
  // By hand: log means 0.22261 and -0.00083, variances 0.001602 and 0.002505, standard
  // error 0.0370, Welch's df 3.8, t(0.975) 2.82, half width 0.104 < 0.223: they differ.
  const std::vector<Tick> cand(6, 100000);
  const std::vector<int> rounds{0, 1, 2, 3, 4, 5};
  const auto even = [](int round) { return round % 2 == 0; };
  const std::vector<Tick> base{120000, 95000, 125000, 100000, 130000, 105000};
  const auto e = backend::order_effect(base, rounds, cand, rounds, even);
  CHECK(e.first_rounds == 3);
  CHECK(e.after_rounds == 3);
  CHECK(e.first_speedup == Approx(std::cbrt(1.2 * 1.25 * 1.3)));
  CHECK(e.after_speedup == Approx(std::cbrt(0.95 * 1.0 * 1.05)));
  CHECK(e.differs);
  // 1.05, 1.10, 1.15 first: log means 0.0946 and -0.0008 (0.0955 apart), standard error
  // 0.0391, df 4.0, t 2.78: half width 0.109 > 0.0955, not decided (a normal quantile,
  // 1.96, would have said it is: 0.077).
  const std::vector<Tick> close{105000, 95000, 110000, 100000, 115000, 105000};
  const auto c = backend::order_effect(close, rounds, cand, rounds, even);
  CHECK(c.first_speedup == Approx(std::cbrt(1.05 * 1.10 * 1.15)));
  CHECK_FALSE(c.differs);
  // Fewer than 2 rounds with the baseline first: nothing to compare.
  const auto one = backend::order_effect(base, rounds, cand, rounds, [](int r) { return r == 0; });
  CHECK(one.first_rounds == 1);
  CHECK(one.first_speedup == 1);
  CHECK_FALSE(one.differs);
}

TEST_CASE("option --device cuda on this libtorch fails with a one-line reason") {
#ifndef FUSIM_TORCH_CUDA
  CHECK_THROWS_WITH(backend::check_device("cuda"), Catch::Contains("without CUDA"));
#endif
  CHECK_THROWS_WITH(backend::check_device("tpu"),
                    Catch::Contains("unknown device 'tpu': expected cpu or cuda"));
  CHECK_NOTHROW(backend::check_device("cpu"));
}

TEST_CASE("Blocks: warm-up, one re-warm per block, measured steps, per-op timings") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
  backend::RunOptions o;
  o.pin = false;
  o.min_cpu_ratio = 0;  // every step kept: the counts below are exact
  o.warmup = 1;
  o.steps = 5;
  o.block = 2;  // blocks of 2, 2, 1 measured steps
  // 1 warm-up + 3 blocks x (1 re-warm) + 5 measured + 1 final = 10 schedule steps.
  REQUIRE(backend::schedule_steps_for(o) == 10);
  std::vector<schedule::Schedule> schedules;
  for (auto ordering : {schedule::Ordering::Eager, schedule::Ordering::BackwardFused,
                        schedule::Ordering::ForwardFused}) {
    schedule::ScheduleOptions so;
    so.ordering = ordering;
    so.optimizer = "adam";
    so.steps = backend::schedule_steps_for(o);
    schedules.push_back(schedule::build_schedule(trace, so));
  }
  auto report = backend::run_schedules(trace, schedules, backend::optimizer_config("adam"), o);
  REQUIRE(report.results.size() == 3);
  CHECK(report.baseline == 0);
  REQUIRE(report.speedups.size() == 3);
  CHECK(report.speedups[0].speedup == Approx(1.0));
  for (const auto& r : report.results) {
    CHECK(r.executor == "cpu");
    CHECK(r.optimizer == "adam");
    CHECK(r.impl == "foreach");
    CHECK(r.steps_measured == 5);
    CHECK(r.step_times.size() == 5);
    CHECK(r.step_rounds == std::vector<int>{0, 0, 1, 1, 2});  // the blocks' rounds
    // The one summary (exec/run_result.h), as the simulator's results use it.
    const auto summary = exec::summarize_steps(r.step_times);
    CHECK(r.step_time == summary.median);
    CHECK(r.step_time_p25 == summary.p25);
    CHECK(r.step_time_p75 == summary.p75);
    // mlp_tiny per step: F fc1, F act, F fc2, L loss, Bx fc2, Bw fc2, Bx act, Bw fc1,
    // U fc1, U fc2 = 10 ops (fc1 has no Bx: its input needs no gradient).
    CHECK(r.per_op.size() == 5 * 10);
    for (const auto& op : r.per_op) CHECK(op.end >= op.start);
  }
  CHECK(report.results[1].ordering == "backward-fused");
  // Measured steps are iterations 2-3, 5-6, 8 (after warm-up and each re-warm).
  CHECK(report.results[0].per_op.front().step == 2);
  CHECK(report.results[0].per_op.back().step == 8);
  // The rounds run in rotated order: eager, backward-fused, forward-fused in round 0;
  // backward-fused, forward-fused, eager in round 1; forward-fused, eager, backward-fused in
  // round 2. A round's first measured step (0, 2, 4) starts with its first op.
  auto round_start = [&](int ordering, int first_step) {
    return report.results[std::size_t(ordering)].per_op.at(std::size_t(first_step) * 10).start;
  };
  CHECK(round_start(0, 0) < round_start(1, 0));
  CHECK(round_start(1, 0) < round_start(2, 0));
  CHECK(round_start(1, 2) < round_start(2, 2));
  CHECK(round_start(2, 2) < round_start(0, 2));
  CHECK(round_start(2, 4) < round_start(0, 4));
  CHECK(round_start(0, 4) < round_start(1, 4));
  // Each round starts after the whole of the round before.
  CHECK(round_start(2, 0) < round_start(1, 2));
  CHECK(round_start(0, 2) < round_start(2, 4));
}

TEST_CASE("Rounds run the schedules in the rows of a Williams design") {
  using Order = std::vector<std::size_t>;
  CHECK(backend::round_order(0, 2) == Order{0, 1});
  CHECK(backend::round_order(3, 2) == Order{1, 0});
  CHECK(backend::round_order(0, 3) == Order{0, 1, 2});
  CHECK(backend::round_order(1, 3) == Order{1, 2, 0});
  CHECK(backend::round_order(2, 3) == Order{2, 0, 1});
  CHECK(backend::round_order(3, 3) == Order{2, 1, 0});
  CHECK(backend::round_order(4, 3) == Order{0, 2, 1});
  CHECK(backend::round_order(11, 3) == Order{1, 0, 2});
  CHECK(backend::round_order(0, 4) == Order{0, 1, 3, 2});
  CHECK(backend::round_order(7, 1) == Order{0});
  // Over one cycle (count rounds, 2 x count when odd) every schedule takes every place
  // equally often and follows every other schedule equally often.
  for (std::size_t count = 2; count <= 6; ++count) {
    const std::size_t rows = count % 2 == 0 ? count : 2 * count;
    const int per_place = int(rows / count), per_pair = int(rows / count);
    std::vector<std::vector<int>> place(count, std::vector<int>(count, 0));
    std::vector<std::vector<int>> follows(count, std::vector<int>(count, 0));
    for (std::size_t r = 0; r < rows; ++r) {
      const Order order = backend::round_order(int(r), count);
      REQUIRE(order.size() == count);
      for (std::size_t at = 0; at < count; ++at) {
        ++place[order[at]][at];
        if (at > 0) ++follows[order[at - 1]][order[at]];
      }
    }
    for (std::size_t a = 0; a < count; ++a)
      for (std::size_t b = 0; b < count; ++b) {
        CHECK(place[a][b] == per_place);
        CHECK(follows[a][b] == (a == b ? 0 : per_pair));
      }
  }
}

TEST_CASE("A mixed ordering from its file runs interleaved with eager, LAMB fused") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/tiny_convnet.json");
  backend::RunOptions o;
  o.pin = false;
  o.min_cpu_ratio = 0;  // every step kept: the counts below are exact
  o.warmup = 1;
  o.steps = 2;
  o.block = 2;
  const auto schedules = backend::build_run_schedules(
      trace, {schedule::Ordering::Eager, schedule::Ordering::Mixed}, "lamb",
      schedule::OptimizerImpl::Fused, o, FUSIM_SOURCE_DIR "/tests/backend/tiny_mixed.json");
  auto report = backend::run_schedules(trace, schedules, backend::optimizer_config("lamb"), o);
  REQUIRE(report.results.size() == 2);
  CHECK(report.baseline == 0);
  const auto& eager = report.results[0];
  const auto& mixed = report.results[1];
  CHECK(mixed.ordering == "mixed");
  CHECK(mixed.optimizer == "lamb");
  CHECK(mixed.impl == "fused");
  CHECK(mixed.steps_measured == 2);
  // The same ops, only in another order: per measured iteration, one U per layer with
  // trained params (conv1, bn1, conv2, fc), conv1's (forward-fused) at the iteration's end.
  CHECK(mixed.per_op.size() == eager.per_op.size());
  int updates = 0;
  for (const auto& op : mixed.per_op) updates += op.kind == "U";
  CHECK(updates == 2 * 4);
  const auto per_iteration = mixed.per_op.size() / 2;
  const auto& last = mixed.per_op[per_iteration - 1];
  CHECK(last.kind == "U");
  CHECK(last.layer == 0);
  CHECK(eager.per_op[per_iteration - 1].kind == "U");
  CHECK(eager.per_op[per_iteration - 1].layer == 8);  // eager: optimizer.step() in model order
}

TEST_CASE("Measured peak memory is the ordering's own tensors, whatever else is resident") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
  backend::RunOptions o;
  o.pin = false;
  o.min_cpu_ratio = 0;  // every step kept: the counts below are exact
  o.warmup = 1;
  o.steps = 2;
  o.block = 2;
  auto peaks = [&](const std::vector<schedule::Ordering>& orderings) {
    const auto schedules =
        backend::build_run_schedules(trace, orderings, "adam", schedule::OptimizerImpl::Foreach, o);
    auto report = backend::run_schedules(trace, schedules, backend::optimizer_config("adam"), o);
    std::vector<std::int64_t> out;
    for (const auto& r : report.results) out.push_back(r.peak_memory_bytes);
    return out;
  };
  const auto alone = peaks({schedule::Ordering::Eager});
  const auto together = peaks({schedule::Ordering::Eager, schedule::Ordering::BackwardFused});
  // mlp_tiny has 64 fp32 parameters (fc1 8x4 + 8, fc2 3x8): 256 B each of weights, grads,
  // exp_avg and exp_avg_sq, all live when eager's first update starts, plus the inputs
  // (2x4 fp32 + 2 int64 = 48 B): at least 1072 B.
  REQUIRE(alone.size() == 1);
  CHECK(alone[0] >= 4 * 256 + 48);
  // The other ordering's state (another >= 1072 B) is not counted.
  CHECK(together[0] == alone[0]);
  CHECK(together[1] >= 3 * 256 + 48);  // weights, Adam's state, inputs (grads die at each U)
  CHECK(together[1] < 2 * (4 * 256 + 48));
}
