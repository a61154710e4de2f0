// BERT- and GPT-2-style transformers exactly as scripts/fusim_models.py builds them (the
// captured traces/bert-base.json and traces/gpt2-small.json come from there).
// Presets from the published configurations: BERT-base (Devlin et al. 2019): vocab 30522,
// 512 positions, hidden 768, 12 layers, 12 heads, exact GELU, post-LN, LN eps 1e-12;
// GPT-2 small/medium (Radford et al. 2019): vocab 50257, 1024 positions, hidden 768/1024,
// 12/24 layers, 12/16 heads, tanh GELU, pre-LN with a final LN, LN eps 1e-5. FFN width 4x,
// dropout 0.1 everywhere. No weight tying (trace version 1), so the LM head has its own weight.
#include <fmt/format.h>

#include "core/error.h"
#include "networks/network_builder.h"
#include "networks/networks.h"

namespace fusim::networks {

using workload::DType;

TransformerConfig transformer_preset(const std::string& name) {
  if (name == "bert-base") return {name, 30522, 512, 768, 12, 12, false, false, "none", 0.1, 1e-12};
  if (name == "gpt2-small") return {name, 50257, 1024, 768, 12, 12, true, true, "tanh", 0.1, 1e-5};
  if (name == "gpt2-medium")
    return {name, 50257, 1024, 1024, 24, 16, true, true, "tanh", 0.1, 1e-5};
  throw InputError(fmt::format(
      "NETWORK: expected a transformer preset (bert-base, gpt2-small, gpt2-medium), got '{}'",
      name));
}

namespace {

InputRef self_attention(NetworkBuilder& b, const TransformerConfig& c, const std::string& p,
                        InputRef x) {
  InputRef q = b.linear(p + "q", x, c.hidden);
  InputRef k = b.linear(p + "k", x, c.hidden);
  InputRef v = b.linear(p + "v", x, c.hidden);
  InputRef a = b.attention(p + "sdpa", q, k, v, c.heads, c.causal, c.dropout);
  return b.dropout(p + "drop", b.linear(p + "proj", a, c.hidden), c.dropout);
}

InputRef feed_forward(NetworkBuilder& b, const TransformerConfig& c, const std::string& p,
                      InputRef x) {
  x = b.gelu(p + "act", b.linear(p + "fc1", x, 4 * c.hidden), c.gelu_approximate);
  return b.dropout(p + "drop", b.linear(p + "fc2", x, c.hidden), c.dropout);
}

}  // namespace

workload::Trace make_transformer(const TransformerConfig& preset, const NetworkOptions& o) {
  TransformerConfig c = preset;
  if (o.layers > 0) c.layers = o.layers;
  if (o.hidden > 0) c.hidden = o.hidden;
  if (o.heads > 0) c.heads = o.heads;
  if (c.hidden % c.heads != 0)
    throw InputError(
        fmt::format("--hidden: expected a multiple of --heads ({}), got {}", c.heads, c.hidden));
  if (o.seq > c.positions)
    throw InputError(
        fmt::format("--seq: expected at most {} ({} has {} position embeddings), "
                    "got {}",
                    c.positions, c.name, c.positions, o.seq));

  NetworkBuilder b(c.name, o.batch, o.source, "--seq");
  InputRef ids = b.input("input", {o.batch, o.seq}, DType::Int64);
  InputRef positions = b.input("position_ids", {o.batch, o.seq}, DType::Int64);
  // Separate statements: the layer order must not depend on argument evaluation order.
  InputRef tokens = b.embedding("tok", ids, c.vocab, c.hidden);
  InputRef x = b.add(tokens, b.embedding("pos", positions, c.positions, c.hidden));
  if (!c.pre_ln) x = b.layer_norm("emb_ln", x, c.eps);
  x = b.dropout("emb_drop", x, c.dropout);
  for (std::int64_t i = 0; i < c.layers; ++i) {
    std::string p = fmt::format("blocks.{}.", i);
    if (c.pre_ln) {
      x = b.add(x, self_attention(b, c, p + "attn.", b.layer_norm(p + "ln1", x, c.eps)));
      x = b.add(x, feed_forward(b, c, p + "mlp.", b.layer_norm(p + "ln2", x, c.eps)));
    } else {
      x = b.layer_norm(p + "ln1", b.add(x, self_attention(b, c, p + "attn.", x)), c.eps);
      x = b.layer_norm(p + "ln2", b.add(x, feed_forward(b, c, p + "mlp.", x)), c.eps);
    }
  }
  InputRef logits;
  if (c.pre_ln) {
    logits = b.linear("lm_head", b.layer_norm("ln_f", x, c.eps), c.vocab, false);
  } else {  // BERT's MLM head: dense + GELU + LN, then the decoder with a bias
    x = b.gelu("head.act", b.linear("head.dense", x, c.hidden), c.gelu_approximate);
    logits = b.linear("head.decoder", b.layer_norm("head.ln", x, c.eps), c.vocab);
  }
  return b.finish(b.reshape("reshape", logits, {o.batch * o.seq, c.vocab}));
}

}  // namespace fusim::networks
