#pragma once
// The autograd model of one layer: which backward ops it has, which tensors its F, Bx, Bw
// (and the loss op L) read and write, and what autograd saves from forward for backward
// (PyTorch's derivatives.yaml: e.g. linear/conv keep the input for the weight gradient,
// relu keeps its result, dropout a mask, max_pool2d its indices, batch_norm the batch mean
// and inverse std). View ops (flatten, reshape, permute) are aliases: no kernel, no memory.
#include <vector>

#include "schedule/schedule.h"
#include "schedule/tensor_registry.h"
#include "workload/trace.h"

namespace fusim::schedule {

struct LayerRole {
  bool is_loss = false;
  bool is_view = false;             // output aliases its input
  bool is_parameter = false;        // output is its own parameter or buffer (ATen capture)
  bool requires_grad = false;       // its output needs a gradient
  bool has_bx = false;              // computes gradients of some layer inputs
  bool has_bw = false;              // has trained params
  std::vector<int> trained_params;  // indices into layer.params
  // Added (issue 20, weight tying): trained params this layer's U updates (its own, not the
  // tied ones, whose owner's U updates them); has_update: non-empty.
  std::vector<int> updated_params;
  bool has_update = false;
  // Layers with a param tied to one of this layer's (their Bw adds into its grad), and the
  // layers owning the params this layer's tied ones share.
  std::vector<int> tied_users, tied_owners;
  std::vector<int> consumers;  // layers that read its output
};

std::vector<LayerRole> layer_roles(const workload::Trace& trace);

// Fills tensors and passes (and FLOPs, kernels) of every F, Bx, Bw and L op of a schedule
// whose ops (kind, layer, step) are already in issue order; creates weights and grads.
// Gradient tensors written by several consumers are Write for the first writer in issue
// order and ReadWrite (accumulate) after.
void attach_layer_passes(const workload::Trace& trace, const std::vector<LayerRole>& roles,
                         TensorRegistry& registry, Schedule& schedule);

}  // namespace fusim::schedule
