#pragma once
// The memory system of the `tensor` fidelity as the executor drives it: a chunk of an op
// (its slice of each range of a pass, on the op's cores) goes through range residency
// (residency.h: which level serves each byte, what reaches memory) and becomes one flow of
// the bandwidth pipes (pipes.h: when it is all in); one completion per chunk, no lines.
//
// Honoured from the machine: per cache level its size, line (of the first level: the
// unit), latency and clock, ports, MSHRs, sharing, inclusion, write policy, write
// allocation and validation; main memory through its curves (memory_curve.h). Not
// honoured: the replacement policy (LRU), associativity unless asked for (`assoc`: by
// default every level is a fully associative LRU of its size; SetConflicts keeps bytes by
// the expected counts of its sets, residency.h), and the order of lines within a chunk.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/event_queue.h"
#include "mem/cache/cache_config.h"
#include "mem/cache/hierarchy.h"
#include "mem/residency/memory_curve.h"
#include "mem/residency/pipes.h"
#include "mem/residency/residency.h"

namespace fusim::residency {

struct TensorRange {
  Addr addr = 0;
  std::uint64_t bytes = 0;
  bool write = false;
};

// How the ranges of a chunk interleave: the line model runs each range of each core as its
// own transfer, the transfers of a core taking turns at its first-level port a lookahead
// window (64 cycles, about 64 units) at a time (sim/mem/cache/hierarchy_timing.cpp), so a
// range read and written in one pass finds its bytes in L1 when it writes them. Here each
// range is split among the cores in granules of this many units, round robin (which core
// holds which bytes is then a function of the slice and the cores, as in the line model,
// only with another cut: either way only an identical split finds the same bytes on the
// same cores), and the ranges advance one granule per core at a time. A granule is the
// larger of that window and the first level's share per range (its size per core over
// the chunk's ranges): one round over every range then fits in a core's first level, so
// a range read and written in one pass still finds each granule there when it writes it
// (a fully associative LRU evicts nothing younger than its size), in fewer, larger
// accesses (resnet50 batch 32 on xeon-8380-ddr4, 3 ranges: 256 units instead of 64,
// 2.5x fewer instructions; step time +0.03%, DRAM bytes -0.03%).
constexpr std::uint64_t kInterleaveUnits = 64;

// The number of streams main memory sees for a chunk whose ranges read `bytes` from it
// (one entry per range): the count of ranges still reading, averaged over the bytes read.
// The line model runs each range of a core as its own transfer, the transfers taking turns
// at the core's port, so the ranges advance at equal rates and a short one finishes first:
// the bytes read while k ranges are still streaming reach the controller as k interleaved
// streams (the curves' `regions`: dram_curve.h), and a range of a few lines among a
// megabyte (a conv's 192 B input slice next to its 9.4 MB weight) adds a few lines of a
// second stream, not a second stream's row conflicts for the whole chunk. Counted as a
// stream per range (as before) it put resnet18's 3x3 512-channel layers (1x1 pixels, the
// weight streamed beside input and output slices that miss) on the curves of 3-4 regions,
// 15% below the bandwidth the line model reached at 4 cores x 12 MSHRs.
// Equal ranges give their count; {1, 2} gives (2^2 x 1 + 1 x 1) / 3 = 5/3. 0 when none.
double streaming_regions(std::vector<double> bytes);

// The share of a chunk's memory reads (`read_bytes`, one entry per range) in streams that
// advance in step with another at the same offset from a kTensorAlignment boundary
// (dram_curve.h, AlignedStream): ranges reading memory whose slices start in the same
// 4 KiB page of that offset and are the same size (within a page: then each core's piece
// of them is too). Such ranges are the same chunk of tensors the allocator placed at its
// boundaries; where they lie elsewhere or are cut in pieces of other sizes they drift
// through the banks as Stream's random bases do. 0 when none.
double aligned_share(const std::vector<TensorRange>& ranges, const std::vector<double>& read_bytes);

class TensorMemory {
 public:
  using Done = std::function<void(Tick finish)>;
  // bin_cores: cores per bin of private stacks (residency.h); cores are numbered bin by
  // bin. `memory` must outlive this object.
  TensorMemory(EventQueue& queue, const cache::HierarchyConfig& config,
               const std::vector<int>& bin_cores, MemoryCurve& memory,
               Associativity assoc = Associativity::FullyAssociative);

  // The id of a set of cores (interned; the same list, the same id).
  int group_of(const std::vector<int>& cores);
  // The bin of private stacks of group `group` alone (`cores` its list), aged by what
  // other groups fill into its cores (ResidencyHierarchy::add_bin): for GPUs, whose
  // kernels run on overlapping SM sets.
  int own_bin(int group, const std::vector<int>& cores);
  // Reads/writes one chunk: `ranges` are its slices, each split evenly over the `cores`
  // cores of group `group` in bin `bin`; `done` runs (as an event) when the pipes have
  // served it all. Returns what the chunk sends to main memory, as served.
  Served issue(int bin, int group, int cores, const std::vector<TensorRange>& ranges, Done done);

  int levels() const { return hierarchy_.levels(); }
  std::uint64_t unit_bytes() const { return hierarchy_.unit_bytes(); }
  Tick hit_latency(int level) const { return hit_latency_[static_cast<std::size_t>(level)]; }
  Tick miss_issue_latency() const { return hit_latency_.back(); }
  Tick port_occupancy(int level) const;
  cache::HierarchyStats stats() const { return hierarchy_.stats(); }
  std::uint64_t memory_bytes() const { return memory_bytes_; }
  const Pipes& pipes() const { return pipes_; }

 private:
  static PipeConfig pipe_config(const cache::HierarchyConfig& config);

  EventQueue& queue_;
  ResidencyHierarchy hierarchy_;
  Pipes pipes_;
  std::vector<Tick> hit_latency_;
  std::vector<Tick> unit_time_;
  std::map<std::vector<int>, int> groups_;
  std::vector<int> last_cores_;  // the last group asked for (usually asked again)
  int last_group_ = -1;
  std::vector<int> own_bins_;               // per group: its own bin, or -1
  std::uint64_t first_level_per_core_ = 0;  // bytes of one core's first-level instance
  std::uint64_t memory_bytes_ = 0;
};

}  // namespace fusim::residency
