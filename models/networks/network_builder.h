#pragma once
// Builds a workload::Trace layer by layer, inferring each output shape the way PyTorch
// does (conv/pool output sizes, broadcasting adds), so generators read like the
// torchvision forward() they mirror. Names follow torch.fx: a module path, and for a
// name used again (a ReLU module called twice, fx's "add" nodes) the suffix _1, _2, ...
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workload/trace.h"

namespace fusim::networks {

using workload::InputRef;
using workload::Shape;

struct Conv2dSpec {
  std::int64_t out_channels = 0;
  std::int64_t kernel = 1, stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = false;
};

class NetworkBuilder {
 public:
  // `flag` names the command-line option that sizes the network, for error messages when a
  // size makes some layer's output empty (e.g. "--resolution").
  NetworkBuilder(std::string model, std::int64_t batch, std::string source, std::string flag);

  InputRef input(const std::string& name, Shape shape, workload::DType dtype);
  const Shape& shape(InputRef ref) const;

  InputRef conv2d(const std::string& name, InputRef x, const Conv2dSpec& spec);
  InputRef batch_norm(const std::string& name, InputRef x);
  InputRef linear(const std::string& name, InputRef x, std::int64_t out, bool bias = true);
  InputRef layer_norm(const std::string& name, InputRef x, double eps);
  InputRef embedding(const std::string& name, InputRef indices, std::int64_t num, std::int64_t dim);
  InputRef activation(const std::string& name, InputRef x, workload::OpKind op);
  InputRef gelu(const std::string& name, InputRef x, const std::string& approximate);
  InputRef dropout(const std::string& name, InputRef x, double p);
  InputRef max_pool2d(const std::string& name, InputRef x, std::int64_t kernel, std::int64_t stride,
                      std::int64_t padding);
  InputRef adaptive_avg_pool2d(const std::string& name, InputRef x, std::int64_t oh,
                               std::int64_t ow);
  InputRef flatten(const std::string& name, InputRef x, std::int64_t start_dim);
  InputRef reshape(const std::string& name, InputRef x, Shape target);
  InputRef add(InputRef a, InputRef b);                           // fx names it "add", "add_1", ...
  InputRef add(InputRef a, InputRef b, const std::string& name);  // a named residual add
  InputRef attention(const std::string& name, InputRef q, InputRef k, InputRef v,
                     std::int64_t heads, bool causal, double p);
  // Appends cross_entropy on logits [M, classes] against a new int64 input "target" [M].
  workload::Trace finish(InputRef logits);

  // --- LLM layers (issue 20; llm.cpp) ---
  // The dtype of params and activations built from here on (the trace's dtype).
  void set_dtype(workload::DType dtype);
  // Ties the param `name` of the last layer to the earlier param `owner` (weight tying).
  void tie_last_weight(const std::string& name, const std::string& owner);
  InputRef rms_norm(const std::string& name, InputRef x, double eps);
  InputRef rope(const std::string& name, InputRef x, std::int64_t heads, double theta);
  InputRef swiglu(const std::string& name, InputRef x);
  // Attention with kv_heads key/value heads (grouped-query; kv_heads == heads: multi-head).
  InputRef gqa_attention(const std::string& name, InputRef q, InputRef k, InputRef v,
                         std::int64_t heads, std::int64_t kv_heads, bool causal, double p);

 private:
  workload::Layer& append(const std::string& name, workload::OpKind op,
                          std::vector<InputRef> inputs, Shape output);
  workload::TensorSpec param(const std::string& layer, const std::string& name, Shape shape,
                             bool trained = true) const;
  std::int64_t pooled(std::int64_t size, std::int64_t kernel, std::int64_t stride,
                      std::int64_t padding, std::int64_t dilation, const std::string& name) const;

  workload::Trace trace_;
  std::string flag_;
  std::map<std::string, int> name_uses_;
};

}  // namespace fusim::networks
