#pragma once
// The network zoo: training-step traces built in memory, mirroring torchvision's model
// definitions (and scripts/fusim_models.py for the MLP and transformers) layer for layer:
// same order, names, shapes and parameters as scripts/capture_trace.py records.
#include <cstdint>
#include <optional>
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
  std::int64_t seq = 0;  // 0: the network's own (128 for bert/gpt2, the preset's for LLMs)
  std::string source;    // recorded in Trace::source (the command line)
  // LLMs (issue 20): override the preset's; 0 / unset: its own value.
  std::int64_t kv_heads = 0, ffn = 0, vocab = 0;
  std::optional<workload::DType> dtype;  // params and activations (default: the preset's)
  bool tied_embeddings = false;          // the LM head shares the token embedding's weight
  bool bidirectional = false;  // no causal mask: the denoising step of a masked-diffusion LM
};

// name: mlp, resnet18, resnet34, resnet50, resnet101, vgg11, vgg16, mobilenet_v2,
// bert-base, gpt2-small, gpt2-medium, and the LLMs of llm_names(). Unknown names and
// impossible sizes throw InputError.
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

// --- LLMs (issue 20): llm.cpp builds, llm_presets.cpp holds the published dimensions ---
// gpt: Megatron-LM's GPT (learned positions, LayerNorm, GELU MLP, biases, dropout 0.1);
// llama: Megatron-core's Llama (RMSNorm, RoPE, grouped-query attention, SwiGLU of a fused
// gate+up projection, no biases). bidirectional: the same network without the causal mask,
// trained as a masked-diffusion LM (LLaDA, Dream; the models d3LLM distills).
enum class LlmFamily { Gpt, Llama };
struct LlmConfig {
  std::string name;
  LlmFamily family = LlmFamily::Llama;
  std::int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  std::int64_t positions = 0;  // gpt: learned position embeddings (the context length)
  std::int64_t seq = 0;        // the sequence length it was trained at (gen's default --seq)
  bool tied_embeddings = false, bidirectional = false;
  bool qkv_bias = false;  // Qwen2-style biases on q, k, v (Dream)
  double norm_eps = 1e-5, rope_theta = 10000.0, dropout = 0.0;
  workload::DType dtype = workload::DType::BFloat16;
  std::string citation;  // where the dimensions are published
};
bool is_llm(const std::string& name);
const std::vector<std::string>& llm_names();  // the families gpt, llama, then the presets
// The preset (or family) with the options' overrides applied and checked (InputError).
LlmConfig llm_config(const std::string& name, const NetworkOptions& options);
workload::Trace make_llm(const LlmConfig& config, std::int64_t batch, std::int64_t seq,
                         const std::string& source);

}  // namespace fusim::networks
