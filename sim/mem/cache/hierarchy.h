#pragma once
// The cache hierarchy of a machine: private per-core levels (L1, L2) above shared last
// levels, misses going to a mem::MemoryPort (the DRAM controller, or FixedLatencyMemory in
// tests and `fusim cache`). Cache contents persist for the object's lifetime, across ops
// and steps: that is what decides whether fusing the optimizer helps.
//
// Fidelity is a knob, not a fork: every access is expanded into *units* (the 64 B line in
// Fidelity::Line, the configured block, e.g. 4 KiB, in Fidelity::Block) and each unit goes
// through the same code. In block fidelity each level keeps its capacity in bytes
// (size / block units), its associativity capped at that count.
//
// Two ways to use it, freely mixed on one object:
//
// (a) Synchronous, for counting and for executors that do their own timing:
//       int level = h.access(core, addr, AccessKind::Read);   // 0 = L1 ... levels() = memory
//       RangeResult r = h.access_range(core, addr, bytes, AccessKind::Write);
//     State and stats change at once; no event is scheduled on hits. If a memory port is
//     attached, line misses and dirty writebacks are queued to it (sent when it will accept,
//     retried each memory-facing cycle) and their completions are ignored.
//
// (b) Timed, for the simulated executor running several cores/streams on one EventQueue:
//       h.attach_memory(queue, port);
//       h.start_range(core, addr, bytes, AccessKind::Read, [&](Tick finish) {...});
//     Units are issued in address order from queue.now(): at most `ports` units per cycle
//     of the first level of that core; a unit found at level s completes
//     hit_latency(s) after its issue (the sum of latency_cycles of levels 0..s, each in its
//     own clock); a unit missing everywhere needs a free MSHR at every level instance on its
//     path (issue stalls until one frees), is sent to memory miss_issue_latency() after its
//     issue, and completes when memory answers. MSHRs count first-level lines: a block unit
//     of k lines takes k, so it goes to memory in pieces of at most the free lines, each
//     piece sent miss_issue_latency() after lines free (plus its wait at the ports below
//     the first level, taken for its own lines then, not for the whole unit at once) and
//     holding them until it is answered (block and line fidelity have the same
//     memory-level parallelism and port occupancy); later
//     units of its range wait until its last piece is sent. The callback runs (as an event,
//     priority Response) once every unit of the range has completed, with the finish time. A write
//     covers whole units except possibly the first and the last of its range (write-validate levels
//     fetch only those). The replacement state is updated when a unit issues (not when its data
//     returns), so a later access to a line whose fill is in flight counts as a hit at hit latency.
//     Dirty writebacks are posted: they use memory bandwidth but delay nobody. A victim
//     evicted to memory by a unit that misses every level leaves with that unit's pieces,
//     the same lines of it as the piece has (each line filled evicts one line; in line
//     fidelity the victim leaves as its miss issues): a 4 KiB block's writeback is not one
//     burst of 64 lines, which an open-row DRAM controller would serve as row hits that
//     the 64 separate line writebacks it stands for, interleaved with reads, do not get.
//     A port serves units in the order they arrive at it, whatever order they were booked
//     in (port_calendar.h: cores book ahead of the event queue's now). Requests the memory
//     refuses wait in a FIFO per memory destination (MemoryPort::destination: a DRAM
//     channel), so a full channel holds up only the lines behind it for that channel. Block
//     pieces stand for lines of several channels: they go in parts of a line
//     (MemRequest::part_bytes), which the DRAM lets into each channel's queue as those lines
//     would enter, in the same order (dram_system.h); a memory that takes a piece whole
//     only has it wait in one FIFO of its own.
//
// Per-level stats sum the instances; per-core stats of private levels are kept too.
// Not thread-safe; no global state (a sweep builds many hierarchies in one process).
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "core/stats.h"
#include "mem/cache/cache.h"
#include "mem/cache/cache_config.h"
#include "mem/memory_port.h"

