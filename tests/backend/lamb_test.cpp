// LAMB in the backend (loop, foreach, fused) against values worked out by hand and against
// a float64 reference written from the paper (lamb_reference.h).
#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <cmath>

#include "backend/layer_optimizer.h"
#include "lamb_reference.h"

using fusim::backend::LayerOptimizer;
using fusim::backend::optimizer_config;
using fusim::schedule::OptimizerImpl;

namespace {
const OptimizerImpl kImpls[] = {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused};

at::Tensor vec(std::vector<float> v) {
  return at::tensor(v, at::kFloat);
}
std::vector<double> values(const at::Tensor& t) {
  const auto c = t.contiguous();
  return std::vector<double>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
// One step of a one-tensor layer from (p, g); returns p afterwards.
std::vector<double> one_step(std::vector<float> p0, std::vector<float> g0, OptimizerImpl impl) {
  auto p = vec(p0);
  LayerOptimizer opt(optimizer_config("lamb"), impl, {p});
  opt.step({vec(g0)});
  return values(p);
}
}  // namespace

TEST_CASE("LAMB defaults are timm's: lr 1e-3, betas (0.9, 0.999), eps 1e-6, wd 0.01") {
  const auto c = optimizer_config("lamb");
  CHECK(c.lr == 1e-3);
  CHECK(c.beta1 == 0.9);
  CHECK(c.beta2 == 0.999);
  CHECK(c.eps == 1e-6);
  CHECK(c.weight_decay == 0.01);
}

TEST_CASE("LAMB step 1 by hand: the trust ratio scales the bias-corrected Adam step") {
  for (auto impl : kImpls) {
    INFO(to_string(impl));
    // m_hat = g, v_hat = g^2, so u = g / (|g| + 1e-6) + 0.01 p = (1.009998, -0.979999);
    // ||p|| = sqrt(5) = 2.2360680, ||u|| = 1.4073003, ratio 1.5889061;
    // p -= 1e-3 * 1.5889061 * u  ->  (0.9983952, 2.0015571).
    // (Adam would give 0.999, 2.001: the ratio is what makes it LAMB.)
    const auto p = one_step({1.0f, 2.0f}, {0.5f, -1.0f}, impl);
    CHECK(p[0] == Approx(0.9983952080).epsilon(1e-6));
    CHECK(p[1] == Approx(2.0015571264).epsilon(1e-6));
  }
}

TEST_CASE("LAMB zero norms: the trust ratio is 1 (timm), never a NaN") {
  for (auto impl : kImpls) {
    INFO(to_string(impl));
    // ||p|| = 0: ratio 1, p = -1e-3 * g / (|g| + 1e-6) = (-0.000999998, 0.000999999).
    auto p = one_step({0.0f, 0.0f}, {0.5f, -1.0f}, impl);
    CHECK(p[0] == Approx(-0.000999998).epsilon(1e-6));
    CHECK(p[1] == Approx(0.000999999).epsilon(1e-6));
    // g = 0: u = 0.01 p, ratio ||p|| / (0.01 ||p||) = 100, p -= 1e-3 * 100 * 0.01 p = 1e-3 p.
    p = one_step({1.0f, 2.0f}, {0.0f, 0.0f}, impl);
    CHECK(p[0] == Approx(0.999).epsilon(1e-6));
    CHECK(p[1] == Approx(1.998).epsilon(1e-6));
    // p = 0 and g = 0: u = 0, both norms 0, ratio 1: p stays exactly 0.
    p = one_step({0.0f, 0.0f}, {0.0f, 0.0f}, impl);
    CHECK(p[0] == 0.0);
    CHECK(p[1] == 0.0);
  }
}

TEST_CASE("LAMB: 3 steps of a linear layer equal the paper's formulas in float64") {
  // A 3x4 weight and a bias of 3, a different gradient each step (some entries zero).
  std::vector<float> w0(12), b0{0.5f, -0.25f, 0.0f};
  for (int i = 0; i < 12; ++i) w0[std::size_t(i)] = 0.1f * float(i - 5);
  auto grads_at = [](int step) {
    std::vector<float> gw(12), gb(3);
    for (int i = 0; i < 12; ++i)
      gw[std::size_t(i)] = float(std::sin(0.7 * i + step)) * (i % 5 == 0 ? 0.0f : 1.0f);
    for (int i = 0; i < 3; ++i) gb[std::size_t(i)] = 0.01f * float((i + 1) * (step + 1));
    return std::vector<std::vector<float>>{gw, gb};
  };
  fusim::test::LambReference ref;
  std::vector<std::vector<double>> ref_params{std::vector<double>(w0.begin(), w0.end()),
                                              std::vector<double>(b0.begin(), b0.end())};
  for (int step = 0; step < 3; ++step) {
    const auto g = grads_at(step);
    ref.step(ref_params, {std::vector<double>(g[0].begin(), g[0].end()),
                          std::vector<double>(g[1].begin(), g[1].end())});
  }

  std::vector<std::vector<double>> first;
  for (auto impl : kImpls) {
    INFO(to_string(impl));
    auto w = vec(w0).reshape({3, 4}), b = vec(b0);
    LayerOptimizer opt(optimizer_config("lamb"), impl, {w, b});
    for (int step = 0; step < 3; ++step) {
      const auto g = grads_at(step);
      opt.step({vec(g[0]).reshape({3, 4}), vec(g[1])});
    }
    const std::vector<std::vector<double>> got{values(w), values(b)};
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t i = 0; i < got[k].size(); ++i) {
        INFO("tensor " << k << " element " << i);
        CHECK(got[k][i] == Approx(ref_params[k][i]).epsilon(1e-6).margin(1e-7));
        // The three implementations agree with each other to float32 rounding.
        if (!first.empty()) CHECK(got[k][i] == Approx(first[k][i]).epsilon(1e-6).margin(1e-7));
      }
    if (first.empty()) first = got;
  }
  // The weights really moved (3 steps of about lr * ratio * |u| per element).
  double moved = 0;
  for (std::size_t i = 0; i < w0.size(); ++i) moved += std::abs(ref_params[0][i] - double(w0[i]));
  CHECK(moved > 5e-3);
}

TEST_CASE("Fused LAMB is CPU float32 only") {
  auto p = at::zeros({4}, at::kDouble);
  CHECK_THROWS_WITH(LayerOptimizer(optimizer_config("lamb"), OptimizerImpl::Fused, {p}),
                    Catch::Contains("float32 CPU tensors"));
}
