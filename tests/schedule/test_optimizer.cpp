// Kernels, passes, FLOPs and bytes per element of the optimizer implementations, counted
// by hand from the op sequences written in sim/schedule/optimizer.cpp.
#include <catch2/catch.hpp>

#include "mlp_fixture.h"
#include "schedule/optimizer.h"

using namespace fusim::schedule;
using namespace fusim::schedule::testing;

TEST_CASE("the table has the eight optimizers with their state tensors") {
  CHECK(optimizer_names() == "sgd, momentum, nesterov, adam, adamw, adagrad, rmsprop, lamb");
  CHECK(find_optimizer("sgd")->state.empty());
  CHECK(find_optimizer("momentum")->state.size() == 1);
  CHECK(find_optimizer("adam")->state.size() == 2);
  CHECK(find_optimizer("adamw")->ops.size() == 9);  // param.mul_ + Adam's 8
  CHECK(find_optimizer("adamax") == nullptr);
}

TEST_CASE("adam: 8 passes per tensor unfused, 1 fused; bytes per fp32 element") {
  const auto& adam = *find_optimizer("adam");
  // loop/foreach: reads 4+8+4+8+4+4+4+12 = 48 B, writes 8 passes x 4 B = 32 B.
  auto loop = optimizer_element_cost(adam, OptimizerImpl::Loop, 4);
  CHECK(loop.passes == 8);
  CHECK(loop.flops == 13);
  CHECK(loop.bytes_read == 48);
  CHECK(loop.bytes_written == 32);
  CHECK(optimizer_element_cost(adam, OptimizerImpl::Foreach, 4).bytes_read == 48);
  // fused: grad, param, exp_avg, exp_avg_sq read once (16 B); the last three written (12 B).
  auto fused = optimizer_element_cost(adam, OptimizerImpl::Fused, 4);
  CHECK(fused.passes == 1);
  CHECK(fused.flops == 13);
  CHECK(fused.bytes_read == 16);
  CHECK(fused.bytes_written == 12);
  // loop: 8 passes + step_t += 1 + step_t.item() per tensor = 10 x 5.
  CHECK(optimizer_kernels(adam, OptimizerImpl::Loop, 5) == 50);
  // foreach on a CPU: 8 ops x 5 tensors (ATen's per-tensor slow path) + per tensor one
  // step bump and two step.item() = 40 + 15; on a GPU: 8 launches + the same 15.
  CHECK(optimizer_kernels(adam, OptimizerImpl::Foreach, 5) == 55);
  CHECK(optimizer_kernels(adam, OptimizerImpl::Foreach, 5, DeviceKind::Gpu) == 8 + 15);
  // fused: fusim's CPU kernel once per tensor; torch's CUDA kernel once per group, after
  // one _foreach_add_ of the step tensors.
  CHECK(optimizer_kernels(adam, OptimizerImpl::Fused, 5) == 5);
  CHECK(optimizer_kernels(adam, OptimizerImpl::Fused, 5, DeviceKind::Gpu) == 2);
}

TEST_CASE("adam foreach divides in place: same passes and bytes, t0 written then updated") {
  const auto& adam = *find_optimizer("adam");
  auto loop = optimizer_passes(adam, OptimizerImpl::Loop);
  auto foreach = optimizer_passes(adam, OptimizerImpl::Foreach);
  REQUIRE(loop.size() == 8);
  REQUIRE(foreach.size() == 8);
  // pass 5: loop `denom = t0 / c` reads t0, writes t1; foreach `_foreach_div_(t0, c)`.
  REQUIRE(foreach[5].accesses.size() == 1);
  CHECK(foreach[5].accesses[0].operand == Operand::Temp0);
  CHECK(foreach[5].accesses[0].mode == AccessMode::ReadWrite);
  // pass 6: loop `denom.add_(eps)` (t1 in place); foreach `denom = _foreach_add(t0, eps)`.
  REQUIRE(foreach[6].accesses.size() == 2);
  CHECK(foreach[6].accesses[1].operand == Operand::Temp1);
  CHECK(foreach[6].accesses[1].mode == AccessMode::Write);
  CHECK(optimizer_temporaries(adam, OptimizerImpl::Loop) == 2);
  CHECK(optimizer_temporaries(adam, OptimizerImpl::Foreach) == 2);
  CHECK(optimizer_temporaries(adam, OptimizerImpl::Fused) == 0);
  CHECK(optimizer_element_cost(adam, OptimizerImpl::Foreach, 4).bytes_written == 32);
}

