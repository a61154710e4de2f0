#include "workload/trace.h"

#include <array>
#include <fmt/format.h>
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

constexpr std::array<std::pair<OpKind, std::string_view>, 26> kOpKinds{{
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
}};
}  // namespace

int dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Float16: return 2;
    case DType::BFloat16: return 2;
    case DType::Int64: return 8;
    case DType::Int32: return 4;
    case DType::Bool: return 1;
  }
  return 4;
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

std::string to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

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
    for (const auto& p : layer.params) n += numel(p.shape);
  return n;
}

}  // namespace fusim::workload
