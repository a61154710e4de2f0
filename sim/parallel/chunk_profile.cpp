#include "parallel/chunk_profile.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/error.h"
#include "parallel/pipeline_order.h"
#include "schedule/allocator.h"

namespace fusim::parallel {
namespace {
using schedule::OpKind;
using schedule::TensorCategory;
constexpr int kPrevGrads = 2;  // generation of the previous step's grads (forward-fused)

bool is_per_step_data(TensorCategory c) {
  return c == TensorCategory::Activations || c == TensorCategory::Temporaries ||
         c == TensorCategory::Inputs;
}
}  // namespace

std::int64_t CategoryBytes::total() const {
  std::int64_t t = 0;
  for (auto b : by) t += b;
  return t;
}
CategoryBytes& CategoryBytes::operator+=(const CategoryBytes& o) {
  for (std::size_t i = 0; i < by.size(); ++i) by[i] += o.by[i];
  return *this;
}
CategoryBytes& CategoryBytes::operator-=(const CategoryBytes& o) {
  for (std::size_t i = 0; i < by.size(); ++i) by[i] -= o.by[i];
  return *this;
}

ChunkProfiler::ChunkProfiler(const workload::Trace& trace, const schedule::Schedule& s,
                             const ParallelPlan& plan, std::vector<int> chunk_first_layer)
    : trace_(trace), s_(s), plan_(plan), first_(std::move(chunk_first_layer)) {
  const int n = int(trace.layers.size());
  chunk_of_.assign(std::size_t(n), 0);
  for (int c = 0; c < int(first_.size()); ++c) {
    const int end = c + 1 < int(first_.size()) ? first_[std::size_t(c) + 1] : n;
    for (int l = first_[std::size_t(c)]; l < end; ++l) chunk_of_[std::size_t(l)] = c;
  }
  // Sizes on one GPU: split params over tp (Megatron's partition, tp_partition.h); every
  // per-step tensor over cp (the sequence) and, where its layer's output is split or
  // sequence parallelism splits the replicated ones, over tp.
  const TpPartition tp = tp_partition(trace);
  bytes_.resize(s.tensors.size());
  for (const auto& t : s.tensors) {
    std::int64_t divisor = 1;
    const bool param_state = t.param >= 0 && t.layer >= 0;
    if (param_state) {
      if (tp.param_split[std::size_t(t.layer)][std::size_t(t.param)]) divisor = plan.tp;
    } else if (is_per_step_data(t.category)) {
      divisor = plan.cp;
      if (t.layer >= 0 && (tp.output_split[std::size_t(t.layer)] || plan.sequence_parallel))
        divisor *= plan.tp;
    }
    const std::int64_t b = (t.bytes + divisor - 1) / divisor;
    bytes_[std::size_t(t.id)] = schedule::CachingAllocator::round_size(b);
  }
  f_ops_.resize(std::size_t(n));
  b_ops_.resize(std::size_t(n));
  u_ops_.resize(std::size_t(n));
  for (const auto& op : s.ops) {
    if (op.step != 0) continue;
    auto l = std::size_t(op.layer);
    if (op.kind == OpKind::Forward) f_ops_[l].push_back(op.id);
    if (op.kind == OpKind::Update) u_ops_[l].push_back(op.id);
    // The loss op (forward + the seed of backward) opens the backward of its chunk.
    if (op.kind == OpKind::Loss || op.kind == OpKind::BackwardInput ||
        op.kind == OpKind::BackwardWeight)
      b_ops_[l].push_back(op.id);
  }
  // Recompute regions (Korthikanti et al. 2022, Sec. 5): selective: each attention core;
  // full: each transformer block (Megatron's --recompute-granularity full, uniform, one
  // layer per checkpoint), whose input alone stays saved.
  region_.assign(std::size_t(n), -1);
  if (plan.recompute == Recompute::Selective) {
    for (int l = 0; l < n; ++l)
      if (trace.layers[std::size_t(l)].op == workload::OpKind::ScaledDotProductAttention) {
        region_[std::size_t(l)] = int(region_layers_.size());
        region_layers_.push_back({l});
      }
  } else if (plan.recompute == Recompute::Full) {
    for (const auto& block : transformer_blocks(trace)) {
      std::vector<int> layers;
      for (int l = block.first; l <= block.last; ++l) {
        region_[std::size_t(l)] = int(region_layers_.size());
        layers.push_back(l);
      }
      region_layers_.push_back(layers);
    }
  }
  // Tensors a region's forward writes (selective: all but the attention output, which the
  // projection keeps anyway) are recomputed, not saved.
  owned_.assign(s.tensors.size(), -1);
  for (int l = 0; l < n; ++l) {
    const int r = region_[std::size_t(l)];
    if (r < 0) continue;
    const std::string out = trace.layers[std::size_t(l)].name + ".out";
    for (int id : f_ops_[std::size_t(l)])
      for (const auto& pass : s.ops[std::size_t(id)].passes)
        for (auto a : pass.accesses) {
          const auto& t = s.tensors[std::size_t(a.tensor)];
          if (a.mode == schedule::AccessMode::Read || t.category != TensorCategory::Activations)
            continue;
          if (plan.recompute == Recompute::Selective && t.name == out) continue;
          owned_[std::size_t(a.tensor)] = r;
        }
  }
  // Persistent tensors and grads per chunk; a param tied to another chunk's carries its
  // owner's optimizer state too (Megatron keeps a full copy per stage: word_embeddings of
  // the output layer, synchronised by an all-reduce of the embedding group).
  persistent_.resize(first_.size());
  grads_.assign(first_.size(), 0);
  std::vector<std::set<int>> persistent(first_.size()), grads(first_.size());
  for (const auto& op : s.ops) {
    const int c = chunk_of_[std::size_t(op.layer)];
    for (const auto& pass : op.passes)
      for (auto a : pass.accesses) {
        const auto& t = s.tensors[std::size_t(a.tensor)];
        if (t.category == TensorCategory::Weights || t.category == TensorCategory::OptimizerState)
          persistent[std::size_t(c)].insert(t.id);
        if (t.category == TensorCategory::Grads) grads[std::size_t(c)].insert(t.id);
      }
  }
  for (int l = 0; l < n; ++l)
    for (const auto& p : trace.layers[std::size_t(l)].params) {
      if (p.tied_to.empty()) continue;
      for (const auto& t : s.tensors)
        if (t.category == TensorCategory::OptimizerState &&
            t.name.compare(0, p.tied_to.size() + 1, p.tied_to + ".") == 0)
          persistent[std::size_t(chunk_of_[std::size_t(l)])].insert(t.id);
    }
  for (std::size_t c = 0; c < first_.size(); ++c) {
    persistent_[c].assign(persistent[c].begin(), persistent[c].end());
    for (int id : grads[c]) grads_[c] += bytes_[std::size_t(id)];
  }
}

CategoryBytes ChunkProfiler::persistent(int chunk) const {
  CategoryBytes b;
  for (int id : persistent_[std::size_t(chunk)])
    b[s_.tensors[std::size_t(id)].category] += bytes_[std::size_t(id)];
  return b;
}

std::int64_t ChunkProfiler::grad_bytes(int chunk) const {
  return grads_[std::size_t(chunk)];
}

std::int64_t ChunkProfiler::saved_bytes(int chunk) const {
  std::int64_t total = 0;
  for (auto [tensor, bytes] : saved_tensors(chunk)) total += bytes;
  return total;
}

std::vector<std::pair<int, std::int64_t>> ChunkProfiler::saved_tensors(int chunk) const {
  const Sequence seq = sequence(chunk, false, false);
  std::vector<std::pair<int, std::int64_t>> saved;
  for (const auto& [key, life] : lifetimes(seq, GradChange::Present, false))
    if (life.first.first < seq.phase_start.at(1) && life.last.first >= seq.phase_start[1])
      saved.push_back({key.first, bytes_[std::size_t(key.first)]});
  return saved;
}

ChunkProfiler::Sequence ChunkProfiler::sequence(int chunk, bool with_updates,
                                                bool fused_updates) const {
  Sequence seq;
  const int n = int(trace_.layers.size());
  const int first = first_[std::size_t(chunk)];
  const int end = chunk + 1 < chunks() ? first_[std::size_t(chunk) + 1] : n;
  seq.phase_start.push_back(0);
  for (int l = first; l < end; ++l) {
    if (with_updates)
      for (int id : u_ops_[std::size_t(l)]) seq.ops.push_back({id, 0});
    for (int id : f_ops_[std::size_t(l)]) seq.ops.push_back({id, 0});
  }
  std::vector<int> backward;
  for (int l = first; l < end; ++l)
    for (int id : b_ops_[std::size_t(l)]) backward.push_back(id);
  std::sort(backward.begin(), backward.end());  // the schedule's issue order
  const bool split = splits_weight_gradient(plan_.schedule);
  std::set<int> recomputed;
  auto emit = [&](int id) {
    const auto& op = s_.ops[std::size_t(id)];
    const int r = region_[std::size_t(op.layer)];
    if (r >= 0 && recomputed.insert(r).second)  // the region's forward reruns first
      for (int l : region_layers_[std::size_t(r)])
        for (int f : f_ops_[std::size_t(l)]) seq.ops.push_back({f, 1});
    seq.ops.push_back({id, 0});
    if (fused_updates && op.kind == OpKind::BackwardWeight)
      for (int u : u_ops_[std::size_t(op.layer)]) seq.ops.push_back({u, 0});
  };
  seq.phase_start.push_back(int(seq.ops.size()));
  for (int id : backward)
    if (!split || s_.ops[std::size_t(id)].kind != OpKind::BackwardWeight) emit(id);
  if (split) {
    seq.phase_start.push_back(int(seq.ops.size()));
    for (int id : backward)
      if (s_.ops[std::size_t(id)].kind == OpKind::BackwardWeight) emit(id);
  }
  return seq;
}

// A tensor of a recompute region, touched by that region's recomputing forward or its
// backward, is the recomputed copy (generation 1); everything else is the original.
int ChunkProfiler::generation_of(const VOp& v, int tensor) const {
  const int owner = owned_[std::size_t(tensor)];
  if (owner < 0) return 0;
  const auto& op = s_.ops[std::size_t(v.op)];
  if (region_[std::size_t(op.layer)] != owner) return 0;
  const bool backward = op.kind == OpKind::BackwardInput || op.kind == OpKind::BackwardWeight;
  return v.generation == 1 || backward ? 1 : 0;
}

std::map<std::pair<int, int>, ChunkProfiler::Life> ChunkProfiler::lifetimes(
    const Sequence& seq, GradChange grads, bool prev_grads_live) const {
  std::map<std::pair<int, int>, Life> lives;
  // Grads read by an update outside a backward (forward-fused's U before F; eager's step)
  // are the ones the backward left: live from the start, freed by their U where
  // prev_grads_live (else a persistent buffer: constant, not replayed).
  const int backward_start = seq.phase_start.size() > 1 ? seq.phase_start[1] : int(seq.ops.size());
  for (int k = 0; k < int(seq.ops.size()); ++k) {
    const auto& op = s_.ops[std::size_t(seq.ops[std::size_t(k)].op)];
    const bool left_by_backward = op.kind == OpKind::Update && k < backward_start;
    for (int p = 0; p < int(op.passes.size()); ++p)
      for (auto a : op.passes[std::size_t(p)].accesses) {
        const auto& t = s_.tensors[std::size_t(a.tensor)];
        if (t.category == TensorCategory::Weights || t.category == TensorCategory::OptimizerState)
          continue;
        int gen = 0;
        bool live_at_start = false, kept = false;
        if (t.category == TensorCategory::Grads) {
          if (left_by_backward) {
            if (!prev_grads_live) continue;
            gen = kPrevGrads;
            live_at_start = true;
          } else {
            if (grads == GradChange::Present) continue;
            live_at_start = grads == GradChange::Free;
            kept = grads == GradChange::Alloc;
          }
        } else {
          gen = generation_of(seq.ops[std::size_t(k)], a.tensor);
        }
        Life& life = lives[{a.tensor, gen}];
        life.first = std::min(life.first, std::make_pair(k, p));
        life.last = std::max(life.last, std::make_pair(k, p));
        life.live_at_start = life.live_at_start || live_at_start;
        life.kept = life.kept || kept;
        life.mid_op_free = op.kind == OpKind::Update && t.category == TensorCategory::Temporaries;
      }
  }
  return lives;
}

std::vector<PhaseBytes> ChunkProfiler::replay(const Sequence& seq, GradChange grads,
                                              bool prev_grads_live) const {
  const auto lives = lifetimes(seq, grads, prev_grads_live);
  CategoryBytes live;
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> starts, ends;
  for (const auto& [key, life] : lives) {
    const auto& t = s_.tensors[std::size_t(key.first)];
    if (life.live_at_start)
      live[t.category] += bytes_[std::size_t(key.first)];
    else
      starts[life.first].push_back(key);
    if (life.kept) continue;
    const int last_op = life.last.first;
    const auto& op = s_.ops[std::size_t(seq.ops[std::size_t(last_op)].op)];
    ends[life.mid_op_free ? life.last : std::make_pair(last_op, int(op.passes.size()) - 1)]
        .push_back(key);
  }
  std::vector<PhaseBytes> phases;
  CategoryBytes start = live, top = live;
  auto close_phase = [&] {
    phases.push_back({top - start, live - start});
    start = top = live;
  };
  std::size_t next_phase = 1;
  for (int k = 0; k < int(seq.ops.size()); ++k) {
    while (next_phase < seq.phase_start.size() && seq.phase_start[next_phase] == k) {
      close_phase();
      ++next_phase;
    }
    const auto& op = s_.ops[std::size_t(seq.ops[std::size_t(k)].op)];
    for (int p = 0; p < int(op.passes.size()); ++p) {
      if (auto it = starts.find({k, p}); it != starts.end())
        for (auto key : it->second)
          live[s_.tensors[std::size_t(key.first)].category] += bytes_[std::size_t(key.first)];
      if (live.total() > top.total()) top = live;
      if (auto it = ends.find({k, p}); it != ends.end())
        for (auto key : it->second)
          live[s_.tensors[std::size_t(key.first)].category] -= bytes_[std::size_t(key.first)];
    }
  }
  while (phases.size() < seq.phase_start.size()) close_phase();
  return phases;
}

ChunkPasses ChunkProfiler::passes(int chunk, bool with_updates, GradChange grads,
                                  bool fused_updates) const {
  const Sequence seq = sequence(chunk, with_updates, fused_updates);
  const auto phases = replay(seq, grads, with_updates);
  ChunkPasses out;
  out.forward = phases.at(0);
  out.backward = phases.at(1);
  if (phases.size() > 2) out.weight = phases[2];
  return out;
}

PhaseBytes ChunkProfiler::optimizer_step(int chunk, bool free_grads) const {
  Sequence seq;
  seq.phase_start.push_back(0);
  const int n = int(trace_.layers.size());
  const int end = chunk + 1 < chunks() ? first_[std::size_t(chunk) + 1] : n;
  for (int l = first_[std::size_t(chunk)]; l < end; ++l)
    for (int id : u_ops_[std::size_t(l)]) seq.ops.push_back({id, 0});
  return replay(seq, GradChange::Present, free_grads).at(0);
}

}  // namespace fusim::parallel
