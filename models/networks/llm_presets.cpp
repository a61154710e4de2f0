// LLM presets with their published dimensions (issue 20), and the overrides of
// `fusim trace gen` applied to them. Every preset cites where its numbers are published;
// tests/networks/llm_test.cpp checks that the generated parameter count equals the published
// one.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "networks/networks.h"

namespace fusim::networks {
namespace {
using workload::DType;

// Megatron-LM's GPT defaults (megatron/training/arguments.py): --hidden-dropout 0.1,
// --attention-dropout 0.1, LayerNorm eps 1e-5, 4h FFN, word embeddings tied to the output
// layer unless --untie-embeddings-and-output-weights. Vocabulary 51,200: GPT-2's 50,257
// BPE tokens padded by Megatron to a multiple of 128 x TP (1024 at TP 8), as Narayanan et
// al. 2021 (SC'21, Table 1, "V = 51,200") count it.
LlmConfig megatron_gpt(std::string name, std::int64_t layers, std::int64_t hidden,
                       std::int64_t heads, std::string citation) {
  LlmConfig c;
  c.name = std::move(name);
  c.family = LlmFamily::Gpt;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = heads;
  c.ffn = 4 * hidden;
  c.vocab = 51200;
  c.positions = 2048;
  c.seq = 2048;
  c.tied_embeddings = true;
  c.dropout = 0.1;
  c.dtype = DType::Float16;  // the papers train these in fp16 with fp32 master weights
  c.citation = std::move(citation);
  return c;
}

// Llama (RMSNorm eps 1e-5, RoPE, SwiGLU, no biases, untied head) from the Hugging Face
// config.json of each model (meta-llama/*: num_hidden_layers, hidden_size,
// num_attention_heads, num_key_value_heads, intermediate_size, vocab_size, rope_theta).
LlmConfig llama(std::string name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab, double theta,
                std::int64_t seq, std::string citation) {
  LlmConfig c;
  c.name = std::move(name);
  c.family = LlmFamily::Llama;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = ffn;
  c.vocab = vocab;
  c.rope_theta = theta;
  c.seq = seq;
  c.citation = std::move(citation);
  return c;
}

std::vector<LlmConfig> presets() {
  std::vector<LlmConfig> p;
  // Korthikanti et al. 2022 (MLSys'23), Table 3: 22B: 48 layers, hidden 6144, 64 heads.
  p.push_back(megatron_gpt("gpt-22b", 48, 6144, 64, "Korthikanti et al. 2022, Table 3"));
  // Brown et al. 2020, Table 2.1 (GPT-3 175B: 96 layers, d_model 12288, 96 heads of 128,
  // context 2048; "175.0B" parameters); Korthikanti et al. 2022, Table 3.
  p.push_back(megatron_gpt("gpt3-175b", 96, 12288, 96, "Brown et al. 2020, Table 2.1"));
  // Smith et al. 2022 (MT-NLG 530B: 105 layers, hidden 20480, 128 heads); Narayanan et al.
  // 2021, Table 1 (529.6B); Korthikanti et al. 2022, Table 3.
  p.push_back(megatron_gpt("gpt-530b", 105, 20480, 128, "Narayanan et al. 2021, Table 1"));
  // Narayanan et al. 2021, Table 1 (1008.0B: 128 layers, hidden 25600, 160 heads);
  // Korthikanti et al. 2022, Table 3 (1T).
  p.push_back(megatron_gpt("gpt-1t", 128, 25600, 160, "Narayanan et al. 2021, Table 1"));
  // Touvron et al. 2023 (Llama 2), Table 1; meta-llama/Llama-2-*-hf config.json:
  // 6,738,415,616 / 13,015,864,320 / 68,976,648,192 parameters; 4k context.
  p.push_back(llama("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 10000.0, 4096,
                    "Touvron et al. 2023, Table 1; meta-llama/Llama-2-7b-hf"));
  p.push_back(llama("llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 10000.0, 4096,
                    "Touvron et al. 2023, Table 1; meta-llama/Llama-2-13b-hf"));
  p.push_back(llama("llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 10000.0, 4096,
                    "Touvron et al. 2023, Table 1; meta-llama/Llama-2-70b-hf"));
  // Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3: 8B / 70B / 405B with 32 / 80
  // / 126 layers, model dim 4096 / 8192 / 16384, FFN 14336 / 28672 / 53248, 32 / 64 / 128
  // heads, 8 key/value heads, vocabulary 128K (128,256 in config.json), RoPE theta 500,000;
  // pre-trained at sequence length 8192. Published counts (model cards): 8.03B, 70.6B, 405B.
  p.push_back(llama("llama-3.1-8b", 32, 4096, 32, 8, 14336, 128256, 500000.0, 8192,
                    "Dubey et al. 2024, Table 3; meta-llama/Llama-3.1-8B"));
  p.push_back(llama("llama-3.1-70b", 80, 8192, 64, 8, 28672, 128256, 500000.0, 8192,
                    "Dubey et al. 2024, Table 3; meta-llama/Llama-3.1-70B"));
  p.push_back(llama("llama-3.1-405b", 126, 16384, 128, 8, 53248, 128256, 500000.0, 8192,
                    "Dubey et al. 2024, Table 3; meta-llama/Llama-3.1-405B"));
  // Masked-diffusion LMs (bidirectional; the teachers d3LLM distills). LLaDA 8B (Nie et al.
  // 2025; GSAI-ML/LLaDA-8B-Base config.json: 32 layers, d_model 4096, 32 heads, 32 kv heads,
  // mlp_hidden_size 12288, vocab 126464, rope_theta 500000, untied): "8B".
  LlmConfig llada = llama("llada-8b", 32, 4096, 32, 32, 12288, 126464, 500000.0, 4096,
                          "Nie et al. 2025; GSAI-ML/LLaDA-8B-Base");
  llada.bidirectional = true;
  p.push_back(llada);
  // Dream 7B (Ye et al. 2025; Dream-org/Dream-v0-Base-7B, the Qwen2.5-7B architecture: 28
  // layers, hidden 3584, 28 heads, 4 kv heads, FFN 18944, vocab 152064, q/k/v biases, rope
  // theta 1e6, RMSNorm eps 1e-6): 7,615,616,512 parameters (Qwen2.5-7B's "7.61B").
  LlmConfig dream = llama("dream-7b", 28, 3584, 28, 4, 18944, 152064, 1000000.0, 2048,
                          "Ye et al. 2025; Dream-org/Dream-v0-Base-7B");
  dream.bidirectional = true;
  dream.qkv_bias = true;
  dream.norm_eps = 1e-6;
  p.push_back(dream);
  return p;
}

const std::vector<LlmConfig>& preset_table() {
  static const std::vector<LlmConfig> table = presets();
  return table;
}

[[noreturn]] void bad(const std::string& flag, const std::string& expected, std::int64_t got) {
  throw InputError(fmt::format("{}: expected {}, got {}", flag, expected, got));
}

void override_dim(std::int64_t& field, std::int64_t value, const char* flag) {
  if (value < 0) bad(flag, "a positive integer", value);
  if (value > 0) field = value;
}

}  // namespace

const std::vector<std::string>& llm_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"gpt", "llama"};
    for (const auto& c : preset_table()) v.push_back(c.name);
    return v;
  }();
  return names;
}