TEST_CASE("adagrad foreach (torch 1.13): two more passes and four temporaries") {
  const auto& adagrad = *find_optimizer("adagrad");
  // loop: addcmul_, sqrt, add_, addcdiv_; foreach: addcmul_, sqrt, add, mul, div, add_.
  CHECK(optimizer_passes(adagrad, OptimizerImpl::Loop).size() == 4);
  CHECK(optimizer_passes(adagrad, OptimizerImpl::Foreach).size() == 6);
  CHECK(optimizer_temporaries(adagrad, OptimizerImpl::Loop) == 1);
  CHECK(optimizer_temporaries(adagrad, OptimizerImpl::Foreach) == 4);
  // per tensor: the step bump and 5 ops of 0-dim arithmetic for minus_clr.
  CHECK(optimizer_kernels(adagrad, OptimizerImpl::Foreach, 3) == 6 * 3 + 6 * 3);
  CHECK(optimizer_kernels(adagrad, OptimizerImpl::Loop, 3) == (4 + 2) * 3);
}

TEST_CASE("nesterov foreach adds into the gradient: no temporary") {
  const auto& nesterov = *find_optimizer("nesterov");
  CHECK(optimizer_temporaries(nesterov, OptimizerImpl::Loop) == 1);
  CHECK(optimizer_temporaries(nesterov, OptimizerImpl::Foreach) == 0);
  auto passes = optimizer_passes(nesterov, OptimizerImpl::Foreach);
  REQUIRE(passes.size() == 4);
  CHECK(passes[2].accesses[1].operand == Operand::Grad);
  CHECK(passes[2].accesses[1].mode == AccessMode::ReadWrite);
  // No step tensor: 4 kernels per tensor in both.
  CHECK(optimizer_kernels(nesterov, OptimizerImpl::Loop, 2) == 8);
  CHECK(optimizer_kernels(nesterov, OptimizerImpl::Foreach, 2) == 8);
}

TEST_CASE("threads per optimizer pass follow the kernel's grain") {
  // ATen: chunks of 32768 elements, serial below; fusim's fused kernels: 4096.
  CHECK(optimizer_pass_threads(OptimizerImpl::Loop, 64) == 1);
  CHECK(optimizer_pass_threads(OptimizerImpl::Loop, 32768) == 1);
  CHECK(optimizer_pass_threads(OptimizerImpl::Foreach, 32769) == 2);
  CHECK(optimizer_pass_threads(OptimizerImpl::Loop, 4 * 32768) == 4);
  CHECK(optimizer_pass_threads(OptimizerImpl::Fused, 4096) == 1);
  CHECK(optimizer_pass_threads(OptimizerImpl::Fused, 4097) == 2);
  CHECK(optimizer_pass_threads(OptimizerImpl::Fused, 36864) == 9);
}

TEST_CASE("lamb fused: apex's four stages with two norm reductions") {
  const auto& lamb = *find_optimizer("lamb");
  auto passes = optimizer_passes(lamb, OptimizerImpl::Fused);
  REQUIRE(passes.size() == 4);
  CHECK_FALSE(passes[0].reduction);
  CHECK(passes[1].reduction);  // ||param||
  CHECK(passes[2].reduction);  // ||update||
  // stage 1 reads exp_avg, grad, exp_avg_sq, param; writes both moments and the update.
  auto cost = optimizer_element_cost(lamb, OptimizerImpl::Fused, 4);
  CHECK(cost.bytes_read == 16 + 4 + 4 + 8);
  CHECK(cost.bytes_written == 12 + 8);
  CHECK(cost.flops == 14 + 2 + 2 + 3);
  CHECK(optimizer_kernels(lamb, OptimizerImpl::Fused, 7) == 4 * 7);  // per tensor on a CPU
  CHECK(optimizer_kernels(lamb, OptimizerImpl::Fused, 7, DeviceKind::Gpu) == 4);
  CHECK(optimizer_passes(lamb, OptimizerImpl::Loop).size() == 14);
}

