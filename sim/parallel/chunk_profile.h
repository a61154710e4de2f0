#pragma once
// What one microbatch of one model chunk holds on its GPU, pass by pass (issue 20's memory
// model, without simulation). The tensors and accesses are the schedule's own (a
// single-microbatch eager schedule of the trace: schedule/layer_passes.cpp is the one
// definition of what each op reads, writes and keeps for backward); their sizes are scaled
// to one GPU of the plan (tensor, sequence and context parallelism, the distributed
// optimizer) and rounded as the caching allocator rounds them (512 B). Per chunk, a pass is
// replayed over the chunk's ops: a tensor lives from the first op that touches it to the end
// of the last one (optimizer temporaries: their last pass), as schedule/allocator.cpp has
// it; a tensor the chunk's forward writes and its backward reads is held in between.
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "parallel/plan.h"
#include "parallel/tp_partition.h"
#include "schedule/schedule.h"

namespace fusim::parallel {

// Bytes by the schedule's tensor categories (weights, grads, optimizer state, activations,
// temporaries, inputs).
struct CategoryBytes {
  std::array<std::int64_t, 6> by{};
  std::int64_t& operator[](schedule::TensorCategory c) { return by[std::size_t(c)]; }
  std::int64_t operator[](schedule::TensorCategory c) const { return by[std::size_t(c)]; }
  std::int64_t total() const;
  CategoryBytes& operator+=(const CategoryBytes& o);
  CategoryBytes& operator-=(const CategoryBytes& o);
  friend CategoryBytes operator+(CategoryBytes a, const CategoryBytes& b) { return a += b; }
  friend CategoryBytes operator-(CategoryBytes a, const CategoryBytes& b) { return a -= b; }
};

// The live bytes over one phase of a pass, relative to its start: at the phase's highest
// point (peak) and at its end.
struct PhaseBytes {
  CategoryBytes peak, end;
};

// How the param grads of a chunk change in its backward (W in zero-bubble schedules):
//  present:    allocated before and kept (a persistent buffer, or an earlier microbatch's);
//  alloc:      allocated by this backward and kept (the step's first microbatch);
//  alloc_free: allocated, then freed by the update fused right after each layer's Bw
//              (backward-fused with one microbatch per step);
//  free:       allocated before, freed by the fused update (backward-fused, last microbatch).
enum class GradChange { Present, Alloc, AllocFree, Free };

struct ChunkPasses {
  PhaseBytes forward;   // F
  PhaseBytes backward;  // B (with W's Bw ops unless the schedule splits them)
  PhaseBytes weight;    // W (zero-bubble only)
};

class ChunkProfiler {
 public:
  // `schedule`: the trace's single-microbatch eager schedule with the plan's memory options.
  ChunkProfiler(const workload::Trace& trace, const schedule::Schedule& schedule,
                const ParallelPlan& plan, std::vector<int> chunk_first_layer);

  int chunks() const { return int(first_.size()); }
  // Forward: with_updates: the first microbatch under forward-fused, each U_i (of the
  // previous step's grads, which it frees) right before F_i.
  ChunkPasses passes(int chunk, bool with_updates, GradChange grads, bool fused_updates) const;
  // Eager's optimizer step after the last backward: all U of the chunk; grads freed after
  // their U unless persistent.
  PhaseBytes optimizer_step(int chunk, bool free_grads) const;
  // Weights and optimizer state of the chunk (with a tied param's copy: Megatron keeps one
  // per stage holding a user, with its own optimizer state); its param grads.
  CategoryBytes persistent(int chunk) const;
  std::int64_t grad_bytes(int chunk) const;
  // The persistent tensors of a chunk, for deduplication over the chunks of one stage.
  const std::vector<int>& persistent_tensors(int chunk) const {
    return persistent_[std::size_t(chunk)];
  }
  std::int64_t device_bytes(int tensor) const { return bytes_[std::size_t(tensor)]; }
  schedule::TensorCategory category(int tensor) const {
    return s_.tensors[std::size_t(tensor)].category;
  }
  // What one microbatch's forward of the chunk keeps for its backward (the tensors touched
  // by both), with their bytes on one GPU; and their sum.
  std::vector<std::pair<int, std::int64_t>> saved_tensors(int chunk) const;
  std::int64_t saved_bytes(int chunk) const;
  const schedule::Schedule& schedule() const { return s_; }

 private:
  struct VOp {
    int op = 0;
    int generation = 0;  // 1: a recomputation of a forward op (its writes are new tensors)
  };
  struct Sequence {
    std::vector<VOp> ops;
    std::vector<int> phase_start;  // index of each phase's first op
  };
  // A tensor's (generation's) first and last touch in a sequence, as (op position, pass).
  struct Life {
    std::pair<int, int> first{std::numeric_limits<int>::max(), 0}, last{-1, -1};
    bool live_at_start = false, kept = false, mid_op_free = false;
  };
  std::map<std::pair<int, int>, Life> lifetimes(const Sequence& seq, GradChange grads,
                                                bool prev_grads_live) const;
  Sequence sequence(int chunk, bool with_updates, bool fused_updates) const;
  std::vector<PhaseBytes> replay(const Sequence& seq, GradChange grads, bool prev_grads_live) const;
  int generation_of(const VOp& v, int tensor) const;

  const workload::Trace& trace_;
  const schedule::Schedule& s_;
  ParallelPlan plan_;
  std::vector<int> first_;           // first trace layer of each chunk
  std::vector<int> chunk_of_;        // per trace layer
  std::vector<std::int64_t> bytes_;  // per schedule tensor, on one GPU
  std::vector<int> region_;          // per trace layer: recompute region id (-1: none)
  std::vector<std::vector<int>> region_layers_;
  std::vector<std::vector<int>> f_ops_, b_ops_, u_ops_;  // per layer (schedule op ids)
  std::vector<std::vector<int>> persistent_;             // per chunk
  std::vector<std::int64_t> grads_;                      // per chunk
  std::vector<int> owned_;  // per tensor: the recompute region whose forward writes it, or -1
};

}  // namespace fusim::parallel
