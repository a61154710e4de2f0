// Per-op validation (exec/op_comparison.h, `fusim validate --per-op / --per-layer`):
// grouping, per-step normalisation, ratios and shares, by hand; and on a simulation, the
// per-op groups add up to the measured steps.
#include <catch2/catch.hpp>

#include "builders/machine_builder.h"
#include "exec/op_comparison.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;

namespace {
// fc1 (linear), act (relu), fc2 (linear), loss.
workload::Trace mlp() {
  return workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"mlp","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,4]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[2,8],
    "params":[{"name":"fc1.weight","shape":[8,4]},{"name":"fc1.bias","shape":[8]}]},
   {"id":1,"name":"act","op":"relu","attrs":{},"inputs":[0],"output":[2,8]},
   {"id":2,"name":"fc2","op":"linear","attrs":{"bias":false},"inputs":[1],"output":[2,3],
    "params":[{"name":"fc2.weight","shape":[3,8]}]},
   {"id":3,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[2,"target"],"output":[]}]})"),
                               "mlp.json");
}

exec::OpTiming op(const std::string& kind, int layer, double start_us, double end_us,
                  bool measured = true) {
  exec::OpTiming t;
  t.kind = kind;
  t.layer = layer;
  t.start = us(start_us);
  t.end = us(end_us);
  t.measured = measured;
  return t;
}

exec::RunResult result(int steps, double step_us, std::vector<exec::OpTiming> ops) {
  exec::RunResult r;
  r.ordering = "eager";
  r.optimizer = "sgd";
  r.steps_measured = steps;
  r.step_time = us(step_us);
  r.per_op = std::move(ops);
  return r;
}
}  // namespace

TEST_CASE("per-op comparison: groups by kind x layer op, per measured step") {
  const auto trace = mlp();
  // Predicted: 2 measured steps of 100 us, plus a warm-up F of fc1 that must not count.
  // Per step: F fc1 20, F fc2 10, F act 5, Bx fc2 15, U fc1 30 us (of 100).
  exec::RunResult predicted = result(2, 100, {op("F", 0, 0, 50, /*measured=*/false)});
  for (int s = 0; s < 2; ++s) {
    const double t0 = 100 + 100.0 * s;
    for (auto o :
         {op("F", 0, t0, t0 + 20), op("F", 1, t0 + 20, t0 + 25), op("F", 2, t0 + 25, t0 + 35),
          op("Bx", 2, t0 + 35, t0 + 50), op("U", 0, t0 + 50, t0 + 80)})
      predicted.per_op.push_back(o);
  }
  // Measured: 1 step of 200 us; F fc1 + F fc2 = 40 + 40 us, act 5, Bx fc2 15, U fc1 20.
  exec::RunResult measured = result(1, 200,
                                    {op("F", 0, 0, 40), op("F", 1, 40, 45), op("F", 2, 45, 85),
                                     op("Bx", 2, 85, 100), op("U", 0, 100, 120)});
  const auto rows = exec::compare_per_op_kind(trace, predicted, measured);
  REQUIRE(rows.size() == 4);
  // Ordered by measured time: F linear 80 us, U linear 20, Bx linear 15, F relu 5.
  CHECK(rows[0].kind == "F");
  CHECK(rows[0].op == "linear");
  CHECK(rows[0].layer.empty());
  CHECK(rows[0].ops_per_step == 2);
  CHECK(rows[0].predicted_ms == Approx(0.030));  // 20 + 10 us per step
  CHECK(rows[0].measured_ms == Approx(0.080));
  CHECK(rows[0].ratio == Approx(0.375));
  CHECK(rows[0].predicted_share == Approx(0.30));
  CHECK(rows[0].measured_share == Approx(0.40));
  CHECK(rows[1].kind == "U");
  CHECK(rows[1].predicted_ms == Approx(0.030));
  CHECK(rows[1].ratio == Approx(1.5));
  CHECK(rows[2].kind == "Bx");
  CHECK(rows[2].ratio == Approx(1.0));
  CHECK(rows[3].kind == "F");
  CHECK(rows[3].op == "relu");
  CHECK(rows[3].ratio == Approx(1.0));

  const auto layers = exec::compare_per_layer(trace, predicted, measured);
  REQUIRE(layers.size() == 3);  // fc1, act, fc2 in trace order (the loss has no op here)
  CHECK(layers[0].layer == "fc1");
  CHECK(layers[0].op == "linear");
  CHECK(layers[0].kind.empty());
  CHECK(layers[0].predicted_ms == Approx(0.050));  // F 20 + U 30
  CHECK(layers[0].measured_ms == Approx(0.060));   // F 40 + U 20
  CHECK(layers[0].ops_per_step == 2);
  CHECK(layers[2].layer == "fc2");
  CHECK(layers[2].predicted_ms == Approx(0.025));
  CHECK(layers[2].measured_ms == Approx(0.055));
}

TEST_CASE("per-op comparison: a group only one side has gets ratio 0 or its time") {
  const auto trace = mlp();
  const auto predicted = result(1, 10, {op("F", 1, 0, 10)});
  const auto measured = result(1, 10, {op("F", 0, 0, 10)});
  const auto rows = exec::compare_per_op_kind(trace, predicted, measured);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].op == "linear");  // measured 10 us, predicted nothing
  CHECK(rows[0].predicted_ms == 0);
  CHECK(rows[0].ratio == 0);
  CHECK(rows[1].op == "relu");  // predicted only: nothing to divide by
  CHECK(rows[1].measured_ms == 0);
  CHECK(rows[1].ratio == 0);
}

TEST_CASE("per-op comparison of a simulation: its groups add up to its measured steps") {
  const auto trace = mlp();
  for (auto ordering : {schedule::Ordering::Eager, schedule::Ordering::BackwardFused,
                        schedule::Ordering::ForwardFused}) {
    schedule::ScheduleOptions so;
    so.ordering = ordering;
    so.optimizer = "adam";
    so.steps = 5;
    const auto m = test::defaults::tiny_cpu().memory(10, 8).dispatch_ns(700).build();
    exec::SimOptions o;
    const auto r = exec::simulate(trace, schedule::build_schedule(trace, so), m, o);
    REQUIRE(r.steps_measured >= 2);
    // One core, one op at a time and no idle time between ops: the ops of the measured
    // steps fill them exactly, so the groups' per-step times sum to the mean step.
    Tick total = 0;
    for (Tick t : r.step_times) total += t;
    const double mean_step_ms = to_ms(total) / r.steps_measured;
    double sum = 0, share = 0;
    for (const auto& g : exec::compare_per_op_kind(trace, r, r)) {
      sum += g.predicted_ms;
      share += g.measured_share;
      CHECK(g.ratio == Approx(1.0));
    }
    INFO(schedule::to_string(ordering));
    CHECK(sum == Approx(mean_step_ms).epsilon(1e-9));
    CHECK(share == Approx(mean_step_ms / to_ms(r.step_time)).epsilon(1e-9));
  }
}
