#pragma once
// The timing of the `tensor` fidelity: bandwidth pipes instead of lines. A chunk of an op
// (all its ranges, on all the op's cores) is one *flow* with a demand on each resource the
// line model's units would occupy (sim/mem/cache/hierarchy.h):
//  - the port of each private level, per core: one unit looked up there takes the level's
//    port_occupancy (cycle / ports) — a core issues at most one line per cycle;
//  - the port of each shared level, for all cores together;
//  - the MSHRs of each level (per core for private levels, all cores for shared ones):
//    every unit that misses every level holds one from its issue until memory answers,
//    path latency + memory latency (Little's law: per-core misses in flight x line /
//    latency bounds a core's miss bandwidth);
//  - main memory's bandwidth, at the read/write mix of the flows on it (memory_curve.h),
//    whose read latency grows with the load (the curves): the MSHR demand and the load
//    are solved together.
// Dirty victims are posted, as in the line model: nobody waits for them. The victims of
// fills from memory leave with the misses that evicted them (one FIFO in front of the
// memory), so they are part of the flow's memory demand; the others (victims of fills from
// a cache level, or of stores that allocate without a fetch) join the FIFO at once: a
// flow that uses memory anyway moves them at its own pace with the rest of its demand
// (memory_demand below); those of a flow that does not are served as they come while
// memory has room, past that they queue (the backlog), drained at memory's write
// bandwidth, and every read behind them waits (a strict FIFO).
// Flows share resources max-min fairly at equal unit rates (the line model alternates a
// core's concurrent ranges at its port and serves shared ports first come first served);
// rates are recomputed whenever a flow starts or finishes. A flow's work is done when
// every resource has served its demand at the flow's rate; it completes a tail latency
// later (its last unit's: the deepest level it reached, or the miss path and memory's
// read latency at the load of the other flows: its own queue is in its work).
// The first batch of a core's misses (one per MSHR) is in that tail, not in the MSHR
// demand: a core with M misses and m MSHRs takes M/m latencies, not M/m + 1. Only the
// MSHRs free when the flow starts take a batch at once, though: a flow that starts while
// another flow of its cores holds their MSHRs (the next chunk of a pass, double buffered
// behind the one in flight) waits for them like any later miss, and one that starts in
// such a flow's tail finds the part of its last batch already answered free (the line
// model's cores issue into each MSHR as it frees). Exempting every flow's first batch
// gave each chunk a latency for free: K chunks of M misses on m MSHRs took
// (K M/m - K + 1) latencies instead of K M/m, the tensor fidelity 8% under line on
// streaming ops at 256 KiB chunks on 40 cores (2-3% at 1-4 MiB).
//
// What it leaves out: queueing delay below saturation at ports (the line model's ports
// are deterministic, its queueing small until a port is full), the order of units within
// a chunk (a range whose first half hits and second half misses is not slower than one
// whose hits and misses interleave).
//
// Deterministic (doubles in a fixed order of operations); not thread-safe.
#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "mem/residency/memory_curve.h"

namespace fusim::residency {

constexpr int kMaxPipeLevels = 8;

struct PipeLevel {
  bool shared = false;
  Tick unit_time = 0;      // port time of one unit (ps)
  std::int64_t mshrs = 0;  // per instance
  Tick hit_latency = 0;    // issue to data for a unit found here (lookups 0..this level)
};

struct PipeConfig {
  std::vector<PipeLevel> levels;
  Tick miss_path_latency = 0;  // issue to memory for a unit that misses every level
  double unit_bytes = 64;
};

struct FlowWork {
  int group = 0;  // the cores (their private ports and MSHRs are the group's alone)
  int cores = 1;
  double units = 0;                                      // units the flow covers (its weight)
  std::array<double, kMaxPipeLevels> lookups{};          // units looked up per level, all cores
  double memory_reads = 0;                               // units read from memory (hold MSHRs)
  double memory_read_bytes = 0, memory_write_bytes = 0;  // writes: demand (waited for)
  double writeback_bytes = 0;  // dirty victims leaving with the flow's misses
  double posted_bytes = 0;     // dirty victims posted at once
  double read_regions = 1;     // streams the memory reads form (streaming_regions)
  double aligned = 0;          // share of the reads' bytes in aligned streams (memory_curve.h)
  int deepest = 0;             // deepest level reached (levels = memory)
};

class Pipes {
 public:
  using Done = std::function<void(Tick finish)>;
  Pipes(EventQueue& queue, PipeConfig config, MemoryCurve& memory);

  void start(const FlowWork& work, Done done);
  int active() const { return static_cast<int>(flows_.size()); }
  // The memory bandwidth (bytes/s) and read latency of the current rates.
  double memory_bandwidth() const { return memory_rate_ * 1e12; }
  Tick memory_latency() const { return memory_latency_; }
  double backlog_bytes() const { return backlog_; }

