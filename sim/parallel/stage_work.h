#pragma once
// What each pipeline stage's GPU computes and communicates per microbatch under a parallel
// plan (issue 19, point 6), from the per-layer op times of one microbatch on one whole GPU
// (the single-device engine, exec/simulate.h, run by the command). Times are scaled to the
// share of the layer one GPU of the plan runs, as chunk_profile.h scales its tensors:
//  - a layer of the tensor-parallel partition (tp_partition.h: split output or split
//    params) runs 1/tp of its work on each rank; replicated layers (norms, residual adds)
//    run whole, or 1/tp with sequence parallelism (split along the sequence);
//  - context parallelism splits every layer's sequence: 1/cp;
//  - an update runs on the GPU's share of its params: 1/tp of the split ones, and 1/(dp cp)
//    of all with the distributed optimizer (ZeRO-1: each rank updates its shard);
//  - recompute (Korthikanti et al. 2022): full reruns each block's forward before its
//    backward, selective the attention core's (the attention layers, as chunk_profile.h).
// Scaling measured times by the split keeps each op's efficiency at the whole layer's: a
// GEMM of 1/tp the columns is assumed to run at the same rate (stated limitation; GEMMs of
// LLM shapes stay large at tp <= 8).
// Communication per chunk (bytes on one GPU): the activation a chunk sends to the next
// (its last layer's output, 1/cp, and 1/tp with sequence parallelism), TP collectives of
// Megatron's partition (Shoeybi et al. 2019, Fig. 3: f and g), and the data-parallel
// gradient buckets: the chunk's params in backward order, filled to `bucket_bytes` (PyTorch
// DDP: bucket_cap_mb = 25; a bucket closes with the layer that makes it reach the size).
#include <cstdint>
#include <vector>

#include "parallel/plan.h"
#include "parallel/step_timing.h"
#include "schedule/memory_options.h"
#include "workload/trace.h"

namespace fusim::parallel {

// One microbatch of one trace layer on one whole GPU: the compute of its ops by kind (the
// loss op in backward_input: it seeds the backward).
struct LayerTimes {
  Tick forward = 0, backward_input = 0, backward_weight = 0, update = 0;
};

// PyTorch DistributedDataParallel's default bucket_cap_mb = 25 (torch/nn/parallel/
// distributed.py: bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)).
constexpr std::int64_t kDefaultBucketBytes = std::int64_t{25} << 20;

// [stage][local chunk]; `times` per trace layer; bucket_bytes > 0. Gradient elements as
// `memory` stores them (schedule::grad_element_bytes: float32 main grads under mixed
// precision, Megatron's --accumulate-allreduce-grads-in-fp32).
std::vector<std::vector<ChunkWork>> stage_work(const workload::Trace& trace,
                                               const ParallelPlan& plan,
                                               const std::vector<LayerTimes>& times,
                                               std::int64_t bucket_bytes,
                                               const schedule::MemoryOptions& memory);

}  // namespace fusim::parallel
