#pragma once
// Single-pass optimizer kernels on contiguous float32 CPU memory: each reads param, grad
// and state once and writes them once (what torch's fused CUDA Adam and Apex FusedAdam do;
// CPU torch 1.13 has no fused optimizer). Split across threads with at::parallel_for.
// The math is torch.optim's (PyTorch 1.13), per element; `step` counts from 1.
#include <cstdint>

namespace fusim::backend::fused {

// SGD with optional weight decay, momentum (buf may be null when momentum == 0), nesterov.
void sgd(float* param, const float* grad, float* momentum_buf, std::int64_t n, double lr,
         double momentum, double dampening, double weight_decay, bool nesterov);

// Adam (decoupled == false: grad += wd*param) and AdamW (decoupled: param *= 1 - lr*wd).
void adam(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, std::int64_t n,
          std::int64_t step, double lr, double beta1, double beta2, double eps, double weight_decay,
          bool decoupled);

void adagrad(float* param, const float* grad, float* state_sum, std::int64_t n, std::int64_t step,
             double lr, double lr_decay, double eps, double weight_decay);

void rmsprop(float* param, const float* grad, float* square_avg, std::int64_t n, double lr,
             double alpha, double eps, double weight_decay);

// LAMB as apex FusedLAMB stages it (csrc/multi_tensor_lamb.cu): stage 1 updates the moments
// and writes the update u = m_hat / (sqrt(v_hat) + eps) + wd * param (param only read);
// then the L2 norms of param and u (two reductions); stage 2: param -= ratio * u, where
// the caller folds lr and the trust ratio into `ratio`.
void lamb_stage1(const float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                 float* update, std::int64_t n, std::int64_t step, double beta1, double beta2,
                 double eps, double weight_decay);
// sqrt(sum x^2), accumulated in double: independent of the thread count to float precision.
double l2_norm(const float* x, std::int64_t n);
void lamb_stage2(float* param, const float* update, std::int64_t n, double ratio);

}  // namespace fusim::backend::fused
