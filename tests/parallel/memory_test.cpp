// The per-GPU memory model (stage_memory.h) against (1) the schedule's caching-allocator
// peak on one device, category by category; (2) Megatron-LM's recipe: 18 bytes per
// parameter, 6 + 12/d with the distributed optimizer; (3) Megatron-LM's theoretical memory
// formulas (megatron/training/theoretical_memory_usage.py, Korthikanti et al. 2022 Table 2)
// on the paper's Table 3 models; (4) what the orderings change; (5) the 80% rule and search.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "networks/networks.h"
#include "parallel/memory_search.h"
#include "parallel/stage_memory.h"
#include "schedule/schedule.h"

using namespace fusim;
using namespace fusim::parallel;
using schedule::Ordering;

namespace {
networks::NetworkOptions small(std::int64_t batch = 2) {
  networks::NetworkOptions o;
  o.batch = batch;
  o.seq = 64;
  o.layers = 2;
  o.hidden = 256;
  o.heads = 8;
  o.kv_heads = 2;
  o.ffn = 512;
  o.vocab = 1024;
  return o;
}

double rel(std::int64_t a, std::int64_t b) {
  return b == 0 ? (a == 0 ? 0.0 : 1.0) : std::abs(double(a - b)) / double(b);
}

// The single-device schedule's allocator peak, with the memory model's lifetimes.
void check_against_schedule(const workload::Trace& trace, MemoryQuery q) {
  schedule::ScheduleOptions o;
  o.ordering = q.ordering;
  o.optimizer = q.optimizer;
  o.impl = q.impl;
  o.memory.mixed_precision = q.mixed_precision;
  o.memory.optimizer_shards = q.plan.optimizer_shards();
  o.memory.attention = q.attention;
  o.memory.grad_buffer =
      q.grad_buffer.value_or(q.ordering == Ordering::Eager ? schedule::GradBuffer::Persistent
                                                           : schedule::GradBuffer::PerTensor);
  const schedule::MemoryPeak peak = schedule::build_schedule(trace, o).peak;
  const MemoryReport r = estimate_memory(trace, q);
  REQUIRE(r.stages.size() == 1);
  const StageMemory& m = r.stages[0];
  INFO("model total " << m.total << " allocator " << peak.total << " reserved " << peak.reserved
                      << " fragmentation " << m.fragmentation);
  CHECK(rel(m.weights, peak.weights) <= 0.02);
  CHECK(rel(m.grads, peak.grads) <= 0.02);
  CHECK(rel(m.optimizer_state, peak.optimizer_state) <= 0.02);
  CHECK(rel(m.activations, peak.activations + peak.inputs) <= 0.02);
  CHECK(rel(m.temporaries, peak.temporaries) <= 0.02);
  // The allocator's peak counts allocated bytes; the model's total adds the segment reserve.
  CHECK(m.fragmentation >= 0);
  CHECK(rel(m.total - m.fragmentation, peak.total) <= 0.02);
}

std::int64_t state_bytes(const StageMemory& m) {
  return m.weights + m.grads + m.optimizer_state;
}
}  // namespace

TEST_CASE("one device: the memory model equals the allocator's peak category by category") {
  const workload::Trace llama = networks::make_network("llama", small());
  MemoryQuery q;
  for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
    INFO(schedule::to_string(ordering));
    q.ordering = ordering;
    check_against_schedule(llama, q);  // mixed precision, fused Adam, flash attention
    MemoryQuery f = q;
    f.impl = schedule::OptimizerImpl::Foreach;  // Adam's foreach temporaries
    f.attention = schedule::AttentionMemory::Materialized;
    check_against_schedule(llama, f);
    MemoryQuery pure = q;
    pure.mixed_precision = false;
    pure.grad_buffer = schedule::GradBuffer::PerTensor;
    check_against_schedule(llama, pure);
  }
  // The distributed optimizer's shard (dp 4) and a GPT with tied embeddings and dropout.
  networks::NetworkOptions g = small();
  g.kv_heads = 0;
  g.ffn = 0;
  g.tied_embeddings = true;
  const workload::Trace gpt = networks::make_network("gpt", g);
  MemoryQuery d;
  d.plan.dp = 4;
  d.plan.global_batch = 8;  // one microbatch per replica per step
  d.plan.distributed_optimizer = true;
  check_against_schedule(gpt, d);
}

