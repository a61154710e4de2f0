#pragma once
// LAMB written straight from the paper, in double precision, as the tests' reference:
// You et al., "Large Batch Optimization for Deep Learning: Training BERT in 76 minutes"
// (ICLR 2020), Algorithm 2, with phi(z) = z and timm's conventions (timm/optim/lamb.py):
//   m_t = b1 m + (1 - b1) g          v_t = b2 v + (1 - b2) g^2
//   r_t = (m_t / (1 - b1^t)) / (sqrt(v_t / (1 - b2^t)) + eps)
//   u   = r_t + wd x                  x  -= lr * (||x|| / ||u||) * u
// where the ratio ||x|| / ||u|| is 1 if either norm is zero. One state per tensor.
#include <cmath>
#include <cstddef>
#include <vector>

namespace fusim::test {

struct LambReference {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-6, weight_decay = 0.01;
  std::vector<std::vector<double>> m, v;
  int t = 0;

  void step(std::vector<std::vector<double>>& params,
            const std::vector<std::vector<double>>& grads) {
    if (m.empty()) {
      for (const auto& p : params) {
        m.emplace_back(p.size(), 0.0);
        v.emplace_back(p.size(), 0.0);
      }
    }
    ++t;
    const double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    for (std::size_t k = 0; k < params.size(); ++k) {
      auto& x = params[k];
      std::vector<double> u(x.size());
      double x_sq = 0, u_sq = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double g = grads[k][i];
        m[k][i] = beta1 * m[k][i] + (1 - beta1) * g;
        v[k][i] = beta2 * v[k][i] + (1 - beta2) * g * g;
        u[i] = (m[k][i] / bc1) / (std::sqrt(v[k][i] / bc2) + eps) + weight_decay * x[i];
        x_sq += x[i] * x[i];
        u_sq += u[i] * u[i];
      }
      const double ratio = x_sq > 0 && u_sq > 0 ? std::sqrt(x_sq) / std::sqrt(u_sq) : 1.0;
      for (std::size_t i = 0; i < x.size(); ++i) x[i] -= lr * ratio * u[i];
    }
  }
};

}  // namespace fusim::test
