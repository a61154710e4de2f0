#pragma once
// The timed multi-device training step (issue 19, points 4, 6 and 7): every pipeline stage
// runs its pass order (pipeline_order.h) with its own, unequal pass costs (stage_work.h:
// from the single-device engine), the ordering's optimizer updates placed among the passes,
// and the communication as messages on the cluster's links, which contend (link_sim.h):
//  - P2P: the activation of a chunk-microbatch to the stage of the next model chunk after
//    its F, the gradient of that activation back after its B, each TP rank to its peer;
//  - TP: the collectives inside F and B of each tensor-parallel layer (all-reduce, or
//    reduce-scatter + all-gather with sequence parallelism: Korthikanti et al. 2022, Fig. 6),
//    blocking the pass as Megatron-LM runs them, at their place in the pass;
//  - DP: each gradient bucket reduced over its data-parallel group (all-reduce, or
//    reduce-scatter with the distributed optimizer, whose updated 16-bit weights are
//    all-gathered after the update), issued when its last gradient is ready in the step's
//    last microbatch's gradient pass and overlapped with the rest of backward (Megatron-core
//    DistributedDataParallel with overlap_grad_reduce; PyTorch DDP's buckets, Li et al. 2020).
// Updates (U, per bucket, on the stage's compute):
//  - eager: after the stage's last pass of the step, once all buckets are reduced: on a
//    synchronous schedule those of every stage, since Megatron's optimizer step first
//    all-reduces the gradient norm over the model-parallel group for clipping (a pipeline
//    flush: Qi et al. 2024, Sec. 3); asynchronous schedules: the stage's own;
//  - backward-fused: right after the chunk's last gradient pass (Bw) of the step, each
//    bucket's once it is reduced (so they fill the 1F1B cool-down);
//  - forward-fused: before the chunk's first F of the next step (the warm-up bubble), once the
//    previous step's bucket is reduced.
// Steps run back to back (no global barrier), every pass as soon as its stage is free and
// its input has arrived, in the order of their start times over all stages (so link
// messages are booked in time order). Each stage's figures are those of a steady-state step:
// from the end of its last update of step 1 to that of step 2 (as pipeline_timing.h times
// the asynchronous schedules), split exactly into busy (compute), exposed communication (TP
// collectives, and waits for a transfer, reduction or gather beyond the producer's compute)
// and bubble (waits for the pipeline's compute, or nothing to run).
//
// Model limits, stated: one data-parallel replica's pipeline is timed (replicas are
// symmetric: the same passes on their own GPUs and links); its DP collectives run on the
// whole group's links. Links are first come, first served in booking order: a collective
// books all its messages when issued, so a later P2P message on the same link waits for the
// whole collective (NCCL would share the link's bandwidth). CP's K/V ring (CpRing) is timed
// on the links with no limit on the chunks a rank holds (Transformer Engine double-buffers:
// a send never waits for the compute of an older chunk); Megatron's grad-norm all-reduce
// and the tied embedding's all-reduce between first and last stage are not modelled.
#include <cstdint>
#include <vector>

#include "core/time.h"
#include "parallel/interconnect.h"
#include "parallel/link_sim.h"
#include "parallel/pipeline_order.h"
#include "schedule/schedule.h"

namespace fusim::parallel {

// A tensor-parallel collective of a pass: after `offset` of the pass's compute, over the
// stage's TP group, `bytes` the whole tensor (an all-reduce's buffer).
struct TpCollective {
  Tick offset = 0;
  std::int64_t bytes = 0;
};

// Context parallelism's ring exchange in one attention layer of a pass (ring attention, Liu
// et al. 2023; Megatron-core / Transformer Engine's AttnFuncWithCPAndKVP2P): the attention's
// `compute` starts after `offset` of the pass's compute and is split into cp equal parts,
// one per K/V chunk; the GPU's own chunk is there, each of the other cp - 1 arrives over the
// CP group's ring (each rank passes on the chunk it holds, `bytes` per step) while the chunk
// in hand is computed. Without contention the attention takes
//   c + (cp - 1) max(c, t),   c = compute / cp,  t = bytes / B + alpha
// of which what exceeds `compute` is exposed communication. Backward passes the K/V chunk
// and its gradient (dK, dV) each step: twice the bytes.
struct CpRing {
  Tick offset = 0, compute = 0;
  std::int64_t bytes = 0;
};

// A data-parallel gradient bucket of a chunk: its last gradient is ready once the gradient
// pass (B, or W where the schedule splits it) of the step's last microbatch has run
// `ready_offset` of its compute.
struct GradBucket {
  std::int64_t bytes = 0;         // gradients reduced, per GPU
  std::int64_t weight_bytes = 0;  // 16-bit weights all-gathered after U (distributed optimizer)
  Tick ready_offset = 0;
  Tick update = 0;  // U of its params
};

// One model chunk of a stage on one GPU of the plan, per microbatch.
struct ChunkWork {
  // Compute of its passes as the schedule runs them: backward is B (Bx only where the
  // schedule splits W off), weight is W (0 where it does not).
  Tick forward = 0, backward = 0, weight = 0;
  std::vector<TpCollective> forward_tp, backward_tp;  // offsets into F, into B
  std::vector<CpRing> forward_cp, backward_cp;        // attention layers with cp > 1
  std::int64_t output_bytes = 0;    // P2P: activation to the next chunk, per TP rank
  std::vector<GradBucket> buckets;  // in the order their gradients complete
};

struct StepQuery {
  ParallelPlan plan;
  ClusterSpec cluster;
  schedule::Ordering ordering = schedule::Ordering::Eager;
  std::vector<std::vector<ChunkWork>> work;  // [stage][local chunk]
  bool free_communication = false;           // every transfer and collective takes no time
  bool record_links = false;                 // keep link messages (timelines)
};

enum class ItemKind { F, B, W, U };

struct TimedItem {
  ItemKind kind = ItemKind::F;
  int step = 0, microbatch = 0, chunk = 0, bucket = 0;  // microbatch within its step
  Tick start = 0, end = 0;
  Tick communication = 0;  // of [start, end]: blocking TP collectives
  // The stage's idle time before `start` (since its previous item's end), split into the
  // wait for a transfer, reduction or gather beyond its producer's end, and the rest.
  Tick waited_communication = 0, waited_pipeline = 0;
};

struct StageStep {
  Tick window = 0;                                       // the steady-state step on this stage
  Tick busy = 0, exposed_communication = 0, bubble = 0;  // busy + exposed + bubble = window
  Tick from = 0;                                         // where the window starts
  std::vector<TimedItem> items;                          // every step, in execution order
};

struct StepTiming {
  std::vector<StageStep> stages;
  Tick step_time = 0;                 // the longest stage window
  int steps = 0;                      // steps simulated
  std::vector<LinkMessage> messages;  // with record_links
  // The pipeline's bubble over its ideal compute: sum of bubbles / sum of busy times; at
  // equal pass costs and free communication (p-1)/m for 1F1B (pipeline_timing.h).
  double bubble_fraction() const;
};

// Megatron's rank of (tp, cp, dp, pp) ranks (parallel_state.RankGenerator "tp-cp-ep-dp-pp",
// tp fastest): tp + tp (cp + cp (dp + dp pp)).
int gpu_rank(const ParallelPlan& plan, int tp, int cp, int dp, int stage);

// Asynchronous schedules (pipedream-2bw, async-1step) have no flush: their updates of a step
// follow its last gradient pass on the stage (eager, backward-fused) or precede the stage's
// next forward (forward-fused); forwards read the newest weights there are.
StepTiming time_step(const StepQuery& query);

}  // namespace fusim::parallel