bool is_llm(const std::string& name) {
  for (const auto& n : llm_names())
    if (n == name) return true;
  return false;
}

LlmConfig llm_config(const std::string& name, const NetworkOptions& o) {
  LlmConfig c;
  const bool family = name == "gpt" || name == "llama";
  if (family) {
    c.name = name;
    c.family = name == "gpt" ? LlmFamily::Gpt : LlmFamily::Llama;
    c.dropout = name == "gpt" ? 0.1 : 0.0;  // Megatron GPT's defaults; Llama trains without
    c.seq = 128;
  } else {
    const LlmConfig* found = nullptr;
    for (const auto& p : preset_table())
      if (p.name == name) found = &p;
    if (!found)
      throw InputError(
          fmt::format("NETWORK: expected one of {}, got '{}'", fmt::join(llm_names(), ", "), name));
    c = *found;
  }
  override_dim(c.layers, o.layers, "--layers");
  override_dim(c.hidden, o.hidden, "--hidden");
  override_dim(c.heads, o.heads, "--heads");
  override_dim(c.kv_heads, o.kv_heads, "--kv-heads");
  override_dim(c.ffn, o.ffn, "--ffn");
  override_dim(c.vocab, o.vocab, "--vocab");
  if (o.dtype) {
    if (!workload::is_floating(*o.dtype))
      throw InputError(fmt::format("--dtype: expected float16, bfloat16 or float32, got {}",
                                   workload::to_string(*o.dtype)));
    c.dtype = *o.dtype;
  }
  if (o.tied_embeddings) c.tied_embeddings = true;
  if (o.bidirectional && !c.bidirectional) {
    c.bidirectional = true;
    c.name += "-bidirectional";
  }
  if (family) {
    if (c.layers == 0 || c.hidden == 0 || c.heads == 0 || c.vocab == 0)
      throw InputError(fmt::format(
          "{}: expected --layers, --hidden, --heads and --vocab (or a preset: {})", name,
          fmt::join(std::vector<std::string>(llm_names().begin() + 2, llm_names().end()), ", ")));
    if (c.ffn == 0) {
      if (c.family == LlmFamily::Llama)
        throw InputError("llama: expected --ffn (the SwiGLU width; gpt defaults to 4 x --hidden)");
      c.ffn = 4 * c.hidden;
    }
  }
  if (c.kv_heads == 0) c.kv_heads = c.heads;
  if (c.hidden % c.heads != 0)
    bad("--hidden", fmt::format("a multiple of --heads ({})", c.heads), c.hidden);
  if (c.heads % c.kv_heads != 0)
    bad("--kv-heads", fmt::format("a divisor of --heads ({})", c.heads), c.kv_heads);
  if (c.family == LlmFamily::Llama && (c.hidden / c.heads) % 2 != 0)
    bad("--hidden", "a head size hidden/heads that is even (RoPE rotates pairs of dims)", c.hidden);
  return c;
}

}  // namespace fusim::networks
