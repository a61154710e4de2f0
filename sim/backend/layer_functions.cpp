#include "backend/layer_functions.h"

#include <torch/csrc/autograd/custom_function.h>
#include <cmath>
#include <limits>
#include <vector>

namespace fusim::backend {
namespace {
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Custom functions take no undefined tensors (autograd asks every input for its device):
// "none" is an empty tensor.
bool given(const at::Tensor& t) {
  return t.numel() > 0;
}

std::vector<std::int64_t> trailing(std::int64_t dims) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < dims; ++i) v.push_back(-1 - i);
  return v;
}

// y = x r w with r = rsqrt(mean(x^2) + eps) per row, in float32 (as LlamaRMSNorm), cast back
// to x's dtype before the weight. Backward with xh = x r and g = dy w:
//   dw = sum over rows of dy xh;  dx = r (g - xh mean(g xh)).
struct RmsNorm : public torch::autograd::Function<RmsNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            double eps, std::int64_t dims) {
    const auto rows = trailing(dims);
    auto x32 = x.to(at::promote_types(x.scalar_type(), at::kFloat));
    auto rstd = at::rsqrt(x32.pow(2).mean(rows, true) + eps);
    ctx->save_for_backward({x, rstd, weight});
    ctx->saved_data["dims"] = dims;
    auto y = (x32 * rstd).to(x.scalar_type());
    return given(weight) ? y * weight : y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& rstd = saved[1];
    const auto& weight = saved[2];
    const auto rows = trailing(ctx->saved_data["dims"].toInt());
    // In place where it can be, so that the backward's own temporaries stay few (a fused
    // kernel has none): xh, g and one product.
    const auto acc = rstd.scalar_type();
    const auto dy = grads[0].to(acc);
    auto xh = x.to(acc) * rstd;
    at::Tensor dw, g;
    if (given(weight)) {
      std::vector<std::int64_t> batch;
      for (std::int64_t d = 0; d < x.dim() - std::int64_t(rows.size()); ++d) batch.push_back(d);
      g = dy * xh;
      dw = g.sum(batch).to(weight.scalar_type());
      g.copy_(dy).mul_(weight.to(acc));
    } else {
      g = dy.clone();
    }
    auto m = (g * xh).mean(rows, true);
    g.sub_(xh.mul_(m)).mul_(rstd);  // dx = r (g - xh m)
    return {g.to(x.scalar_type()), dw, at::Tensor(), at::Tensor()};
  }
};

// silu(a) b of x = [a, b]: da = dy b s (1 + a (1 - s)) with s = sigmoid(a); db = dy a s.
struct Swiglu : public torch::autograd::Function<Swiglu> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    auto h = x.chunk(2, -1);
    return at::silu(h[0]) * h[1];
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto x = ctx->get_saved_variables()[0];
    auto h = x.chunk(2, -1);
    const auto& a = h[0];
    const auto& b = h[1];
    // Written into the two halves of dx, with sigmoid(a) the one temporary.
    auto s = at::sigmoid(a);
    const auto& dy = grads[0];
    auto dx = at::empty_like(x);
    const auto half = a.size(-1);
    dx.narrow(-1, half, half).copy_(a).mul_(s).mul_(dy);                                      // db
    dx.narrow(-1, 0, half).copy_(s).neg_().add_(1).mul_(a).add_(1).mul_(s).mul_(b).mul_(dy);  // da
    return {dx};
  }
};

