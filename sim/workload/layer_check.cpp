// Per-op checks of one layer: arity, input dtypes and shapes, params, buffers, and the
// output shape from the formulas of traces/SCHEMA.md (PyTorch's shape rules).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "workload/cost.h"
#include "workload/shape_rules.h"
#include "workload/validate.h"

namespace fusim::workload {
namespace {

std::string pair_text(const std::vector<std::int64_t>& v) {
  return to_string(Shape(v));
}

bool name_has_role(const std::string& name, std::string_view role) {
  if (name == role) return true;
  return name.size() > role.size() &&
         name.compare(name.size() - role.size(), role.size(), role) == 0 &&
         name[name.size() - role.size() - 1] == '.';
}

class LayerCheck {
 public:
  LayerCheck(const Trace& trace, const Layer& layer, std::size_t position)
      : t_(trace), l_(layer), pos_(position), op_(to_string(layer.op)) {}

  [[noreturn]] void fail(std::string_view where, const std::string& expected) const {
    throw InputError(trace_display_name(t_),
                     fmt::format("layers[{}]{}{}", pos_, where.empty() ? "" : ".", where),
                     expected);
  }

  const Shape& in(std::size_t i) const { return input_shape(t_, l_.inputs[i]); }
  DType in_dtype(std::size_t i) const { return input_dtype(t_, l_.inputs[i]); }
  std::string in_where(std::size_t i) const { return fmt::format("inputs[{}]", i); }
  // "from layer 5" / "from model input "target"" for messages about an input.
  std::string origin(std::size_t i) const {
    const InputRef& r = l_.inputs[i];
    if (r.source == InputRef::Source::Layer)
      return fmt::format("from layer {}", t_.layers[static_cast<std::size_t>(r.index)].id);
    return fmt::format("from model input \"{}\"",
                       t_.inputs[static_cast<std::size_t>(r.index)].name);
  }

  void arity(std::size_t n) const {
    if (l_.inputs.size() != n)
      fail("inputs",
           fmt::format("{} input{} for {}, got {}", n, n == 1 ? "" : "s", op_, l_.inputs.size()));
  }
  void floating_input(std::size_t i) const {
    if (!is_floating(in_dtype(i)))
      fail(in_where(i), fmt::format("a floating-point tensor for {}, got {} {}", op_,
                                    to_string(in_dtype(i)), origin(i)));
  }
  void integer_input(std::size_t i, bool int32_ok) const {
    DType d = in_dtype(i);
    if (d != DType::Int64 && !(int32_ok && d == DType::Int32))
      fail(in_where(i),
           fmt::format("an {} tensor of class indices for {}, got {} {}",
                       int32_ok ? "int64 or int32" : "int64", op_, to_string(d), origin(i)));
  }
  void rank_at_least(std::size_t i, std::size_t min, std::string_view form) const {
    if (in(i).size() < min)
      fail(in_where(i),
           fmt::format("a tensor {} for {}, got {} {}", form, op_, to_string(in(i)), origin(i)));
  }
  void rank_exactly(std::size_t i, std::size_t rank, std::string_view form) const {
    if (in(i).size() != rank)
      fail(in_where(i),
           fmt::format("a tensor {} for {}, got {} {}", form, op_, to_string(in(i)), origin(i)));
  }

