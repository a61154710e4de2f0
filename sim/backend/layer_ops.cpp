#include "backend/layer_ops.h"

#include <fmt/format.h>
#include <cmath>

#include "backend/layer_functions.h"
#include "core/error.h"
#include "workload/cost.h"

namespace fusim::backend {
namespace {
using workload::Layer;
using workload::OpKind;

std::vector<std::int64_t> or_default(const std::vector<std::int64_t>& v,
                                     std::vector<std::int64_t> fallback) {
  return v.empty() ? fallback : v;
}

at::Tensor uniform(const workload::TensorSpec& spec, double bound, at::Generator& gen) {
  return at::empty(spec.shape, at::kFloat).uniform_(-bound, bound, gen);
}

// fan_in of a linear/conv weight: every dim but the first
// (torch.nn.init._calculate_fan_in_and_fan_out).
double fan_in(const workload::Shape& weight) {
  double f = 1;
  for (std::size_t d = 1; d < weight.size(); ++d) f *= static_cast<double>(weight[d]);
  return f;
}

// softmax(q k^T / sqrt(d)) v per head with the scores materialized, as Megatron's
// CoreAttention and torch's math path compute it; grouped-query attention (issue 20): each of
// the kv key/value heads serves heads/kv query heads (Hugging Face's repeat_kv order). A
// custom autograd function (layer_functions.h) keeps what the memory model says: q, k, v,
// the softmax output, with dropout its bool mask and the dropped copy.
at::Tensor attention(const Layer& layer, const at::Tensor& q, const at::Tensor& k,
                     const at::Tensor& v, at::Generator& gen) {
  const auto h = layer.attrs.heads, kv = workload::kv_heads_of(layer.attrs);
  const double p = layer.attrs.p;
  at::Tensor keep;
  if (p > 0) {
    const std::vector<std::int64_t> scores{q.size(0), h, q.size(1), k.size(1)};
    keep = q.is_cpu()
               ? at::empty(scores, at::kFloat).bernoulli_(1 - p, gen).to(at::kBool)
               : at::empty(scores, q.options().dtype(at::kFloat)).bernoulli_(1 - p).to(at::kBool);
  }
  return attention_function(q, k, v, h, kv, layer.attrs.causal, p, keep);
}

// --- LLM ops (issue 20) ---
// RMSNorm as Hugging Face's LlamaRMSNorm computes it: in float32, then back to the input
// dtype, times the weight (libtorch 1.13 has no at::rms_norm); keeping x and rstd only, as a
// fused RMSNorm does (layer_functions.h).
at::Tensor rms_norm(const Layer& layer, const at::Tensor& x, const at::Tensor& weight) {
  return rms_norm_function(x, weight, layer.attrs.eps,
                           std::int64_t(layer.attrs.normalized_shape.size()));
}

// Rotary embedding, rotate-half form (Megatron-core apply_rotary_pos_emb, HF
// apply_rotary_pos_emb) at positions 0..S-1: angle(p, i) = p * theta^(-2i/d), i < d/2.
// (Llama 3.1's long-context frequency scaling changes the angles, not shapes or costs.)
at::Tensor rope(const Layer& layer, const at::Tensor& x) {
  const auto n = x.size(0), s = x.size(1), h = layer.attrs.heads, d = x.size(2) / h;
  auto f32 = x.options().dtype(at::kFloat);
  auto inv_freq = at::pow(layer.attrs.theta, -at::arange(0, d, 2, f32) / double(d));
  auto angles = at::outer(at::arange(s, f32), inv_freq);  // [S, d/2]
  auto emb = at::cat({angles, angles}, -1);               // [S, d]
  auto cos = emb.cos().to(x.scalar_type()).view({1, s, 1, d});
  auto sin = emb.sin().to(x.scalar_type()).view({1, s, 1, d});
  auto t = x.reshape({n, s, h, d});
  auto rotated = at::cat({-t.narrow(-1, d / 2, d / 2), t.narrow(-1, 0, d / 2)}, -1);
  return (t * cos + rotated * sin).reshape({n, s, h * d});
}

// Megatron-core's swiglu: silu of the first half of the last dim times the second half,
// keeping its input only (SwiGLUFunction; layer_functions.h).
at::Tensor swiglu(const at::Tensor& x) {
  return swiglu_function(x);
}

// A batch-norm buffer by its role ("bn1.running_mean"); undefined when the trace has none
// (then batch_norm keeps no running stats, as nn.BatchNorm2d(track_running_stats=False)).
at::Tensor buffer(const Layer& layer, const LayerTensors& t, std::string_view role) {
  for (std::size_t i = 0; i < layer.buffers.size(); ++i) {
    const auto& name = layer.buffers[i].name;
    if (name.size() >= role.size() &&
        name.compare(name.size() - role.size(), role.size(), role) == 0)
      return t.buffers.at(i);
  }
  return at::Tensor();
}

// ---- ATen capture: stand-ins for the generic kinds (traces/SCHEMA.md, "Generic layers").
// A generic layer records the shapes and the cost family of an ATen op, not its math; the
// backend runs an op of the same family over the same shapes, reading every input and
// writing the output, with a gradient for every floating input: a broadcast running mean
// (elementwise), a mean over `reduce` elements (reduction), a copy (data movement), a
// GEMM of `contraction` multiply-adds per output element (matmul). Values stay within the
// inputs' range (means, gathers, a GEMM scaled by 1/contraction), so long chains of
// stand-ins neither overflow nor vanish.

// The first n elements of x flattened (a view), zero-padded to n when it has fewer: one
// kernel that reads x and writes n elements, the traffic of the pads, expands and repeats
// the captures record as data movement (constant_pad_nd's backward is a slice, as theirs
// is). A cyclic index_select did it before, with an arange and a remainder over 8-byte
// indices first: a Swin-T step's constant_pad_nd ops (a 2x2 map padded to 7x7) ran 334 us
// each on a 2-core EPYC VM, 5-8x the traffic of the op they stand in for.
at::Tensor gather_elements(const at::Tensor& x, std::int64_t n) {
  auto flat = x.reshape({-1});
  if (n <= flat.numel()) return flat.narrow(0, 0, n);
  return at::constant_pad_nd(flat, {0, n - flat.numel()}, 0);
}

at::Tensor generic_forward(const Layer& layer, const std::vector<at::Tensor>& in) {
  const auto& a = layer.attrs;
  const std::int64_t n_out = workload::numel(layer.output);
  std::vector<at::Tensor> floats;
  for (const auto& x : in)
    if (at::isFloatingType(x.scalar_type())) floats.push_back(x);
  const auto device = at::TensorOptions().device(in.empty() ? at::kCPU : in[0].device());
  const auto out_type = to_scalar_type(layer.output_dtype);
  // Integer and bool results (indices, masks, comparisons) carry no gradient and only feed
  // value-agnostic stand-ins or index consumers: zeros are always valid indices.
  if (!workload::is_floating(layer.output_dtype))
    return at::zeros(layer.output, device.dtype(out_type));
  // A floating tensor made from nothing (a factory, a random mask): ones (dropout keeps all).
  if (floats.empty()) return at::ones(layer.output, device.dtype(out_type));
  at::Tensor y;
  switch (layer.op) {
    case OpKind::GenericElementwise: {
      y = floats[0].to(out_type);
      if (floats.size() == 1) y = y * 1.0;  // one pass: read x, write y
      for (std::size_t k = 1; k < floats.size(); ++k)
        y = at::lerp(y, floats[k].to(out_type), 1.0 / double(k + 1));  // running mean
      y = y.expand(layer.output);
      if (!y.is_contiguous()) y = y.contiguous();
      break;
    }
    case OpKind::GenericReduction: {
      y = gather_elements(floats[0], n_out * a.reduce).view({n_out, a.reduce}).mean(1);
      for (std::size_t k = 1; k < floats.size(); ++k) y = y + floats[k].sum() * 0.0;
      y = y.reshape(layer.output);
      break;
    }
    case OpKind::GenericMatmul: {
      const std::int64_t cols = layer.output.empty() ? 1 : layer.output.back();
      const std::int64_t rows = n_out / std::max<std::int64_t>(1, cols), k = a.contraction;
      auto lhs = gather_elements(floats.at(0), rows * k).view({rows, k});
      auto rhs = gather_elements(floats.at(1), k * cols).view({k, cols});
      y = at::addmm(at::zeros({}, lhs.options()), lhs, rhs, 0.0, 1.0 / double(k));
      y = y.reshape(layer.output);
      break;
    }
    default: {  // data movement: a copy of n_out elements gathered from every floating input
      std::vector<at::Tensor> flat;
      for (const auto& x : floats) flat.push_back(x.reshape({-1}));
      auto src = flat.size() == 1 ? flat[0] : at::cat(flat);
      // (a padded result is already a copy of its own)
      y = n_out <= src.numel() ? src.narrow(0, 0, n_out).reshape(layer.output).clone()
                               : gather_elements(src, n_out).reshape(layer.output);
      break;
    }
  }
  return y.scalar_type() == out_type ? y : y.to(out_type);
}
}  // namespace

at::ScalarType to_scalar_type(workload::DType dtype) {
  switch (dtype) {
    case workload::DType::Float32:
      return at::kFloat;
    case workload::DType::Float16:
      return at::kHalf;
    case workload::DType::BFloat16:
      return at::kBFloat16;
    case workload::DType::Int64:
      return at::kLong;
    case workload::DType::Int32:
      return at::kInt;
    case workload::DType::Bool:
      return at::kBool;
  }
  return at::kFloat;
}

LayerTensors make_layer_tensors(const Layer& layer, at::Generator& gen,
                                const at::TensorOptions& device) {
  LayerTensors t;
  // Weight bound 1/sqrt(fan_in) is kaiming_uniform_(a=sqrt(5)) as in nn.Linear/nn.Conv2d;
  // the bias uses the weight's fan_in.
  const double bound =
      layer.params.empty() ? 1.0 : 1.0 / std::sqrt(std::max(1.0, fan_in(layer.params[0].shape)));
  for (const auto& spec : layer.params) {
    at::Tensor p;
    switch (layer.op) {
      case OpKind::BatchNorm:
      case OpKind::LayerNorm:
      case OpKind::RmsNorm:  // (issue 20) weight ones, as LlamaRMSNorm
        p = spec.name.size() >= 4 && spec.name.substr(spec.name.size() - 4) == "bias"
                ? at::zeros(spec.shape, at::kFloat)
                : at::ones(spec.shape, at::kFloat);
        break;
      case OpKind::Embedding:
        p = at::empty(spec.shape, at::kFloat).normal_(0, 1, gen);
        break;
      default:
        p = uniform(spec, bound, gen);
    }
    p = p.to(device.dtype(to_scalar_type(spec.dtype))).detach().requires_grad_(true);
    t.params.push_back(p);
  }
  for (const auto& spec : layer.buffers) {
    bool var = spec.name.find("var") != std::string::npos;
    auto b = var ? at::ones(spec.shape, at::kFloat) : at::zeros(spec.shape, at::kFloat);
    t.buffers.push_back(b.to(device.dtype(to_scalar_type(spec.dtype))));
  }
  return t;
}

std::vector<at::Tensor> make_model_inputs(const workload::Trace& trace, at::Generator& gen,
                                          const at::TensorOptions& device) {
  // Index bounds: embedding rows, cross-entropy classes (the logits' last dim).
  std::vector<std::int64_t> bound(trace.inputs.size(), std::numeric_limits<std::int64_t>::max());
  for (const auto& layer : trace.layers) {
    for (std::size_t k = 0; k < layer.inputs.size(); ++k) {
      const auto& ref = layer.inputs[k];
      if (ref.source != workload::InputRef::Source::ModelInput) continue;
      std::int64_t b = bound[ref.index];
      if (layer.op == OpKind::Embedding && k == 0) b = layer.params.at(0).shape.at(0);
      if (layer.op == OpKind::CrossEntropy && k == 1)
        b = workload::input_shape(trace, layer.inputs[0]).back();
      bound[ref.index] = std::min(bound[ref.index], b);
    }
  }
  std::vector<at::Tensor> inputs;
  for (std::size_t i = 0; i < trace.inputs.size(); ++i) {
    const auto& spec = trace.inputs[i];
    at::Tensor x;
    if (spec.dtype == workload::DType::Int64 || spec.dtype == workload::DType::Int32) {
      // Read only by value-agnostic layers (views, concat, generic stand-ins): zeros.
      if (bound[i] == std::numeric_limits<std::int64_t>::max()) bound[i] = 1;
      x = at::empty(spec.shape, at::kLong).random_(0, bound[i], gen);
    } else {
      x = at::empty(spec.shape, at::kFloat).normal_(0, 1, gen);
    }
    inputs.push_back(x.to(device.dtype(to_scalar_type(spec.dtype))));
  }
  return inputs;
}

at::Tensor layer_forward(const Layer& layer, const std::vector<at::Tensor>& in, LayerTensors& t,
                         at::Generator& gen) {
  const auto& a = layer.attrs;
  auto param = [&](std::size_t i) { return i < t.params.size() ? t.params[i] : at::Tensor(); };
  switch (layer.op) {
    case OpKind::Linear:
      return at::linear(in[0], param(0), param(1));
    case OpKind::Conv2d:
      return at::conv2d(in[0], param(0), param(1), or_default(a.stride, {1, 1}),
                        or_default(a.padding, {0, 0}), or_default(a.dilation, {1, 1}), a.groups);
    case OpKind::BatchNorm:
      // Training mode: batch statistics, running stats updated (nn.BatchNorm2d.train()).
      return at::batch_norm(in[0], param(0), param(1), buffer(layer, t, "running_mean"),
                            buffer(layer, t, "running_var"), true, a.momentum, a.eps, true);
    case OpKind::LayerNorm:
      return at::layer_norm(in[0], a.normalized_shape, param(0), param(1), a.eps, true);
    case OpKind::Relu:
      return at::relu(in[0]);
    case OpKind::Relu6:
      return at::hardtanh(in[0], 0.0, 6.0);  // F.relu6 is hardtanh(0, 6)
    case OpKind::Gelu:
      return at::gelu(in[0], a.approximate);
    case OpKind::Silu:
      return at::silu(in[0]);
    case OpKind::Sigmoid:
      return at::sigmoid(in[0]);
    case OpKind::Tanh:
      return at::tanh(in[0]);
    case OpKind::MaxPool2d:
      return at::max_pool2d(in[0], a.kernel, or_default(a.stride, a.kernel),
                            or_default(a.padding, {0, 0}), or_default(a.dilation, {1, 1}),
                            a.ceil_mode);
    case OpKind::AvgPool2d:
      return at::avg_pool2d(in[0], a.kernel, or_default(a.stride, a.kernel),
                            or_default(a.padding, {0, 0}), a.ceil_mode, a.count_include_pad);
    case OpKind::AdaptiveAvgPool2d:
      return at::adaptive_avg_pool2d(in[0], a.output_size);
    case OpKind::Add:  // x + y, or x + attrs.scalar (one input)
      return a.scalar ? at::add(in[0], *a.scalar) : at::add(in[0], in[1]);
    case OpKind::Mul:
      return a.scalar ? at::mul(in[0], *a.scalar) : at::mul(in[0], in[1]);
    case OpKind::Concat:
      return at::cat(in, a.dim);
    case OpKind::Flatten:
      return at::flatten(in[0], a.start_dim, a.end_dim);
    case OpKind::Reshape:
      return in[0].reshape(layer.output);
    case OpKind::Permute:
      return in[0].permute(a.dims);
    case OpKind::Embedding:
      return at::embedding(param(0), in[0], a.padding_idx);
    case OpKind::Matmul:
      return at::matmul(in[0], in[1]);
    case OpKind::Bmm:
      return at::bmm(in[0], in[1]);
    case OpKind::Softmax:
      return at::softmax(in[0], a.dim);
    case OpKind::Dropout: {
      // F.dropout in training: keep with probability 1-p, scale kept values by 1/(1-p).
      // p = 0: the input itself, as torch's dropout returns it (a view here, so that the
      // layer's output is a tensor of its own; no kernel).
      if (a.p == 0) return in[0].alias();
      if (!in[0].is_cpu()) return at::dropout(in[0], a.p, true);  // device generator
      // A bool mask (1 byte per element, what native_dropout keeps), not a float one.
      auto keep = at::empty(in[0].sizes(), at::kFloat).bernoulli_(1 - a.p, gen).to(at::kBool);
      return in[0] * keep.to(in[0].device()) / (1 - a.p);
    }
    case OpKind::ScaledDotProductAttention:
      return attention(layer, in[0], in[1], in[2], gen);
    case OpKind::CrossEntropy:
      return at::cross_entropy_loss(in[0], in[1]);
    // LLM ops (issue 20)
    case OpKind::RmsNorm:
      return rms_norm(layer, in[0], param(0));
    case OpKind::Rope:
      return rope(layer, in[0]);
    case OpKind::Swiglu:
      return swiglu(in[0]);
    case OpKind::Parameter:  // a view of its parameter: gradients of every reader add up
      return at::alias(t.params.empty() ? t.buffers.at(0) : t.params.at(0));
    case OpKind::GenericElementwise:
    case OpKind::GenericReduction:
    case OpKind::GenericDataMovement:
    case OpKind::GenericMatmul:
      return generic_forward(layer, in);
  }
  FUSIM_ASSERT(false, fmt::format("layer '{}': op not handled", layer.name));
}

}  // namespace fusim::backend
