// Parallel plans: parsing and the one-line reasons of bad plans, pipeline pass orders, and
// the microbatches each schedule holds at once per stage against the closed forms.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "networks/networks.h"
#include "parallel/pipeline_order.h"
#include "parallel/plan.h"
#include "parallel/tp_partition.h"

using namespace fusim;
using namespace fusim::parallel;

namespace {
ParallelPlan plan(int pp, std::int64_t m, const std::string& schedule = "1f1b", int v = 0) {
  PlanArgs a;
  a.pp = pp;
  a.global_batch = m;
  a.schedule = schedule;
  a.virtual_stages = v;
  return parse_plan(a);
}

std::string refusal(const PlanArgs& a) {
  try {
    parse_plan(a);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

std::string refusal(const ParallelPlan& p, const ModelFacts& f) {
  try {
    validate_plan(p, f);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("plan parsing: defaults, GPUs, microbatches and the distributed optimizer's group") {
  PlanArgs a;
  a.tp = 8;
  a.pp = 4;
  a.dp = 2;
  a.cp = 2;
  a.microbatch = 2;
  a.global_batch = 64;
  a.distributed_optimizer = true;
  ParallelPlan p = parse_plan(a);
  CHECK(p.gpus() == 128);
  CHECK(p.microbatches() == 16);     // 64 / (2 x 2)
  CHECK(p.optimizer_shards() == 4);  // dp x cp
  CHECK(p.virtual_stages == 1);
  CHECK(plan(4, 8, "zb-v").virtual_stages == 2);
  PlanArgs one;
  CHECK(parse_plan(one).global_batch == 1);  // b x dp: one microbatch per step
}

TEST_CASE("bad plans are refused with one line naming the option") {
  PlanArgs a;
  a.dp = 4;
  a.global_batch = 10;
  CHECK(refusal(a) ==
        "--global-batch: expected a multiple of --microbatch x --dp = 1 x 4 = 4, got 10");
  a = {};
  a.schedule = "2f2b";
  CHECK_THAT(refusal(a), Catch::Matchers::StartsWith(
                             "--pipeline-schedule: expected one of gpipe, 1f1b, interleaved"));
  a = {};
  a.pp = 4;
  a.global_batch = 6;
  a.schedule = "interleaved";
  a.virtual_stages = 2;
  CHECK(refusal(a) ==
        "--global-batch: expected microbatches per pipeline G / (b x dp) = 6 a multiple of --pp 4 "
        "for the interleaved schedule (Megatron-LM's rule)");
  a.virtual_stages = 1;
  CHECK_THAT(refusal(a), Catch::Matchers::StartsWith("--virtual-stages: expected at least 2"));
  a = {};
  a.virtual_stages = 3;
  CHECK_THAT(refusal(a), Catch::Matchers::StartsWith("--virtual-stages: expected 1 for 1f1b"));
  a = {};
  a.sequence_parallel = true;
  CHECK_THAT(refusal(a), Catch::Matchers::StartsWith("--sequence-parallel: expected --tp > 1"));
  a = {};
  a.recompute = "some";
  CHECK(refusal(a) == "--recompute: expected none, selective or full, got \"some\"");
  a = {};
  a.tp = 0;
  CHECK(refusal(a) == "--tp: expected a positive integer, got 0");
}

TEST_CASE("plans are checked against the model: heads, query groups, blocks, sequence") {
  ModelFacts f;
  f.model = "m";
  f.blocks = 10;
  f.heads = 12;
  f.kv_heads = 4;
  f.seq = 100;
  f.vocab = 1000;
  PlanArgs a;
  a.tp = 8;
  CHECK(refusal(parse_plan(a), f) ==
        "--tp: expected a divisor of the 12 attention heads of m, got 8");
  a.tp = 3;
  CHECK_THAT(refusal(parse_plan(a), f),
             Catch::Matchers::StartsWith("--tp: expected a divisor of the 4 key/value heads of m"));
  a.tp = 2;
  a.pp = 4;
  CHECK(refusal(parse_plan(a), f) ==
        "--pp: expected the 10 transformer blocks of m to split evenly over --pp x "
        "--virtual-stages = 4 chunks, got --pp 4");
  a.pp = 5;
  CHECK(refusal(parse_plan(a), f) == "accepted");
  a.cp = 3;
  CHECK(refusal(parse_plan(a), f) ==
        "--cp: expected a cp with the sequence length 100 of m divisible by 2 x cp, got 3");
  // The facts of a generated Llama: GQA heads, blocks, the sequence, the vocabulary.
  networks::NetworkOptions o;
  o.batch = 1;
  o.seq = 32;
  o.layers = 4;
  o.hidden = 64;
  o.heads = 8;
  o.kv_heads = 2;
  o.ffn = 96;
  o.vocab = 100;
  ModelFacts g = model_facts(networks::make_network("llama", o));
  CHECK(g.blocks == 4);
  CHECK(g.heads == 8);
  CHECK(g.kv_heads == 2);
  CHECK(g.seq == 32);
  CHECK(g.vocab == 100);
}

TEST_CASE("every stage runs each pass of each chunk-microbatch once, F before B before W") {
  for (const auto& [name, v] : std::vector<std::pair<std::string, int>>{{"gpipe", 0},
                                                                        {"1f1b", 0},
                                                                        {"interleaved", 2},
                                                                        {"interleaved", 3},
                                                                        {"zb-h1", 0},
                                                                        {"zb-h2", 0},
                                                                        {"zb-v", 0}}) {
    for (std::int64_t m : {4, 8, 12}) {
      INFO(name << " v " << v << " m " << m);
      ParallelPlan p = plan(4, m, name, v);
      for (int s = 0; s < 4; ++s) {
        std::map<std::tuple<int, int, int>, int> at;  // (kind, mb, chunk) -> position
        const auto passes = stage_passes(p, s);
        for (int i = 0; i < int(passes.size()); ++i) {
          const auto& x = passes[std::size_t(i)];
          CHECK(at.emplace(std::make_tuple(int(x.kind), x.microbatch, x.chunk), i).second);
        }
        const int kinds = splits_weight_gradient(p.schedule) ? 3 : 2;
        CHECK(int(passes.size()) == kinds * int(m) * p.virtual_stages);
        for (const auto& [key, pos] : at) {
          auto [kind, mb, chunk] = key;
          if (kind > 0) CHECK(at.at({kind - 1, mb, chunk}) < pos);
        }
      }
    }
  }
}

TEST_CASE("microbatches held at once per stage match each schedule's closed form") {
  const int p = 4;
  for (int s = 0; s < p; ++s) {
    INFO("stage " << s);
    // 1F1B (Narayanan et al. 2021): min(m, p - s); fewer microbatches than stages cap it.
    CHECK(in_flight_microbatches(plan(p, 8), s) == p - s);
    CHECK(in_flight_microbatches(plan(p, 2), s) == std::min(2, p - s));
    // GPipe: all m.
    CHECK(in_flight_microbatches(plan(p, 8, "gpipe"), s) == 8);
    // ZB-H1: every stage holds p (Qi et al. 2024, Sec. 2.1); ZB-H2: 2p - 1 (Sec. 2.2).
    CHECK(in_flight_microbatches(plan(p, 8, "zb-h1"), s) == p);
    CHECK(in_flight_microbatches(plan(p, 12, "zb-h2"), s) == 2 * p - 1);
    // ZB-V: at most 1F1B's p on every stage (2p chunk-microbatches of half a stage).
    CHECK(in_flight_microbatches(plan(p, 8, "zb-v"), s) <= p);
  }
  CHECK(in_flight_microbatches(plan(p, 8, "zb-v"), 0) == p);
  // Interleaved, stage 0: p (1 + (p - 1) / (p v)) (Korthikanti et al. 2022, Sec. 4.2.3):
  // v = 2: 4 (1 + 3/8) = 5.5; v = 4: 4 (1 + 3/16) = 4.75. Stage s holds
  // ((p - s - 1) 2 + (v - 1) p + 1) / v (Megatron's warm-up + 1).
  CHECK(in_flight_microbatches(plan(p, 8, "interleaved", 2), 0) == 5.5);
  CHECK(in_flight_microbatches(plan(p, 16, "interleaved", 4), 0) == 4.75);
  for (int s = 0; s < p; ++s)
    CHECK(in_flight_microbatches(plan(p, 8, "interleaved", 2), s) ==
          double((p - s - 1) * 2 + (2 - 1) * p + 1) / 2);
  // m == p: Megatron runs every forward first (all warm-up): all m x v chunk-microbatches.
  CHECK(in_flight_microbatches(plan(p, 4, "interleaved", 2), 0) == 4);
}

TEST_CASE("model chunks sit on stages round-robin, zb-v in a V") {
  ParallelPlan inter = plan(4, 8, "interleaved", 2), v = plan(4, 8, "zb-v");
  CHECK(stage_of_chunk(inter, 5) == 1);
  CHECK(local_chunk(inter, 5) == 1);
  CHECK(model_chunk(inter, 1, 1) == 5);
  CHECK(stage_of_chunk(v, 5) == 2);  // 2p - 1 - 5
  CHECK(stage_of_chunk(v, 7) == 0);
  CHECK(model_chunk(v, 0, 1) == 7);
}
