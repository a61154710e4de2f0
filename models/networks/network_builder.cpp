#include "networks/network_builder.h"

#include <fmt/format.h>
#include <utility>

#include "core/error.h"

namespace fusim::networks {

using workload::DType;
using workload::Layer;
using workload::OpKind;
using workload::TensorSpec;

NetworkBuilder::NetworkBuilder(std::string model, std::int64_t batch, std::string source,
                               std::string flag)
    : flag_(std::move(flag)) {
  trace_.model = std::move(model);
  trace_.batch = batch;
  trace_.dtype = DType::Float32;
  trace_.source = std::move(source);
}

InputRef NetworkBuilder::input(const std::string& name, Shape shape, DType dtype) {
  trace_.inputs.push_back(TensorSpec{name, std::move(shape), dtype, false});
  return InputRef{InputRef::Source::ModelInput, static_cast<int>(trace_.inputs.size()) - 1};
}

const Shape& NetworkBuilder::shape(InputRef ref) const {
  return ref.source == InputRef::Source::Layer ? trace_.layers.at(ref.index).output
                                               : trace_.inputs.at(ref.index).shape;
}

Layer& NetworkBuilder::append(const std::string& name, OpKind op, std::vector<InputRef> inputs,
                              Shape output) {
  Layer layer;
  layer.id = static_cast<int>(trace_.layers.size());
  int uses = name_uses_[name]++;
  layer.name = uses == 0 ? name : fmt::format("{}_{}", name, uses);
  layer.op = op;
  layer.inputs = std::move(inputs);
  layer.output = std::move(output);
  layer.output_dtype = trace_.dtype;
  trace_.layers.push_back(std::move(layer));
  return trace_.layers.back();
}

TensorSpec NetworkBuilder::param(const std::string& layer, const std::string& name, Shape shape,
                                 bool trained) const {
  return TensorSpec{layer + "." + name, std::move(shape), trace_.dtype, trained};
}

static InputRef ref_to(const Layer& layer) {
  return InputRef{InputRef::Source::Layer, layer.id};
}

// PyTorch's Conv2d/MaxPool2d output size (floor mode):
// out = floor((in + 2*padding - dilation*(kernel-1) - 1) / stride) + 1   (torch.nn.Conv2d docs)
std::int64_t NetworkBuilder::pooled(std::int64_t size, std::int64_t kernel, std::int64_t stride,
                                    std::int64_t padding, std::int64_t dilation,
                                    const std::string& name) const {
  std::int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  if (span < 0)
    throw InputError(
        fmt::format("{}: too small for {}: layer '{}' would get an input of {} "
                    "pixels, fewer than its kernel of {}",
                    flag_, trace_.model, name, size, kernel));
  return span / stride + 1;
}

InputRef NetworkBuilder::conv2d(const std::string& name, InputRef x, const Conv2dSpec& s) {
  Shape in = shape(x);
  Shape out{in[0], s.out_channels, pooled(in[2], s.kernel, s.stride, s.padding, s.dilation, name),
            pooled(in[3], s.kernel, s.stride, s.padding, s.dilation, name)};
  Layer& l = append(name, OpKind::Conv2d, {x}, std::move(out));
  l.attrs.kernel = {s.kernel, s.kernel};
  l.attrs.stride = {s.stride, s.stride};
  l.attrs.padding = {s.padding, s.padding};
  l.attrs.dilation = {s.dilation, s.dilation};
  l.attrs.groups = s.groups;
  l.attrs.bias = s.bias;
  l.params.push_back(param(name, "weight", {s.out_channels, in[1] / s.groups, s.kernel, s.kernel}));
  if (s.bias) l.params.push_back(param(name, "bias", {s.out_channels}));
  return ref_to(l);
}

InputRef NetworkBuilder::batch_norm(const std::string& name, InputRef x) {
  std::int64_t c = shape(x)[1];
  Layer& l = append(name, OpKind::BatchNorm, {x}, shape(x));
  l.attrs.eps = 1e-5;  // torch.nn.BatchNorm2d defaults, used by every torchvision CNN
  l.attrs.momentum = 0.1;
  l.params = {param(name, "weight", {c}), param(name, "bias", {c})};
  l.buffers = {param(name, "running_mean", {c}, false), param(name, "running_var", {c}, false)};
  return ref_to(l);
}

InputRef NetworkBuilder::linear(const std::string& name, InputRef x, std::int64_t out, bool bias) {
  Shape s = shape(x);
  std::int64_t in = s.back();
  s.back() = out;
  Layer& l = append(name, OpKind::Linear, {x}, std::move(s));
  l.attrs.bias = bias;
  l.params.push_back(param(name, "weight", {out, in}));
  if (bias) l.params.push_back(param(name, "bias", {out}));
  return ref_to(l);
}

InputRef NetworkBuilder::layer_norm(const std::string& name, InputRef x, double eps) {
  std::int64_t e = shape(x).back();
  Layer& l = append(name, OpKind::LayerNorm, {x}, shape(x));
  l.attrs.normalized_shape = {e};
  l.attrs.eps = eps;
  l.params = {param(name, "weight", {e}), param(name, "bias", {e})};
  return ref_to(l);
}

InputRef NetworkBuilder::embedding(const std::string& name, InputRef indices, std::int64_t num,
                                   std::int64_t dim) {
  Shape s = shape(indices);
  s.push_back(dim);
  Layer& l = append(name, OpKind::Embedding, {indices}, std::move(s));
  l.attrs.padding_idx = -1;
  l.params.push_back(param(name, "weight", {num, dim}));
  return ref_to(l);
}

InputRef NetworkBuilder::activation(const std::string& name, InputRef x, OpKind op) {
  return ref_to(append(name, op, {x}, shape(x)));
}

InputRef NetworkBuilder::gelu(const std::string& name, InputRef x, const std::string& approximate) {
  Layer& l = append(name, OpKind::Gelu, {x}, shape(x));
  l.attrs.approximate = approximate;
  return ref_to(l);
}

InputRef NetworkBuilder::dropout(const std::string& name, InputRef x, double p) {
  Layer& l = append(name, OpKind::Dropout, {x}, shape(x));
  l.attrs.p = p;
  return ref_to(l);
}

InputRef NetworkBuilder::max_pool2d(const std::string& name, InputRef x, std::int64_t kernel,
                                    std::int64_t stride, std::int64_t padding) {
  Shape in = shape(x);
  Shape out{in[0], in[1], pooled(in[2], kernel, stride, padding, 1, name),
            pooled(in[3], kernel, stride, padding, 1, name)};
  Layer& l = append(name, OpKind::MaxPool2d, {x}, std::move(out));
  l.attrs.kernel = {kernel, kernel};
  l.attrs.stride = {stride, stride};
  l.attrs.padding = {padding, padding};
  l.attrs.dilation = {1, 1};
  return ref_to(l);
}

InputRef NetworkBuilder::adaptive_avg_pool2d(const std::string& name, InputRef x, std::int64_t oh,
                                             std::int64_t ow) {
  Shape in = shape(x);
  Layer& l = append(name, OpKind::AdaptiveAvgPool2d, {x}, {in[0], in[1], oh, ow});
  l.attrs.output_size = {oh, ow};
  return ref_to(l);
}

InputRef NetworkBuilder::flatten(const std::string& name, InputRef x, std::int64_t start_dim) {
  Shape in = shape(x);
  Shape out(in.begin(), in.begin() + start_dim);
  std::int64_t rest = 1;
  for (std::size_t i = static_cast<std::size_t>(start_dim); i < in.size(); ++i) rest *= in[i];
  out.push_back(rest);
  Layer& l = append(name, OpKind::Flatten, {x}, std::move(out));
  l.attrs.start_dim = start_dim;
  l.attrs.end_dim = -1;
  return ref_to(l);
}

InputRef NetworkBuilder::reshape(const std::string& name, InputRef x, Shape target) {
  FUSIM_ASSERT(workload::numel(target) == workload::numel(shape(x)),
               fmt::format("reshape '{}' changes the element count", name));
  return ref_to(append(name, OpKind::Reshape, {x}, std::move(target)));
}

InputRef NetworkBuilder::add(InputRef a, InputRef b) {
  return add(a, b, "add");
}

InputRef NetworkBuilder::add(InputRef a, InputRef b, const std::string& name) {
  FUSIM_ASSERT(shape(a) == shape(b), "residual add of different shapes");
  return ref_to(append(name, OpKind::Add, {a, b}, shape(a)));
}

InputRef NetworkBuilder::attention(const std::string& name, InputRef q, InputRef k, InputRef v,
                                   std::int64_t heads, bool causal, double p) {
  Layer& l = append(name, OpKind::ScaledDotProductAttention, {q, k, v}, shape(q));
  l.attrs.heads = heads;
  l.attrs.causal = causal;
  l.attrs.p = p;
  return ref_to(l);
}

// --- LLM layers (issue 20) ---
void NetworkBuilder::set_dtype(DType dtype) {
  trace_.dtype = dtype;
}

void NetworkBuilder::tie_last_weight(const std::string& name, const std::string& owner) {
  FUSIM_ASSERT(!trace_.layers.empty(), "a layer to tie");
  for (auto& p : trace_.layers.back().params)
    if (p.name == name) {
      p.tied_to = owner;
      return;
    }
  FUSIM_ASSERT(false, "tie_last_weight: the last layer has param " + name);
}

InputRef NetworkBuilder::rms_norm(const std::string& name, InputRef x, double eps) {
  std::int64_t e = shape(x).back();
  Layer& l = append(name, OpKind::RmsNorm, {x}, shape(x));
  l.attrs.normalized_shape = {e};
  l.attrs.eps = eps;
  l.params = {param(name, "weight", {e})};
  return ref_to(l);
}

InputRef NetworkBuilder::rope(const std::string& name, InputRef x, std::int64_t heads,
                              double theta) {
  Layer& l = append(name, OpKind::Rope, {x}, shape(x));
  l.attrs.heads = heads;
  l.attrs.theta = theta;
  return ref_to(l);
}

InputRef NetworkBuilder::swiglu(const std::string& name, InputRef x) {
  Shape s = shape(x);
  s.back() /= 2;
  return ref_to(append(name, OpKind::Swiglu, {x}, std::move(s)));
}

InputRef NetworkBuilder::gqa_attention(const std::string& name, InputRef q, InputRef k, InputRef v,
                                       std::int64_t heads, std::int64_t kv_heads, bool causal,
                                       double p) {
  Shape out = shape(q);
  out.back() = shape(v).back() / kv_heads * heads;
  Layer& l = append(name, OpKind::ScaledDotProductAttention, {q, k, v}, std::move(out));
  l.attrs.heads = heads;
  l.attrs.kv_heads = kv_heads == heads ? 0 : kv_heads;  // the stored form of MHA (trace.h)
  l.attrs.causal = causal;
  l.attrs.p = p;
  return ref_to(l);
}

workload::Trace NetworkBuilder::finish(InputRef logits) {
  const Shape& s = shape(logits);
  FUSIM_ASSERT(s.size() == 2, "logits must be [M, classes]");
  InputRef target = input("target", {s[0]}, DType::Int64);
  append("loss", OpKind::CrossEntropy, {logits, target}, {});
  return std::move(trace_);
}

}  // namespace fusim::networks
