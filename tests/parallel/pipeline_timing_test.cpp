// Pipeline schedules timed with equal per-microbatch costs (T_F = T_B = T_W = T) and free
// communication: the bubble rate (bubble / ideal compute) and the microbatches held at once,
// read from the simulated timeline, against the closed forms of Narayanan et al. 2021
// (GPipe, 1F1B: (p-1)/m; interleaved: (p-1)/(v m)) and Qi et al. 2024 (ZB-H1: (p-1)/(3m);
// ZB-H2 and ZB-V: 0 with enough microbatches), and the asynchronous schedules' weight
// versions and gradient delay (Narayanan et al. 2021: PipeDream-2BW's two versions and one-step
// delay).
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "parallel/pipeline_timing.h"
#include "parallel/plan.h"

using namespace fusim;
using namespace fusim::parallel;

namespace {
constexpr Tick T = 1000 * kTicksPerNs;  // one microsecond per pass of a whole stage

ParallelPlan plan(int pp, std::int64_t m, const std::string& schedule, int v = 0) {
  PlanArgs a;
  a.pp = pp;
  a.global_batch = m;
  a.schedule = schedule;
  a.virtual_stages = v;
  return parse_plan(a);
}

// A chunk of a stage with v chunks costs T / v per pass.
PipelineTiming timed(const ParallelPlan& p, Tick p2p = 0) {
  const Tick t = T / p.virtual_stages;
  return time_pipeline(
      p,
      [t](int, int) {
        return PassCosts{t, t, t};
      },
      p2p);
}
}  // namespace

TEST_CASE("GPipe and 1F1B: bubble (p-1)/m; in flight m and min(m, p - s)") {
  for (int p : {2, 4, 8})
    for (int m : {p, 2 * p, 4 * p}) {
      INFO("p " << p << " m " << m);
      const auto g = timed(plan(p, m, "gpipe"));
      CHECK(g.bubble_rate() == Approx(double(p - 1) / m).epsilon(1e-12));
      // Stage 0 runs all m forwards, then all backwards: 3(m + p - 1) T from first to last.
      CHECK(g.iteration == 3 * (m + p - 1) * T);
      const auto f = timed(plan(p, m, "1f1b"));
      CHECK(f.bubble_rate() == Approx(double(p - 1) / m).epsilon(1e-12));
      CHECK(f.iteration == 3 * (m + p - 1) * T);
      for (int s = 0; s < p; ++s) {
        CHECK(g.stages[std::size_t(s)].max_in_flight == m);
        CHECK(f.stages[std::size_t(s)].max_in_flight == std::min(m, p - s));
        CHECK(f.stages[std::size_t(s)].busy == 3 * m * T);
      }
    }
}

TEST_CASE("interleaved 1F1B: bubble (p-1)/(v m)") {
  for (int p : {2, 4})
    for (int v : {2, 3, 4})
      for (int m : {p, 2 * p, 4 * p}) {
        INFO("p " << p << " v " << v << " m " << m);
        const auto r = timed(plan(p, m, "interleaved", v));
        CHECK(r.bubble_rate() == Approx(double(p - 1) / (v * m)).epsilon(1e-9));
      }
}

TEST_CASE("zero bubble: ZB-H1 (p-1)/(3m), ZB-H2 and ZB-V none") {
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 4 * p}) {
      INFO("p " << p << " m " << m);
      CHECK(timed(plan(p, m, "zb-h1")).bubble_rate() ==
            Approx(double(p - 1) / (3 * m)).epsilon(1e-12));
      const auto h2 = timed(plan(p, m, "zb-h2"));
      CHECK(h2.bubble_rate() == 0.0);
      for (const auto& s : h2.stages) CHECK(s.bubble() == 0);
      // ZB-H1 keeps 1F1B's memory (p on stage 0); ZB-H2 about twice it: 2p - 1.
      CHECK(timed(plan(p, m, "zb-h1")).stages[0].max_in_flight == p);
      CHECK(h2.stages[0].max_in_flight == 2 * p - 1);
      // ZB-V: no idle time on any stage, each busy with its 6m chunk passes of T/2, at 1F1B's
      // memory: 2p chunk-microbatches of half a stage = p microbatches, on every stage.
      const auto v = timed(plan(p, m, "zb-v"));
      CHECK(v.bubble_rate() == 0.0);
      CHECK(v.iteration == 3 * m * T);
      for (const auto& s : v.stages) {
        CHECK(s.bubble() == 0);
        CHECK(s.busy == 3 * m * T);
        CHECK(s.max_in_flight == 2 * p);
      }
    }
}

