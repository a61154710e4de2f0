// What one GPU of a plan computes and communicates per microbatch (sim/parallel/
// stage_work.h), from per-layer times of one whole GPU: the splits of sequence and context
// parallelism, recomputation, Megatron's two all-reduces per block in forward and two in
// backward (Shoeybi et al. 2019, Sec. 3), and the data-parallel buckets.
#include <catch2/catch.hpp>

#include "networks/networks.h"
#include "parallel/stage_work.h"
#include "parallel/tp_partition.h"

using namespace fusim;
using namespace fusim::parallel;

namespace {
constexpr int kBlocks = 4;

workload::Trace small_llama() {
  networks::NetworkOptions o;
  o.batch = 1;
  o.seq = 64;
  o.layers = kBlocks;
  o.hidden = 256;
  o.heads = 8;
  o.kv_heads = 2;
  o.ffn = 512;
  o.vocab = 1024;
  return networks::make_network("llama", o);  // bfloat16
}

ParallelPlan plan(int tp, int pp = 1, bool sp = false, int cp = 1,
                  const std::string& recompute = "none") {
  PlanArgs a;
  a.tp = tp;
  a.pp = pp;
  a.cp = cp;
  a.sequence_parallel = sp;
  a.recompute = recompute;
  return parse_plan(a);
}

// Every layer 1 us forward, 2 us Bx, 1 us Bw, 1 us U.
std::vector<LayerTimes> unit_times(const workload::Trace& t) {
  return std::vector<LayerTimes>(t.layers.size(), LayerTimes{us(1), us(2), us(1), us(1)});
}

schedule::MemoryOptions mixed() {
  schedule::MemoryOptions m;
  m.mixed_precision = true;
  return m;
}

ChunkWork only(const workload::Trace& t, const ParallelPlan& p, std::int64_t bucket = 1 << 30) {
  return stage_work(t, p, unit_times(t), bucket, mixed()).at(0).at(0);
}
}  // namespace

TEST_CASE("one GPU's share: sequence and context parallelism split every layer") {
  const auto t = small_llama();
  const Tick n = Tick(t.layers.size());
  const ChunkWork whole = only(t, plan(1));
  CHECK(whole.forward == n * us(1));
  CHECK(whole.backward == n * us(3));  // Bx + Bw: 1F1B does not split W off
  CHECK(whole.weight == 0);
  // tp 2 with sequence parallelism: every layer is split (the partitioned ones by heads and
  // columns, the rest along the sequence); cp 2 splits the sequence of all.
  CHECK(only(t, plan(2, 1, true)).forward == n * us(1) / 2);
  CHECK(only(t, plan(1, 1, false, 2)).forward == n * us(1) / 2);
  // Full recompute reruns the forward of every layer of the blocks before its backward.
  int in_blocks = 0;
  for (const auto& b : transformer_blocks(t)) in_blocks += b.last - b.first + 1;
  CHECK(only(t, plan(1, 1, false, 1, "full")).backward == whole.backward + in_blocks * us(1));
}

TEST_CASE("Megatron's partition: two all-reduces per block in forward, two in backward") {
  const auto t = small_llama();
  const ChunkWork w = only(t, plan(2));
  // Per block: after the attention's output projection and the MLP's down projection (the
  // row-parallel linears) in forward; at the normed inputs of the column-parallel q/k/v and
  // gate/up projections in backward. Plus the vocabulary-parallel embedding's output in
  // forward and the LM head's input gradient in backward.
  CHECK(w.forward_tp.size() == std::size_t(2 * kBlocks + 1));
  CHECK(w.backward_tp.size() == std::size_t(2 * kBlocks + 1));
  // Each moves one [b, s, h] bfloat16 activation: 1 x 64 x 256 x 2 bytes.
  for (const auto& c : w.forward_tp) CHECK(c.bytes == 64 * 256 * 2);
  for (const auto& c : w.backward_tp) CHECK(c.bytes == 64 * 256 * 2);
  // In pass order, within the pass.
  for (std::size_t i = 1; i < w.forward_tp.size(); ++i)
    CHECK(w.forward_tp[i - 1].offset <= w.forward_tp[i].offset);
  CHECK(w.forward_tp.back().offset <= w.forward);
  CHECK(w.backward_tp.back().offset <= w.backward);
  CHECK(only(t, plan(1)).forward_tp.empty());
}

TEST_CASE("data-parallel buckets hold the chunk's float32 gradients in backward order") {
  const auto t = small_llama();
  std::int64_t elements = 0, layers_with_params = 0;
  for (const auto& l : t.layers) {
    bool any = false;
    for (const auto& p : l.params)
      if (p.requires_grad) {
        elements += workload::numel(p.shape);
        any = true;
      }
    layers_with_params += any ? 1 : 0;
  }
  // One bucket for all: 4 bytes per element (Megatron's float32 main grads), ready at the
  // end of the backward, with every layer's update (1 us each).
  const ChunkWork one = only(t, plan(1));
  REQUIRE(one.buckets.size() == 1);
  CHECK(one.buckets[0].bytes == 4 * elements);
  CHECK(one.buckets[0].update == Tick(t.layers.size()) * us(1));
  // Buckets of 1 byte close at every layer with params: one each, in backward order.
  const ChunkWork each = only(t, plan(1), 1);
  CHECK(std::int64_t(each.buckets.size()) == layers_with_params);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < each.buckets.size(); ++i) {
    sum += each.buckets[i].bytes;
    if (i > 0) CHECK(each.buckets[i - 1].ready_offset < each.buckets[i].ready_offset);
  }
  CHECK(sum == 4 * elements);
  // Two stages: the chunks' buckets together hold every gradient once.
  const auto two = stage_work(t, plan(1, 2), unit_times(t), 1 << 30, mixed());
  CHECK(two.at(0).at(0).buckets.at(0).bytes + two.at(1).at(0).buckets.at(0).bytes == 4 * elements);
  // Stage 0 sends its last layer's output, a [1, 64, 256] bfloat16 activation, to stage 1.
  CHECK(two.at(0).at(0).output_bytes == 64 * 256 * 2);
  CHECK(two.at(1).at(0).output_bytes == 0);
}

TEST_CASE("context parallelism: one K/V ring per attention layer, forward and backward") {
  const auto t = small_llama();
  // Per ring step a GPU passes its K and V chunk: 64 tokens x 2 kv heads x 32 dims x 2 B
  // each, split over cp 2 and, by heads, over tp 2: 2 x 64 x 2 x 32 x 2 / (2 x 2) = 4096 B.
  const ChunkWork w = only(t, plan(2, 1, false, 2));
  REQUIRE(w.forward_cp.size() == std::size_t(kBlocks));
  REQUIRE(w.backward_cp.size() == std::size_t(kBlocks));
  for (const auto& r : w.forward_cp) {
    CHECK(r.bytes == 4096);
    CHECK(r.compute == us(1) / 4);  // the attention layer's 1 us forward, 1/(tp cp)
    CHECK(r.offset + r.compute <= w.forward);
  }
  for (const auto& r : w.backward_cp) {
    CHECK(r.bytes == 2 * 4096);     // K/V and dK/dV
    CHECK(r.compute == us(2) / 4);  // its Bx
  }
  // Selective recompute reruns the attention core's forward before its backward: a second
  // ring in backward, of K/V only.
  const ChunkWork sel = only(t, plan(2, 1, false, 2, "selective"));
  CHECK(sel.backward_cp.size() == std::size_t(2 * kBlocks));
  CHECK(only(t, plan(2)).forward_cp.empty());  // cp 1: no ring
}