namespace fusim::cache {

enum class Fidelity : std::uint8_t { Line, Block };
// "line" | "block"; anything else throws InputError(message).
Fidelity parse_fidelity(const std::string& name);
const char* to_string(Fidelity fidelity);

enum class AccessKind : std::uint8_t {
  Read,
  Write,
  // Non-temporal (streaming) store of whole units: bypasses every level, drops cached copies
  // (dirty or not: the store overwrites them) and goes straight to memory as a write.
  StreamingWrite,
};

constexpr int kMaxLevels = 8;

// How many units of a range each level served; served[levels()] is memory.
struct RangeResult {
  std::array<std::uint64_t, kMaxLevels + 1> served{};
  std::uint64_t units = 0;
};

struct MemoryTraffic {
  std::uint64_t reads = 0, writes = 0;  // requests (units)
  std::uint64_t read_bytes = 0, write_bytes = 0;
  MemoryTraffic operator-(const MemoryTraffic& o) const {
    return {reads - o.reads, writes - o.writes, read_bytes - o.read_bytes,
            write_bytes - o.write_bytes};
  }
};

struct LevelStats {
  std::string name;
  bool shared = false;
  CacheStats total;                  // sum over instances
  std::vector<CacheStats> per_core;  // private levels: one per core; shared: empty
  LevelStats operator-(const LevelStats& o) const;
};

struct HierarchyStats {
  std::vector<LevelStats> levels;
  MemoryTraffic memory;
  HierarchyStats operator-(const HierarchyStats& o) const;
};

// Stats as a printable tree (core/stats.h): levels[...] with per-core children, and memory.
StatsNode to_stats_node(const HierarchyStats& stats);

// The memory requests one access made, captured for the timed path instead of posted: its
// own (demand) requests, and the writebacks of the dirty victims it evicted to memory (at
// most one per level).
struct CapturedRequests {
  std::array<mem::MemRequest, 2 * kMaxLevels> requests;
  int count = 0;
  std::array<mem::MemRequest, kMaxLevels> writebacks;
  int writeback_count = 0;
};

class TimedPath;  // timed_path.h

class Hierarchy {
 public:
  using Done = std::function<void(Tick finish)>;

  // Throws InputError (naming config.file and the level's JSON path) when the geometry does
  // not fit the fidelity (a level smaller than one block, tree-plru on a capped non-power-of-
  // two associativity). cores >= 1.
  Hierarchy(const HierarchyConfig& config, Fidelity fidelity, int cores);
  ~Hierarchy();
  Hierarchy(const Hierarchy&) = delete;
  Hierarchy& operator=(const Hierarchy&) = delete;

  int levels() const { return static_cast<int>(levels_.size()); }
  int memory_level() const { return levels(); }
  int cores() const { return cores_; }
  Fidelity fidelity() const { return fidelity_; }
  std::uint64_t unit_bytes() const { return std::uint64_t{1} << shift_; }
  const std::string& level_name(int level) const;
  // The array of `level` seen by `core` (the shared one for shared levels).
  const Cache& cache(int level, int core) const;

  // --- (a) synchronous ---------------------------------------------------------------
  // The unit holding addr; returns the level that served it (levels() = memory).
  int access(int core, Addr addr, AccessKind kind);
  // Every unit overlapping [addr, addr + bytes); bytes == 0 touches nothing.
  RangeResult access_range(int core, Addr addr, std::uint64_t bytes, AccessKind kind);
  // Writes every dirty line back to memory and empties all levels (end of a run).
  void flush();

  // --- (b) timed -----------------------------------------------------------------------
  // Both must outlive the hierarchy. Until attached, memory traffic is only counted.
  void attach_memory(EventQueue& queue, mem::MemoryPort& port);
  void start_range(int core, Addr addr, std::uint64_t bytes, AccessKind kind, Done done);
  // Issue-to-completion time of a unit found at `level` (sum of lookups 0..level).
  Tick hit_latency(int level) const { return path_latency_[static_cast<std::size_t>(level)]; }
  // Issue-to-memory-send time of a unit that misses every level.
  Tick miss_issue_latency() const { return path_latency_[levels_.size() - 1]; }
  // Time one unit occupies a port of the first level (cycle / ports, scaled by units/line).
  Tick port_occupancy(int level) const;
  // Work outstanding (ranges in flight or memory requests not yet sent/answered).
  bool busy() const;
  // One line per level instance and per range in flight, for the watchdog's dump.
  std::string describe_state() const;

