#include "backend/speed_probe.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace fusim::backend::probe {

double op_speed_probe_us(int threads) {
  const int before = at::get_num_threads();
  const bool set = threads > 0 && threads != before;
  if (set) at::set_num_threads(threads);
  // Fixed shapes and a fixed seed: every sample does the same work. 32 channels of 16x16 at
  // batch 8: mobilenet_v2's and efficientnet_b0's small layers, as the CNN switch probe has
  // them (switch_probe.cpp). Its own generator: the run's random state stays as it was.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor x = at::randn({8, 32, 16, 16}, gen, f32);
  at::Tensor w = at::randn({32, 32, 3, 3}, gen, f32).mul_(0.05);
  at::Tensor gamma = at::ones({32}, f32), beta = at::zeros({32}, f32);
  at::Tensor mean = at::zeros({32}, f32), var = at::ones({32}, f32);
  std::vector<at::Tensor> params{w, gamma, beta};
  std::vector<at::Tensor> m1, m2;
  for (const auto& p : params) {
    m1.push_back(at::zeros_like(p));
    m2.push_back(at::zeros_like(p));
  }
  auto iteration = [&] {
    const at::Tensor y = at::conv2d(x, w, {}, 1, 1);
    const auto bn = at::native_batch_norm(y, gamma, beta, mean, var, true, 0.1, 1e-5);
    const at::Tensor& z = std::get<0>(bn);
    const at::Tensor r = at::relu(z);
    const at::Tensor gr = at::ones_like(r);
    const at::Tensor gz = at::threshold_backward(gr, r, 0);
    const auto gbn = at::native_batch_norm_backward(
        gz, y, gamma, mean, var, std::get<1>(bn), std::get<2>(bn), true, 1e-5, {true, true, true});
    const auto gc =
        at::convolution_backward(std::get<0>(gbn), x, w, at::OptionalIntArrayRef(), {1, 1}, {1, 1},
                                 {1, 1}, false, {0, 0}, 1, {true, true, false});
    // Adam's foreach update (torch/optim/adam.py _multi_tensor_adam): moments, then the step.
    const std::vector<at::Tensor> grads{std::get<1>(gc), std::get<1>(gbn), std::get<2>(gbn)};
    at::_foreach_mul_(m1, 0.9);
    at::_foreach_add_(m1, grads, 0.1);
    at::_foreach_mul_(m2, 0.999);
    at::_foreach_addcmul_(m2, grads, grads, 0.001);
    auto denom = at::_foreach_sqrt(m2);
    at::_foreach_add_(denom, 1e-8);
    at::_foreach_addcdiv_(params, m1, denom, -1e-3);
  };
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 2; ++i) iteration();
  std::vector<double> us;
  for (int i = 0; i < kSpeedProbeIterations; ++i) {
    const auto t0 = Clock::now();
    iteration();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  if (set) at::set_num_threads(before);
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

double speed_factor_around(const std::function<double()>& speed_probe, double typical_us,
                           std::vector<double>& samples, const std::function<void()>& work) {
  const double before = speed_probe ? speed_probe() : 0;
  work();
  if (!speed_probe) return 1;
  const double after = speed_probe();
  samples.push_back(before);
  samples.push_back(after);
  return typical_us > 0 ? 0.5 * (before + after) / typical_us : 1;
}

}  // namespace fusim::backend::probe
