// The optimizer update of one layer against values worked out by hand from torch.optim's
// formulas (PyTorch 1.13), for every implementation (loop, foreach, fused).
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include "backend/layer_optimizer.h"
#include "core/error.h"

using fusim::backend::LayerOptimizer;
using fusim::backend::optimizer_config;
using fusim::schedule::OptimizerImpl;

namespace {
const OptimizerImpl kImpls[] = {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused};

at::Tensor vec(std::initializer_list<float> v) {
  return at::tensor(std::vector<float>(v), at::kFloat);
}

// Two steps with the same gradient values; returns the param after each. Each step gets
// its own gradient tensor, as from autograd: torch's foreach nesterov adds into it
// (sgd.py:298).
std::pair<std::vector<float>, std::vector<float>> two_steps(const char* name, OptimizerImpl impl) {
  auto p = vec({1.0f, 2.0f}), g = vec({0.5f, -1.0f});
  LayerOptimizer opt(optimizer_config(name), impl, {p});
  opt.step({g.clone()});
  std::vector<float> first(p.data_ptr<float>(), p.data_ptr<float>() + 2);
  opt.step({g.clone()});
  std::vector<float> second(p.data_ptr<float>(), p.data_ptr<float>() + 2);
  return {first, second};
}
}  // namespace

TEST_CASE("SGD: param -= lr * grad (lr 0.01)") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("sgd", impl);
    // 1 - 0.01*0.5 = 0.995, 2 + 0.01 = 2.01; then 0.99, 2.02.
    CHECK(s1[0] == Approx(0.995).epsilon(1e-6));
    CHECK(s1[1] == Approx(2.01).epsilon(1e-6));
    CHECK(s2[0] == Approx(0.99).epsilon(1e-6));
    CHECK(s2[1] == Approx(2.02).epsilon(1e-6));
  }
}

TEST_CASE("SGD momentum 0.9: buf = 0.9 buf + g; the first buf is g itself") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("momentum", impl);
    // step 1: buf = 0.5 -> p = 1 - 0.005 = 0.995; step 2: buf = 0.45 + 0.5 = 0.95
    // -> p = 0.995 - 0.0095 = 0.9855. Element 2: buf = -1, -1.9 -> 2.01, 2.029.
    CHECK(s1[0] == Approx(0.995).epsilon(1e-6));
    CHECK(s2[0] == Approx(0.9855).epsilon(1e-6));
    CHECK(s2[1] == Approx(2.029).epsilon(1e-6));
  }
}

TEST_CASE("SGD nesterov: d = g + 0.9 buf") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("nesterov", impl);
    // step 1: buf = 0.5, d = 0.5 + 0.45 = 0.95 -> 1 - 0.0095 = 0.9905;
    // step 2: buf = 0.95, d = 0.5 + 0.855 = 1.355 -> 0.9905 - 0.01355 = 0.97695.
    CHECK(s1[0] == Approx(0.9905).epsilon(1e-6));
    CHECK(s2[0] == Approx(0.97695).epsilon(1e-6));
  }
}

TEST_CASE("Adam: the bias-corrected first step moves each weight by lr against its gradient") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("adam", impl);
    // m = 0.1 g, v = 0.001 g^2; m/(1-0.9) = g, sqrt(v/(1-0.999)) = |g| -> step lr*sign(g).
    CHECK(s1[0] == Approx(0.999).epsilon(1e-6));
    CHECK(s1[1] == Approx(2.001).epsilon(1e-6));
    // Same gradient again: m_hat = g, v_hat = g^2 still -> another lr*sign(g).
    CHECK(s2[0] == Approx(0.998).epsilon(1e-6));
    CHECK(s2[1] == Approx(2.002).epsilon(1e-6));
  }
}

TEST_CASE("AdamW decays the weight by lr*wd before the Adam step") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("adamw", impl);
    // 1 * (1 - 1e-3 * 1e-2) - 1e-3 = 0.99899; 2 * (1 - 1e-5) + 1e-3 = 2.00098.
    CHECK(s1[0] == Approx(0.99899).epsilon(1e-6));
    CHECK(s1[1] == Approx(2.00098).epsilon(1e-6));
  }
}

TEST_CASE("Adagrad: sum += g^2, param -= lr g / (sqrt(sum) + eps)") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("adagrad", impl);
    // step 1: sum = 0.25 -> 1 - 0.01 * 0.5/0.5 = 0.99; step 2: sum = 0.5 ->
    // 0.99 - 0.01 * 0.5/sqrt(0.5) = 0.99 - 0.0070710678 = 0.9829289322.
    CHECK(s1[0] == Approx(0.99).epsilon(1e-6));
    CHECK(s2[0] == Approx(0.9829289322).epsilon(1e-6));
  }
}

TEST_CASE("RMSprop: sq = 0.99 sq + 0.01 g^2, param -= lr g / (sqrt(sq) + eps)") {
  for (auto impl : kImpls) {
    auto [s1, s2] = two_steps("rmsprop", impl);
    // step 1: sq = 0.0025, sqrt = 0.05 -> 1 - 0.01 * 0.5/0.05 = 0.9;
    // step 2: sq = 0.004975, sqrt = 0.0705337 -> 0.9 - 0.01 * 7.0888 = 0.829112.
    CHECK(s1[0] == Approx(0.9).epsilon(1e-6));
    CHECK(s2[0] == Approx(0.9 - 0.01 * 0.5 / std::sqrt(0.004975)).epsilon(1e-6));
  }
}

TEST_CASE("Unknown optimizer names are input errors that list the known ones") {
  try {
    optimizer_config("adamax");
    FAIL("no error");
  } catch (const fusim::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("unknown optimizer 'adamax'") &&
                             Catch::Contains("sgd, momentum, nesterov, adam, adamw"));
  }
}

TEST_CASE("Fused on a float64 tensor is refused with the reason") {
  auto p = at::zeros({4}, at::kDouble);
  CHECK_THROWS_WITH(LayerOptimizer(optimizer_config("sgd"), OptimizerImpl::Fused, {p}),
                    Catch::Contains("float32 CPU tensors"));
}
