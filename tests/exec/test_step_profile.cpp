// Step profiles (issue 16, profile-guided path): op times measured inside eager steps, each
// op's residual over the simulated eager step made part of the op, and the other orderings
// predicted as the same ops in their own context (exec/profiled_compute.h).
#include <catch2/catch.hpp>
#include <map>

#include "builders/machine_builder.h"
#include "core/error.h"
#include "exec/op_profile.h"
#include "exec/profiled_compute.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;

namespace {
using Key = std::pair<std::string, int>;

workload::Trace two_linears() {
  return workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"m","batch":4,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[4,16]},{"name":"target","shape":[4],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"fc1","op":"linear","attrs":{"bias":false},"inputs":["input"],"output":[4,32],
    "params":[{"name":"fc1.weight","shape":[32,16]}]},
   {"id":1,"name":"act","op":"relu","attrs":{},"inputs":[0],"output":[4,32]},
   {"id":2,"name":"fc2","op":"linear","attrs":{"bias":false},"inputs":[1],"output":[4,5],
    "params":[{"name":"fc2.weight","shape":[5,32]}]},
   {"id":3,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[2,"target"],"output":[]}]})"),
                               "m.json");
}

schedule::Schedule adam(const workload::Trace& trace, schedule::Ordering ordering,
                        schedule::Execution execution = schedule::Execution::Layers) {
  schedule::ScheduleOptions so;
  so.ordering = ordering;
  so.optimizer = "adam";
  so.steps = 4;
  so.execution = execution;
  return schedule::build_schedule(trace, so);
}

exec::SimOptions one_warmup() {
  exec::SimOptions o;
  o.warmup_steps = 1;
  return o;
}

// Median time per (kind, layer) of a simulated run's measured ops.
std::map<Key, Tick> median_times(const exec::RunResult& r) {
  std::map<Key, std::vector<double>> t;
  for (const auto& o : r.per_op)
    if (o.measured) t[{o.kind, o.layer}].push_back(double(o.end - o.start));
  std::map<Key, Tick> out;
  for (auto& [k, v] : t) out[k] = Tick(exec::quantile(v, 0.5) + 0.5);
  return out;
}

// What a measured eager run would report if each op took `model + extra(key)` in every step.
exec::RunResult measured_run(const exec::RunResult& model, const std::map<Key, Tick>& times) {
  exec::RunResult m = model;
  m.executor = "cpu";
  for (auto& o : m.per_op) o.end = o.start + times.at({o.kind, o.layer});
  return m;
}
}  // namespace