TEST_CASE("ZB-V is bubble-free from m = 2p - 1 microbatches, not below") {
  for (int p : {2, 3, 4, 8}) {
    INFO("p " << p);
    CHECK(timed(plan(p, 2 * p - 1, "zb-v")).bubble_rate() == 0.0);
    // One microbatch fewer: the order's slot of the missing microbatch stays idle.
    CHECK(timed(plan(p, 2 * p - 2, "zb-v")).bubble_rate() > 0.0);
  }
}

TEST_CASE("synchronous schedules: one weight version, no gradient delay") {
  for (const auto& [name, v] : std::vector<std::pair<std::string, int>>{
           {"gpipe", 0}, {"1f1b", 0}, {"interleaved", 2}, {"zb-h1", 0}, {"zb-h2", 0}, {"zb-v", 0}})
    for (const auto& s : timed(plan(4, 8, name, v)).stages) {
      INFO(name);
      CHECK(s.weight_versions == 1);
      CHECK(s.gradient_delay == 0);
    }
}

TEST_CASE("PipeDream-2BW: two weight versions, one-step delay on every stage, no bubble") {
  for (int p : {2, 4, 8})
    for (int m : {p, 2 * p}) {
      INFO("p " << p << " m " << m);
      const auto r = timed(plan(p, m, "pipedream-2bw"));
      CHECK(r.steps > 1);
      // No flush: in the steady state each stage alternates F and B (T + 2T) without idle,
      // so a step is m (T_F + T_B + T_W).
      CHECK(r.iteration == 3 * m * T);
      CHECK(r.bubble_rate() == 0.0);
      for (int s = 0; s < p; ++s) {
        const auto& st = r.stages[std::size_t(s)];
        CHECK(st.busy == 3 * m * T);
        CHECK(st.bubble() == 0);
        CHECK(st.weight_versions == 2);
        CHECK(st.gradient_delay == 1);
        CHECK(st.max_in_flight == p - s);  // 1F1B's activations
      }
    }
}

TEST_CASE("async-1step: one weight version, gradients one step late but on the last stage") {
  for (int p : {2, 4, 8})
    for (int m : {p, 2 * p}) {
      INFO("p " << p << " m " << m);
      const auto r = timed(plan(p, m, "async-1step"));
      CHECK(r.iteration == 3 * m * T);
      CHECK(r.bubble_rate() == 0.0);
      for (int s = 0; s < p; ++s) {
        const auto& st = r.stages[std::size_t(s)];
        CHECK(st.weight_versions == 1);
        // Stage s runs p - s - 1 forwards of the next step before its own update (1F1B's
        // warm-up): those read the weights one update old. The last stage has no warm-up.
        CHECK(st.gradient_delay == (s < p - 1 ? 1 : 0));
        CHECK(st.max_in_flight == p - s);
      }
    }
}

TEST_CASE("the p2p time lengthens the GPipe step by 2(p-1) transfers") {
  // Forwards stream down the stages back to back, stage s starting at s (T + c); the last
  // stage's backwards start after its m forwards and each gradient takes 2T + c per stage
  // back up: stage 0 ends at (p-1)(T+c) + mT + 2pT + (p-1)c + 2(m-1)T.
  const Tick c = 50 * kTicksPerNs;
  const int p = 4, m = 8;
  const auto r = timed(plan(p, m, "gpipe"), c);
  CHECK(r.iteration == 3 * (m + p - 1) * T + 2 * (p - 1) * c);
}
