// Per-op checks of one layer: arity, input dtypes and shapes, params, buffers, and the
// output shape from the formulas of traces/SCHEMA.md (PyTorch's shape rules). This file:
// attribute values and the dispatch by op; layer_check_ops.cpp: each op family's shape rule.
#include "workload/layer_check.h"

#include <algorithm>

namespace fusim::workload {

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
      // Grouped-query attention (issue 20): each key/value head serves heads/kv_heads queries.
      if (l_.op == OpKind::ScaledDotProductAttention &&
          (a.kv_heads < 0 || (a.kv_heads > 0 && a.heads % a.kv_heads != 0)))
        fail("attrs.kv_heads",
             fmt::format("a divisor of heads ({}) for grouped-query attention, got {}", a.heads,
                         a.kv_heads));
      break;
    case OpKind::Gelu:
      if (a.approximate != "none" && a.approximate != "tanh")
        fail("attrs.approximate", fmt::format("\"none\" or \"tanh\", got \"{}\"", a.approximate));
      break;
    // LLM ops (issue 20)
    case OpKind::RmsNorm:
      if (a.normalized_shape.empty() ||
          std::any_of(a.normalized_shape.begin(), a.normalized_shape.end(),
                      [](std::int64_t d) { return d < 1; }))
        fail("attrs.normalized_shape", fmt::format("a non-empty list of positive integers, got {}",
                                                   pair_text(a.normalized_shape)));
      if (!(a.eps > 0)) fail("attrs.eps", fmt::format("a positive number, got {}", a.eps));
      break;
    case OpKind::Rope:
      if (a.heads < 1) fail("attrs.heads", fmt::format("a positive integer, got {}", a.heads));
      if (!(a.theta > 0)) fail("attrs.theta", fmt::format("a positive number, got {}", a.theta));
      break;
    case OpKind::Embedding:
      if (a.padding_idx < -1)
        fail("attrs.padding_idx", fmt::format("-1 (none) or an index >= 0, got {}", a.padding_idx));
      break;
    // ATen capture: generic kinds
    case OpKind::GenericElementwise:
    case OpKind::GenericReduction:
      if (a.flops_per_element < 0)
        fail("attrs.flops_per_element",
             fmt::format("a non-negative integer, got {}", a.flops_per_element));
      if (l_.op == OpKind::GenericReduction && a.reduce < 1)
        fail("attrs.reduce", fmt::format("a positive integer (input elements combined per "
                                         "output element), got {}",
                                         a.reduce));
      break;
    case OpKind::GenericMatmul:
      if (a.contraction < 1)
        fail("attrs.contraction",
             fmt::format("a positive integer (multiply-adds per output element), got {}",
                         a.contraction));
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
    // LLM ops (issue 20)
    case OpKind::RmsNorm:
      return rms_norm();
    case OpKind::Rope:
      return rope();
    case OpKind::Swiglu:
      return swiglu();
    case OpKind::Parameter:
      return parameter();
    case OpKind::GenericElementwise:
    case OpKind::GenericReduction:
    case OpKind::GenericDataMovement:
    case OpKind::GenericMatmul:
      return generic();
  }
  fail("op", "a known op");
}

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