TEST_CASE("sgd is one pass whatever the implementation") {
  const auto& sgd = *find_optimizer("sgd");
  for (auto impl : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused}) {
    auto cost = optimizer_element_cost(sgd, impl, 4);
    CHECK(cost.passes == 1);
    CHECK(cost.bytes_read == 8);
    CHECK(cost.bytes_written == 4);
  }
}

TEST_CASE("U ops of the MLP: kernels, passes and FLOPs per implementation") {
  auto trace = mlp3();
  // U fc1 updates fc1.weight (4096 elements) and fc1.bias (64): adam's 13 FLOPs each.
  auto loop = build(trace, Ordering::Eager, "adam", OptimizerImpl::Loop);
  const Op& u = loop.ops[13];
  REQUIRE(u.kind == OpKind::Update);
  CHECK(u.kernels == 20);  // (8 passes + step bump + step read) x 2 tensors
  CHECK(u.passes.size() == 16);
  CHECK(u.flops == 13 * (4096 + 64));
  // loop walks tensor by tensor: the first 8 passes are all the weight's.
  CHECK(loop.tensors[std::size_t(u.passes[0].accesses[0].tensor)].name == "fc1.weight.exp_avg");
  CHECK(loop.tensors[std::size_t(u.passes[8].accesses[0].tensor)].name == "fc1.bias.exp_avg");
  auto foreach = build(trace, Ordering::Eager, "adam", OptimizerImpl::Foreach);
  CHECK(foreach.ops[13].kernels == 8 * 2 + 3 * 2);  // CPU: per tensor, + 3 step ops each
  CHECK(foreach.ops[13].passes.size() == 16);
  // foreach walks op by op: pass 1 is exp_avg.mul_ of the bias.
  CHECK(foreach.tensors[std::size_t(foreach.ops[13].passes[1].accesses[0].tensor)].name ==
        "fc1.bias.exp_avg");
  auto fused = build(trace, Ordering::Eager, "adam", OptimizerImpl::Fused);
  CHECK(fused.ops[13].kernels == 2);  // fusim's CPU kernel once per tensor
  CHECK(fused.ops[13].passes.size() == 2);
  CHECK(fused.ops[13].passes[0].accesses.size() == 4);
  // fused keeps sqrt/denom in registers: no optimizer temporaries at the peak; the peak
  // is then Bw fc1 (all grads, fc1.out.grad and the input).
  CHECK(fused.peak.temporaries == 2048);
  CHECK(fused.peak.total == 36352 + 2 * 36352 + 36352 + 2048 + 2048);
  // loop frees each tensor's sqrt and denom before the next tensor's: weight's 2 x 16384.
  CHECK(loop.peak.temporaries == 32768);
  // fc1.weight has 4096 elements: one ATen chunk, 1 fused chunk; the bias 64: serial.
  for (const auto& pass : loop.ops[13].passes) CHECK(pass.max_threads == 1);
  CHECK(fused.ops[13].passes[0].max_threads == 1);
}

TEST_CASE("graph execution: fused updates step one optimizer per parameter") {
  auto trace = mlp3();
  ScheduleOptions o;
  o.ordering = Ordering::BackwardFused;
  o.optimizer = "adam";
  o.impl = OptimizerImpl::Foreach;
  o.device = DeviceKind::Gpu;
  auto layers = build_schedule(trace, o);
  o.execution = Execution::Graph;
  auto graph = build_schedule(trace, o);
  REQUIRE(layers.ops.size() == graph.ops.size());
  for (std::size_t i = 0; i < layers.ops.size(); ++i) {
    if (layers.ops[i].kind != OpKind::Update) continue;
    // fc1, fc2: weight and bias: one foreach launch per op for the layer (8) + 3 step ops
    // per tensor in layers; per parameter in graph (2 x (8 + 3)). fc3 has no bias.
    const int tensors = layers.ops[i].layer == 4 ? 1 : 2;
    CHECK(layers.ops[i].kernels == 8 + 3 * tensors);
    CHECK(graph.ops[i].kernels == tensors * (8 + 3));
    CHECK(graph.ops[i].passes.size() == layers.ops[i].passes.size());
  }
  // Eager steps one optimizer per layer in both executions.
  o.ordering = Ordering::Eager;
  auto eager = build_schedule(trace, o);
  for (const auto& op : eager.ops)
    if (op.kind == OpKind::Update) CHECK(op.kernels == 8 + 3 * (op.layer == 4 ? 1 : 2));
}
