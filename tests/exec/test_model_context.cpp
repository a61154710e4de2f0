// The model context term (compute/model_context.h): its formula, its fit and what it adds
// to simulated ops, by hand.
#include <catch2/catch.hpp>
#include <cmath>

#include "builders/machine_builder.h"
#include "compute/model_context.h"
#include "core/error.h"
#include "exec/simulate.h"
#include "schedule/mlp_fixture.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using schedule::AccessMode;

namespace {
// Three relu F ops (layer 1) one after the other, each reading h and writing a (64 B), 200
// FLOP; then an update of layer 0 reading and writing w.
schedule::Schedule relus_then_update() {
  schedule::Schedule s;
  s.steps = 1;
  for (int t = 0; t < 3; ++t) {
    schedule::Tensor x;
    x.id = t;
    x.name = t == 0 ? "h" : t == 1 ? "a" : "w";
    x.bytes = 64;
    x.address = std::uint64_t(t) * 64;
    s.tensors.push_back(x);
  }
  for (int i = 0; i < 4; ++i) {
    schedule::Op op;
    op.id = i;
    op.flops = 200;
    if (i < 3) {
      op.kind = schedule::OpKind::Forward;
      op.layer = 1;
      op.layer_op = workload::OpKind::Relu;
      op.passes.push_back({{{0, AccessMode::Read}, {1, AccessMode::Write}}, 200});
    } else {
      op.kind = schedule::OpKind::Update;
      op.layer = 0;
      op.layer_op = workload::OpKind::Linear;
      op.passes.push_back({{{2, AccessMode::Read}, {2, AccessMode::Write}}, 200});
    }
    if (i > 0) op.deps = {i - 1};
    s.ops.push_back(op);
  }
  return s;
}

exec::SimOptions no_warmup() {
  exec::SimOptions o;
  o.warmup_steps = 0;
  return o;
}

Tick duration(const exec::RunResult& r, int id) {
  for (const auto& t : r.per_op)
    if (t.id == id) return t.end - t.start;
  FAIL("no op " << id);
  return 0;
}

exec::Machine machine_with(double base, double cold, double decay_us) {
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  doc["compute"]["op_costs"] = {{"relu.F", {{"fixed_ns", 100}, {"efficiency", 0.5}}}};
  if (decay_us > 0)
    doc["compute"]["model_context"] = {
        {"base_ns", base}, {"cold_ns", cold}, {"decay_us", decay_us}};
  return exec::parse_machine(doc, "tiny.json");
}
}  // namespace

TEST_CASE("model context: base + cold x (1 - exp(-dt / decay)), by hand") {
  compute::ModelContext c{1000, 4000, 10};
  CHECK(c.extra(-1) == ns(5000));  // the family never ran: all of it
  CHECK(c.extra(0) == ns(1000));
  // dt = decay: 1000 + 4000 x (1 - 1/e) = 3528.48 ns.
  CHECK(c.extra(ns(10000)) == ns(1000 + 4000 * (1 - std::exp(-1.0))));
  CHECK(c.extra(ns(1e9)) == ns(5000));
  CHECK(compute::ModelContext{}.extra(-1) == 0);  // no term
}

