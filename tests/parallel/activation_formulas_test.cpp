// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
// Sec. 4 and Table 2), term by term: what one GPT transformer layer keeps for backward per
// microbatch, in bytes, 16-bit activations, s sequence, b microbatch, h hidden, a heads, t
// tensor-parallel ranks:
//   attention: QKV input 2sbh, Q and K 4sbh, softmax 2as^2b, its dropout mask as^2b, the
//              dropout output 2as^2b, V 2sbh, projection input 2sbh, dropout mask sbh;
//   MLP:       fc1 input 2sbh, GeLU input 8sbh, fc2 input 8sbh, dropout mask sbh;
//   LayerNorm: each input 2sbh;
// in all sbh(34 + 5as/h); tensor parallel sbh(10 + 24/t + 5as/(ht)); with sequence
// parallelism sbh(34/t + 5as/(ht)); selective recompute drops 5as^2b; full recompute keeps
// the layer's input, 2sbh (/t with sequence parallelism). The paper leaves out LayerNorm's
// float32 mean and rstd (8 bytes per row, 16sb per layer): counted here as their own term.
#include <catch2/catch.hpp>
#include <map>

#include "networks/networks.h"
#include "parallel/chunk_profile.h"
#include "parallel/tp_partition.h"
#include "schedule/schedule.h"

using namespace fusim;
using namespace fusim::parallel;

namespace {
constexpr std::int64_t s = 64, b = 2, h = 64, a = 4;
constexpr std::int64_t sbh = s * b * h, as2b = a * s * s * b, sb = s * b;

workload::Trace gpt() {
  networks::NetworkOptions o;
  o.batch = b;
  o.seq = s;
  o.layers = 3;
  o.hidden = h;
  o.heads = a;
  o.vocab = 128;
  o.dtype = workload::DType::Float16;
  return networks::make_network("gpt", o);  // Megatron's GPT: dropout 0.1, 4h MLP, biases
}

// Saved tensors of the middle transformer layer (layers.1), by the schedule's tensor names.
std::map<std::string, std::int64_t> saved(int t, bool sp, Recompute rc,
                                          schedule::AttentionMemory attention) {
  const workload::Trace trace = gpt();
  schedule::ScheduleOptions options;
  options.steps = 1;
  options.memory.attention = attention;
  const schedule::Schedule sch = schedule::build_schedule(trace, options);
  ParallelPlan plan;
  plan.tp = t;
  plan.sequence_parallel = sp;
  plan.recompute = rc;
  const auto blocks = transformer_blocks(trace);
  REQUIRE(blocks.size() == 3);
  ChunkProfiler profiler(trace, sch, plan, {0, blocks[1].first, blocks[2].first});
  std::map<std::string, std::int64_t> out;
  for (auto [tensor, bytes] : profiler.saved_tensors(1))
    out[sch.tensors[std::size_t(tensor)].name] = bytes;
  return out;
}

std::int64_t total(const std::map<std::string, std::int64_t>& m) {
  std::int64_t sum = 0;
  for (auto& [name, bytes] : m) sum += bytes;
  return sum;
}

// The terms, named by the tensor that holds each, for t ranks: `split` terms divide by t;
// the others by t only with sequence parallelism.
std::map<std::string, std::int64_t> korthikanti(int t, bool sp, bool scores) {
  const std::int64_t r = sp ? t : 1;  // the replicated regions' split
  std::map<std::string, std::int64_t> m{
      {"layers.0.mlp.residual.out", 2 * sbh / r},   // LayerNorm 1 input
      {"layers.1.ln1.out", 2 * sbh / r},            // QKV input
      {"layers.1.attn.q.out", 2 * sbh / t},         // Q (of "Q and K 4sbh")
      {"layers.1.attn.k.out", 2 * sbh / t},         // K
      {"layers.1.attn.v.out", 2 * sbh / t},         // V
      {"layers.1.attn.core.out", 2 * sbh / t},      // projection input
      {"layers.1.attn.drop.mask", sbh / r},         // attention dropout mask
      {"layers.1.attn.residual.out", 2 * sbh / r},  // LayerNorm 2 input
      {"layers.1.ln2.out", 2 * sbh / r},            // fc1 input
      {"layers.1.mlp.fc1.out", 8 * sbh / t},        // GeLU input
      {"layers.1.mlp.act.out", 8 * sbh / t},        // fc2 input
      {"layers.1.mlp.drop.mask", sbh / r},          // MLP dropout mask
      // Not in the paper: LayerNorm's float32 mean and rstd, 2 x 4 bytes per row.
      {"layers.1.ln1.stats", 8 * sb / r},
      {"layers.1.ln2.stats", 8 * sb / r},
  };
  if (scores) {
    m["layers.1.attn.core.probs"] = 2 * as2b / t;          // softmax output
    m["layers.1.attn.core.dropout_mask"] = as2b / t;       // its dropout mask
    m["layers.1.attn.core.dropped_probs"] = 2 * as2b / t;  // the dropout output
  }
  return m;
}
}  // namespace

TEST_CASE("Korthikanti: no parallelism, sbh(34 + 5as/h), term by term") {
  auto got = saved(1, false, Recompute::None, schedule::AttentionMemory::Materialized);
  CHECK(got == korthikanti(1, false, true));
  CHECK(total(got) == sbh * 34 + 5 * as2b + 16 * sb);
}

TEST_CASE("Korthikanti: tensor parallel, sbh(10 + 24/t + 5as/(ht))") {
  auto got = saved(2, false, Recompute::None, schedule::AttentionMemory::Materialized);
  CHECK(got == korthikanti(2, false, true));
  CHECK(total(got) == 10 * sbh + 24 * sbh / 2 + 5 * as2b / 2 + 16 * sb);
}

TEST_CASE("Korthikanti: tensor + sequence parallel, sbh(34/t + 5as/(ht))") {
  auto got = saved(2, true, Recompute::None, schedule::AttentionMemory::Materialized);
  CHECK(got == korthikanti(2, true, true));
  CHECK(total(got) == 34 * sbh / 2 + 5 * as2b / 2 + 16 * sb / 2);
}

TEST_CASE("Korthikanti: selective recompute drops the attention core, sbh(10 + 24/t), sbh 34/t") {
  auto tp = saved(2, false, Recompute::Selective, schedule::AttentionMemory::Materialized);
  CHECK(tp == korthikanti(2, false, false));
  CHECK(total(tp) == 10 * sbh + 24 * sbh / 2 + 16 * sb);
  auto sp = saved(2, true, Recompute::Selective, schedule::AttentionMemory::Materialized);
  CHECK(sp == korthikanti(2, true, false));
  CHECK(total(sp) == 34 * sbh / 2 + 16 * sb / 2);
}

TEST_CASE("Korthikanti: full recompute keeps the layer input, 2sbh (2sbh/t with SP)") {
  using Map = std::map<std::string, std::int64_t>;
  CHECK(saved(1, false, Recompute::Full, schedule::AttentionMemory::Materialized) ==
        Map{{"layers.0.mlp.residual.out", 2 * sbh}});
  CHECK(saved(2, true, Recompute::Full, schedule::AttentionMemory::Materialized) ==
        Map{{"layers.0.mlp.residual.out", 2 * sbh / 2}});
}

TEST_CASE("flash attention keeps no scores: 34sbh + a float32 logsumexp per query row") {
  auto got = saved(1, false, Recompute::None, schedule::AttentionMemory::Flash);
  auto expected = korthikanti(1, false, false);
  expected["layers.1.attn.core.logsumexp"] = 4 * a * s * b;
  CHECK(got == expected);
}