 private:
  struct Flow {
    FlowWork work;
    Done done;
    double remaining = 1;  // fraction of the work left
    double exempt = 1;     // fraction of its first batch of misses issued at once (in the tail)
    double rate = 0;       // fraction per ps
    Tick tail = 0;
    std::vector<double> coeff;  // resource time per unit, by resource index (sparse below)
  };
  // A resource: capacity per ps and, for the solve, the sums of the flows on it.
  struct Resource {
    double capacity = 1;
    bool mshr = false;  // its demand scales with the miss latency
    int group = -1;     // private resources: the group they belong to
  };

  void advance_to_now();
  // A flow's first batch of misses: one per MSHR of its cores, at the tightest level.
  double first_batch(const FlowWork& w) const;
  // Misses of flow f in flight at its current rate, as a fraction of its first batch (1:
  // its cores' MSHRs all held).
  double mshrs_held(const Flow& f) const;
  // The fraction of a new flow's first batch that finds its cores' MSHRs free now.
  double free_batch(const FlowWork& w);
  // Bytes the flow moves on memory at its own pace: its reads, writes and the victims
  // leaving with its misses, and, for a flow that uses memory anyway, its posted victims
  // too. Those join the FIFO behind the flow's own misses, so in the steady state the
  // flow cannot post faster than memory serves it (the line model's FIFO blocks it); a
  // reservation for them ahead of the flows (posting_bytes) would be sized by the
  // poster's unthrottled rate, and the flow, throttled below it, would leave memory idle
  // (resnet50 b32 backward-fused on the H100 at 2800 MT/s: 51 ms at 21 MB/s).
  static double memory_demand(const FlowWork& w) {
    const double own = w.memory_read_bytes + w.memory_write_bytes + w.writeback_bytes;
    return own > 0 ? own + w.posted_bytes : 0;
  }
  // Posted victims of a flow that does not use memory otherwise (fills from a cache
  // level, stores allocating without a fetch): served ahead of the flows, queued past that.
  static double posting_bytes(const FlowWork& w) {
    return w.memory_read_bytes + w.memory_write_bytes + w.writeback_bytes > 0 ? 0 : w.posted_bytes;
  }
  void solve();
  void fill(double latency_ps);  // max-min fair rates at a given miss latency
  // Memory read latency at the load of the flows other than f (and the posted victims).
  Tick others_latency(const Flow& f);
  void schedule_next();
  void on_wake(std::uint64_t generation);
  int resource_of(int group, int level, bool mshr);

  EventQueue& queue_;
  PipeConfig config_;
  MemoryCurve& memory_;
  std::vector<Flow> flows_;
  std::vector<Resource> resources_;
  std::vector<std::array<int, 2 * kMaxPipeLevels>> group_resources_;  // per group: ports, MSHRs
  std::vector<int> shared_resources_;  // per level: port, MSHR (for shared levels)
  int memory_resource_ = -1;
  // Per group: the flows that finished their work and wait for their last misses (the
  // tail), with the share of the group's MSHRs those held when the work ended.
  struct Tail {
    Tick work_end = 0, end = 0;
    double held = 0;
  };
  std::vector<std::vector<Tail>> tails_;
  Tick last_ = 0;
  std::uint64_t generation_ = 0;
  double memory_rate_ = 0;   // bytes per ps, of the current rates
  Tick memory_latency_ = 0;  // read latency at that rate
  double write_share_ = 0;
  int regions_ = 1;
  double aligned_ = 0;
  bool memory_unlimited_ = false;
  double backlog_ = 0;  // posted victims queued in front of memory (bytes)
  double posted_ = 0;   // bytes/ps of victims posted by flows that do not read memory
  double drain_ = 0;    // bytes/ps at which memory takes posted victims now
  // solve() scratch
  std::vector<double> level_, used_;
  std::vector<char> frozen_;
  // Solutions already found: the rates depend only on the flows' works (in order) and on
  // whether posted victims are queued, and a pass's chunks repeat the same works, so a
  // solve is mostly a look-up (the same numbers as solving again: results do not change).
  // Cleared when it grows past kMaxSolutions (deterministic).
  struct Solution {
    std::vector<double> rates;
    double memory_rate = 0, posted = 0, drain = 0, memory_capacity = 0, write_share = 0;
    Tick memory_latency = 0;
    int regions = 1;
    double aligned = 0;
    bool memory_unlimited = false;
  };
  static constexpr std::size_t kMaxSolutions = 4096;
  std::uint64_t solution_key(std::vector<double>& key) const;
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::vector<double>, Solution>>>
      solutions_;
  std::size_t solution_count_ = 0;
  std::vector<double> key_;  // scratch
  void solve_uncached();
};

}  // namespace fusim::residency
