// The schedule's memory model (issue 20, schedule/memory_options.h): Megatron mixed
// precision, the distributed optimizer's shard, a persistent grad buffer, materialized vs
// flash attention, and weight tying, each against hand-computed bytes; every schedule still
// passes the dependency checker.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "mlp_fixture.h"
#include "networks/networks.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using namespace fusim::schedule;

namespace {
std::map<std::string, std::int64_t> bytes_by_name(const Schedule& s) {
  std::map<std::string, std::int64_t> m;
  for (const auto& t : s.tensors) m[t.name + "@" + std::to_string(t.step)] = t.bytes;
  return m;
}

workload::Trace bf16_mlp() {
  workload::Trace t = testing::mlp3();
  t.dtype = workload::DType::BFloat16;
  for (auto& l : t.layers) {
    l.output_dtype = workload::DType::BFloat16;
    for (auto& p : l.params) p.dtype = workload::DType::BFloat16;
  }
  return t;
}
}  // namespace

TEST_CASE("mixed precision: fp32 main grads, master weights and Adam state; a copy-back pass") {
  ScheduleOptions o;
  o.memory.mixed_precision = true;
  Schedule s = build_schedule(bf16_mlp(), o);
  CHECK(check_schedule(bf16_mlp(), s).empty());
  auto b = bytes_by_name(s);
  // fc1.weight: 64 x 64 elements: 2 bytes in bf16, 4 for its grad, master, exp_avg, exp_avg_sq.
  CHECK(b.at("fc1.weight@-1") == 64 * 64 * 2);
  CHECK(b.at("fc1.weight.grad@0") == 64 * 64 * 4);
  CHECK(b.at("fc1.weight.master@-1") == 64 * 64 * 4);
  CHECK(b.at("fc1.weight.exp_avg@-1") == 64 * 64 * 4);
  CHECK(b.at("fc1.weight.exp_avg_sq@-1") == 64 * 64 * 4);
  // The last passes of U fc1 (foreach): read the master, write the bf16 weight, per tensor.
  for (const auto& op : s.ops) {
    if (op.kind != OpKind::Update || s.ops[std::size_t(op.id)].layer != 0) continue;
    const auto& last = op.passes.back();
    REQUIRE(last.accesses.size() == 2);
    CHECK(s.tensors[std::size_t(last.accesses[0].tensor)].name == "fc1.bias.master");
    CHECK(s.tensors[std::size_t(last.accesses[1].tensor)].name == "fc1.bias");
    CHECK(last.accesses[1].mode == AccessMode::Write);
  }
}

TEST_CASE("the distributed optimizer keeps this rank's shard of master weights and state") {
  ScheduleOptions o;
  o.memory.mixed_precision = true;
  o.memory.optimizer_shards = 3;
  auto b = bytes_by_name(build_schedule(bf16_mlp(), o));
  CHECK(b.at("fc1.weight.master@-1") == (64 * 64 * 4 + 2) / 3);  // rounded up
  CHECK(b.at("fc1.weight.exp_avg@-1") == (64 * 64 * 4 + 2) / 3);
  CHECK(b.at("fc1.weight.grad@0") == 64 * 64 * 4);  // grads stay whole (reduce-scattered)
  o.memory.optimizer_shards = 0;
  CHECK_THROWS_WITH(build_schedule(bf16_mlp(), o),
                    "optimizer shards: expected an integer >= 1, got 0");
}

TEST_CASE("a persistent grad buffer is live from before the first op, in every step") {
  const auto trace = testing::mlp3();
  ScheduleOptions o;
  o.memory.grad_buffer = GradBuffer::Persistent;
  o.ordering = Ordering::ForwardFused;
  o.steps = 3;
  Schedule s = build_schedule(trace, o);
  CHECK(check_schedule(trace, s).empty());
  // One grad tensor per param for all steps; at the peak all of them: 36352 B as weights.
  int grads = 0;
  for (const auto& t : s.tensors)
    if (t.category == TensorCategory::Grads) {
      ++grads;
      CHECK(t.step == -1);
      CHECK(t.alloc_op == -1);
    }
  CHECK(grads == 5);
  CHECK(s.peak.grads == 36352);
}

