// The optimizer update the backend executes equals the schedule's model of it: for every
// optimizer and implementation, the ATen calls one LayerOptimizer::step makes (counted by
// a RecordFunction callback, the dispatcher's own record) give the kernels, param-sized
// passes and param-sized temporaries that schedule/optimizer.h assigns to a U op.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include "backend/layer_optimizer.h"
#include "backend/op_counter.h"
#include "backend/training_state.h"
#include "schedule/optimizer.h"
#include "workload/trace_io.h"

using namespace fusim;
using schedule::OptimizerImpl;

namespace {
// Two params of different sizes, both above the threshold that tells passes from the 0-dim
// step-counter ops.
constexpr std::int64_t kMinNumel = 1000;

backend::UpdateCount count_one_step(const std::string& name, OptimizerImpl impl) {
  auto a = at::randn({50, 40}), b = at::randn({3000});
  backend::LayerOptimizer opt(backend::optimizer_config(name), impl, {a, b});
  for (int s = 0; s < 2; ++s) opt.step({at::randn({50, 40}), at::randn({3000})});  // steady
  const std::vector<at::Tensor> grads{at::randn({50, 40}), at::randn({3000})};
  backend::OpCounter counter;
  opt.step(grads);
  return backend::count_update(counter.calls(), kMinNumel);
}
}  // namespace

TEST_CASE(
    "Each optimizer x impl: the backend's ATen calls are the schedule's kernels, passes "
    "and temporaries") {
  for (const auto& spec : schedule::optimizer_table()) {
    for (auto impl : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused}) {
      INFO(std::string(spec.name) << " " << schedule::to_string(impl));
      const auto c = count_one_step(std::string(spec.name), impl);
      CHECK(c.kernels == schedule::optimizer_kernels(spec, impl, 2, schedule::DeviceKind::Cpu));
      CHECK(c.passes == 2 * int(schedule::optimizer_passes(spec, impl).size()));
      CHECK(c.temporaries == 2 * schedule::optimizer_temporaries(spec, impl));
      // foreach: one _foreach_ call per op of the multi-tensor body, whatever the tensors.
      if (impl == OptimizerImpl::Foreach && spec.name != "lamb") {
        const auto& ops = schedule::optimizer_ops(spec, impl);
        // Adam, AdamW, Adagrad bump the step tensors with one more _foreach_add_; LAMB's
        // norms are _foreach_norm calls.
        const int step_bump = spec.scalar_ops.empty() ? 0 : 1;
        CHECK(c.foreach_calls == int(ops.size()) + step_bump);
      }
    }
  }
}

TEST_CASE("Adam by hand: 10 ATen kernels per tensor in loop, 8 of them passes, 2 temporaries") {
  // adam.py _single_tensor_adam: step_t += 1, mul_, add_, mul_, addcmul_, step_t.item(),
  // sqrt, div, add_, addcdiv_: 10 kernels, 8 over the param, sqrt and div new tensors.
  const auto loop = count_one_step("adam", OptimizerImpl::Loop);
  CHECK(loop.kernels == 20);
  CHECK(loop.passes == 16);
  CHECK(loop.temporaries == 4);
  // _multi_tensor_adam: _foreach_add_(steps), 4 moment ops, 2 x step.item() per tensor,
  // _foreach_sqrt, _foreach_div_, _foreach_add, _foreach_addcdiv_: 8 + 1 _foreach_ calls;
  // per tensor 8 passes + 1 step bump + 2 reads.
  const auto foreach = count_one_step("adam", OptimizerImpl::Foreach);
  CHECK(foreach.foreach_calls == 9);
  CHECK(foreach.kernels == 2 * (8 + 1 + 2));
  CHECK(foreach.passes == 16);
  CHECK(foreach.temporaries == 4);  // sqrt and add (the in-place div_ makes none)
  // fused: one fusim::fused_adam kernel per tensor, no temporaries.
  const auto fused = count_one_step("adam", OptimizerImpl::Fused);
  CHECK(fused.kernels == 2);
  CHECK(fused.passes == 2);
  CHECK(fused.temporaries == 0);
}

TEST_CASE("A scheduled U op executes the kernels the schedule gives it") {
  // tiny_convnet's layers with params run their U op under the counter; the schedule's
  // op.kernels and passes must match for each impl.
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/tiny_convnet.json");
  for (auto impl : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused}) {
    INFO(schedule::to_string(impl));
    schedule::ScheduleOptions so;
    so.ordering = schedule::Ordering::Eager;
    so.optimizer = "adam";
    so.impl = impl;
    so.steps = 3;
    const auto s = schedule::build_schedule(trace, so);
    backend::TrainingState state(trace, s, backend::optimizer_config("adam"), at::kCPU, 1);
    int checked = 0;
    for (const auto& op : s.ops) {
      if (op.kind != schedule::OpKind::Update || op.step != 2) {
        state.execute(op);
        continue;
      }
      backend::OpCounter counter;
      state.execute(op);
      // Passes: every param of tiny_convnet has at least 8 elements; step counters are 0-dim.
      const auto c = backend::count_update(counter.calls(), 2);
      CHECK(c.kernels == op.kernels);
      CHECK(c.passes == int(op.passes.size()));
      ++checked;
    }
    CHECK(checked > 0);
  }
}
