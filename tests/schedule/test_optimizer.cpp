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
  CHECK(optimizer_kernels(adam, OptimizerImpl::Loop, 5) == 40);
  CHECK(optimizer_kernels(adam, OptimizerImpl::Foreach, 5) == 8);
  CHECK(optimizer_kernels(adam, OptimizerImpl::Fused, 5) == 1);
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
  CHECK(optimizer_kernels(lamb, OptimizerImpl::Fused, 7) == 4);
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
  CHECK(u.kernels == 16);
  CHECK(u.passes.size() == 16);
  CHECK(u.flops == 13 * (4096 + 64));
  // loop walks tensor by tensor: the first 8 passes are all the weight's.
  CHECK(loop.tensors[std::size_t(u.passes[0].accesses[0].tensor)].name == "fc1.weight.exp_avg");
  CHECK(loop.tensors[std::size_t(u.passes[8].accesses[0].tensor)].name == "fc1.bias.exp_avg");
  auto foreach = build(trace, Ordering::Eager, "adam", OptimizerImpl::Foreach);
  CHECK(foreach.ops[13].kernels == 8);
  CHECK(foreach.ops[13].passes.size() == 16);
  // foreach walks op by op: pass 1 is exp_avg.mul_ of the bias.
  CHECK(foreach.tensors[std::size_t(foreach.ops[13].passes[1].accesses[0].tensor)].name ==
        "fc1.bias.exp_avg");
  auto fused = build(trace, Ordering::Eager, "adam", OptimizerImpl::Fused);
  CHECK(fused.ops[13].kernels == 1);
  CHECK(fused.ops[13].passes.size() == 2);
  CHECK(fused.ops[13].passes[0].accesses.size() == 4);
  // fused keeps sqrt/denom in registers: no optimizer temporaries at the peak; the peak
  // is then Bw fc1 (all grads, fc1.out.grad and the input).
  CHECK(fused.peak.temporaries == 2048);
  CHECK(fused.peak.total == 36352 + 2 * 36352 + 36352 + 2048 + 2048);
  // loop frees each tensor's sqrt and denom before the next tensor's: weight's 2 x 16384.
  CHECK(loop.peak.temporaries == 32768);
}
