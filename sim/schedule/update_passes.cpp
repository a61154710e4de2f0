#include "schedule/update_passes.h"

#include "core/error.h"

namespace fusim::schedule {
namespace {
struct ParamTensors {
  int param = 0, grad = 0;
  int master = -1;            // float32 master weights under mixed precision (memory_options.h)
  std::int64_t elements = 0;  // the elements this rank updates (its shard)
  std::vector<int> state;     // per spec.state
  int temp[kMaxTemporaries] = {-1, -1, -1, -1};
};

int operand_tensor(const ParamTensors& p, Operand o) {
  switch (o) {
    case Operand::Param:  // the optimizer's math runs on the master copy where there is one
      return p.master >= 0 ? p.master : p.param;
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

// Mixed precision: after the step the 16-bit weights are refreshed from the master copy
// (Megatron's _copy_main_params_to_model_params): one cast per element.
MemoryPass copy_back_pass(const ParamTensors& p, OptimizerImpl impl) {
  return {{{p.master, AccessMode::Read}, {p.param, AccessMode::Write}},
          p.elements,
          optimizer_pass_threads(impl, p.elements)};
}
}  // namespace

void attach_update_passes(const workload::Trace& trace, const std::vector<LayerRole>& roles,
                          const OptimizerSpec& spec, OptimizerImpl impl, TensorRegistry& registry,
                          Schedule& schedule) {
  const std::vector<OptimizerPass> passes = optimizer_passes(spec, impl);
  const MemoryOptions& memory = schedule.memory;
  const bool persistent_grads = memory.grad_buffer == GradBuffer::Persistent;
  for (auto& op : schedule.ops) {
    if (op.kind != OpKind::Update) continue;
    const auto& layer = trace.layers[std::size_t(op.layer)];
    op.layer_op = layer.op;
    std::vector<ParamTensors> group;
    for (int p : roles[std::size_t(op.layer)].updated_params) {
      const auto& spec_p = layer.params[std::size_t(p)];
      const std::int64_t elements = workload::numel(spec_p.shape);
      const std::int64_t bytes = elements * workload::dtype_bytes(spec_p.dtype);
      // Under mixed precision and sharding (memory_options.h): float32 grads; master weights,
      // state and the math's temporaries in float32 over this rank's shard only.
      const std::int64_t grad_bytes = elements * grad_element_bytes(memory, spec_p.dtype);
      const std::int64_t state_bytes =
          sharded_bytes(memory, elements * state_element_bytes(memory, spec_p.dtype));
      ParamTensors t;
      t.elements = sharded_bytes(memory, elements);
      t.param = registry.get(spec_p.name, -1, TensorCategory::Weights, op.layer, bytes, p);
      t.grad = registry.get(spec_p.name + ".grad", persistent_grads ? -1 : op.step,
                            TensorCategory::Grads, op.layer, grad_bytes, p);
      if (has_master_weights(memory, spec_p.dtype))
        t.master = registry.get(spec_p.name + ".master", -1, TensorCategory::OptimizerState,
                                op.layer, state_bytes, p);
      for (auto state : spec.state)
        t.state.push_back(registry.get(spec_p.name + "." + std::string(state), -1,
                                       TensorCategory::OptimizerState, op.layer, state_bytes, p));
      // Temporaries exist only where a pass touches them (fused keeps them in registers).
      const std::int64_t temp_bytes =
          memory.mixed_precision ? state_bytes : sharded_bytes(memory, bytes);
      for (const auto& pass : passes)
        for (auto a : pass.accesses)
          for (int k = 0; k < kMaxTemporaries; ++k)
            if (a.operand == Operand(int(Operand::Temp0) + k) && t.temp[k] < 0)
              t.temp[k] = registry.get(spec_p.name + ".t" + std::to_string(k), op.step,
                                       TensorCategory::Temporaries, op.layer, temp_bytes, p);
      group.push_back(t);
    }
    FUSIM_ASSERT(!group.empty(), "U op of a layer with trained params");
    op.passes.clear();
    const bool master = group.front().master >= 0;
    // Graph execution steps one optimizer per parameter where the update is fused (the
    // hook of a parameter's gradient accumulator, or before the layer's forward): each
    // tensor is its own group, so a foreach or fused update walks one tensor at a time.
    const bool per_param = schedule.execution == Execution::Graph &&
                           schedule.layer_modes.at(std::size_t(op.layer)) != LayerMode::Eager;
    if (impl == OptimizerImpl::Loop || per_param) {
      for (const auto& t : group) {
        for (const auto& pass : passes) op.passes.push_back(make_pass(t, pass, impl));
        if (master) op.passes.push_back(copy_back_pass(t, impl));
      }
    } else {  // foreach and fused walk the whole group once per op / stage
      for (const auto& pass : passes)
        for (const auto& t : group) op.passes.push_back(make_pass(t, pass, impl));
      if (master)
        for (const auto& t : group) op.passes.push_back(copy_back_pass(t, impl));
    }
    const int tensors = int(group.size());
    const bool one_by_one = impl == OptimizerImpl::Loop || per_param;
    op.kernels = per_param ? tensors * optimizer_kernels(spec, impl, 1, schedule.device)
                           : optimizer_kernels(spec, impl, tensors, schedule.device);
    // The copy-back: one kernel per tensor (loop, per-param) or one multi-tensor kernel.
    if (master) op.kernels += one_by_one ? tensors : 1;
    op.flops = 0;
    for (const auto& p : op.passes) op.flops += p.flops;
  }
}

}  // namespace fusim::schedule