TEST_CASE("the fragmentation reserve: segments of the caching allocator, by hand") {
  const std::int64_t MiB = std::int64_t{1} << 20;
  // 11 MiB: its own segment rounded up to 12 MiB (the 1 MiB rest is too small to split
  // off); two 3 MiB share one 20 MiB segment; 512 KiB opens a 2 MiB small segment:
  // reserved 34 MiB for 17.5 MiB.
  CHECK(segment_overhead({11 * MiB, 3 * MiB, 3 * MiB, MiB / 2}) == 33 * MiB / 2);
  CHECK(segment_overhead({20 * MiB}) == 0);
  CHECK(segment_overhead({}) == 0);
}

TEST_CASE("Megatron's recipe: 18 bytes per parameter, 6 + 12/d with the distributed optimizer") {
  networks::NetworkOptions o;
  o.batch = 1;
  o.seq = 16;
  const workload::Trace t = networks::make_network("llama-3.1-8b", o);
  const double params = double(t.param_count());
  MemoryQuery q;
  const auto one = estimate_memory(t, q).stages[0];
  CHECK(std::abs(double(state_bytes(one)) / params - 18.0) < 1e-4);
  CHECK(std::abs(double(one.optimizer_state) / params - 12.0) < 1e-4);  // master + 2 moments
  q.plan.dp = 8;
  q.plan.global_batch = 8;
  q.plan.distributed_optimizer = true;
  CHECK(std::abs(double(state_bytes(estimate_memory(t, q).stages[0])) / params - 7.5) < 1e-4);
  // float32 training (Megatron's table): 16 bytes, 8 + 8/d distributed.
  o.dtype = workload::DType::Float32;
  const workload::Trace f32 = networks::make_network("llama-3.1-8b", o);
  CHECK(std::abs(double(state_bytes(estimate_memory(f32, q).stages[0])) / params - 9.0) < 1e-4);
  q.plan = ParallelPlan{};
  CHECK(std::abs(double(state_bytes(estimate_memory(f32, q).stages[0])) / params - 16.0) < 1e-4);
}

namespace {
struct Table3 {
  const char* model;
  int layers, hidden, tp, pp;
  std::int64_t microbatch, global_batch;
};

// Megatron-LM's theoretical memory (theoretical_memory_usage.py, sequence parallelism and
// selective recompute), first pipeline stage: weights and optimizer on the most loaded shard
// (1/pp of the transformer layers and the word embedding, / tp, x 18 bytes; the formula
// leaves out the learned position embedding, which Megatron's LanguageModelEmbedding keeps
// whole on every tensor-parallel rank: + 2048 h x 18 bytes here); activations
// sbh (18 + 4 ffn/h) per layer for all L layers, + 8sbp (input ids) + sbhp (embedding
// dropout) with pp microbatches in flight, + the output layer 4sbh(1 + V/h) when pp = 1, / tp.
void megatron(const Table3& c, double& weights_and_optimizer, double& activations) {
  const double L = c.layers, h = c.hidden, V = 51200, s = 2048, b = double(c.microbatch);
  const double block = L * (12 * h * h + 13 * h) + 2 * h;
  weights_and_optimizer = ((block / c.pp + V * h) / c.tp + s * h) * 18;
  activations = s * b * h * (18 + 4 * 4) * L + 8 * s * b * c.pp + s * b * h * c.pp;
  if (c.pp == 1) activations += s * b * h * 4 * (1 + V / h);
  activations /= c.tp;
}
}  // namespace