TEST_CASE("a step profile: each op's mean over the steps nearest the median, per kind and layer") {
  const auto trace = two_linears();
  const auto eager = adam(trace, schedule::Ordering::Eager);
  exec::RunResult run;
  run.executor = "cpu";
  run.execution = "layers";
  // Ops 0 and 1 (F of fc1, F of act) in four measured steps and an unmeasured one. Step
  // totals 40, 41, 45, 37 us, median 40.5: the two steps nearest it are steps 0 and 1.
  REQUIRE(eager.ops.at(0).kind == schedule::OpKind::Forward);
  REQUIRE(eager.ops.at(0).layer == 0);
  REQUIRE(eager.ops.at(1).layer == 1);
  const std::vector<std::pair<double, double>> us{{10, 30}, {40, 1}, {20, 25}, {35, 2}, {99, 99}};
  for (std::size_t step = 0; step < us.size(); ++step)
    for (int id : {0, 1}) {
      exec::OpTiming t;
      t.id = id;
      t.kind = "F";
      t.layer = id;
      t.step = int(step);
      t.start = ns(100000 * step + 50000 * id);
      t.end = t.start + ns(1000 * (id == 0 ? us[step].first : us[step].second));
      t.measured = step < 4;
      run.per_op.push_back(t);
    }
  const auto p = exec::in_step_profile(trace, eager, run, "run.json");
  CHECK(p.context == "step");
  CHECK(p.optimizer == "adam");
  REQUIRE(p.ops.size() == 2);
  CHECK(p.ops[0].kind == "F");
  CHECK(p.ops[0].layer == "fc1");
  CHECK(p.ops[0].layer_index == 0);
  CHECK(p.ops[0].repeats == 4);
  CHECK(p.ops[0].median == ns(25000));  // (10 + 40) / 2; its own median would be 27.5
  CHECK(p.ops[1].median == ns(15500));  // (30 + 1) / 2; its own median would be 13.5
  CHECK(p.ops[0].p25 == ns(17500));     // numpy's linear quantiles of 10, 20, 35, 40
  CHECK(p.ops[0].p75 == ns(36250));
  // The same step index repeated (sampling rounds repeat the last steady step): each run of
  // the op ids is a step of its own.
  for (auto& t : run.per_op) t.step = 7;
  CHECK(exec::in_step_profile(trace, eager, run, "run.json").ops[0].median == ns(25000));
  // Bimodal step times (a VM's: 6 steps of 10 us, 2 of 50 us): the mode of the median, not a
  // mean between the modes.
  {
    exec::RunResult bimodal = run;
    bimodal.per_op.clear();
    for (int step = 0; step < 8; ++step) {
      exec::OpTiming t;
      t.kind = "F";
      t.layer = 0;
      t.step = step;
      t.start = ns(100000 * step);
      t.end = t.start + ns(step % 3 == 2 ? 50000 : 10000);
      bimodal.per_op.push_back(t);
    }
    CHECK(exec::in_step_profile(trace, eager, bimodal, "run.json").ops[0].median == ns(10000));
  }
  // A timing of an op the eager schedule does not have: another run's, refused by name.
  run.per_op[1].layer = 2;
  CHECK_THROWS_WITH(exec::in_step_profile(trace, eager, run, "run.json"),
                    Catch::StartsWith("run.json: per_op: expected the timings of a run of the "
                                      "eager schedule"));
  // Nothing measured: refused.
  run.per_op.clear();
  CHECK_THROWS_WITH(exec::in_step_profile(trace, eager, run, "run.json"),
                    Catch::Contains("run.json: per_op: expected the op timings of measured steps"));
}

