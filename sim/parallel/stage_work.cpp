#include "parallel/stage_work.h"

#include "core/error.h"
#include "parallel/pipeline_order.h"
#include "parallel/tp_partition.h"
#include "workload/cost.h"

namespace fusim::parallel {
namespace {
using workload::InputRef;

Tick scaled(Tick t, double share) {
  return Tick(double(t) * share + 0.5);
}

std::int64_t output_bytes(const workload::Layer& l) {
  return workload::numel(l.output) * workload::dtype_bytes(l.output_dtype);
}
}  // namespace

std::vector<std::vector<ChunkWork>> stage_work(const workload::Trace& trace,
                                               const ParallelPlan& plan,
                                               const std::vector<LayerTimes>& times,
                                               std::int64_t bucket_bytes,
                                               const schedule::MemoryOptions& memory) {
  const int n = int(trace.layers.size());
  FUSIM_ASSERT(int(times.size()) == n && bucket_bytes > 0, "layer times and a bucket size");
  const TpPartition tp = tp_partition(trace);
  const auto first = chunk_first_layers(trace, plan);
  const bool split = splits_weight_gradient(plan.schedule);

  // Per layer: the share of its compute and of its params one GPU holds.
  std::vector<double> share(static_cast<std::size_t>(n), 1.0), param_share(share);
  std::vector<std::int64_t> grad_bytes(std::size_t(n), 0), weight_bytes(std::size_t(n), 0);
  std::vector<bool> recomputed(std::size_t(n), false);
  if (plan.recompute == Recompute::Full)
    for (const auto& b : transformer_blocks(trace))
      for (int l = b.first; l <= b.last; ++l) recomputed[std::size_t(l)] = true;
  for (int l = 0; l < n; ++l) {
    const auto& layer = trace.layers[std::size_t(l)];
    const auto& ps = tp.param_split[std::size_t(l)];
    bool any_split = false;
    double all = 0, mine = 0;
    for (std::size_t p = 0; p < layer.params.size(); ++p) {
      const auto& param = layer.params[p];
      const double e = double(workload::numel(param.shape));
      const double on_gpu = ps[p] ? e / plan.tp : e;
      any_split = any_split || ps[p];
      all += e;
      mine += on_gpu;
      if (!param.requires_grad) continue;
      grad_bytes[std::size_t(l)] +=
          std::int64_t(on_gpu) * schedule::grad_element_bytes(memory, param.dtype);
      // The distributed optimizer all-gathers the GPU's whole 16-bit weights (each rank
      // contributes its updated shard): the gathered buffer.
      weight_bytes[std::size_t(l)] += std::int64_t(on_gpu) * workload::dtype_bytes(param.dtype);
    }
    const bool tp_split = tp.output_split[std::size_t(l)] || any_split || plan.sequence_parallel;
    share[std::size_t(l)] = 1.0 / (plan.cp * (tp_split ? plan.tp : 1));
    if (all > 0) param_share[std::size_t(l)] = mine / all / plan.optimizer_shards();
    if (plan.recompute == Recompute::Selective &&
        layer.op == workload::OpKind::ScaledDotProductAttention)
      recomputed[std::size_t(l)] = true;
  }
  // Layers read by a column-parallel linear: their output's gradient is all-reduced in
  // backward (Megatron's f operator, copy_to_tensor_model_parallel_region).
  std::vector<bool> feeds_column(std::size_t(n), false);
  for (int l = 0; l < n; ++l) {
    const auto& layer = trace.layers[std::size_t(l)];
    const bool column = layer.op == workload::OpKind::Linear && tp.output_split[std::size_t(l)];
    if (!column) continue;
    for (const auto& in : layer.inputs)
      if (in.source == InputRef::Source::Layer) feeds_column[std::size_t(in.index)] = true;
  }
  // The data a TP collective or a P2P transfer moves: a layer's output on one GPU.
  auto activation = [&](int l) {
    return output_bytes(trace.layers[std::size_t(l)]) / plan.cp /
           (plan.sequence_parallel ? plan.tp : 1);
  };
  auto tp_bytes = [&](int l) { return output_bytes(trace.layers[std::size_t(l)]) / plan.cp; };
  // Context parallelism: the K and V chunk one GPU passes on per ring step of an attention
  // layer (its share of the sequence, and of the heads where TP splits them).
  auto kv_chunk = [&](int l) -> std::int64_t {
    const auto& layer = trace.layers[std::size_t(l)];
    if (plan.cp == 1 || layer.op != workload::OpKind::ScaledDotProductAttention) return 0;
    std::int64_t kv = 0;
    for (std::size_t k : {std::size_t(1), std::size_t(2)})
      kv += workload::numel(workload::input_shape(trace, layer.inputs[k])) *
            workload::dtype_bytes(workload::input_dtype(trace, layer.inputs[k]));
    return kv / plan.cp / (tp.output_split[std::size_t(l)] ? plan.tp : 1);
  };

  std::vector<std::vector<ChunkWork>> out(std::size_t(plan.pp),
                                          std::vector<ChunkWork>(std::size_t(plan.virtual_stages)));
  for (int c = 0; c < plan.chunks(); ++c) {
    ChunkWork& w = out[std::size_t(stage_of_chunk(plan, c))][std::size_t(local_chunk(plan, c))];
    const int begin = first[std::size_t(c)];
    const int end = c + 1 < plan.chunks() ? first[std::size_t(c) + 1] : n;
    w.output_bytes = c + 1 < plan.chunks() ? activation(end - 1) : 0;
    for (int l = begin; l < end; ++l) {
      const LayerTimes& t = times[std::size_t(l)];
      const double sh = share[std::size_t(l)];
      if (const std::int64_t kv = kv_chunk(l); kv > 0)
        w.forward_cp.push_back({w.forward, scaled(t.forward, sh), kv});
      w.forward += scaled(t.forward, sh);
      // Row-parallel linears and the vocabulary-parallel embedding: output all-reduced
      // (Megatron's g operator, reduce_from_tensor_model_parallel_region).
      bool any_split = false;
      for (bool b : tp.param_split[std::size_t(l)]) any_split = any_split || b;
      if (plan.tp > 1 && any_split && !tp.output_split[std::size_t(l)])
        w.forward_tp.push_back({w.forward, tp_bytes(l)});
    }
    // Backward in reverse layer order: per layer its recomputed forward, Bx and (unless
    // split off) Bw; gradients complete in the gradient pass (B, or W), in this order.
    Tick grad_pass = 0;
    GradBucket bucket;
    for (int l = end - 1; l >= begin; --l) {
      const LayerTimes& t = times[std::size_t(l)];
      const double sh = share[std::size_t(l)];
      const Tick bx = scaled(t.backward_input, sh), bw = scaled(t.backward_weight, sh);
      const Tick rf = recomputed[std::size_t(l)] ? scaled(t.forward, sh) : 0;
      // Ring attention: a recomputed forward passes K/V again; the backward passes K/V and
      // their gradients (Transformer Engine's backward ring: kv and dkv each step).
      if (const std::int64_t kv = kv_chunk(l); kv > 0) {
        if (rf > 0) w.backward_cp.push_back({w.backward, rf, kv});
        w.backward_cp.push_back({w.backward + rf, bx, 2 * kv});
      }
      w.backward += rf + bx + (split ? 0 : bw);
      w.weight += split ? bw : 0;
      grad_pass = split ? w.weight : w.backward;
      // The gradient of this layer's output is complete once every later layer's Bx ran.
      if (plan.tp > 1 && feeds_column[std::size_t(l)])
        w.backward_tp.push_back({w.backward - rf - bx - (split ? 0 : bw), tp_bytes(l)});
      bucket.bytes += grad_bytes[std::size_t(l)];
      bucket.weight_bytes += weight_bytes[std::size_t(l)];
      bucket.update += scaled(t.update, param_share[std::size_t(l)]);
      if (grad_bytes[std::size_t(l)] > 0) bucket.ready_offset = grad_pass;
      if (bucket.bytes >= bucket_bytes) {
        w.buckets.push_back(bucket);
        bucket = GradBucket{};
      }
    }
    if (bucket.bytes == 0 && bucket.update == 0) bucket.ready_offset = grad_pass;
    if (bucket.bytes > 0 || bucket.update > 0 || w.buckets.empty()) w.buckets.push_back(bucket);
  }
  return out;
}

}  // namespace fusim::parallel