TEST_CASE("Korthikanti et al. 2022 Table 3 models match Megatron-LM's theoretical memory") {
  // 22B, 175B (GPT-3), 530B (MT-NLG), 1T: tensor parallel 8, pipeline 1/8/35/64, microbatch
  // 4/1/1/1, global batch 4/64/280/512, sequence length 2048, sequence parallelism with
  // selective recompute, fp16 with 18 bytes per parameter.
  const Table3 configs[] = {{"gpt-22b", 48, 6144, 8, 1, 4, 4},
                            {"gpt3-175b", 96, 12288, 8, 8, 1, 64},
                            {"gpt-530b", 105, 20480, 8, 35, 1, 280},
                            {"gpt-1t", 128, 25600, 8, 64, 1, 512}};
  for (const auto& c : configs) {
    INFO(c.model);
    networks::NetworkOptions o;
    o.batch = c.microbatch;
    const workload::Trace t = networks::make_network(c.model, o);
    MemoryQuery q;
    q.plan.tp = c.tp;
    q.plan.pp = c.pp;
    q.plan.microbatch = c.microbatch;
    q.plan.global_batch = c.global_batch;
    q.plan.sequence_parallel = true;
    q.plan.recompute = Recompute::Selective;
    const StageMemory first = estimate_memory(t, q).stages.at(0);
    double weights = 0, activations = 0;
    megatron(c, weights, activations);
    // What remains apart: the allocator's 512 B rounding, LayerNorm statistics (16sb/t per
    // layer, which the paper leaves out) and at the peak the part of the first backward's
    // inputs already freed.
    CHECK(rel(state_bytes(first), std::int64_t(weights)) < 0.001);
    CHECK(rel(first.activations, std::int64_t(activations)) < 0.005);
  }
}

TEST_CASE("orderings: backward-fused frees the grads only without gradient accumulation") {
  networks::NetworkOptions o = small(2);
  o.seq = 256;  // activations (~19 MB) well above one layer's grads (<= 1 MB)
  const workload::Trace t = networks::make_network("llama", o);
  MemoryQuery q;
  q.plan.dp = 8;
  q.plan.global_batch = 8;  // m = 1
  const StageMemory eager = estimate_memory(t, q).stages[0];
  q.ordering = Ordering::BackwardFused;
  const StageMemory bwd = estimate_memory(t, q).stages[0];
  // The peak is at the loss (logits, log-probabilities and their gradient): no Bw has run,
  // so backward-fused holds no grads there; eager holds its whole persistent buffer.
  CHECK(bwd.grads == 0);
  CHECK(eager.total - bwd.total == eager.grads);
  // With pipelining and m > p microbatches every grad is live in the steady state of 1F1B:
  // the three orderings peak alike.
  networks::NetworkOptions four = small(1);
  four.layers = 4;
  const workload::Trace deep = networks::make_network("llama", four);
  MemoryQuery p;
  p.plan.pp = 2;
  p.plan.global_batch = 8;
  std::int64_t totals[3];
  int k = 0;
  for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
    p.ordering = ordering;
    totals[k++] = estimate_memory(deep, p).max_total;
  }
  CHECK(totals[0] == totals[1]);
  CHECK(totals[0] == totals[2]);
}

TEST_CASE("the 80% rule and the search ranked by headroom") {
  const workload::Trace t = networks::make_network("llama", small(1));
  MemoryQuery q;
  const std::int64_t need = estimate_memory(t, q).max_total;
  q.gpu_memory = std::int64_t(std::ceil(double(need) / kUsableFraction));
  CHECK(estimate_memory(t, q).fits);
  q.gpu_memory -= 8;
  CHECK_FALSE(estimate_memory(t, q).fits);
  CHECK(gpu_memory_bytes("h100-sxm5") == std::int64_t{80} << 30);
  CHECK(gpu_memory_bytes("2GiB") == std::int64_t{2} << 30);

  MemoryQuery base;
  base.gpu_memory = std::int64_t{64} << 20;
  SearchSpace space;
  space.gpus = 4;
  space.global_batch = 8;
  auto make = [](std::int64_t b) { return networks::make_network("llama", small(b)); };
  const auto found = search_plans(make, base, space);
  REQUIRE_FALSE(found.empty());
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& r = found[i];
    CHECK(r.query.plan.gpus() == 4);
    CHECK(double(r.max_total) <= kUsableFraction * double(base.gpu_memory));
    if (i > 0) CHECK(found[i - 1].headroom >= r.headroom);
  }
  // Every plan, estimated again on its own, gives the same peak: the search shares one
  // schedule per (microbatch, optimizer shards) and one chunk profile per plan across its
  // orderings. With the distributed optimizer the shards follow dp, so a schedule shared
  // across different dp would give other optimizer-state bytes.
  for (bool distributed : {false, true}) {
    MemoryQuery b = base;
    b.plan.distributed_optimizer = distributed;
    const auto all = search_plans(make, b, space);
    REQUIRE_FALSE(all.empty());
    std::set<int> dps;
    for (const auto& r : all) {
      dps.insert(r.query.plan.dp);
      CHECK(estimate_memory(make(r.query.plan.microbatch), r.query).max_total == r.max_total);
    }
    CHECK(dps.size() >= 2);
  }
}