TEST_CASE("model context fit: recovers base and every timescale's cold from exact samples") {
  // A term with parts at 1 and 100 ms (none at 10 ms), sampled at dt from 10 us to 1 s.
  compute::ModelContext truth{3000, 12000, 1e3};
  truth.slower = {{0, 1e4}, {40000, 1e5}};
  std::vector<compute::ContextSample> samples;
  for (double since : {-1.0, 10.0, 100.0, 300.0, 1000.0, 3000.0, 1e4, 3e4, 1e5, 1e6})
    samples.push_back(
        {since, double(truth.extra(since < 0 ? -1 : ns(since * 1e3))) / 1e3});  // ps -> ns
  const auto fit = compute::fit_model_context(samples, {1e3, 1e4, 1e5});
  CHECK(fit.base_ns == Approx(3000).margin(1));
  CHECK(fit.decay_us == 1e3);
  CHECK(fit.cold_ns == Approx(12000).margin(1));
  REQUIRE(fit.slower.size() == 2);
  CHECK(fit.slower[0].decay_us == 1e4);
  CHECK(fit.slower[0].cold_ns == Approx(0).margin(1));
  CHECK(fit.slower[1].decay_us == 1e5);
  CHECK(fit.slower[1].cold_ns == Approx(40000).margin(1));
  // By hand: dt = 1 ms gives 3000 + 12000 (1 - 1/e) + 40000 (1 - exp(-0.01)).
  CHECK(fit.extra(ns(1e6)) ==
        ns(3000 + 12000 * (1 - std::exp(-1.0)) + 40000 * (1 - std::exp(-0.01))));
  // Ops faster in the model than predicted: no negative part, and none at all from nothing.
  const auto none = compute::fit_model_context({{-1, -500}, {10, -800}, {1e4, -300}}, {1e3});
  CHECK(none.base_ns == 0);
  CHECK(none.cold_ns == 0);
  CHECK_FALSE(compute::fit_model_context({}, {1e3}).given());
  // A flat excess is all base: 700 ns whatever the time since.
  const auto flat = compute::fit_model_context({{10, 700}, {1e4, 700}, {1e5, 700}}, {1e3, 1e4});
  CHECK(flat.base_ns == Approx(700));
  CHECK(flat.cold_ns == Approx(0).margin(1e-6));
  CHECK(flat.slower.at(0).cold_ns == Approx(0).margin(1e-6));
  // A negative best fit is clamped: excess falling with dt (-100 + ...) leaves the base at
  // the mean of what it may still explain, every cold part 0.
  const auto falling =
      compute::fit_model_context({{10, 900}, {1e3, 500}, {1e4, 100}, {1e5, 100}}, {1e3, 1e5});
  CHECK(falling.cold_ns == 0);
  CHECK(falling.slower.at(0).cold_ns == 0);
  CHECK(falling.base_ns == Approx(400));
}

TEST_CASE("model context in a simulation: each op with a kernel pays it, updates do not") {
  const auto trace = schedule::testing::mlp3();  // layer 1 is a relu
  const auto s = relus_then_update();
  const auto plain = exec::simulate(trace, s, machine_with(0, 0, 0), no_warmup());
  // A decay of 50 minutes: the first relu pays base + cold (its family never ran), the
  // others base alone (their family started a few us before); the update nothing.
  const auto slow = exec::simulate(trace, s, machine_with(1000, 4000, 3e9), no_warmup());
  CHECK(duration(slow, 0) - duration(plain, 0) == ns(5000));
  CHECK(duration(slow, 1) - duration(plain, 1) == ns(1000));
  CHECK(duration(slow, 2) - duration(plain, 2) == ns(1000));
  CHECK(duration(slow, 3) == duration(plain, 3));
  // A decay of 1 ps: every relu pays base + cold.
  const auto fast = exec::simulate(trace, s, machine_with(1000, 4000, 1e-6), no_warmup());
  for (int id : {0, 1, 2}) CHECK(duration(fast, id) - duration(plain, id) == ns(5000));
  // A decay of 2 us: relu 1 started dt after relu 0 did (relu 0's whole time, back to back).
  const auto mid = exec::simulate(trace, s, machine_with(1000, 4000, 2), no_warmup());
  const Tick dt = mid.per_op[1].start - mid.per_op[0].start;
  CHECK(dt == duration(mid, 0));
  const double x = 1 - std::exp(-double(dt) / double(ns(2000)));
  CHECK(duration(mid, 1) - duration(plain, 1) == ns(1000 + 4000 * x));
  // A profiled op keeps its measured time, and still sets its family's last start.
  auto o = no_warmup();
  o.op_compute = {ns(300), -1, -1, -1};
  const auto profiled = exec::simulate(trace, s, machine_with(1000, 4000, 3e9), o);
  const auto profiled_plain = exec::simulate(trace, s, machine_with(0, 0, 0), o);
  CHECK(duration(profiled, 0) == duration(profiled_plain, 0));
  CHECK(duration(profiled, 1) - duration(profiled_plain, 1) == ns(1000));
}