  // Params must be exactly `roles`, in order, named "<module>.<role>", floating-point.
  void params(const std::vector<std::string_view>& roles, std::string_view why) const {
    if (l_.params.size() != roles.size())
      fail("params", fmt::format("{} param{} ({}) for {}{}, got {}", roles.size(),
                                 roles.size() == 1 ? "" : "s", fmt::join(roles, ", "), op_, why,
                                 l_.params.size()));
    for (std::size_t i = 0; i < roles.size(); ++i) {
      const TensorSpec& p = l_.params[i];
      if (!name_has_role(p.name, roles[i]))
        fail(fmt::format("params[{}].name", i),
             fmt::format("a name ending in \"{}\" ({} params in order: {}), got \"{}\"", roles[i],
                         op_, fmt::join(roles, ", "), p.name));
      if (!is_floating(p.dtype))
        fail(fmt::format("params[{}].dtype", i),
             fmt::format("a floating-point dtype for a trained param, got {}", to_string(p.dtype)));
    }
  }
  void param_shape(std::size_t i, const Shape& expected, std::string_view why) const {
    if (l_.params[i].shape != expected)
      fail(fmt::format("params[{}].shape", i),
           fmt::format("{} ({}), got {}", to_string(expected), why, to_string(l_.params[i].shape)));
  }
  void no_params() const {
    if (!l_.params.empty())
      fail("params", fmt::format("no params ({} has none), got {}", op_, l_.params.size()));
  }
  // Affine norms: weight and bias of `shape`, or none (affine=False).
  void affine_params(const Shape& shape, std::string_view why) const {
    if (l_.params.empty()) return;
    params({"weight", "bias"}, " (or none without affine)");
    param_shape(0, shape, why);
    param_shape(1, shape, why);
  }
  void buffers(const Shape& channels) const {
    if (l_.op != OpKind::BatchNorm) {
      if (!l_.buffers.empty())
        fail("buffers", fmt::format("no buffers ({} has none), got {}", op_, l_.buffers.size()));
      return;
    }
    for (std::size_t i = 0; i < l_.buffers.size(); ++i) {
      const TensorSpec& b = l_.buffers[i];
      auto where = fmt::format("buffers[{}]", i);
      if (name_has_role(b.name, "running_mean") || name_has_role(b.name, "running_var")) {
        if (b.shape != channels)
          fail(where + ".shape", fmt::format("{} (one per channel), got {}", to_string(channels),
                                             to_string(b.shape)));
      } else if (name_has_role(b.name, "num_batches_tracked")) {
        if (!b.shape.empty() || b.dtype != DType::Int64)
          fail(where, "num_batches_tracked as an int64 scalar (shape [])");
      } else {
        fail(where + ".name",
             fmt::format("a batch_norm buffer (running_mean, running_var, num_batches_tracked), "
                         "got \"{}\"",
                         b.name));
      }
    }
  }

  InferredOutput run() const;

 private:
  void check_attrs() const;
  void pair(std::string_view name, const std::vector<std::int64_t>& v, std::int64_t min) const {
    constexpr std::int64_t kMax = std::int64_t{1} << 31;  // keeps window arithmetic exact
    if (v.size() != 2 || v[0] < min || v[1] < min || v[0] > kMax || v[1] > kMax)
      fail(fmt::format("attrs.{}", name),
           fmt::format("a list of 2 {}, got {}",
                       min == 1 ? "positive integers" : "non-negative integers", pair_text(v)));
  }
  InferredOutput linear() const;
  InferredOutput conv2d() const;
  InferredOutput pool(bool is_max) const;
  InferredOutput elementwise_binary() const;
  InferredOutput concat() const;
  InferredOutput matmul(bool bmm) const;
  InferredOutput attention() const;
  InferredOutput cross_entropy() const;
  InferredOutput shape_op() const;
  InferredOutput unary_float() const;

  InferredOutput same_as_input() const { return {in(0), in_dtype(0), "same shape as its input"}; }

