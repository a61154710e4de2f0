// The timed multi-device step (sim/parallel/step_timing.h): at equal pass costs and free
// communication it reproduces the closed-form bubbles the pipeline orders are known for
// (the expectations of pipeline_timing_test.cpp), a hand-built two-stage step with P2P
// transfers on NVLink, and data-parallel buckets whose reductions overlap backward (eager
// waits for all of them, backward- and forward-fused only for their own bucket), and context
// parallelism's K/V ring against its closed form.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "parallel/plan.h"
#include "parallel/step_timing.h"

using namespace fusim;
using namespace fusim::parallel;
using schedule::Ordering;

namespace {
constexpr Tick T = kTicksPerUs;  // one microsecond per pass of a whole stage

ParallelPlan plan(int pp, std::int64_t m, const std::string& schedule, int v = 0, int dp = 1,
                  int tp = 1) {
  PlanArgs a;
  a.pp = pp;
  a.dp = dp;
  a.tp = tp;
  a.global_batch = m * dp;
  a.schedule = schedule;
  a.virtual_stages = v;
  return parse_plan(a);
}

StepQuery equal_costs(const ParallelPlan& p, Ordering ordering = Ordering::Eager) {
  StepQuery q;
  q.plan = p;
  q.cluster = cluster_preset("dgx-h100");
  q.ordering = ordering;
  q.free_communication = true;
  const Tick t = T / p.virtual_stages;
  const bool split = splits_weight_gradient(p.schedule);
  ChunkWork w;
  w.forward = t;
  w.backward = split ? t : 2 * t;
  w.weight = split ? t : 0;
  q.work.assign(std::size_t(p.pp), std::vector<ChunkWork>(std::size_t(p.virtual_stages), w));
  return q;
}

double bubble(const std::string& schedule, int p, int m, int v = 0,
              Ordering ordering = Ordering::Eager) {
  return time_step(equal_costs(plan(p, m, schedule, v), ordering)).bubble_fraction();
}
}  // namespace

TEST_CASE("timed step at equal costs, free communication: the closed-form bubbles") {
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 4 * p}) {
      INFO("p " << p << " m " << m);
      for (auto o : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
        INFO(schedule::to_string(o));
        // Updates of no cost: the schedules that flush anyway give their bubble in every
        // ordering, eager's flush for the optimizer step included (stage 0 ends last).
        CHECK(bubble("gpipe", p, m, 0, o) == Approx(double(p - 1) / m).epsilon(1e-12));
        CHECK(bubble("1f1b", p, m, 0, o) == Approx(double(p - 1) / m).epsilon(1e-12));
        CHECK(bubble("interleaved", p, m, 2, o) == Approx(double(p - 1) / (2 * m)).epsilon(1e-12));
        CHECK(bubble("zb-h1", p, m, 0, o) == Approx(double(p - 1) / (3 * m)).epsilon(1e-12));
        CHECK(bubble("pipedream-2bw", p, m, 0, o) == 0.0);
        CHECK(bubble("async-1step", p, m, 0, o) == 0.0);
        if (o == Ordering::Eager) {
          // Eager's optimizer step waits for every stage's gradients (the gradient norm's
          // all-reduce): ZB-H2 and ZB-V stages start and end staggered, so the flush costs
          // them their zero bubble from p = 4 (Qi et al. 2024, Sec. 3, why they bypass the
          // sync); two stages still fit: stage 0 starts first and ends last.
          CHECK((bubble("zb-h2", p, m, 0, o) > 0.0) == (p > 2));
          CHECK((bubble("zb-v", p, m, 2, o) > 0.0) == (p > 2));
        } else {
          // Fused updates need no global step: consecutive steps overlap, no bubble.
          CHECK(bubble("zb-h2", p, m, 0, o) == 0.0);
          CHECK(bubble("zb-v", p, m, 2, o) == 0.0);
        }
      }
      // 1F1B: each stage's step is 3(m + p - 1) T, of which 3mT busy.
      const StepTiming f = time_step(equal_costs(plan(p, m, "1f1b")));
      CHECK(f.step_time == 3 * (m + p - 1) * T);
      for (const auto& s : f.stages) {
        CHECK(s.window == f.step_time);
        CHECK(s.busy == 3 * m * T);
        CHECK(s.exposed_communication == 0);
      }
    }
}

