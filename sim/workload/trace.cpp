#include "workload/trace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <array>
#include <tuple>
#include <utility>

namespace fusim::workload {
namespace {
constexpr std::array<std::pair<DType, std::string_view>, 6> kDTypes{{
    {DType::Float32, "float32"},
    {DType::Float16, "float16"},
    {DType::BFloat16, "bfloat16"},
    {DType::Int64, "int64"},
    {DType::Int32, "int32"},
    {DType::Bool, "bool"},
}};

constexpr std::array<std::pair<OpKind, std::string_view>, 34> kOpKinds{{
    {OpKind::Linear, "linear"},
    {OpKind::Conv2d, "conv2d"},
    {OpKind::BatchNorm, "batch_norm"},
    {OpKind::LayerNorm, "layer_norm"},
    {OpKind::Relu, "relu"},
    {OpKind::Relu6, "relu6"},
    {OpKind::Gelu, "gelu"},
    {OpKind::Silu, "silu"},
    {OpKind::Sigmoid, "sigmoid"},
    {OpKind::Tanh, "tanh"},
    {OpKind::MaxPool2d, "max_pool2d"},
    {OpKind::AvgPool2d, "avg_pool2d"},
    {OpKind::AdaptiveAvgPool2d, "adaptive_avg_pool2d"},
    {OpKind::Add, "add"},
    {OpKind::Mul, "mul"},
    {OpKind::Concat, "concat"},
    {OpKind::Flatten, "flatten"},
    {OpKind::Reshape, "reshape"},
    {OpKind::Permute, "permute"},
    {OpKind::Embedding, "embedding"},
    {OpKind::Matmul, "matmul"},
    {OpKind::Bmm, "bmm"},
    {OpKind::Softmax, "softmax"},
    {OpKind::Dropout, "dropout"},
    {OpKind::ScaledDotProductAttention, "scaled_dot_product_attention"},
    {OpKind::CrossEntropy, "cross_entropy"},
    // LLM ops (issue 20)
    {OpKind::RmsNorm, "rms_norm"},
    {OpKind::Rope, "rope"},
    {OpKind::Swiglu, "swiglu"},
    // ATen capture
    {OpKind::Parameter, "parameter"},
    {OpKind::GenericElementwise, "generic_elementwise"},
    {OpKind::GenericReduction, "generic_reduction"},
    {OpKind::GenericDataMovement, "generic_data_movement"},
    {OpKind::GenericMatmul, "generic_matmul"},
}};
}  // namespace

int dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return 4;
    case DType::Float16:
      return 2;
    case DType::BFloat16:
      return 2;
    case DType::Int64:
      return 8;
    case DType::Int32:
      return 4;
    case DType::Bool:
      return 1;
  }
  return 4;
}

bool is_floating(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
}

std::string_view to_string(DType dtype) {
  for (auto& [d, name] : kDTypes)
    if (d == dtype) return name;
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (auto& [d, n] : kDTypes)
    if (n == name) return d;
  return std::nullopt;
}

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string_view to_string(OpKind op) {
  for (auto& [k, name] : kOpKinds)
    if (k == op) return name;
  return "?";
}

std::optional<OpKind> parse_op_kind(std::string_view name) {
  for (auto& [k, n] : kOpKinds)
    if (n == name) return k;
  return std::nullopt;
}

const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> v;
    for (auto& [k, n] : kOpKinds) v.push_back(k);
    return v;
  }();
  return kinds;
}

std::int64_t Trace::param_count() const {
  std::int64_t n = 0;
  for (const auto& layer : layers)
    for (const auto& p : layer.params)
      if (p.tied_to.empty()) n += numel(p.shape);
  return n;
}

namespace {
auto attr_fields(const LayerAttrs& a) {
  return std::tie(a.kernel, a.stride, a.padding, a.dilation, a.output_size, a.normalized_shape,
                  a.dims, a.groups, a.dim, a.start_dim, a.end_dim, a.heads, a.padding_idx, a.eps,
                  a.momentum, a.p, a.bias, a.causal, a.ceil_mode, a.count_include_pad,
                  a.approximate, a.scalar, a.kv_heads, a.theta, a.aten, a.flops_per_element, a.reduce, a.contraction);
}
}  // namespace

std::int64_t kv_heads_of(const LayerAttrs& a) {
  return a.kv_heads != 0 ? a.kv_heads : a.heads;
}

bool operator==(const LayerAttrs& a, const LayerAttrs& b) {
  return attr_fields(a) == attr_fields(b);
}

bool operator==(const TensorSpec& a, const TensorSpec& b) {
  return std::tie(a.name, a.shape, a.dtype, a.requires_grad, a.tied_to) ==
         std::tie(b.name, b.shape, b.dtype, b.requires_grad, b.tied_to);
}

bool operator==(const InputRef& a, const InputRef& b) {
  return a.source == b.source && a.index == b.index;
}

bool operator==(const Layer& a, const Layer& b) {
  return std::tie(a.id, a.name, a.op, a.attrs, a.inputs, a.output, a.output_dtype, a.params,
                  a.buffers, a.output_requires_grad) ==
         std::tie(b.id, b.name, b.op, b.attrs, b.inputs, b.output, b.output_dtype, b.params,
                  b.buffers, b.output_requires_grad);
}

bool operator==(const CaptureInfo& a, const CaptureInfo& b) {
  return std::tie(a.path, a.control_flow) == std::tie(b.path, b.control_flow);
}

bool operator==(const Trace& a, const Trace& b) {
  return std::tie(a.model, a.batch, a.dtype, a.source, a.capture, a.inputs, a.layers) ==
         std::tie(b.model, b.batch, b.dtype, b.source, b.capture, b.inputs, b.layers);
}

}  // namespace fusim::workload
