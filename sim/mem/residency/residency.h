#pragma once
// The cache hierarchy of the `tensor` fidelity: which level serves each byte of an access
// of [addr, addr + bytes), computed from range residency (range_stack.h) in O(segments
// touched) instead of per line, with the line model's semantics (sim/mem/cache/
// hierarchy.h): every level filled on the way up (exclusive levels only by victims, a hit
// there moves the bytes up), write-back levels keeping written bytes dirty, write-allocate
// levels reading for ownership except write-validate levels under a write of whole units,
// write-through levels passing writes down, inclusive levels back-invalidating the levels
// above, dirty victims written back to the nearest level below that holds them, else to
// memory. Units are the first level's line, as in line fidelity.
//
// What it does not model, and why that is close: associativity and the replacement
// policy (every level is a fully associative LRU of its size, unless SetConflicts is
// asked for, below: for the streams of a training step, whose ranges spread evenly over
// the sets, set-associative LRU evicts the same bytes up to a set's worth); a private
// level's per-core instances are one stack per group of cores ("bin", capacity = the sum
// of its cores' instances, which all ops of a bin use evenly; where ops run on overlapping
// core sets, a bin per set, add_bin and shared_cores.h): a byte hits only for the core that
// loaded it (Owner, range_stack.h), and of two splits of the same bytes over the same cores only an
// identical one finds them on the same cores (the line model finds about 1/cores of them, where a
// different split happens to give a core some of its old bytes again).
//
// Not thread-safe; no global state.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mem/cache/cache_config.h"
#include "mem/cache/hierarchy.h"
#include "mem/residency/range_stack.h"
#include "mem/residency/shared_cores.h"

namespace fusim::residency {

constexpr int kMaxLevels = cache::kMaxLevels;

struct AccessRequest {
  int bin = 0;  // the group of cores whose private stacks the access uses
  Owner owner;  // which of its cores holds each byte (range_stack.h)
  Addr addr = 0;
  std::uint64_t bytes = 0;
  bool write = false;
};

// What one access (or a sum of them) asked of each level and of memory. Counts are in
// units (lines of the first level), bytes are unit multiples.
struct Served {
  std::uint64_t units = 0;  // units the access covers
  // Units looked up at each level (a level's port time), and the level that served each
  // unit as the line model's RangeResult counts it (served[levels()] = memory): the level
  // that held it, that took a whole-unit write without fetching (write-validate), or that
  // served the read for ownership; a write passed on through a write-through level is
  // looked up below but served where it first landed.
  std::array<std::uint64_t, kMaxLevels> lookups{};
  std::array<std::uint64_t, kMaxLevels + 1> served{};
  std::uint64_t memory_read_bytes = 0;   // demand reads: misses of every level (RFO included)
  std::uint64_t memory_write_bytes = 0;  // demand writes reaching memory (write-through,
                                         // no-allocate): waited for, no MSHR
  std::uint64_t writeback_bytes = 0;     // dirty victims written back to memory (posted)
  // Of those, the victims of fills that did not read memory (hits below, or stores that
  // allocate without a fetch): the line model posts them at once, the others leave with
  // the misses that evicted them (sim/mem/cache/hierarchy.h).
  std::uint64_t unpaced_writeback_bytes = 0;
  Served& operator+=(const Served& o);
};

// How a level's `assoc` is used. FullyAssociative: not at all (the exact fully associative
// LRU of range_stack.h). SetConflicts: a non-inclusive level of more than one set, with no
// exclusive level below it, keeps bytes by the expected set counts of set_conflicts.h (a
// hit fraction by reuse distance instead of the cliff at the capacity; bytes lost to set
// conflicts are written back as the fills that push them out go on, as a cache writes back
// the dirty lines it evicts: range_stack.h). Checked against the line model's
// set-associative caches (tests/residency/test_set_conflicts.cpp: units served and bytes
// written to memory within 1%). Not on by default in the tensor fidelity
// (SimOptions::tensor_set_conflicts): against line it is better on some cases and worse
// on others (tests/exec/test_tensor_fidelity.cpp). (Before its dirty bytes were written
// back as they were lost, A100 resnet18 batch 1 32x32 eager SGD was 56% slower than line
// with it, for the same DRAM bytes: a dirty tensor kept past the L2's capacity was written
// back all at once when the next step re-read it; now +3.6%.)
enum class Associativity { FullyAssociative, SetConflicts };

class ResidencyHierarchy {
 public:
  // bin_cores[b]: cores of bin b (>= 1 each); a private level's stack of bin b holds
  // bin_cores[b] x its size. Throws InputError (naming config.file and the level) when a
  // level is smaller than one unit.
  ResidencyHierarchy(const cache::HierarchyConfig& config, const std::vector<int>& bin_cores,
                     Associativity assoc = Associativity::FullyAssociative);