TEST_CASE("a hand-built two-stage 1F1B step with P2P transfers on NVLink 4") {
  // p = 2, m = 2, tp = dp = 1: GPUs 0 and 1 of one DGX H100 node. Stage 0: F 10 us, B 20 us;
  // stage 1: F 30 us, B 40 us; each U 5 us (eager). The activation and its gradient are
  // 450 kB: 1 us on 450 GB/s plus the 3.4 us step latency, 4.4 us from the end of a pass to
  // the arrival. Stage 0 runs F0 F1 B0 B1 U, stage 1 F0 B0 F1 B1 U:
  //   s0 F0 [0, 10] -> s1 at 14.4; F1 [10, 20] -> 24.4
  //   s1 F0 [14.4, 44.4], B0 [44.4, 84.4] -> s0 at 88.8, F1 [84.4, 114.4],
  //      B1 [114.4, 154.4] -> s0 at 158.8, U [154.4, 159.4]
  //   s0 B0 [88.8, 108.8], B1 [158.8, 178.8], U [178.8, 183.8]
  // and the next step repeats it 183.8 us later (stage 0's F0 of step 1 at 183.8).
  StepQuery q;
  q.plan = plan(2, 2, "1f1b");
  q.cluster = cluster_preset("dgx-h100");
  q.work.resize(2);
  ChunkWork s0, s1;
  s0.forward = us(10);
  s0.backward = us(20);
  s0.output_bytes = 450000;
  s0.buckets = {GradBucket{0, 0, 0, us(5)}};
  s1.forward = us(30);
  s1.backward = us(40);
  s1.buckets = {GradBucket{0, 0, 0, us(5)}};
  q.work[0] = {s0};
  q.work[1] = {s1};
  const StepTiming r = time_step(q);
  CHECK(r.step_time == us(183.8));
  const StageStep& a = r.stages[0];
  const StageStep& b = r.stages[1];
  CHECK(a.window == us(183.8));
  CHECK(b.window == us(183.8));
  // Stage 0: busy 10 + 10 + 20 + 20 + 5; its backwards wait 4.4 us each for the transfer
  // past stage 1's compute, the rest (84.4 - 20 and 154.4 - 108.8) is the pipeline's.
  CHECK(a.busy == us(65));
  CHECK(a.exposed_communication == us(8.8));
  CHECK(a.bubble == us(64.4 + 45.6));
  // Stage 1: busy 30 + 40 + 30 + 40 + 5; its F0 waits from its update's end (159.4) to
  // 198.2 (stage 0's F0 of the next step ends at 193.8, + 4.4): 34.4 pipeline, 4.4 transfer.
  CHECK(b.busy == us(145));
  CHECK(b.exposed_communication == us(4.4));
  CHECK(b.bubble == us(34.4));
  CHECK(r.bubble_fraction() == Approx((64.4 + 45.6 + 34.4) / (65.0 + 145.0)).epsilon(1e-9));
}

TEST_CASE("data-parallel buckets: reductions overlap backward, fused updates wait for their own") {
  // One stage, dp = 8 on one DGX H100 node, one microbatch: F 100 us, B 200 us. Bucket 0
  // (9 MB) is ready halfway through B, its all-reduce 2 (7/8) 9e6 / 450e9 + 14 x 3.4 us =
  // 82.6 us ends before B does; bucket 1 (36 MB) is ready at B's end: 140 + 47.6 = 187.6 us.
  // U0 200 us, U1 50 us.
  //  eager:           F + B + AR1 + U0 + U1         (the optimizer step waits for every bucket)
  //  backward-fused:  F + B + max(U0, AR1) + U1     (U0 runs while bucket 1 is reduced)
  //  forward-fused:   the same, before the next step's forward
  const Tick ar1 = us(2 * 7.0 / 8.0 * 36e6 / 450e9 * 1e6) + 14 * us(3.4);
  CHECK(ar1 == us(187.6));
  for (auto o : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
    INFO(schedule::to_string(o));
    StepQuery q;
    q.plan = plan(1, 1, "1f1b", 0, 8);
    q.cluster = cluster_preset("dgx-h100");
    q.ordering = o;
    ChunkWork w;
    w.forward = us(100);
    w.backward = us(200);
    w.buckets = {GradBucket{9000000, 0, us(100), us(200)},
                 GradBucket{36000000, 0, us(200), us(50)}};
    q.work = {{w}};
    const StepTiming r = time_step(q);
    const Tick expected =
        o == Ordering::Eager ? us(100 + 200 + 200 + 50) + ar1 : us(100 + 200 + 200 + 50);
    // The simulated ring rounds each of its 14 messages' transfer to a picosecond.
    CHECK(std::abs(r.step_time - expected) <= 14);
    CHECK(std::abs(r.stages[0].exposed_communication - (o == Ordering::Eager ? ar1 : 0)) <= 14);
    CHECK(r.stages[0].busy == us(550));
  }
}

