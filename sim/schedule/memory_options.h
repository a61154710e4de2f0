#pragma once
// How a training step holds its tensors (issue 20): the mixed precision and sharding of
// the parameter state, the gradient buffer's lifetime and what attention keeps for
// backward. Defaults are plain PyTorch: every tensor in the trace's dtype, one grad tensor
// per param freed after its update (set_to_none), flash-style attention.
#include <cstdint>
#include <optional>
#include <string_view>

#include "workload/trace.h"

namespace fusim::schedule {

// What scaled_dot_product_attention saves for backward.
//  flash: q, k, v, the output and a float32 logsumexp per query row and head (FlashAttention,
//         Dao et al. 2022; PyTorch's _scaled_dot_product_flash_attention): no N x L x S tensor;
//  materialized: the math path (Megatron's CoreAttention, the backend's attention): the
//         softmax output, and with dropout its bool mask and the dropped copy, which the
//         product with V saves -- Korthikanti et al. 2022's 5as^2b bytes per layer.
enum class AttentionMemory { Flash, Materialized };
std::string_view to_string(AttentionMemory mode);  // "flash", "materialized"
std::optional<AttentionMemory> parse_attention_memory(std::string_view name);

// Lifetime of the param gradients.
//  per-tensor: created by the first Bw of a step, freed after the param's U (set_to_none,
//              PyTorch 2.x zero_grad's default and the optimizer-in-backward tutorial);
//  persistent: one contiguous buffer allocated before training and zeroed, never freed
//              (Megatron-LM's DistributedDataParallel grad buffer, param_and_grad_buffer.py).
enum class GradBuffer { PerTensor, Persistent };
std::string_view to_string(GradBuffer buffer);  // "per-tensor", "persistent"
std::optional<GradBuffer> parse_grad_buffer(std::string_view name);

struct MemoryOptions {
  // Megatron-LM mixed precision (Micikevicius et al. 2018; Megatron's
  // Float16OptimizerWithFloat16Params): weights and activations in the trace's 16-bit dtype,
  // gradients accumulated into float32 main grads (--accumulate-allreduce-grads-in-fp32,
  // which Megatron forces for bf16), float32 master weights and optimizer state: per param
  // 2 + 4 + (4 + 4 * states) bytes, 18 for Adam (docs/source/distrib_optimizer.md).
  bool mixed_precision = false;
  // Distributed optimizer (ZeRO stage 1; Megatron's --use-distributed-optimizer): master
  // weights and optimizer state are split over this many data-parallel ranks; every rank
  // keeps full weights and grads: 6 + 12/d bytes per param for Adam in mixed precision.
  int optimizer_shards = 1;
  GradBuffer grad_buffer = GradBuffer::PerTensor;
  AttentionMemory attention = AttentionMemory::Flash;
};

// Bytes per element of a param's gradient and of each optimizer state tensor (master
// weights included) under `options`, for a param of dtype `param`.
int grad_element_bytes(const MemoryOptions& options, workload::DType param);
int state_element_bytes(const MemoryOptions& options, workload::DType param);
// Whether U keeps a float32 master copy of a param of this dtype (mixed precision, 16-bit).
bool has_master_weights(const MemoryOptions& options, workload::DType param);
// The bytes one rank holds of a state tensor of `bytes` (distributed optimizer: its shard,
// rounded up).
std::int64_t sharded_bytes(const MemoryOptions& options, std::int64_t bytes);

}  // namespace fusim::schedule
