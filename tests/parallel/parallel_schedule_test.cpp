// A plan's multi-device schedule on a cluster: the up-front checks (whole nodes, tensor
// parallelism within a node, memory per GPU) with one-line reasons, the data-parallel
// reduction placed on the cluster's links, and the stages' pass orders and bubble.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "networks/networks.h"
#include "parallel/parallel_schedule.h"
#include "parallel/plan.h"

using namespace fusim;
using namespace fusim::parallel;

namespace {
workload::Trace small_llama(std::int64_t kv_heads = 2) {
  networks::NetworkOptions o;
  o.batch = 1;
  o.seq = 64;
  o.layers = 4;
  o.hidden = 256;
  o.heads = 8;
  o.kv_heads = kv_heads;
  o.ffn = 512;
  o.vocab = 1024;
  return networks::make_network("llama", o);  // bfloat16
}

MemoryQuery query(int tp, int pp, int dp, std::int64_t global_batch) {
  PlanArgs a;
  a.tp = tp;
  a.pp = pp;
  a.dp = dp;
  a.global_batch = global_batch;
  MemoryQuery q;
  q.plan = parse_plan(a);
  return q;
}

std::string refusal(const workload::Trace& t, const MemoryQuery& q, const char* cluster) {
  try {
    plan_schedule(t, q, cluster_preset(cluster));
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("plans are checked against the cluster up front") {
  const auto t = small_llama();
  CHECK(refusal(t, query(2, 2, 3, 6), "dgx-h100") ==
        "--cluster dgx-h100: expected a GPU count (tp x pp x dp x cp) that fills whole nodes "
        "of 8, got 12");
  CHECK(refusal(t, query(2, 2, 1, 2), "dgx-h100") == "accepted");  // 4 GPUs: part of a node
  // Memory per GPU: Llama-3.1-8B whole on one H100 needs 18 bytes x 8.03e9 parameters.
  networks::NetworkOptions o;
  o.batch = 1;
  o.seq = 1024;
  const auto big = networks::make_network("llama-3.1-8b", o);
  const std::string r = refusal(big, query(1, 1, 1, 1), "dgx-h100");
  CHECK(r.rfind("--cluster dgx-h100: stage 0 needs ", 0) == 0);
  CHECK(r.find("more than the 80.0 GiB of its h100-sxm5") != std::string::npos);
}

TEST_CASE("the data-parallel gradient reduction runs on the cluster's links") {
  const auto t = small_llama();
  const auto& h = cluster_preset("dgx-h100");
  // tp 2 x pp 2 x dp 4 = 16 GPUs on 2 nodes; the dp group (stride tp = 2) has its 4 ranks in
  // one node: a ring all-reduce on NVLink 4 of each stage's float32 main grads (Megatron's
  // mixed precision: twice the bytes of its bfloat16 weights).
  const ParallelSchedule ps = plan_schedule(t, query(2, 2, 4, 8), h);
  CHECK(ps.nodes == 2);
  REQUIRE(ps.stages.size() == 2);
  for (const auto& st : ps.stages) {
    CHECK(st.reduced_bytes == 2 * st.memory.weights);
    CHECK(st.grad_reduction ==
          ring_collective_time(Collective::AllReduce, 4, st.reduced_bytes, h.intra));
    CHECK(st.weight_gather == 0);
  }
  CHECK(ps.stages[0].first_layer == "embedding.word");
  CHECK(ps.stages[0].last_layer == "layers.1.mlp.residual");
  CHECK(ps.stages[1].first_layer == "layers.2.norm1");
  // 1F1B, p = 2, m = 8 / (1 x 4) = 2: (p - 1) / m = 1/2; stage 0 holds 2, stage 1 one.
  CHECK(ps.unit_bubble_rate == Approx(0.5).epsilon(1e-12));
  CHECK(ps.stages[0].max_in_flight == 2);
  CHECK(ps.stages[1].max_in_flight == 1);
  // tp 8 x dp 2: one dp rank per node, the reduction on the NICs; with the distributed
  // optimizer a reduce-scatter of the grads, then an all-gather of the weights.
  MemoryQuery z = query(8, 1, 2, 2);
  z.plan.distributed_optimizer = true;
  const ParallelSchedule zs = plan_schedule(small_llama(8), z, h);
  const auto& st = zs.stages.at(0);
  CHECK(st.grad_reduction ==
        ring_collective_time(Collective::ReduceScatter, 2, st.reduced_bytes, h.inter));
  CHECK(st.weight_gather ==
        ring_collective_time(Collective::AllGather, 2, st.memory.weights, h.inter));
}

TEST_CASE("asynchronous schedules: weight versions and gradient delay per stage, stashed copies") {
  const auto t = small_llama();
  const auto& h = cluster_preset("dgx-h100");
  const MemoryQuery sync = query(1, 2, 1, 4);  // pp 2, m = 4
  MemoryQuery two = sync, one = sync;
  two.plan.schedule = PipelineSchedule::PipeDream2BW;
  one.plan.schedule = PipelineSchedule::AsyncOneStep;
  const ParallelSchedule a = plan_schedule(t, sync, h), b = plan_schedule(t, two, h),
                         c = plan_schedule(t, one, h);
  for (int s = 0; s < 2; ++s) {
    INFO("stage " << s);
    const auto &x = a.stages[std::size_t(s)], &y = b.stages[std::size_t(s)],
               &z = c.stages[std::size_t(s)];
    CHECK(x.weight_versions == 1);
    CHECK(x.gradient_delay == 0);
    // 2BW keeps the version each in-flight microbatch ran on beside the newest: a second copy
    // of the stage's 16-bit weights; its activations are 1F1B's.
    CHECK(y.weight_versions == 2);
    CHECK(y.gradient_delay == 1);
    CHECK(y.memory.weights == 2 * x.memory.weights);
    CHECK(y.memory.activations == x.memory.activations);
    CHECK(y.memory.total == x.memory.total + x.memory.weights);
    // async-1step stashes nothing; stage 0's warm-up forward reads the weights before its
    // update, the last stage has none.
    CHECK(z.weight_versions == 1);
    CHECK(z.gradient_delay == (s == 0 ? 1 : 0));
    CHECK(z.memory.total == x.memory.total);
  }
  // Asynchronous schedules have no flush: no bubble at equal pass costs.
  CHECK(b.unit_bubble_rate == 0.0);
  CHECK(c.unit_bubble_rate == 0.0);
}