TEST_CASE("tensor-parallel collectives block their pass: all-reduce, or RS + AG of the same time") {
  // One stage, tp = 4 on NVLink 4: F 100 us with one all-reduce of 18 MB after 40 us of it:
  // 2 (3/4) 18e6 / 450e9 + 6 x 3.4 us = 60 + 20.4 = 80.4 us. With sequence parallelism the
  // reduce-scatter and the all-gather take (3/4) 18e6 / 450e9 + 3 x 3.4 us each: the same.
  for (bool sp : {false, true}) {
    INFO("sequence parallel " << sp);
    StepQuery q;
    PlanArgs a;
    a.tp = 4;
    a.sequence_parallel = sp;
    q.plan = parse_plan(a);
    q.cluster = cluster_preset("dgx-h100");
    ChunkWork w;
    w.forward = us(100);
    w.backward = us(200);
    w.forward_tp = {TpCollective{us(40), 18000000}};
    w.buckets = {GradBucket{0, 0, us(200), us(10)}};
    q.work = {{w}};
    const StepTiming r = time_step(q);
    CHECK(std::abs(r.step_time - (us(310) + us(80.4))) <= 8);
    CHECK(std::abs(r.stages[0].exposed_communication - us(80.4)) <= 8);
    const auto& f = r.stages[0].items.front();
    CHECK(f.kind == ItemKind::F);
    CHECK(std::abs(f.communication - us(80.4)) <= 8);
  }
}

TEST_CASE("context parallelism: the K/V ring overlaps the attention, c + (cp-1) max(c, t)") {
  // One stage, cp = 4 on NVLink 4 (GPUs 0-3 of a node). F 100 us with an attention of 40 us
  // after 40 us: c = 10 us per K/V chunk; each of the 3 ring steps moves `bytes` in
  // t = bytes / 450e9 + alpha. B 200 us with the attention's backward (80 us: c = 20 us)
  // after 50 us, passing K/V and dK/dV (2 x bytes) each step. Exposed: 3 max(0, t - c) in
  // each pass. The 0-byte gradient bucket is all-reduced over the 4 CP ranks before U:
  // 2 (n - 1) alpha (interconnect.h's closed form, tested there).
  const ClusterSpec& cl = cluster_preset("dgx-h100");
  for (std::int64_t bytes : {std::int64_t{900000}, std::int64_t{9000000}}) {
    INFO("bytes per ring step " << bytes);
    StepQuery q;
    PlanArgs a;
    a.cp = 4;
    q.plan = parse_plan(a);
    q.cluster = cl;
    ChunkWork w;
    w.forward = us(100);
    w.backward = us(200);
    w.forward_cp = {CpRing{us(40), us(40), bytes}};
    w.backward_cp = {CpRing{us(50), us(80), 2 * bytes}};
    w.buckets = {GradBucket{0, 0, us(200), us(10)}};
    q.work = {{w}};
    const StepTiming r = time_step(q);
    auto step_time = [&](std::int64_t b) { return cl.intra.transfer_time(b) + cl.intra.latency; };
    const Tick f_stall = 3 * std::max<Tick>(0, step_time(bytes) - us(10));
    const Tick b_stall = 3 * std::max<Tick>(0, step_time(2 * bytes) - us(20));
    if (bytes == 900000) CHECK(f_stall == 0);  // 2 + 3.4 us < 10 us: hidden
    if (bytes == 9000000) CHECK(f_stall == 3 * (us(20) + cl.intra.latency - us(10)));
    const auto& items = r.stages[0].items;
    const auto f = std::find_if(items.begin(), items.end(),
                                [](const TimedItem& it) { return it.kind == ItemKind::F; });
    const auto b = std::find_if(items.begin(), items.end(),
                                [](const TimedItem& it) { return it.kind == ItemKind::B; });
    REQUIRE(f != items.end());
    REQUIRE(b != items.end());
    CHECK(f->communication == f_stall);
    CHECK(f->end - f->start == us(100) + f_stall);
    CHECK(b->communication == b_stall);
    CHECK(b->end - b->start == us(200) + b_stall);
    const Tick ar = ring_collective_time(Collective::AllReduce, 4, 0, cl.intra);
    CHECK(std::abs(r.step_time - (us(310) + f_stall + b_stall + ar)) <= 12);
  }
}