namespace {
struct LlamaPlan {
  const char* model;
  int tp, pp, dp;
  std::int64_t global_batch;
  bool distributed;
};
struct LlamaDims {
  double layers, hidden, heads, groups, ffn, vocab;
};
}  // namespace

TEST_CASE("Llama-3.1 matches Fujii et al. 2024's estimator (Megatron-core's fused SwiGLU)") {
  // Fujii, Watanabe & Yokota 2024's memory estimator for the Llama architecture (their
  // Megatron-LM fork, megatron/training/theoretical_memory_usage.py): the most loaded shard
  // holds ((transformer params - h) / pp + V h) / tp parameters (+ V h / tp + h for the
  // untied head and final norm when pp = 1), 18 bytes each, 6 + 12 / (dp cp) with the
  // distributed optimizer; per layer and microbatch, with flash attention and no dropout:
  // 2sbh for each of the norm input, the q/k/v input, q, the projection's input, the second
  // norm's input and fc1's input, 2sbh k/a for k and for v, plus the MLP. The estimator
  // counts the MLP unfused (gate, up, silu(gate) and the product: 8sbf); Megatron-core fuses
  // it (bias_swiglu: fc1's 2f output saved, fc2 keeping its f input): 6sbf, as this model.
  // The first stage holds L layer-microbatches (pp in flight x L / pp), all / tp with
  // sequence parallelism; + 8sb pp input ids; + 4sbh (1 + V/h) / tp for pp = 1's output.
  const std::map<std::string, LlamaDims> dims{{"llama-3.1-8b", {32, 4096, 32, 8, 14336, 128256}},
                                              {"llama-3.1-70b", {80, 8192, 64, 8, 28672, 128256}}};
  const LlamaPlan plans[] = {{"llama-3.1-8b", 2, 2, 1, 8, false},
                             {"llama-3.1-8b", 1, 1, 8, 8, true},
                             {"llama-3.1-8b", 2, 1, 1, 4, false},
                             {"llama-3.1-70b", 8, 4, 1, 32, false},
                             {"llama-3.1-70b", 4, 8, 2, 64, true}};
  const double s = 8192, b = 1;
  for (const auto& c : plans) {
    INFO(c.model << " tp " << c.tp << " pp " << c.pp << " dp " << c.dp);
    const LlamaDims& d = dims.at(c.model);
    networks::NetworkOptions o;
    o.batch = 1;
    o.seq = std::int64_t(s);
    const workload::Trace t = networks::make_network(c.model, o);
    MemoryQuery q;
    q.plan.tp = c.tp;
    q.plan.pp = c.pp;
    q.plan.dp = c.dp;
    q.plan.global_batch = c.global_batch;
    q.plan.distributed_optimizer = c.distributed;
    q.plan.sequence_parallel = c.tp > 1;
    q.plan.recompute = Recompute::Selective;
    const StageMemory first = estimate_memory(t, q).stages.at(0);

    const double h = d.hidden, ratio = d.groups / d.heads;
    const double transformer = 2 * d.layers * h * h * ((1 + ratio) + d.ffn / h * 1.5 + 1 / h) + h;
    double shard = ((transformer - h) / c.pp + d.vocab * h) / c.tp;
    if (c.pp == 1) shard += d.vocab * h / c.tp + h;
    const double bytes_per_param = c.distributed ? 6 + 12.0 / c.dp : 18;
    CHECK(rel(state_bytes(first), std::int64_t(shard * bytes_per_param)) < 0.001);

    const double layer = 2 * s * b * h * (6 + 2 * ratio) + 6 * s * b * d.ffn;
    double activations = layer * d.layers / c.tp + 8 * s * b * c.pp / c.tp;
    if (c.pp == 1) activations += 4 * s * b * h * (1 + d.vocab / h) / c.tp;
    // Apart: RMSNorm's float32 statistics and flash attention's log-sum-exp (4sb each, 4sba),
    // which the estimator leaves out, and the part of the first backward's inputs freed at
    // the peak.
    CHECK(rel(first.activations, std::int64_t(activations)) < 0.01);
  }
}
