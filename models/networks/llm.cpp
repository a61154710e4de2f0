// The LLM zoo's generator (issue 20): a decoder-only transformer as Megatron-LM builds it,
// layer for layer, with the names <module>.<i>.<part> that sim/parallel recognises as
// transformer blocks.
//  gpt (Megatron's GPTModel, Korthikanti et al. 2022 Fig. 2): token + learned position
//    embeddings, dropout; per block: LN, q/k/v, attention (dropout on the probabilities),
//    projection, dropout, residual add, LN, fc1 (4h), GELU (tanh form: Megatron's bias_gelu
//    fusion), fc2, dropout, residual add; final LN, LM head, cross-entropy. Linears have biases.
//  llama (Megatron-core's Llama layer spec): token embedding; per block: RMSNorm, q/k/v
//    (grouped-query: k and v have kv_heads heads), RoPE on q and k, attention, projection,
//    residual add, RMSNorm, fc1 = the fused gate+up projection (h -> 2 ffn, Megatron-core
//    linear_fc1 with gated_linear_unit), SwiGLU, fc2, residual add; final RMSNorm, LM head.
//  bidirectional: the same without the causal mask: the denoising step of a masked-diffusion
//    LM (LLaDA, Nie et al. 2025: logits of every position, the loss on the masked ones; the
//    trace's cross-entropy covers all positions, an upper bound on the masked subset).
#include <fmt/format.h>

#include "core/error.h"
#include "networks/network_builder.h"
#include "networks/networks.h"

namespace fusim::networks {
namespace {
using workload::DType;

struct Block {
  NetworkBuilder& b;
  const LlmConfig& c;
  std::string p;  // "layers.<i>."
  bool causal;

  InputRef gpt(InputRef x) const {
    InputRef h = b.layer_norm(p + "ln1", x, c.norm_eps);
    InputRef q = b.linear(p + "attn.q", h, c.hidden);
    InputRef k = b.linear(p + "attn.k", h, c.hidden);
    InputRef v = b.linear(p + "attn.v", h, c.hidden);
    InputRef a = b.gqa_attention(p + "attn.core", q, k, v, c.heads, c.heads, causal, c.dropout);
    x = b.add(x, b.dropout(p + "attn.drop", b.linear(p + "attn.proj", a, c.hidden), c.dropout),
              p + "attn.residual");
    h = b.layer_norm(p + "ln2", x, c.norm_eps);
    h = b.gelu(p + "mlp.act", b.linear(p + "mlp.fc1", h, c.ffn), "tanh");
    return b.add(x, b.dropout(p + "mlp.drop", b.linear(p + "mlp.fc2", h, c.hidden), c.dropout),
                 p + "mlp.residual");
  }

  InputRef llama(InputRef x) const {
    const std::int64_t head = c.hidden / c.heads, kv_width = c.kv_heads * head;
    InputRef h = b.rms_norm(p + "norm1", x, c.norm_eps);
    InputRef q = b.linear(p + "attn.q", h, c.hidden, c.qkv_bias);
    InputRef k = b.linear(p + "attn.k", h, kv_width, c.qkv_bias);
    InputRef v = b.linear(p + "attn.v", h, kv_width, c.qkv_bias);
    q = b.rope(p + "attn.rope_q", q, c.heads, c.rope_theta);
    k = b.rope(p + "attn.rope_k", k, c.kv_heads, c.rope_theta);
    InputRef a = b.gqa_attention(p + "attn.core", q, k, v, c.heads, c.kv_heads, causal, 0.0);
    x = b.add(x, b.linear(p + "attn.proj", a, c.hidden, false), p + "attn.residual");
    h = b.rms_norm(p + "norm2", x, c.norm_eps);
    h = b.swiglu(p + "mlp.act", b.linear(p + "mlp.fc1", h, 2 * c.ffn, false));
    return b.add(x, b.linear(p + "mlp.fc2", h, c.hidden, false), p + "mlp.residual");
  }
};

}  // namespace

workload::Trace make_llm(const LlmConfig& c, std::int64_t batch, std::int64_t seq,
                         const std::string& source) {
  if (batch < 1)
    throw InputError(fmt::format("--batch: expected a positive integer, got {}", batch));
  if (seq < 1) throw InputError(fmt::format("--seq: expected a positive integer, got {}", seq));
  const bool gpt = c.family == LlmFamily::Gpt;
  const std::int64_t positions = c.positions > 0 ? c.positions : seq;
  if (gpt && seq > positions)
    throw InputError(
        fmt::format("--seq: expected at most {} ({} has {} position embeddings), got {}", positions,
                    c.name, positions, seq));
  NetworkBuilder b(c.name, batch, source, "--seq");
  b.set_dtype(c.dtype);
  InputRef ids = b.input("input", {batch, seq}, DType::Int64);
  InputRef x;
  if (gpt) {
    InputRef pos_ids = b.input("position_ids", {batch, seq}, DType::Int64);
    // Separate statements: the layer order must not depend on argument evaluation order.
    InputRef tokens = b.embedding("embedding.word", ids, c.vocab, c.hidden);
    x = b.add(tokens, b.embedding("embedding.position", pos_ids, positions, c.hidden));
    x = b.dropout("embedding.drop", x, c.dropout);
  } else {
    x = b.embedding("embedding.word", ids, c.vocab, c.hidden);
  }
  for (std::int64_t i = 0; i < c.layers; ++i) {
    Block block{b, c, fmt::format("layers.{}.", i), !c.bidirectional};
    x = gpt ? block.gpt(x) : block.llama(x);
  }
  x = gpt ? b.layer_norm("final_norm", x, c.norm_eps) : b.rms_norm("final_norm", x, c.norm_eps);
  InputRef logits = b.linear("output", x, c.vocab, false);
  if (c.tied_embeddings) b.tie_last_weight("output.weight", "embedding.word.weight");
  return b.finish(b.reshape("reshape", logits, {batch * seq, c.vocab}));
}

}  // namespace fusim::networks
