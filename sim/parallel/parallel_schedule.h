#pragma once
// The multi-device schedule of a parallel plan on a cluster (issue 19, points 1, 3 and 5),
// checked up front: what each pipeline stage's GPUs run (their layers and pass order), the
// microbatches they hold, the bubble of the order at equal pass costs (pipeline_timing.h),
// their memory (stage_memory.h) and the data-parallel gradient reduction on the cluster's
// links (interconnect.h). The per-device execution (issue 19, point 6) builds on this.
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "parallel/interconnect.h"
#include "parallel/pipeline_order.h"
#include "parallel/stage_memory.h"

namespace fusim::parallel {

struct StageSchedule {
  int stage = 0;
  std::string first_layer, last_layer;  // trace layer names of its first chunk / last chunk
  std::vector<Pass> passes;             // in execution order (pipeline_order.h)
  int max_in_flight = 0;                // chunk-microbatches held at once, from the timeline
  // From the timeline too (pipeline_timing.h): weight versions held at once, and the delay in
  // steps of the gradients the stage applies (asynchronous schedules).
  int weight_versions = 1, gradient_delay = 0;
  StageMemory memory;
  // Data parallelism: the stage's gradients reduced over its dp x cp group (Megatron-core
  // reduces over data_parallel_group(with_context_parallel=True)): an all-reduce, or a
  // reduce-scatter with the distributed optimizer (ZeRO-1) followed by the all-gather of the
  // updated 16-bit weights.
  std::int64_t reduced_bytes = 0, gathered_bytes = 0;
  Tick grad_reduction = 0, weight_gather = 0;
};

struct ParallelSchedule {
  ParallelPlan plan;
  std::string cluster;
  int nodes = 1;
  std::vector<StageSchedule> stages;
  // At equal pass costs (T_F = T_B = T_W) and free communication: bubble / ideal compute.
  double unit_bubble_rate = 0;
  MemoryReport memory;
};

// Checks the plan against the model (validate_plan), the cluster (a plan of more GPUs than
// one node fills whole nodes; the tensor-parallel group within a node, where NVLink carries
// its per-layer all-reduces: Megatron-LM's practice, Narayanan et al. 2021 Sec. 3.3) and each
// GPU's memory (the estimate may not exceed the GPU's capacity), then lays out the schedule.
// InputError with one line naming the option otherwise. query.gpu_memory is set from the
// cluster's GPU.
ParallelSchedule plan_schedule(const workload::Trace& trace, MemoryQuery query,
                               const ClusterSpec& cluster);

}  // namespace fusim::parallel
