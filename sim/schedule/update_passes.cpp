#include "schedule/update_passes.h"

#include "core/error.h"

namespace fusim::schedule {
namespace {
struct ParamTensors {
  int param = 0, grad = 0;
  std::int64_t elements = 0;
  std::vector<int> state;  // per spec.state
  int temp[kMaxTemporaries] = {-1, -1, -1, -1};
};

int operand_tensor(const ParamTensors& p, Operand o) {
  switch (o) {
    case Operand::Param:
      return p.param;
    case Operand::Grad:
      return p.grad;
    case Operand::State0:
      return p.state.at(0);
    case Operand::State1:
      return p.state.at(1);
    case Operand::Temp0:
      return p.temp[0];
    case Operand::Temp1:
      return p.temp[1];
    case Operand::Temp2:
      return p.temp[2];
    case Operand::Temp3:
      return p.temp[3];
  }
  return -1;
}

MemoryPass make_pass(const ParamTensors& p, const OptimizerPass& pass, OptimizerImpl impl) {
  MemoryPass m;
  for (auto a : pass.accesses) m.accesses.push_back({operand_tensor(p, a.operand), a.mode});
  m.flops = p.elements * pass.flops_per_element;
  m.max_threads = optimizer_pass_threads(impl, p.elements);
  return m;
}
}  // namespace

void attach_update_passes(const workload::Trace& trace, const std::vector<LayerRole>& roles,
                          const OptimizerSpec& spec, OptimizerImpl impl, TensorRegistry& registry,
                          Schedule& schedule) {
  const std::vector<OptimizerPass> passes = optimizer_passes(spec, impl);
  for (auto& op : schedule.ops) {
    if (op.kind != OpKind::Update) continue;
    const auto& layer = trace.layers[std::size_t(op.layer)];
    op.layer_op = layer.op;
    std::vector<ParamTensors> group;
    for (int p : roles[std::size_t(op.layer)].trained_params) {
      const auto& spec_p = layer.params[std::size_t(p)];
      const std::int64_t elements = workload::numel(spec_p.shape);
      const std::int64_t bytes = elements * workload::dtype_bytes(spec_p.dtype);
      ParamTensors t;
      t.elements = elements;
      t.param = registry.get(spec_p.name, -1, TensorCategory::Weights, op.layer, bytes);
      t.grad = registry.get(spec_p.name + ".grad", op.step, TensorCategory::Grads, op.layer, bytes);
      for (auto state : spec.state)
        t.state.push_back(registry.get(spec_p.name + "." + std::string(state), -1,
                                       TensorCategory::OptimizerState, op.layer, bytes));
      // Temporaries exist only where a pass touches them (fused keeps them in registers).
      for (const auto& pass : passes)
        for (auto a : pass.accesses)
          for (int k = 0; k < kMaxTemporaries; ++k)
            if (a.operand == Operand(int(Operand::Temp0) + k) && t.temp[k] < 0)
              t.temp[k] = registry.get(spec_p.name + ".t" + std::to_string(k), op.step,
                                       TensorCategory::Temporaries, op.layer, bytes);
      group.push_back(t);
    }
    FUSIM_ASSERT(!group.empty(), "U op of a layer with trained params");
    op.passes.clear();
    // Graph execution steps one optimizer per parameter where the update is fused (the
    // hook of a parameter's gradient accumulator, or before the layer's forward): each
    // tensor is its own group, so a foreach or fused update walks one tensor at a time.
    const bool per_param = schedule.execution == Execution::Graph &&
                           schedule.layer_modes.at(std::size_t(op.layer)) != LayerMode::Eager;
    if (impl == OptimizerImpl::Loop || per_param) {
      for (const auto& t : group)
        for (const auto& pass : passes) op.passes.push_back(make_pass(t, pass, impl));
    } else {  // foreach and fused walk the whole group once per op / stage
      for (const auto& pass : passes)
        for (const auto& t : group) op.passes.push_back(make_pass(t, pass, impl));
    }
    const int tensors = int(group.size());
    op.kernels = per_param ? tensors * optimizer_kernels(spec, impl, 1, schedule.device)
                           : optimizer_kernels(spec, impl, tensors, schedule.device);
    op.flops = 0;
    for (const auto& p : op.passes) op.flops += p.flops;
  }
}

}  // namespace fusim::schedule
