#include "backend/fused_kernels.h"

#include <ATen/Parallel.h>
#include <cmath>

namespace fusim::backend::fused {
namespace {
// Elements per parallel chunk: 16 KiB of floats, large enough to amortise a task.
constexpr std::int64_t kGrain = 4096;
}  // namespace

void sgd(float* param, const float* grad, float* buf, std::int64_t n, double lr, double momentum,
         double dampening, double weight_decay, bool nesterov) {
  const float lr_f = float(lr), mom = float(momentum), damp = float(1 - dampening),
              wd = float(weight_decay);
  at::parallel_for(0, n, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      float d = grad[i] + wd * param[i];
      if (buf) {
        // torch: buf.mul_(momentum).add_(d_p, alpha=1 - dampening); the state starts at
        // zero, which equals torch's clone(d_p) on the first step when dampening == 0.
        buf[i] = buf[i] * mom + damp * d;
        d = nesterov ? d + mom * buf[i] : buf[i];
      }
      param[i] -= lr_f * d;
    }
  });
}

void adam(float* param, const float* grad, float* m, float* v, std::int64_t n, std::int64_t step,
          double lr, double beta1, double beta2, double eps, double weight_decay, bool decoupled) {
  // torch.optim.Adam: step_size = lr / (1 - beta1^t); denom = sqrt(v)/sqrt(1 - beta2^t) + eps.
  const double bc1 = 1 - std::pow(beta1, double(step)), bc2 = 1 - std::pow(beta2, double(step));
  const float step_size = float(lr / bc1), bc2_sqrt = float(std::sqrt(bc2)), b1 = float(beta1),
              b2 = float(beta2), one_b1 = float(1 - beta1), one_b2 = float(1 - beta2),
              eps_f = float(eps), wd = decoupled ? 0.0f : float(weight_decay),
              decay = decoupled ? float(1 - lr * weight_decay) : 1.0f;
  at::parallel_for(0, n, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      float p = param[i] * decay;
      const float g = grad[i] + wd * p;
      const float mi = m[i] * b1 + one_b1 * g;
      const float vi = v[i] * b2 + one_b2 * (g * g);
      m[i] = mi;
      v[i] = vi;
      param[i] = p - step_size * (mi / (std::sqrt(vi) / bc2_sqrt + eps_f));
    }
  });
}

void adagrad(float* param, const float* grad, float* sum, std::int64_t n, std::int64_t step,
             double lr, double lr_decay, double eps, double weight_decay) {
  // torch.optim.Adagrad: clr = lr / (1 + (t - 1) * lr_decay); sum += g^2;
  // param -= clr * g / (sqrt(sum) + eps).
  const float clr = float(lr / (1 + double(step - 1) * lr_decay)), eps_f = float(eps),
              wd = float(weight_decay);
  at::parallel_for(0, n, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const float g = grad[i] + wd * param[i];
      const float s = sum[i] + g * g;
      sum[i] = s;
      param[i] -= clr * (g / (std::sqrt(s) + eps_f));
    }
  });
}

void rmsprop(float* param, const float* grad, float* sq, std::int64_t n, double lr, double alpha,
             double eps, double weight_decay) {
  // torch.optim.RMSprop (not centered, no momentum): sq = alpha*sq + (1-alpha)*g^2;
  // param -= lr * g / (sqrt(sq) + eps).
  const float lr_f = float(lr), a = float(alpha), one_a = float(1 - alpha), eps_f = float(eps),
              wd = float(weight_decay);
  at::parallel_for(0, n, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const float g = grad[i] + wd * param[i];
      const float s = sq[i] * a + one_a * (g * g);
      sq[i] = s;
      param[i] -= lr_f * (g / (std::sqrt(s) + eps_f));
    }
  });
}

void lamb_stage1(const float* param, const float* grad, float* m, float* v, float* update,
                 std::int64_t n, std::int64_t step, double beta1, double beta2, double eps,
                 double weight_decay) {
  // timm/optim/lamb.py: denom = sqrt(v) / sqrt(1 - beta2^t) + eps;
  // update = (m / (1 - beta1^t)) / denom + wd * param.
  const double bc1 = 1 - std::pow(beta1, double(step)), bc2 = 1 - std::pow(beta2, double(step));
  const float bc1_f = float(bc1), bc2_sqrt = float(std::sqrt(bc2)), b1 = float(beta1),
              b2 = float(beta2), one_b1 = float(1 - beta1), one_b2 = float(1 - beta2),
              eps_f = float(eps), wd = float(weight_decay);
  at::parallel_for(0, n, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const float g = grad[i];
      const float mi = m[i] * b1 + one_b1 * g;
      const float vi = v[i] * b2 + one_b2 * (g * g);
      m[i] = mi;
      v[i] = vi;
      update[i] = (mi / bc1_f) / (std::sqrt(vi) / bc2_sqrt + eps_f) + wd * param[i];
    }
  });
}

double l2_norm(const float* x, std::int64_t n) {
  const double sum = at::parallel_reduce(
      0, n, kGrain, 0.0,
      [&](std::int64_t lo, std::int64_t hi, double acc) {
        for (std::int64_t i = lo; i < hi; ++i) acc += double(x[i]) * double(x[i]);
        return acc;
      },
      [](double a, double b) { return a + b; });
  return std::sqrt(sum);
}

void lamb_stage2(float* param, const float* update, std::int64_t n, double ratio) {
  const float r = float(ratio);
  at::parallel_for(0, n, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) param[i] -= r * update[i];
  });
}

}  // namespace fusim::backend::fused