  HierarchyStats stats() const;

  // --- for the timed path (timed_path.h) ------------------------------------------------
  const LevelConfig& level_config(int level) const {
    return levels_[static_cast<std::size_t>(level)].config;
  }
  // Instances of a level: one per core (private) or one (shared).
  int instances(int level) const {
    return static_cast<int>(levels_[static_cast<std::size_t>(level)].instances.size());
  }
  // Units inserted into any level so far: while no fill is of it, a unit that missed every
  // level still does (contents only grow by fills), so a parked range need not look again.
  std::uint64_t fills() const { return fills_; }
  bool misses_everywhere(int core, std::uint64_t unit) const;
  // Whether `unit` may have been inserted into a level since fills() read `since`: false
  // only where the last kFillLog fills cover that stretch and none was of it. A parked
  // range asks before misses_everywhere: in line fidelity 2-4 fills come between two of
  // its looks, each a look at every level (15% of a run under perf).
  bool maybe_filled_since(std::uint64_t unit, std::uint64_t since) const {
    if (since > fills_ || fills_ - since > kFillLog) return true;  // (UINT64_MAX: never parked)
    for (std::uint64_t i = since; i != fills_; ++i)
      if (fill_log_[i % kFillLog] == unit) return true;
    return false;
  }
  // The lookup of access(), on a unit number; the memory requests it makes go into `out`
  // (up to its capacity; any more are posted as usual).
  int access_captured(int core, std::uint64_t unit, AccessKind kind, bool whole,
                      CapturedRequests& out) {
    capture_ = &out;
    const int served = access_unit(core, unit, kind, whole);
    capture_ = nullptr;
    return served;
  }

 private:
  struct Level {
    LevelConfig config;
    std::vector<Cache> instances;  // one per core (private) or one (shared)
    bool exclusive = false, inclusive = false, write_back = true, write_allocate = true;
    Tick port_occupancy = 0;
  };
  Cache& instance(int level, int core) {
    Level& l = levels_[static_cast<std::size_t>(level)];
    return l.instances[l.config.shared ? 0 : static_cast<std::size_t>(core)];
  }
  // whole: the access covers the entire unit (a write-validate level then skips the fetch).
  int access_unit(int core, std::uint64_t unit, AccessKind kind, bool whole);
  int read_from(int level, int core, std::uint64_t unit, bool& dirty);
  int read_after_miss(int level, int core, std::uint64_t unit, bool& dirty);
  int write_at(int level, int core, std::uint64_t unit, bool whole);
  int write_after_miss(int level, int core, std::uint64_t unit, bool whole);
  void fill(int level, int core, std::uint64_t unit, bool dirty);
  void evicted(int level, int core, Victim victim);
  void write_back_into(int level, int core, std::uint64_t unit);
  void streaming_write(int core, std::uint64_t unit);
  void memory_request(int core, std::uint64_t unit, bool is_write, bool demand);

  std::vector<Level> levels_;
  int cores_;
  std::uint64_t fills_ = 0;  // see fills()
  static constexpr std::uint64_t kFillLog = 16;
  std::array<std::uint64_t, kFillLog> fill_log_{};  // the units of the last fills, by fills_
  Fidelity fidelity_;
  unsigned shift_;
  std::vector<Tick> path_latency_;
  MemoryTraffic memory_;
  CapturedRequests* capture_ = nullptr;  // set only while access_captured runs
  std::unique_ptr<TimedPath> timing_;
  std::string file_;
};

}  // namespace fusim::cache
