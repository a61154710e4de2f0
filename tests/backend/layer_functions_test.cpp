// The custom autograd functions of layer_functions.h against the composite ATen forms they
// replace: the same outputs and the same gradients (double precision), and what each keeps
// for backward (issue 20).
#include <torch/csrc/autograd/autograd.h>
#include <catch2/catch.hpp>
#include <limits>

#include "backend/layer_functions.h"

using namespace fusim;

namespace {
at::Tensor randn(std::vector<std::int64_t> shape, int seed) {
  at::manual_seed(seed);
  return at::randn(shape, at::kDouble).requires_grad_(true);
}

// Outputs and gradients w.r.t. `inputs` of f and g on the same upstream gradient.
void same_math(const std::function<at::Tensor()>& f, const std::function<at::Tensor()>& g,
               const std::vector<at::Tensor>& inputs) {
  auto a = f(), b = g();
  REQUIRE(a.sizes() == b.sizes());
  CHECK(at::allclose(a, b, 1e-10, 1e-12));
  at::manual_seed(99);
  auto dy = at::randn(a.sizes(), at::kDouble);
  auto ga = torch::autograd::grad({a}, inputs, {dy});
  auto gb = torch::autograd::grad({b}, inputs, {dy});
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    INFO("input " << i);
    CHECK(at::allclose(ga[i], gb[i], 1e-9, 1e-11));
  }
}
}  // namespace

TEST_CASE("rms_norm: the fused function's output and gradients equal the composite's") {
  auto x = randn({2, 3, 8}, 1), w = randn({8}, 2);
  same_math([&] { return backend::rms_norm_function(x, w, 1e-5, 1); },
            [&] { return x * at::rsqrt(x.pow(2).mean({-1}, true) + 1e-5) * w; }, {x, w});
  same_math([&] { return backend::rms_norm_function(x, at::Tensor(), 1e-5, 1); },
            [&] { return x * at::rsqrt(x.pow(2).mean({-1}, true) + 1e-5); }, {x});
}

TEST_CASE("swiglu: silu of the first half times the second, the same gradients") {
  auto x = randn({2, 3, 10}, 3);
  same_math([&] { return backend::swiglu_function(x); },
            [&] {
              auto h = x.chunk(2, -1);
              return at::silu(h[0]) * h[1];
            },
            {x});
}

TEST_CASE("attention: grouped-query, causal, with dropout, as the repeated-heads composite") {
  const std::int64_t n = 2, l = 5, heads = 4, kv = 2, d = 3;
  auto q = randn({n, l, heads * d}, 4), k = randn({n, l, kv * d}, 5), v = randn({n, l, kv * d}, 6);
  at::manual_seed(7);
  auto keep = at::rand({n, heads, l, l}) > 0.2;
  auto composite = [&](bool causal, const at::Tensor& mask) {
    auto split = [&](const at::Tensor& t, std::int64_t h) {
      auto x = t.reshape({n, l, h, d}).transpose(1, 2);
      return h == heads ? x : x.repeat_interleave(heads / h, 1);
    };
    auto s = at::matmul(split(q, heads), split(k, kv).transpose(-2, -1)) / std::sqrt(double(d));
    if (causal)
      s = s.masked_fill(at::ones({l, l}, at::kBool).triu(1),
                        -std::numeric_limits<double>::infinity());
    auto p = at::softmax(s, -1);
    if (mask.defined()) p = p * mask / 0.8;
    return at::matmul(p, split(v, kv)).transpose(1, 2).reshape({n, l, heads * d});
  };
  same_math([&] { return backend::attention_function(q, k, v, heads, kv, true, 0.2, keep); },
            [&] { return composite(true, keep); }, {q, k, v});
  same_math([&] { return backend::attention_function(q, k, v, heads, kv, false, 0.0, {}); },
            [&] { return composite(false, {}); }, {q, k, v});
}