TEST_CASE("materialized attention keeps the scores, flash only a logsumexp") {
  networks::NetworkOptions n;
  n.batch = 2;
  n.seq = 8;
  n.layers = 1;
  n.hidden = 16;
  n.heads = 4;
  n.vocab = 10;
  n.dtype = workload::DType::Float16;
  const auto gpt = networks::make_network("gpt", n);  // attention dropout 0.1
  ScheduleOptions o;
  auto flash = bytes_by_name(build_schedule(gpt, o));
  // [N=2, heads=4, L=8] float32 rows
  CHECK(flash.at("layers.0.attn.core.logsumexp@0") == 2 * 4 * 8 * 4);
  CHECK(flash.count("layers.0.attn.core.probs@0") == 0);
  o.memory.attention = AttentionMemory::Materialized;
  Schedule m = build_schedule(gpt, o);
  CHECK(check_schedule(gpt, m).empty());
  auto b = bytes_by_name(m);
  const std::int64_t scores = 2 * 4 * 8 * 8;  // N x heads x L x S
  CHECK(b.at("layers.0.attn.core.probs@0") == scores * 2);
  CHECK(b.at("layers.0.attn.core.dropout_mask@0") == scores);
  CHECK(b.at("layers.0.attn.core.dropped_probs@0") == scores * 2);
  CHECK(b.count("layers.0.attn.core.logsumexp@0") == 0);
}

TEST_CASE("tied weights: one tensor and grad, updated once by the owner after both Bw") {
  networks::NetworkOptions n;
  n.batch = 2;
  n.seq = 4;
  n.layers = 1;
  n.hidden = 8;
  n.heads = 2;
  n.vocab = 12;
  n.tied_embeddings = true;
  const auto gpt = networks::make_network("gpt", n);
  for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
    INFO(to_string(ordering));
    ScheduleOptions o;
    o.ordering = ordering;
    o.steps = 2;
    Schedule s = build_schedule(gpt, o);
    CHECK(check_schedule(gpt, s).empty());
    int weights = 0, owner_updates = 0, head_updates = 0;
    for (const auto& t : s.tensors)
      weights += t.name == "embedding.word.weight" || t.name == "output.weight";
    CHECK(weights == 1);
    for (const auto& op : s.ops) {
      if (op.kind != OpKind::Update) continue;
      const auto& name = gpt.layers[std::size_t(op.layer)].name;
      owner_updates += name == "embedding.word";
      head_updates += name == "output";
    }
    CHECK(owner_updates == 2);  // one per step
    CHECK(head_updates == 0);
  }
}

TEST_CASE("dropout with p = 0 is a view: no kernel, no mask; with p > 0 a kernel and a mask") {
  // fc1 -> dropout(p) -> fc2 -> loss, batch 2 of 4 features.
  auto trace_with = [](double p) {
    return workload::parse_trace(nlohmann::json::parse(fmt::format(R"(
 {{"format":"fusim-trace","version":1,"model":"d","batch":2,"dtype":"float32","source":"test",
  "inputs":[{{"name":"input","shape":[2,4]}},{{"name":"target","shape":[2],"dtype":"int64"}}],
  "layers":[
   {{"id":0,"name":"fc1","op":"linear","inputs":["input"],"output":[2,8],
    "params":[{{"name":"fc1.weight","shape":[8,4]}}]}},
   {{"id":1,"name":"drop","op":"dropout","attrs":{{"p":{}}},"inputs":[0],"output":[2,8]}},
   {{"id":2,"name":"fc2","op":"linear","inputs":[1],"output":[2,3],
    "params":[{{"name":"fc2.weight","shape":[3,8]}}]}},
   {{"id":3,"name":"loss","op":"cross_entropy","inputs":[2,"target"],"output":[]}}]}})",
                                                                   p)),
                                 "d.json");
  };
  for (double p : {0.0, 0.1}) {
    INFO("p = " << p);
    const auto trace = trace_with(p);
    ScheduleOptions o;
    o.optimizer = "sgd";
    o.steps = 1;
    const Schedule s = build_schedule(trace, o);
    CHECK(check_schedule(trace, s).empty());
    int dropout_kernels = 0;
    for (const auto& op : s.ops)
      if (op.layer == 1) dropout_kernels += op.kernels;
    bool mask = false;
    for (const auto& t : s.tensors) mask = mask || t.name.find("mask") != std::string::npos;
    CHECK(dropout_kernels == (p == 0 ? 0 : 2));  // F and Bx
    CHECK(mask == (p > 0));
  }
}
