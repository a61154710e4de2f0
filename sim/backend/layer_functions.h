#pragma once
// Layers whose composite ATen form would keep more for backward than the kernel the trace
// stands for, as custom autograd functions that save exactly what the schedule's memory model
// says they save (schedule/layer_passes.cpp, saved_extras and backward_reads), so that the
// backend's measured peak memory checks the model (issue 20):
//  rms_norm:  x and a float32 rstd per row (fused RMSNorm, Megatron-core / Apex), not the
//             normalised copy the composite x * rsqrt(...) * w keeps;
//  swiglu:    its input (Megatron-core's SwiGLUFunction), not silu(a) beside it;
//  attention: q, k, v, the softmax output and, with dropout, the bool mask and the dropped
//             copy (Megatron's CoreAttention, the model's "materialized" attention), not the
//             contiguous and head-repeated copies at::matmul makes of q, k and v.
// Forward math is the composite's; the backward is written out beside each.
#include <ATen/ATen.h>

namespace fusim::backend {

at::Tensor rms_norm_function(const at::Tensor& x, const at::Tensor& weight, double eps,
                             std::int64_t normalized_dims);
at::Tensor swiglu_function(const at::Tensor& x);
// q [N, L, heads d], k [N, S, kv d], v [N, S, kv dv] -> [N, L, heads dv]; keep: the dropout
// keep mask (bool [N, heads, L, S]) or undefined without dropout.
at::Tensor attention_function(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              std::int64_t heads, std::int64_t kv_heads, bool causal, double p,
                              const at::Tensor& keep);

}  // namespace fusim::backend