TEST_CASE(
    "a step profile: every eager op takes its measured time, other orderings keep the "
    "residuals") {
  const auto trace = two_linears();
  const auto eager = adam(trace, schedule::Ordering::Eager);
  const auto bwd = adam(trace, schedule::Ordering::BackwardFused);
  const auto m = test::defaults::tiny_cpu().memory(50, 8).build();
  const auto model = exec::simulate(trace, eager, m, one_warmup());
  const auto model_times = median_times(model);
  // Measured: every forward op 7 us slower than the model, every update 5 us slower, the
  // others 2 us slower, except the loss, measured at 80% of the model's time (its compute is
  // cut to reach it), and the relu's forward at 10% (below the model's memory and dispatch
  // alone: unreachable, reported).
  std::map<Key, Tick> extra, measured;
  const Key relu{"F", 1};
  for (const auto& [key, t] : model_times) {
    const Tick e = key.first == "F" ? ns(7000) : key.first == "U" ? ns(5000) : ns(2000);
    extra[key] = key.first == "L" ? -(t / 5) : key == relu ? -(t * 9 / 10) : e;
    measured[key] = t + extra[key];
  }
  exec::OpProfile profile =
      exec::in_step_profile(trace, eager, measured_run(model, measured), "run.json");
  profile.file = "p.json";
  profile.threads = m.compute.threads_per_op;
  exec::ProfiledCompute pc(profile, m, one_warmup());

  const auto e_times = pc.op_times(trace, eager);
  const auto predicted =
      median_times(exec::simulate_profiled(trace, eager, m, one_warmup(), pc, e_times).result);
  CHECK(pc.solved() == int(model_times.size()));
  for (const auto& [key, t] : measured) {
    INFO(key.first << " on layer " << key.second);
    if (extra.at(key) > 0) {
      CHECK(std::abs(predicted.at(key) - t) <= ns(1));
    } else if (key != relu) {  // compute taken off, by secant steps: within 1%
      CHECK(std::abs(predicted.at(key) - t) <= t / 100);
    } else {  // compute 0 and still slower than measured
      CHECK(predicted.at(key) > t);
    }
  }
  REQUIRE(pc.inexact().size() == 1);
  CHECK(pc.inexact()[0].description == "F on layer act");
  CHECK(pc.inexact()[0].measured == measured.at(relu));
  CHECK(pc.inexact()[0].simulated == predicted.at(relu));
  // Backward-fused: the same ops with the same delays and compute, in their own context: each
  // op whose residual was a delay takes the model's backward-fused time plus that delay.
  const auto b_times = pc.op_times(trace, bwd);
  const auto b_model = median_times(exec::simulate(trace, bwd, m, one_warmup()));
  const auto b_pred =
      median_times(exec::simulate_profiled(trace, bwd, m, one_warmup(), pc, b_times).result);
  int delayed = 0;
  for (const auto& op : bwd.ops) {
    const Key key{std::string(schedule::to_string(op.kind)), op.layer};
    if (extra.at(key) <= 0) continue;
    CHECK(b_times.delay[std::size_t(op.id)] == extra.at(key));
    CHECK(b_times.compute[std::size_t(op.id)] == -1);  // the model's compute
    ++delayed;
  }
  CHECK(delayed > 8);
  for (const auto& [key, t] : b_model) {
    if (extra.at(key) <= 0) continue;
    INFO(key.first << " on layer " << key.second);
    CHECK(std::abs(b_pred.at(key) - (t + extra.at(key))) <= ns(1));
  }
  // A profile of another execution is refused by name.
  const auto graph = adam(trace, schedule::Ordering::Eager, schedule::Execution::Graph);
  CHECK_THROWS_WITH(pc.op_times(trace, graph),
                    Catch::StartsWith("p.json: execution: expected \"graph\""));
}

TEST_CASE("step profile files: round trip and strict reading") {
  exec::OpProfile p;
  p.context = "step";
  p.threads = 2;
  p.optimizer = "adam";
  p.impl = "foreach";
  for (int layer : {0, 2}) {
    exec::ProfiledOp op;
    op.signature = "00112233aabbccdd";  // the same shape on two layers: keyed by layer
    op.kind = "U";
    op.layer_index = layer;
    op.median = ns(1000 + layer);
    op.repeats = 10;
    p.ops.push_back(op);
  }
  const auto back = exec::parse_op_profile(exec::op_profile_json(p), "p.json");
  REQUIRE(back.ops.size() == 2);
  CHECK(back.in_step());
  CHECK(back.find_in_step("U", 2)->median == ns(1002));
  CHECK(back.find_in_step("U", 1) == nullptr);
  auto doc = exec::op_profile_json(p);
  doc["ops"][1]["layer_index"] = 0;
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    "p.json: ops[1].layer_index: expected one entry per kind and layer, got U on "
                    "layer 0 again");
  doc = exec::op_profile_json(p);
  doc["ops"][0].erase("layer_index");
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    Catch::StartsWith("p.json: ops[0]: expected a \"layer_index\""));
  doc = exec::op_profile_json(p);
  doc["context"] = "warm";
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    Catch::StartsWith("p.json: context: expected \"isolated\" or \"step\""));
  // An isolated profile keeps refusing a repeated signature, and writes no layer index.
  p.context = "isolated";
  doc = exec::op_profile_json(p);
  CHECK(doc["ops"][0]["layer_index"].is_null());
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    Catch::StartsWith("p.json: ops[1].signature"));
}
