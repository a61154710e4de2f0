// The LLM zoo (issue 20): parameter counts equal the published ones, the layer structure of
// gpt, llama and the bidirectional (masked-diffusion) form, and bad options.
#include <catch2/catch.hpp>
#include <string>

#include "core/error.h"
#include "networks/networks.h"

using fusim::networks::make_network;
using fusim::networks::NetworkOptions;
using fusim::workload::OpKind;
using fusim::workload::Trace;

namespace {
Trace gen(const std::string& name, NetworkOptions o = {}) {
  if (o.batch == 32) o.batch = 1;
  if (o.seq == 0) o.seq = 16;  // counts do not depend on the sequence
  return make_network(name, o);
}

// Narayanan et al. 2021 (SC'21), Sec. 5.1: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) =
// 12 l h^2 + 13 l h + (V + s) h for a GPT with tied embeddings and learned positions; Megatron's
// GPT adds the final LayerNorm's 2h.
std::int64_t narayanan(std::int64_t l, std::int64_t h, std::int64_t V, std::int64_t s) {
  return 12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h;
}

int count(const Trace& t, OpKind op) {
  int n = 0;
  for (const auto& l : t.layers) n += l.op == op;
  return n;
}
}  // namespace

TEST_CASE("Llama presets have the published parameter counts exactly") {
  // Hugging Face model cards / safetensors totals of meta-llama/*, Dream-org (Qwen2.5-7B).
  CHECK(gen("llama-2-7b").param_count() == 6738415616);
  CHECK(gen("llama-2-13b").param_count() == 13015864320);
  CHECK(gen("llama-2-70b").param_count() == 68976648192);
  CHECK(gen("llama-3.1-8b").param_count() == 8030261248);
  CHECK(gen("llama-3.1-70b").param_count() == 70553706496);
  CHECK(gen("llama-3.1-405b").param_count() == 405853388800);
  CHECK(gen("dream-7b").param_count() == 7615616512);
  // LLaDA 8B: 2 x 126464 x 4096 + 32 x (4 x 4096^2 + 3 x 4096 x 12288 + 2 x 4096) + 4096, "8B".
  CHECK(gen("llada-8b").param_count() == 8015581184);
}

TEST_CASE("Megatron GPT presets have the published parameter counts") {
  // Narayanan et al. 2021, Table 1 (V = 51,200, s = 2048): 529.6B and 1008.0B.
  const auto p530 = gen("gpt-530b").param_count(), p1t = gen("gpt-1t").param_count();
  CHECK(p530 == narayanan(105, 20480, 51200, 2048));
  CHECK(p1t == narayanan(128, 25600, 51200, 2048));
  CHECK(std::llround(double(p530) / 1e8) == 5296);
  CHECK(std::llround(double(p1t) / 1e8) == 10080);
  // Korthikanti et al. 2022, Table 3: "22B" and "175B" (Brown et al. 2020: 175.0B; tied
  // embeddings count 174.6B: the paper's figure rounds the untied count).
  const auto p22 = gen("gpt-22b").param_count(), p175 = gen("gpt3-175b").param_count();
  CHECK(p22 == narayanan(48, 6144, 51200, 2048));
  CHECK(p175 == narayanan(96, 12288, 51200, 2048));
  CHECK(std::llround(double(p22) / 1e9) == 22);
  CHECK(std::llround(double(p175) / 1e9) == 175);
}

TEST_CASE("llama blocks: RMSNorm, GQA with RoPE, a fused SwiGLU MLP; no biases, untied") {
  NetworkOptions o;
  o.layers = 3;
  o.hidden = 64;
  o.heads = 8;
  o.kv_heads = 2;
  o.ffn = 96;
  o.vocab = 100;
  Trace t = gen("llama", o);
  CHECK(count(t, OpKind::RmsNorm) == 2 * 3 + 1);
  CHECK(count(t, OpKind::Rope) == 2 * 3);
  CHECK(count(t, OpKind::Swiglu) == 3);
  // per block: 64*64 (q) + 2 * 64*16 (k, v of 2 heads of 8) + 64*64 (proj) + 64*192 (fc1)
  // + 96*64 (fc2) + 2*64 (norms) = 4096 + 2048 + 4096 + 12288 + 6144 + 128 = 28800; + the
  // embedding and the head 2 * 100*64, + the final norm 64.
  CHECK(t.param_count() == 3 * 28800 + 2 * 100 * 64 + 64);
  for (const auto& l : t.layers)
    if (l.op == OpKind::ScaledDotProductAttention) {
      CHECK(l.attrs.causal);
      CHECK(l.attrs.kv_heads == 2);
      CHECK(l.attrs.p == 0.0);
    }
  CHECK(t.dtype == fusim::workload::DType::BFloat16);
}

TEST_CASE("bidirectional: the masked-diffusion LM drops the causal mask, same parameters") {
  NetworkOptions o;
  o.layers = 2;
  o.hidden = 32;
  o.heads = 4;
  o.ffn = 64;
  o.vocab = 50;
  NetworkOptions b = o;
  b.bidirectional = true;
  Trace causal = gen("llama", o), diffusion = gen("llama", b);
  CHECK(diffusion.param_count() == causal.param_count());
  CHECK(diffusion.model == "llama-bidirectional");
  for (const auto& l : diffusion.layers)
    if (l.op == OpKind::ScaledDotProductAttention) CHECK_FALSE(l.attrs.causal);
  for (const auto& l : gen("llada-8b").layers)
    if (l.op == OpKind::ScaledDotProductAttention) CHECK_FALSE(l.attrs.causal);
}

TEST_CASE("gpt: tied embeddings share the token embedding's weight, counted once") {
  NetworkOptions o;
  o.layers = 2;
  o.hidden = 32;
  o.heads = 4;
  o.vocab = 50;
  Trace untied = gen("gpt", o);
  o.tied_embeddings = true;
  Trace tied = gen("gpt", o);
  CHECK(untied.param_count() - tied.param_count() == 50 * 32);
  const auto& head = tied.layers[tied.layers.size() - 3];  // output, reshape, loss
  REQUIRE(head.name == "output");
  CHECK(head.params.at(0).tied_to == "embedding.word.weight");
  CHECK(count(tied, OpKind::Dropout) == 1 + 2 * 2);  // embedding + 2 per block (p = 0.1)
}

TEST_CASE("LLM options: each bad value is one InputError naming the option") {
  auto error = [](const std::string& name, NetworkOptions o) {
    try {
      gen(name, o);
    } catch (const fusim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  NetworkOptions none;
  CHECK_THAT(error("gpt", none),
             Catch::Matchers::StartsWith("gpt: expected --layers, --hidden, --heads and --vocab"));
  NetworkOptions llama;
  llama.layers = 1;
  llama.hidden = 32;
  llama.heads = 4;
  llama.vocab = 10;
  CHECK_THAT(error("llama", llama), Catch::Matchers::StartsWith("llama: expected --ffn"));
  NetworkOptions kv;
  kv.kv_heads = 3;
  CHECK(error("llama-3.1-8b", kv) == "--kv-heads: expected a divisor of --heads (32), got 3");
  NetworkOptions seq;
  seq.seq = 4096;
  CHECK(error("gpt3-175b", seq) ==
        "--seq: expected at most 2048 (gpt3-175b has 2048 position embeddings), got 4096");
  NetworkOptions resnet;
  resnet.vocab = 10;
  CHECK_THAT(error("resnet18", resnet), Catch::Matchers::StartsWith("--kv-heads, --ffn, --vocab"));
}
