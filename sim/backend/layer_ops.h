#pragma once
// Each trace layer as libtorch ops: its parameters and buffers built from the trace's
// shapes and dtypes, and its forward computed from its attrs (traces/SCHEMA.md), with the
// same functional ATen calls torch.nn modules make, so autograd picks the same kernels.
#include <ATen/ATen.h>
#include <vector>

#include "workload/trace.h"

namespace fusim::backend {

at::ScalarType to_scalar_type(workload::DType dtype);

struct LayerTensors {
  std::vector<at::Tensor> params;   // requires_grad leaves, in the trace's order
  std::vector<at::Tensor> buffers;  // batch-norm running stats
};

// Initialised like torch.nn's reset_parameters (uniform +-1/sqrt(fan_in) for linear and
// conv weights and biases, ones/zeros for norms, N(0,1) for embeddings), drawn from `gen`
// so that every ordering starts from the same weights.
LayerTensors make_layer_tensors(const workload::Layer& layer, at::Generator& gen,
                                const at::TensorOptions& device);

// The model inputs: data ~ N(0,1); int64 indices uniform in [0, bound) where bound is
// the smallest range their consumers accept (embedding rows, cross-entropy classes).
std::vector<at::Tensor> make_model_inputs(const workload::Trace& trace, at::Generator& gen,
                                          const at::TensorOptions& device);

// F_i: the layer's output from its inputs (in the layer's input order). Dropout masks are
// drawn from `gen` (CPU) so that runs are reproducible.
at::Tensor layer_forward(const workload::Layer& layer, const std::vector<at::Tensor>& inputs,
                         LayerTensors& tensors, at::Generator& gen);

}  // namespace fusim::backend
