#pragma once
// FLOPs and bytes of each layer, computed from shapes and attrs (never trusted from a file).
// Conventions (each op's count is written beside its formula in cost.cpp and in
// traces/SCHEMA.md, "FLOP conventions"):
//  - a multiply-add is 2 FLOPs; add, multiply, divide, compare, exp, log, erf, tanh: 1 each;
//  - linear, conv2d, matmul/bmm and attention are exact (2 * multiply-adds, + bias adds);
//    elementwise, norm, softmax, pool and loss ops count fixed FLOPs per element;
//  - backward is split into the input gradient and the weight gradient and is counted
//    only for what autograd tracks (Layer::output_requires_grad; the first conv of a CNN
//    computes no input gradient), as PyTorch does;
//  - saved_bytes: activations autograd keeps from forward for backward (derivatives.yaml),
//    params excluded since they are resident anyway; 0 for untracked layers.
#include <cstdint>

#include "workload/trace.h"

namespace fusim::workload {

struct LayerCost {
  std::int64_t flops_fwd = 0;
  std::int64_t flops_bwd_input = 0;   // gradient w.r.t. the layer's inputs
  std::int64_t flops_bwd_weight = 0;  // gradient w.r.t. its params (0 without params)
  std::int64_t param_elements = 0;
  std::int64_t param_bytes = 0;
  std::int64_t output_bytes = 0;  // the activation it produces
  std::int64_t saved_bytes = 0;   // what autograd keeps from forward for backward
  std::int64_t input_bytes = 0;   // sum of its inputs' sizes

  std::int64_t flops_bwd() const { return flops_bwd_input + flops_bwd_weight; }
};

LayerCost layer_cost(const Trace& trace, const Layer& layer);

// Shape of a layer input (a producer's output or a model input).
const Shape& input_shape(const Trace& trace, const InputRef& ref);
DType input_dtype(const Trace& trace, const InputRef& ref);
bool input_requires_grad(const Trace& trace, const InputRef& ref);

}  // namespace fusim::workload
