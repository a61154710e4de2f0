// The output-shape rule of each op family (PyTorch's shape rules, traces/SCHEMA.md).
#include <algorithm>

#include "workload/layer_check.h"

namespace fusim::workload {

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
  // Grouped-query attention (issue 20): key and value carry kv_heads heads of the query's
  // head size; each serves heads/kv_heads query heads (Ainslie et al. 2023). kv = heads: MHA.
  const std::int64_t heads = l_.attrs.heads, kv = kv_heads_of(l_.attrs);
  if (q[2] % heads != 0)
    fail("attrs.heads",
         fmt::format("a divisor of the query embedding size E = {}, got {}", q[2], heads));
  const std::int64_t key_width = q[2] / heads * kv;
  if (k[0] != q[0] || k[2] != key_width)
    fail("inputs[1]",
         fmt::format("key [{}, S, {}] to match query {} ({} of {} heads of size {}), got {} {}",
                     q[0], key_width, to_string(q), kv, heads, q[2] / heads, to_string(k),
                     origin(1)));
  if (v[0] != q[0] || v[1] != k[1])
    fail("inputs[2]", fmt::format("value [{}, {}, Ev] to match query {} and key {}, got {} {}",
                                  q[0], k[1], to_string(q), to_string(k), to_string(v), origin(2)));
  if (v[2] % kv != 0)
    fail("inputs[2]", fmt::format("a value whose size Ev = {} splits into {} heads, got {} {}",
                                  v[2], kv, to_string(v), origin(2)));
  return {{q[0], q[1], v[2] / kv * heads}, in_dtype(0), "attention output [N, L, heads * Ev/kv]"};
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

// ---- ATen capture: the parameter layer and the generic kinds (SCHEMA.md, "Generic layers")

// A view of one parameter (trained) or one buffer (not trained): no inputs, its output is
// that tensor, so every layer reading it gets its gradient summed there.
InferredOutput LayerCheck::parameter() const {
  arity(0);
  if (l_.params.size() + l_.buffers.size() != 1)
    fail("params", fmt::format("exactly one parameter or one buffer for parameter, got {} "
                               "params and {} buffers",
                               l_.params.size(), l_.buffers.size()));
  const TensorSpec& t = l_.params.empty() ? l_.buffers[0] : l_.params[0];
  if (!l_.params.empty() && !is_floating(t.dtype))
    fail("params[0].dtype",
         fmt::format("a floating-point dtype for a trained param, got {}", to_string(t.dtype)));
  return {t.shape, t.dtype, fmt::format("the shape of \"{}\"", t.name)};
}

InferredOutput LayerCheck::generic() const {
  no_params();
  const std::size_t n = l_.inputs.size();
  switch (l_.op) {
    case OpKind::GenericElementwise: {
      // The output is the broadcast of every input (numpy rules), whatever their dtypes.
      if (n == 0) fail("inputs", "at least one input for generic_elementwise, got []");
      Shape out = in(0);
      for (std::size_t i = 1; i < n; ++i) {
        auto b = broadcast_shapes(out, in(i));
        if (!b)
          fail(in_where(i), fmt::format("a tensor broadcastable with {} (inputs 0..{}), got {} {}",
                                        to_string(out), i - 1, to_string(in(i)), origin(i)));
        out = *b;
      }
      return {out, l_.output_dtype, "the broadcast of its inputs"};
    }
    case OpKind::GenericReduction:
      if (n == 0) fail("inputs", "at least one input for generic_reduction, got []");
      return {l_.output, l_.output_dtype, "any shape"};
    case OpKind::GenericMatmul: {
      arity(2);
      floating_input(0);
      floating_input(1);
      for (std::size_t i = 0; i < 2; ++i)
        if (l_.attrs.contraction > numel(in(i)))
          fail("attrs.contraction",
               fmt::format("at most the {} elements of input {} {} (each output element "
                           "combines that many of each operand), got {}",
                           numel(in(i)), i, to_string(in(i)), l_.attrs.contraction));
      return {l_.output, in_dtype(0), "any shape, the dtype of input 0"};
    }
    default:  // generic_data_movement: any inputs (none: a tensor the forward makes)
      return {l_.output, l_.output_dtype, "any shape"};
  }
}

}  // namespace fusim::workload