TEST_CASE("model context: strictly read, CPU only, scaled with the host's speed") {
  auto error_of = [](const nlohmann::json& context) -> std::string {
    nlohmann::json doc = test::defaults::tiny_cpu().json();
    doc["compute"]["model_context"] = context;
    try {
      exec::parse_machine(doc, "m.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of({{"base_ns", 1}, {"cold_ns", 2}, {"decay_us", 3}}) == "no error");
  CHECK(error_of({{"base_ns", -1}, {"cold_ns", 2}, {"decay_us", 3}}) ==
        "m.json: compute.model_context.base_ns: expected a number in [0, 1000000], got -1");
  CHECK(error_of({{"base_ns", 1}, {"cold_ns", 2}, {"decay_us", 0}}) ==
        "m.json: compute.model_context.decay_us: expected a decay time > 0 in microseconds, "
        "got 0");
  CHECK_THAT(error_of({{"base_ns", 1}, {"cold_ns", 2}}),
             Catch::Contains("m.json: compute.model_context.decay_us: expected"));
  CHECK_THAT(error_of({{"base_ns", 1}, {"cold_ns", 2}, {"decay_us", 3}, {"tau", 1}}),
             Catch::Contains("m.json: compute.model_context") && Catch::Contains("tau"));
  const nlohmann::json two{{"base_ns", 1},
                           {"cold_ns", 2},
                           {"decay_us", 3},
                           {"slower", {{{"cold_ns", 4}, {"decay_us", 5}}}}};
  CHECK(error_of(two) == "no error");
  auto bad = two;
  bad["slower"][0]["decay_us"] = 0;
  CHECK(error_of(bad) ==
        "m.json: compute.model_context.slower[0].decay_us: expected a decay time > 0 in "
        "microseconds, got 0");
  bad = two;
  bad["slower"] = {{"cold_ns", 4}};
  CHECK_THAT(error_of(bad), Catch::Contains("m.json: compute.model_context.slower"));
  bad = two;
  bad["slower"][0]["tau"] = 1;
  CHECK(error_of(bad) ==
        "m.json: compute.model_context.slower[0].tau: expected one of the known members "
        "(cold_ns, decay_us)");
  const auto round = compute::model_context_json(exec::parse_machine(
                                                     [&] {
                                                       nlohmann::json doc =
                                                           test::defaults::tiny_cpu().json();
                                                       doc["compute"]["model_context"] = two;
                                                       return doc;
                                                     }(),
                                                     "m.json")
                                                     .compute.model_context);
  CHECK(round == nlohmann::json{{"base_ns", 1.0},
                                {"cold_ns", 2.0},
                                {"decay_us", 3.0},
                                {"slower", {{{"cold_ns", 4.0}, {"decay_us", 5.0}}}}});
  // A GPU's compute section has no such key: its kernels launch from a host thread whose
  // cost is dispatch_overhead_ns.
  CHECK_THROWS_WITH(exec::load_machine("h100-sxm5", {{"compute.model_context.base_ns", "1"}}),
                    Catch::Contains("model_context"));
  auto m = exec::parse_machine(
      [] {
        nlohmann::json doc = test::defaults::tiny_cpu().json();
        doc["compute"]["model_context"] = {{"base_ns", 1000},
                                           {"cold_ns", 4000},
                                           {"decay_us", 5},
                                           {"slower", {{{"cold_ns", 300}, {"decay_us", 50}}}}};
        return doc;
      }(),
      "m.json");
  const auto slower = compute::with_compute_time_scaled(m.compute, 1.5);
  CHECK(slower.model_context.base_ns == Approx(1500));
  CHECK(slower.model_context.cold_ns == Approx(6000));
  CHECK(slower.model_context.decay_us == 5);
  CHECK(slower.model_context.slower.at(0).cold_ns == Approx(450));
  CHECK(slower.model_context.slower.at(0).decay_us == 50);
}
