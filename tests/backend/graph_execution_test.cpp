// The graph execution (backend/graph_state.h): one autograd graph per step, updates from
// hooks, as a PyTorch user's loop. Its math is checked against torch::optim in
// ordering_equivalence_test.cpp; here, where its hooks fire and what each op's span holds.
#include <ATen/ATen.h>  // before Catch: c10's glog CHECK would replace Catch's
#include <catch2/catch.hpp>
#include <chrono>
#include <map>

#include "backend/executor.h"
#include "backend/run_plan.h"
#include "backend/step_state.h"
#include "core/error.h"
#include "workload/trace_io.h"

using namespace fusim;
using schedule::Execution;
using schedule::OpKind;
using schedule::Ordering;

namespace {
workload::Trace mlp_tiny() {
  return workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
}

schedule::Schedule graph_schedule(const workload::Trace& trace, Ordering ordering, int steps) {
  schedule::ScheduleOptions so;
  so.ordering = ordering;
  so.optimizer = "adam";
  so.impl = schedule::OptimizerImpl::Loop;
  so.steps = steps;
  so.execution = Execution::Graph;
  return schedule::build_schedule(trace, so);
}

int op_id(const schedule::Schedule& s, OpKind kind, int layer, int step) {
  for (const auto& op : s.ops)
    if (op.kind == kind && op.layer == layer && op.step == step) return op.id;
  FAIL("no such op");
  return -1;
}
}  // namespace

TEST_CASE(
    "graph, backward-fused: each layer's update runs in its hook before the next "
    "layer's backward, in the autograd engine's order") {
  // mlp_tiny: fc1 (linear, bias) -> act (relu) -> fc2 (linear, no bias) -> loss. The engine
  // runs the ready node with the highest sequence number first, and AccumulateGrad nodes
  // before any other (torch/csrc/autograd/engine.cpp, CompareNodeTaskTime; AccumulateGrad's
  // sequence_nr is UINT64_MAX): on a chain, fc2's backward, fc2.weight's accumulation (its
  // hook steps U fc2), then act's backward, then fc1's, then fc1's accumulations (U fc1).
  const auto trace = mlp_tiny();
  const auto s = graph_schedule(trace, Ordering::BackwardFused, 1);
  auto state = backend::make_step_state(trace, s, backend::optimizer_config("adam"), at::kCPU, 1);
  using Clock = std::chrono::steady_clock;
  Clock::time_point t0, t1;
  for (const auto& op : s.ops) {
    if (op.kind == OpKind::Loss) t0 = Clock::now();
    state->execute(op);
    if (op.kind == OpKind::Loss) t1 = Clock::now();
  }
  std::map<int, backend::InnerSpan> spans;
  for (const auto& span : state->take_inner_spans()) {
    CHECK(span.end >= span.start);
    CHECK(spans.emplace(span.op, span).second);  // each op once
  }
  const int loss = op_id(s, OpKind::Loss, 3, 0), bx_fc2 = op_id(s, OpKind::BackwardInput, 2, 0),
            bw_fc2 = op_id(s, OpKind::BackwardWeight, 2, 0), u_fc2 = op_id(s, OpKind::Update, 2, 0),
            bx_act = op_id(s, OpKind::BackwardInput, 1, 0),
            bw_fc1 = op_id(s, OpKind::BackwardWeight, 0, 0), u_fc1 = op_id(s, OpKind::Update, 0, 0);
  // Every B, L and backward-fused U op of the step has its span from the hooks.
  REQUIRE(spans.size() == 7);
  for (int id : {loss, bx_fc2, bw_fc2, u_fc2, bx_act, bw_fc1, u_fc1}) REQUIRE(spans.count(id));
  // A span starts where the op's first piece starts and lasts as long as its pieces
  // together (fc1's Bw is cut by its two updates), so the order shows in the starts.
  auto starts_before = [&](int a, int b) { return spans.at(a).start < spans.at(b).start; };
  CHECK(starts_before(loss, bx_fc2));
  CHECK(starts_before(bx_fc2, u_fc2));
  CHECK(starts_before(u_fc2, bx_act));
  CHECK(starts_before(bx_act, bw_fc1));
  CHECK(starts_before(bw_fc1, u_fc1));
  // U fc2 (one parameter, one piece) ends before act's backward begins.
  CHECK(spans.at(u_fc2).end <= spans.at(bx_act).start);
  // The pieces partition L's call: nothing counted twice, nothing outside it.
  Clock::duration sum{0};
  for (const auto& [id, span] : spans) {
    CHECK(span.start >= t0);
    CHECK(span.end <= t1);
    sum += span.end - span.start;
  }
  CHECK(spans.at(loss).start >= t0);
  CHECK(sum <= t1 - t0);
  // fc2's Bw ran inside the node that also computed its Bx: an empty span at that span's end.
  CHECK(spans.at(bw_fc2).start == spans.at(bw_fc2).end);
  CHECK(spans.at(bw_fc2).start == spans.at(bx_fc2).end);
  // Nothing is pending after the step: every .grad was set to None by its hook.
  for (const auto& p : state->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("graph on a CUDA device is refused with the reason, before any work") {
  const auto trace = mlp_tiny();
  const auto s = graph_schedule(trace, Ordering::Eager, 1);
  CHECK_THROWS_WITH(backend::make_step_state(trace, s, backend::optimizer_config("adam"),
                                             at::Device(at::kCUDA), 1),
                    Catch::Contains("--execution graph: CPU only"));
}

TEST_CASE("run with both executions: each ordering against the eager of its own execution") {
  const auto trace = mlp_tiny();
  backend::RunOptions o;
  o.warmup = 1;
  o.steps = 3;
  o.block = 3;
  o.pin = false;
  o.min_cpu_ratio = 0;  // every step kept: the counts below are exact
  o.executions = {Execution::Layers, Execution::Graph};
  const auto schedules = backend::build_run_schedules(
      trace, {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}, "adam",
      schedule::OptimizerImpl::Foreach, o);
  REQUIRE(schedules.size() == 6);
  CHECK(schedules[2].execution == Execution::Layers);
  CHECK(schedules[3].execution == Execution::Graph);
  const auto report =
      backend::run_schedules(trace, schedules, backend::optimizer_config("adam"), o);
  CHECK((report.baselines == std::vector<int>{0, 0, 0, 3, 3, 3}));
  CHECK(report.baseline == 0);
  REQUIRE(report.results.size() == 6);
  CHECK(report.results[0].execution == "layers");
  CHECK(report.results[4].execution == "graph");
  CHECK(report.results[4].ordering == "backward-fused");
  CHECK(report.speedups[3].speedup == Approx(1.0));  // graph eager against itself
  for (const auto& r : report.results) {
    CHECK(r.steps_measured == 3);
    CHECK(r.per_op.size() == 3 * 10);  // every op of the step, graph's from the hooks
    for (const auto& op : r.per_op) CHECK(op.end >= op.start);
  }
}
