// The ATen capture's kinds (traces/SCHEMA.md, Generic layers) in the simulator: what each
// op asks of the machine (class, kernels, FLOPs, tensors) on the hand-written example
// traces/examples/generic_layers.json, and a simulated step of it.
#include <catch2/catch.hpp>
#include <map>

#include "builders/machine_builder.h"
#include "compute/access_program.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/cost.h"
#include "workload/trace_io.h"

using namespace fusim;
using compute::OpClass;
using schedule::AccessMode;
using schedule::OpKind;

namespace {
workload::Trace generic_trace() {
  return workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/generic_layers.json");
}

schedule::Schedule eager_sgd(const workload::Trace& trace, int steps) {
  schedule::ScheduleOptions so;
  so.ordering = schedule::Ordering::Eager;
  so.optimizer = "sgd";
  so.steps = steps;
  return schedule::build_schedule(trace, so);
}

int layer_index(const workload::Trace& t, const std::string& name) {
  for (std::size_t i = 0; i < t.layers.size(); ++i)
    if (t.layers[i].name == name) return int(i);
  FAIL("no layer " << name);
  return -1;
}

const schedule::Op& op_of(const schedule::Schedule& s, OpKind kind, int layer) {
  for (const auto& op : s.ops)
    if (op.kind == kind && op.layer == layer && op.step == 0) return op;
  FAIL("no op");
  return s.ops.front();
}
}  // namespace

TEST_CASE("generic layers: op class, kernels and FLOPs of their forward ops") {
  const auto trace = generic_trace();
  const auto s = eager_sgd(trace, 1);
  const auto machine = test::defaults::tiny_cpu().llc("8KiB").build();
  struct Expect {
    const char* layer;
    OpClass op_class;
    int kernels;
  };
  for (const auto& e :
       {Expect{"sub", OpClass::Elementwise, 1}, Expect{"mean", OpClass::Reduction, 1},
        Expect{"bag", OpClass::Reduction, 1}, Expect{"slice", OpClass::Elementwise, 1},
        Expect{"keep", OpClass::Elementwise, 1}, Expect{"gm", OpClass::Gemm, 1},
        Expect{"w", OpClass::Elementwise, 0},  // a view: never runs
        Expect{"index", OpClass::Elementwise, 0}}) {
    INFO(e.layer);
    const int i = layer_index(trace, e.layer);
    const auto& op = op_of(s, OpKind::Forward, i);
    const auto program = compute::build_access_program(trace, s, op, machine.compute);
    CHECK(program.op_class == e.op_class);
    CHECK(op.kernels == e.kernels);
    CHECK(program.flops() == workload::layer_cost(trace, trace.layers[std::size_t(i)]).flops_fwd);
  }
  // gm: 2 * contraction 4 * 8 outputs = 64 FLOPs, reading its two inputs, writing [2,4].
  const auto& gm = op_of(s, OpKind::Forward, layer_index(trace, "gm"));
  CHECK(gm.flops == 64);
  const auto program = compute::build_access_program(trace, s, gm, machine.compute);
  CHECK(program.streamed_bytes() == 32 + 64 + 32);  // masked [2,4], w [4,4], out [2,4]
  // keep is made from nothing: it only writes its [2,4] output.
  const auto& keep = op_of(s, OpKind::Forward, layer_index(trace, "keep"));
  CHECK(compute::build_access_program(trace, s, keep, machine.compute).streamed_bytes() == 32);
}

TEST_CASE("a parameter read by three layers: their backward ops accumulate into its grad") {
  const auto trace = generic_trace();
  const auto s = eager_sgd(trace, 1);
  // Who writes w.grad of step 0, in issue order, and how.
  int grad = -1;
  for (const auto& t : s.tensors)
    if (t.name == "w.grad" && t.step == 0) grad = t.id;
  REQUIRE(grad >= 0);
  std::vector<std::pair<std::string, AccessMode>> writers;
  int update_reads = 0;
  for (const auto& op : s.ops)
    for (const auto& pass : op.passes)
      for (const auto& a : pass.accesses) {
        if (a.tensor != grad) continue;
        if (op.kind == OpKind::Update) {
          CHECK(op.layer == layer_index(trace, "w"));
          ++update_reads;
        } else if (a.mode != AccessMode::Read) {
          writers.emplace_back(trace.layers[std::size_t(op.layer)].name, a.mode);
        }
      }
  // Backward runs in reverse: gm, then h2, then h1 (each Bx computes dB = A^T dY into w.grad).
  REQUIRE(writers.size() == 3);
  CHECK(writers[0] == std::make_pair(std::string("gm"), AccessMode::Write));
  CHECK(writers[1] == std::make_pair(std::string("h2"), AccessMode::ReadWrite));
  CHECK(writers[2] == std::make_pair(std::string("h1"), AccessMode::ReadWrite));
  CHECK(update_reads >= 1);
  // The parameter layer's own backward is autograd's AccumulateGrad, already done: no kernel.
  const auto& bw = op_of(s, OpKind::BackwardWeight, layer_index(trace, "w"));
  CHECK(bw.kernels == 0);
  CHECK(bw.passes.empty());
  CHECK(schedule::check_schedule(trace, s).empty());
}

TEST_CASE("generic layers simulate: a step of the example on a tiny machine") {
  const auto trace = generic_trace();
  const auto machine = test::defaults::tiny_cpu().llc("8KiB").build();
  const auto s = eager_sgd(trace, 3);
  auto r = exec::simulate(trace, s, machine, exec::SimOptions{});
  // 2 GFLOP/s and no dispatch cost: the step takes at least the time of its forward (457)
  // and backward (673) FLOPs (fusim trace show): 1130 FLOPs = 565 ns.
  CHECK(r.step_time >= 565'000);
  std::map<std::string, int> kinds;
  for (const auto& op : r.per_op) ++kinds[op.kind];
  CHECK(kinds["F"] > 0);
  CHECK(kinds["Bx"] > 0);
  CHECK(kinds["U"] > 0);
}

TEST_CASE("a layer read only by a comparison gets no gradient: no backward, no update") {
  const auto trace =
      workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/no_gradient_branch.json");
  const int gate = layer_index(trace, "gate"), fc = layer_index(trace, "fc");
  CHECK_FALSE(trace.layers[std::size_t(gate)].output_requires_grad);
  CHECK(trace.layers[std::size_t(fc)].output_requires_grad);
  // gate: 2*4*4 = 32 MACs forward only; fc: no input gradient (a model input), dW 64 FLOPs.
  const auto gate_cost = workload::layer_cost(trace, trace.layers[std::size_t(gate)]);
  CHECK(gate_cost.flops_fwd == 64);
  CHECK(gate_cost.flops_bwd() == 0);
  CHECK(workload::layer_cost(trace, trace.layers[std::size_t(fc)]).flops_bwd_weight == 64);
  const auto s = eager_sgd(trace, 2);
  std::map<std::pair<int, OpKind>, int> ops;
  for (const auto& op : s.ops) ++ops[{op.layer, op.kind}];
  CHECK(ops[{gate, OpKind::Forward}] == 2);
  CHECK(ops[{gate, OpKind::BackwardWeight}] == 0);
  CHECK(ops[{gate, OpKind::Update}] == 0);
  CHECK(ops[{fc, OpKind::BackwardWeight}] == 2);
  CHECK(ops[{fc, OpKind::Update}] == 2);
  CHECK(schedule::check_schedule(trace, s).empty());
}
