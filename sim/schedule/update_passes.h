#pragma once
// Memory passes and kernels of each U op, from the optimizer table (optimizer.h): which
// param, grad, state and temporary tensors every pass streams through, in the order the
// implementation runs them (loop: tensor by tensor, all ops of one tensor; foreach: op by
// op, all tensors of the group; fused: stage by stage, all tensors of the group).
#include <vector>

#include "schedule/layer_passes.h"
#include "schedule/optimizer.h"
#include "schedule/tensor_registry.h"

namespace fusim::schedule {

void attach_update_passes(const workload::Trace& trace, const std::vector<LayerRole>& roles,
                          const OptimizerSpec& spec, OptimizerImpl impl, TensorRegistry& registry,
                          Schedule& schedule);

}  // namespace fusim::schedule