  void access(const AccessRequest& request, Served& served);
  // A bin of its own for a set of cores (ids below the sum of bin_cores) whose private
  // stacks the bins of other sets age by what they fill into shared cores (shared_cores.h):
  // for machines whose ops run on overlapping core sets (GPU kernels on free SMs). Returns
  // the bin's index.
  int add_bin(const std::vector<int>& cores);

  int levels() const { return static_cast<int>(levels_.size()); }
  std::uint64_t unit_bytes() const { return unit_; }
  int bins() const { return static_cast<int>(bin_cores_.size()); }
  const std::string& level_name(int level) const;
  bool level_shared(int level) const;
  const RangeStack& stack(int level, int bin) const;
  // Per-level totals (per_core left empty: a bin is one stack) and memory traffic, in the
  // line model's terms so that both fidelities report alike.
  cache::HierarchyStats stats() const;

 private:
  struct Level {
    cache::LevelConfig config;
    std::vector<RangeStack> stacks;  // one per bin (private) or one (shared)
    bool exclusive = false, inclusive = false, write_back = true;
    std::uint64_t size = 0;  // of one instance, whole units
    bool sets = false;       // kept by set counts (Associativity::SetConflicts)
    cache::CacheStats stats;
  };
  struct Context {
    int bin = 0;
    Owner owner;
    Addr partial_first = kNoUnit, partial_last = kNoUnit;  // units the write covers in part
    Served* served = nullptr;
    bool primary = true;  // this walk decides which level served the units
  };
  static constexpr Addr kNoUnit = ~Addr{0};

  RangeStack& stack_of(int level, int bin);
  SetGeometry geometry(const Level& level, std::uint64_t capacity) const;
  // Bins of add_bin: what other sets filled into their cores, before and after an access.
  void age(const Context& c, int set);
  void count_fills(const Context& c, int set, const std::array<std::uint64_t, kMaxLevels>& before);
  Addr step_limit(int bin) const;
  Owner owner_at(int level, const Context& c) const;
  std::uint64_t units(Addr lo, Addr hi) const { return (hi - lo) >> shift_; }
  // Where a level's read hands what it served, piece by piece (FillAbove in the .cpp).
  class Upward {
   public:
    // dirty: the bytes moved up out of an exclusive level; from_memory: they were read
    // from memory (their fills' victims leave with those misses).
    virtual void served(Addr lo, Addr hi, bool dirty, bool from_memory) = 0;

   protected:
    ~Upward() = default;
  };
  class FillAbove;
  class Discard;
  void read_at(int level, const Context& c, Addr lo, Addr hi, Upward& up);
  void fill(int level, const Context& c, Addr lo, Addr hi, bool dirty, bool write, bool from_memory,
            Upward& up);
  void write_at(int level, const Context& c, Addr lo, Addr hi);
  // The write passed on below level-1 (write-through, or no allocation at level-1).
  void write_below(int level, const Context& c, Addr lo, Addr hi, bool primary);
  void victims_of(int level, const Context& c, std::vector<Piece>& victims);
  void victim_below(int level, const Context& c, const Piece& victim);
  void lost_dirty(int level, const Context& c, Addr lo, Addr hi);
  void write_back_into(int level, const Context& c, const Piece& piece);
  void back_invalidate(int level, const Context& c, const Piece& victim, std::vector<Piece>& dirty);

  std::vector<Level> levels_;
  std::vector<int> bin_cores_;
  std::vector<int> set_of_bin_;  // add_bin's bins: their index in shared_; -1 for the others
  std::unique_ptr<SharedCores> shared_;
  std::uint64_t unit_ = 64;
  unsigned shift_ = 6;
  cache::MemoryTraffic memory_;
  std::string file_;
  // Scratch per level (the walks recurse one level down at a time, never into the same
  // level twice at once), kept to avoid allocations per access.
  std::array<std::vector<Piece>, kMaxLevels + 1> victims_, missing_;
  std::vector<Piece> removed_, dirty_parts_;
  bool paced_ = false;  // the victims being handled were evicted by a fill from memory
};

}  // namespace fusim::residency