// Attention per query head j on key/value head j / g (g = heads / kv, Hugging Face's
// repeat_kv order), computed on [N, kv, g, L, d] views so that k and v are never copied:
//   S = q k^T / sqrt(d) (causal: -inf above the diagonal), P = softmax(S),
//   D = P keep / (1 - p) (dropout), O = D v.
// Backward: dv = sum_g D^T dO; dD = dO v^T; dP = dD keep / (1 - p);
//   dS = P (dP - rowsum(dP P)) / sqrt(d); dq = dS k; dk = sum_g dS^T q.
struct Attention : public torch::autograd::Function<Attention> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, std::int64_t heads, std::int64_t kv, bool causal,
                            double p, const at::Tensor& keep) {
    const auto n = q.size(0), l = q.size(1), s = k.size(1);
    const auto g = heads / kv, d = q.size(2) / heads, dv = v.size(2) / kv;
    auto q5 = q.reshape({n, l, kv, g, d}).permute({0, 2, 3, 1, 4});   // [N, kv, g, L, d]
    auto k4 = k.reshape({n, s, kv, d}).transpose(1, 2).unsqueeze(2);  // [N, kv, 1, S, d]
    auto v4 = v.reshape({n, s, kv, dv}).transpose(1, 2).unsqueeze(2);
    auto scores = at::matmul(q5, k4.transpose(-2, -1)) / std::sqrt(double(d));
    if (causal) {
      auto mask = at::ones({l, s}, q.options().dtype(at::kBool)).triu(1);
      scores.masked_fill_(mask, -std::numeric_limits<double>::infinity());
    }
    auto probs = at::softmax(scores, -1);
    at::Tensor dropped = probs, keep5 = keep;
    if (given(keep)) {
      keep5 = keep.view({n, kv, g, l, s});
      dropped = probs * keep5 / (1 - p);
    }
    ctx->save_for_backward({q, k, v, probs, keep5, given(keep) ? dropped : keep});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["kv"] = kv;
    ctx->saved_data["p"] = p;
    auto out = at::matmul(dropped, v4);  // [N, kv, g, L, dv]
    return out.permute({0, 3, 1, 2, 4}).reshape({n, l, heads * dv});
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto sv = ctx->get_saved_variables();
    const auto &q = sv[0], &k = sv[1], &v = sv[2], &probs = sv[3], &keep5 = sv[4];
    const auto dropped = given(sv[5]) ? sv[5] : probs;
    const auto heads = ctx->saved_data["heads"].toInt(), kv = ctx->saved_data["kv"].toInt();
    const double p = ctx->saved_data["p"].toDouble();
    const auto n = q.size(0), l = q.size(1), s = k.size(1);
    const auto g = heads / kv, d = q.size(2) / heads, dv = v.size(2) / kv;
    auto q5 = q.reshape({n, l, kv, g, d}).permute({0, 2, 3, 1, 4});
    auto k4 = k.reshape({n, s, kv, d}).transpose(1, 2).unsqueeze(2);
    auto v4 = v.reshape({n, s, kv, dv}).transpose(1, 2).unsqueeze(2);
    auto dout = grads[0].reshape({n, l, kv, g, dv}).permute({0, 2, 3, 1, 4});
    auto dv5 = at::matmul(dropped.transpose(-2, -1), dout).sum(2);  // [N, kv, S, dv]
    // dS in place in dP's buffer: one scores-sized temporary.
    auto ds = at::matmul(dout, v4.transpose(-2, -1));
    if (given(keep5)) ds.mul_(keep5).div_(1 - p);
    ds.mul_(probs);
    ds.addcmul_(probs, ds.sum(-1, true), -1).div_(std::sqrt(double(d)));
    auto dq = at::matmul(ds, k4);                           // [N, kv, g, L, d]
    auto dk = at::matmul(ds.transpose(-2, -1), q5).sum(2);  // [N, kv, S, d]
    return {dq.permute({0, 3, 1, 2, 4}).reshape({n, l, heads * d}),
            dk.transpose(1, 2).reshape({n, s, kv * d}),
            dv5.transpose(1, 2).reshape({n, s, kv * dv}),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};
}  // namespace

at::Tensor rms_norm_function(const at::Tensor& x, const at::Tensor& weight, double eps,
                             std::int64_t normalized_dims) {
  return RmsNorm::apply(x, weight.defined() ? weight : at::empty({0}, x.options()), eps,
                        normalized_dims);
}

at::Tensor swiglu_function(const at::Tensor& x) {
  return Swiglu::apply(x);
}

at::Tensor attention_function(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              std::int64_t heads, std::int64_t kv_heads, bool causal, double p,
                              const at::Tensor& keep) {
  return Attention::apply(q, k, v, heads, kv_heads, causal, p,
                          keep.defined() ? keep : at::empty({0}, q.options().dtype(at::kBool)));
}

}  // namespace fusim::backend
