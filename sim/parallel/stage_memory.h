#pragma once
// Per-GPU memory of a training step under a parallel plan and an ordering (issue 20's
// `fusim memory`): for each pipeline stage, the weights, gradients, optimizer state,
// activations of the microbatches the schedule holds at once and the buffers, at the
// stage's highest point, found by replaying the stage's pass order (pipeline_order.h) over
// per-chunk profiles (chunk_profile.h). No simulation: milliseconds for a 100-layer model.
//
// The recipe is Megatron-LM's: 16-bit weights and activations, float32 main grads in one
// persistent buffer, float32 master weights and Adam state (18 bytes per parameter, 6 + 12/d
// with the distributed optimizer); tensor and sequence parallelism as Korthikanti et al.
// 2022 partition a layer; 1F1B / interleaved in-flight microbatches from the pass order.
// Orderings change only the gradients: backward-fused frees each layer's grads right after
// the update fused into the last microbatch's backward, forward-fused keeps them until the
// update fused before the next step's first forward.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/plan.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::parallel {

struct MemoryQuery {
  ParallelPlan plan;
  schedule::Ordering ordering = schedule::Ordering::Eager;
  std::string optimizer = "adam";
  // Megatron's Adam is Apex/Transformer Engine FusedAdam: one pass, no temporaries.
  schedule::OptimizerImpl impl = schedule::OptimizerImpl::Fused;
  bool mixed_precision = true;  // applies to 16-bit traces (memory_options.h)
  schedule::AttentionMemory attention = schedule::AttentionMemory::Flash;
  // Default: persistent for eager (Megatron's DDP buffer), per-tensor for the fused orderings
  // (the optimizer-in-backward pattern frees each grad after its update).
  std::optional<schedule::GradBuffer> grad_buffer;
  std::int64_t gpu_memory = 0;  // bytes; 0: no verdict
};

struct StageMemory {
  int stage = 0;
  int layers = 0, blocks = 0;  // trace layers and transformer blocks on the stage
  double in_flight = 0;        // microbatches held at once (in_flight_microbatches)
  int weight_versions = 1;     // of the weights (asynchronous schedules: pipeline_timing.h)
  std::int64_t weights = 0, grads = 0, optimizer_state = 0, activations = 0, buffers = 0;
  std::int64_t total = 0;
  // Parts of buffers: temporaries at the peak (activation gradients, the pipeline's
  // received output gradients, optimizer and recompute temporaries; the received
  // activations are the chunk's saved inputs, in activations), collective buffers
  // (Megatron's all-gather buffer with sequence parallelism, ring-attention K/V buffers with
  // context parallelism), and the caching allocator's reserve (fragmentation below).
  std::int64_t temporaries = 0, collectives = 0, fragmentation = 0;
  std::int64_t grad_buffer = 0;  // all of the stage's param grads: what data parallelism reduces
};

struct MemoryReport {
  std::string model;
  std::int64_t params = 0;
  std::vector<StageMemory> stages;
  std::int64_t max_total = 0;
  std::int64_t gpu_memory = 0;
  // Fujii et al. 2024: none of 454 runs went out of memory when the estimate stayed below
  // 80% of GPU memory. fits: max_total <= 0.8 gpu_memory.
  bool fits = false;
  double headroom() const;  // 1 - max_total / gpu_memory (0 without gpu_memory)
};
constexpr double kUsableFraction = 0.8;

// What PyTorch's caching allocator reserves beyond `sizes` when they are allocated in this
// order and none is freed (schedule/allocator.h: 2 MiB small segments, 20 MiB segments for
// requests under 10 MiB, larger ones rounded up to 2 MiB): the fragmentation reserve of a
// stage is this for the tensors it holds longest (weights and optimizer state, then each
// in-flight microbatch's saved activations). Gradients (Megatron's contiguous buffer) and
// transients join segments already there; holes that freed transients leave between live
// blocks are not modelled: the 80% rule's margin covers them.
std::int64_t segment_overhead(const std::vector<std::int64_t>& sizes);

// `trace`: one microbatch (batch = plan.microbatch) at the full sequence length. Checks the
// plan against the model (validate_plan) and the query (InputError).
MemoryReport estimate_memory(const workload::Trace& trace, const MemoryQuery& query);
// The same for several orderings of one query (its ordering is ignored), which share the
// schedule and the chunk profiles: only the stage walk depends on the ordering. `shared`:
// a memory_schedule of the trace and a query with the same optimizer, precision, attention
// and optimizer shards, reused across plans (memory --search); null: built here.
std::vector<MemoryReport> estimate_memory(const workload::Trace& trace, const MemoryQuery& query,
                                          const std::vector<schedule::Ordering>& orderings,
                                          const schedule::Schedule* shared = nullptr);
// The single-microbatch eager schedule estimate_memory replays: it depends on the trace and
// the query's optimizer, impl, precision, attention and plan.optimizer_shards() only.
schedule::Schedule memory_schedule(const workload::Trace& trace, const MemoryQuery& query);

// GPU memory of a machine preset name (v100-sxm2, a100-sxm4-40gb, a100-sxm4-80gb, h100-sxm5,
// h200) or a size ("80GiB"); InputError otherwise.
std::int64_t gpu_memory_bytes(std::string_view gpu);
std::string gpu_memory_presets();

}  // namespace fusim::parallel