  const Trace& t_;
  const Layer& l_;
  std::size_t pos_;
  std::string_view op_;
};

InferredOutput LayerCheck::linear() const {
  arity(1);
  floating_input(0);
  rank_at_least(0, 1, "[..., in_features]");
  params(l_.attrs.bias ? std::vector<std::string_view>{"weight", "bias"}
                       : std::vector<std::string_view>{"weight"},
         l_.attrs.bias ? " (attrs.bias is true)" : " (attrs.bias is false)");
  const Shape& x = in(0);
  const Shape& w = l_.params[0].shape;
  if (w.size() != 2 || w[1] != x.back())
    fail("params[0].shape",
         fmt::format("[out_features, {}] (in_features = last dim of the input {}), got {}",
                     x.back(), to_string(x), to_string(w)));
  if (l_.attrs.bias) param_shape(1, {w[0]}, "out_features = weight.shape[0]");
  Shape out(x.begin(), x.end() - 1);
  out.push_back(w[0]);
  return {out, in_dtype(0), fmt::format("linear of {} with weight {}", to_string(x), to_string(w))};
}

InferredOutput LayerCheck::conv2d() const {
  arity(1);
  floating_input(0);
  rank_exactly(0, 4, "[N, C_in, H, W]");
  const LayerAttrs& a = l_.attrs;
  const Shape& x = in(0);
  if (x[1] % a.groups != 0)
    fail("attrs.groups", fmt::format("a divisor of the input channels {}, got {}", x[1], a.groups));
  params(a.bias ? std::vector<std::string_view>{"weight", "bias"}
                : std::vector<std::string_view>{"weight"},
         a.bias ? " (attrs.bias is true)" : " (attrs.bias is false)");
  const Shape& w = l_.params[0].shape;
  if (w.size() != 4 || w[1] != x[1] / a.groups || w[2] != a.kernel[0] || w[3] != a.kernel[1] ||
      w[0] % a.groups != 0)
    fail("params[0].shape",
         fmt::format("[C_out, {}, {}, {}] (C_in/groups = {}/{}, kernel {}; C_out a multiple of "
                     "groups), got {}",
                     x[1] / a.groups, a.kernel[0], a.kernel[1], x[1], a.groups, pair_text(a.kernel),
                     to_string(w)));
  if (a.bias) param_shape(1, {w[0]}, "C_out = weight.shape[0]");
  Shape out{x[0], w[0], 0, 0};
  for (int d = 0; d < 2; ++d) {
    out[2 + d] =
        window_output_size(x[2 + d], a.kernel[d], a.padding[d], a.stride[d], a.dilation[d], false);
    if (out[2 + d] < 1)
      fail("attrs.kernel",
           fmt::format("a dilated kernel that fits the padded input {} (kernel {}, padding {}, "
                       "dilation {}), got output size {}",
                       to_string(x), pair_text(a.kernel), pair_text(a.padding),
                       pair_text(a.dilation), out[2 + d]));
  }
  return {
      out, in_dtype(0),
      fmt::format("conv2d of {} with weight {}, stride {}, padding {}, dilation {}", to_string(x),
                  to_string(w), pair_text(a.stride), pair_text(a.padding), pair_text(a.dilation))};
}

InferredOutput LayerCheck::pool(bool is_max) const {
  arity(1);
  floating_input(0);
  rank_exactly(0, 4, "[N, C, H, W]");
  no_params();
  const LayerAttrs& a = l_.attrs;
  const Shape& x = in(0);
  Shape out{x[0], x[1], 0, 0};
  for (int d = 0; d < 2; ++d) {
    // Pool.h pool2d_shape_check: "pad should be smaller than or equal to half of kernel size"
    if (a.padding[d] > a.kernel[d] / 2)
      fail("attrs.padding", fmt::format("at most half the kernel {} (PyTorch's limit), got {}",
                                        pair_text(a.kernel), pair_text(a.padding)));
    std::int64_t dil = is_max ? a.dilation[d] : 1;
    out[2 + d] =
        window_output_size(x[2 + d], a.kernel[d], a.padding[d], a.stride[d], dil, a.ceil_mode);
    if (out[2 + d] < 1)
      fail("attrs.kernel", fmt::format("a kernel that fits the padded input {}, got output size {}",
                                       to_string(x), out[2 + d]));
  }
  return {out, in_dtype(0),
          fmt::format("{} of {} with kernel {}, stride {}, padding {}{}", op_, to_string(x),
                      pair_text(a.kernel), pair_text(a.stride), pair_text(a.padding),
                      a.ceil_mode ? ", ceil_mode" : "")};
}

InferredOutput LayerCheck::elementwise_binary() const {
  no_params();
  if (l_.attrs.scalar) {
    arity(1);
    floating_input(0);
    return same_as_input();
  }
  arity(2);
  floating_input(0);
  floating_input(1);
  auto out = broadcast_shapes(in(0), in(1));
  if (!out)
    fail("inputs[1]", fmt::format("a tensor broadcastable with {} (input 0), got {} {}",
                                  to_string(in(0)), to_string(in(1)), origin(1)));
  return {*out, in_dtype(0),
          fmt::format("broadcast of {} and {}", to_string(in(0)), to_string(in(1)))};
}

InferredOutput LayerCheck::concat() const {
  no_params();
  if (l_.inputs.size() < 2)
    fail("inputs", fmt::format("2 or more inputs for concat, got {}", l_.inputs.size()));
  const Shape& first = in(0);
  auto dim = normalize_dim(l_.attrs.dim, first.size());
  if (!dim || first.empty())
    fail("attrs.dim",
         fmt::format("a dim of the rank-{} inputs, got {}", first.size(), l_.attrs.dim));
  Shape out = first;
  for (std::size_t i = 1; i < l_.inputs.size(); ++i) {
    const Shape& s = in(i);
    bool ok = s.size() == first.size() && in_dtype(i) == in_dtype(0);
    for (std::size_t d = 0; ok && d < s.size(); ++d)
      ok = static_cast<std::int64_t>(d) == *dim || s[d] == first[d];
    if (!ok)
      fail(in_where(i),
           fmt::format("a {} tensor equal to input 0 {} except on dim {}, got {} {} {}",
                       to_string(in_dtype(0)), to_string(first), *dim, to_string(in_dtype(i)),
                       to_string(s), origin(i)));
    out[static_cast<std::size_t>(*dim)] += s[static_cast<std::size_t>(*dim)];
  }
  return {out, in_dtype(0), fmt::format("concat along dim {}", *dim)};
}

InferredOutput LayerCheck::matmul(bool bmm) const {
  arity(2);
  no_params();
  floating_input(0);
  floating_input(1);
  if (bmm) {
    rank_exactly(0, 3, "[B, n, k]");
    rank_exactly(1, 3, "[B, k, m]");
    if (in(1)[0] != in(0)[0] || in(1)[1] != in(0)[2])
      fail("inputs[1]", fmt::format("[{}, {}, m] to match input 0 {}, got {} {}", in(0)[0],
                                    in(0)[2], to_string(in(0)), to_string(in(1)), origin(1)));
  }
  auto d = matmul_dims(in(0), in(1));
  if (!d)
    fail("inputs[1]", fmt::format("a tensor whose rows match the last dim of input 0 {} with "
                                  "broadcastable batch dims (torch.matmul), got {} {}",
                                  to_string(in(0)), to_string(in(1)), origin(1)));
  return {d->out, in_dtype(0),
          fmt::format("{} of {} and {}", op_, to_string(in(0)), to_string(in(1)))};
}

InferredOutput LayerCheck::attention() const {
  arity(3);
  no_params();
  const char* names[3] = {"query [N, L, E]", "key [N, S, E]", "value [N, S, Ev]"};
  for (std::size_t i = 0; i < 3; ++i) {
    floating_input(i);
    rank_exactly(i, 3, names[i]);
  }
  const Shape &q = in(0), &k = in(1), &v = in(2);
  if (k[0] != q[0] || k[2] != q[2])
    fail("inputs[1]", fmt::format("key [{}, S, {}] to match query {}, got {} {}", q[0], q[2],
                                  to_string(q), to_string(k), origin(1)));
  if (v[0] != q[0] || v[1] != k[1])
    fail("inputs[2]", fmt::format("value [{}, {}, Ev] to match query {} and key {}, got {} {}",
                                  q[0], k[1], to_string(q), to_string(k), to_string(v), origin(2)));
  if (q[2] % l_.attrs.heads != 0 || v[2] % l_.attrs.heads != 0)
    fail("attrs.heads", fmt::format("a divisor of the embedding sizes E = {} and Ev = {}, got {}",
                                    q[2], v[2], l_.attrs.heads));
  return {{q[0], q[1], v[2]}, in_dtype(0), "attention output [N, L, Ev]"};
}

InferredOutput LayerCheck::cross_entropy() const {
  arity(2);
  no_params();
  floating_input(0);
  rank_exactly(0, 2, "of logits [M, classes]");
  integer_input(1, false);
  if (in(1) != Shape{in(0)[0]})
    fail("inputs[1]", fmt::format("targets of shape [{}] (one per row of the logits {}), got {} {}",
                                  in(0)[0], to_string(in(0)), to_string(in(1)), origin(1)));
  return {{}, in_dtype(0), "a scalar loss (mean reduction)"};
}

InferredOutput LayerCheck::shape_op() const {
  arity(1);
  no_params();
  const Shape& x = in(0);
  const LayerAttrs& a = l_.attrs;
  if (l_.op == OpKind::Reshape) {
    if (numel(l_.output) != numel(x))
      fail("output", fmt::format("a shape with {} elements like the input {}, got {}", numel(x),
                                 to_string(x), to_string(l_.output)));
    return {l_.output, in_dtype(0), "reshape"};
  }
  if (l_.op == OpKind::Flatten) {
    auto s = normalize_dim(a.start_dim, x.size());
    auto e = normalize_dim(a.end_dim, x.size());
    if (!s)
      fail("attrs.start_dim",
           fmt::format("a dim of the rank-{} input, got {}", x.size(), a.start_dim));
    if (!e || *e < *s)
      fail("attrs.end_dim", fmt::format("a dim of the rank-{} input not before start_dim, got {}",
                                        x.size(), a.end_dim));
    if (x.empty()) return {{1}, in_dtype(0), "flatten of a scalar"};
    Shape out(x.begin(), x.begin() + *s);
    std::int64_t merged = 1;
    for (auto d = *s; d <= *e; ++d) merged *= x[static_cast<std::size_t>(d)];
    out.push_back(merged);
    out.insert(out.end(), x.begin() + *e + 1, x.end());
    return {out, in_dtype(0), fmt::format("flatten of {} over dims {}..{}", to_string(x), *s, *e)};
  }
  // permute
  if (a.dims.size() != x.size())
    fail("attrs.dims", fmt::format("a permutation of the {} dims of the input {}, got {}", x.size(),
                                   to_string(x), pair_text(a.dims)));
  std::vector<bool> seen(x.size(), false);
  Shape out;
  for (auto d : a.dims) {
    auto nd = normalize_dim(d, x.size());
    if (!nd || seen[static_cast<std::size_t>(*nd)])
      fail("attrs.dims", fmt::format("a permutation of the {} dims of the input {}, got {}",
                                     x.size(), to_string(x), pair_text(a.dims)));
    seen[static_cast<std::size_t>(*nd)] = true;
    out.push_back(x[static_cast<std::size_t>(*nd)]);
  }
  return {out, in_dtype(0), fmt::format("permute of {} by {}", to_string(x), pair_text(a.dims))};
}

InferredOutput LayerCheck::unary_float() const {
  arity(1);
  floating_input(0);
  no_params();
  return same_as_input();
}

// Attribute values (the parser checked their JSON types; generators fill them directly).
void LayerCheck::check_attrs() const {
  const LayerAttrs& a = l_.attrs;
  switch (l_.op) {
    case OpKind::Conv2d:
      if (a.groups < 1) fail("attrs.groups", fmt::format("a positive integer, got {}", a.groups));
      [[fallthrough]];
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
      pair("kernel", a.kernel, 1);
      pair("stride", a.stride, 1);
      pair("padding", a.padding, 0);
      if (l_.op != OpKind::AvgPool2d) pair("dilation", a.dilation, 1);
      break;
    case OpKind::AdaptiveAvgPool2d:
      pair("output_size", a.output_size, 1);
      break;
    case OpKind::LayerNorm:
      if (a.normalized_shape.empty() ||
          std::any_of(a.normalized_shape.begin(), a.normalized_shape.end(),
                      [](std::int64_t d) { return d < 1; }))
        fail("attrs.normalized_shape", fmt::format("a non-empty list of positive integers, got {}",
                                                   pair_text(a.normalized_shape)));
      [[fallthrough]];
    case OpKind::BatchNorm:
      if (!(a.eps > 0)) fail("attrs.eps", fmt::format("a positive number, got {}", a.eps));
      if (!(a.momentum >= 0 && a.momentum <= 1))
        fail("attrs.momentum", fmt::format("a number in [0, 1], got {}", a.momentum));
      break;
    case OpKind::Dropout:
    case OpKind::ScaledDotProductAttention:
      if (!(a.p >= 0 && a.p < 1))
        fail("attrs.p", fmt::format("a dropout probability in [0, 1), got {}", a.p));
      if (l_.op == OpKind::ScaledDotProductAttention && a.heads < 1)
        fail("attrs.heads", fmt::format("a positive integer, got {}", a.heads));
      break;
    case OpKind::Gelu:
      if (a.approximate != "none" && a.approximate != "tanh")
        fail("attrs.approximate", fmt::format("\"none\" or \"tanh\", got \"{}\"", a.approximate));
      break;
    case OpKind::Embedding:
      if (a.padding_idx < -1)
        fail("attrs.padding_idx", fmt::format("-1 (none) or an index >= 0, got {}", a.padding_idx));
      break;
    default:
      break;
  }
}

InferredOutput LayerCheck::run() const {
  check_attrs();
  const LayerAttrs& a = l_.attrs;
  switch (l_.op) {
    case OpKind::Linear:
      return linear();
    case OpKind::Conv2d:
      return conv2d();
    case OpKind::BatchNorm: {
      arity(1);
      floating_input(0);
      rank_at_least(0, 2, "[N, C, ...]");
      affine_params({in(0)[1]}, "one per channel C = input dim 1");
      return same_as_input();
    }
    case OpKind::LayerNorm: {
      arity(1);
      floating_input(0);
      const Shape& x = in(0);
      Shape ns(a.normalized_shape.begin(), a.normalized_shape.end());
      bool ok = ns.size() <= x.size() &&
                std::equal(ns.begin(), ns.end(), x.end() - static_cast<std::ptrdiff_t>(ns.size()));
      if (!ok)
        fail("attrs.normalized_shape",
             fmt::format("the trailing dims of the input {}, got {}", to_string(x), to_string(ns)));
      affine_params(ns, "normalized_shape");
      return same_as_input();
    }
    case OpKind::Relu:
    case OpKind::Relu6:
    case OpKind::Gelu:
    case OpKind::Silu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Dropout:
    case OpKind::Softmax: {
      InferredOutput out = unary_float();
      if (l_.op == OpKind::Softmax && !normalize_dim(a.dim, in(0).size()))
        fail("attrs.dim", fmt::format("a dim of the rank-{} input, got {}", in(0).size(), a.dim));
      return out;
    }
    case OpKind::MaxPool2d:
      return pool(true);
    case OpKind::AvgPool2d:
      return pool(false);
    case OpKind::AdaptiveAvgPool2d: {
      arity(1);
      floating_input(0);
      rank_exactly(0, 4, "[N, C, H, W]");
      no_params();
      return {{in(0)[0], in(0)[1], a.output_size[0], a.output_size[1]},
              in_dtype(0),
              "[N, C] + output_size"};
    }
    case OpKind::Add:
    case OpKind::Mul:
      return elementwise_binary();
    case OpKind::Concat:
      return concat();
    case OpKind::Flatten:
    case OpKind::Reshape:
    case OpKind::Permute:
      return shape_op();
    case OpKind::Embedding: {
      arity(1);
      integer_input(0, true);
      params({"weight"}, "");
      const Shape& w = l_.params[0].shape;
      if (w.size() != 2)
        fail("params[0].shape",
             fmt::format("[num_embeddings, embedding_dim], got {}", to_string(w)));
      if (a.padding_idx >= w[0])
        fail("attrs.padding_idx",
             fmt::format("-1 (none) or an index below num_embeddings {}, got {}", w[0],
                         a.padding_idx));
      Shape out = in(0);
      out.push_back(w[1]);
      return {out, l_.params[0].dtype, "indices shape + [embedding_dim]"};
    }
    case OpKind::Matmul:
      return matmul(false);
    case OpKind::Bmm:
      return matmul(true);
    case OpKind::ScaledDotProductAttention:
      return attention();
    case OpKind::CrossEntropy:
      return cross_entropy();
  }
  fail("op", "a known op");
}

}  // namespace

InferredOutput check_layer(const Trace& trace, const Layer& layer, std::size_t position) {
  LayerCheck check(trace, layer, position);
  InferredOutput out = check.run();
  // Only batch_norm has buffers; their shapes follow the channel dim.
  Shape channels;
  if (layer.op == OpKind::BatchNorm) channels = {check.in(0)[1]};
  check.buffers(channels);
  return out;
}

std::string trace_display_name(const Trace& trace) {
  return trace.file.empty() ? fmt::format("<generated {}>", trace.model) : trace.file;
}

}  // namespace fusim::workload
