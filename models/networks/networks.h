#pragma once
// The network zoo: training-step traces built in memory, mirroring torchvision's model
// definitions (and scripts/fusim_models.py for the MLP and transformers) layer for layer:
// same order, names, shapes and parameters as scripts/capture_trace.py records.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/trace.h"

namespace fusim::networks {

struct NetworkOptions {
  std::int64_t batch = 32;
  std::int64_t resolution = 224;  // image side for CNNs
  // MLP: layers = hidden layers (default 2), hidden = their width (default 1024).
  // Transformers: override the preset's layers / hidden / heads; seq is the sequence length.
  std::int64_t layers = 0, hidden = 0, heads = 0;  // 0: the network's own value
  std::int64_t seq = 128;
  std::string source;  // recorded in Trace::source (the command line)
};

// name: mlp, resnet18, resnet34, resnet50, resnet101, vgg11, vgg16, mobilenet_v2,
// bert-base, gpt2-small, gpt2-medium. Unknown names and impossible sizes throw InputError.
workload::Trace make_network(const std::string& name, const NetworkOptions& options);
const std::vector<std::string>& network_names();

// The generators, one per family (each in its own file).
workload::Trace make_mlp(const NetworkOptions& options);
workload::Trace make_resnet(int depth, const NetworkOptions& options);  // 18, 34, 50, 101
workload::Trace make_vgg(int depth, const NetworkOptions& options);     // 11, 16
workload::Trace make_mobilenet_v2(const NetworkOptions& options);

struct TransformerConfig {
  std::string name;
  std::int64_t vocab = 0, positions = 0, hidden = 0, layers = 0, heads = 0;
  bool causal = false;  // decoder (GPT-2) vs encoder (BERT)
  bool pre_ln = false;  // GPT-2: x + f(LN(x)) with a final LN; BERT: LN(x + f(x))
  std::string gelu_approximate = "none";
  double dropout = 0.1, eps = 1e-5;
};
TransformerConfig transformer_preset(const std::string& name);  // bert-base, gpt2-small, ...
workload::Trace make_transformer(const TransformerConfig& config, const NetworkOptions& options);

}  // namespace fusim::networks
