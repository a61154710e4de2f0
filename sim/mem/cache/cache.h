#pragma once
// One set-associative cache array: tags in a flat vector (set * ways + way), a dirty bit per
// line, a replacement policy chosen by name, and the array's own stats. The hierarchy
// composes these; unit tests build them alone (tests/builders/cache_builder.h).
//
// Addresses inside are *unit numbers* (byte address >> log2(unit)); the unit is the line in
// line fidelity and the block in block fidelity. access()/contains() take byte addresses.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mem/cache/replacement.h"
#include "mem/memory_port.h"

namespace fusim::cache {

using mem::Addr;

enum class Op : std::uint8_t { Read, Write };

struct CacheStats {
  std::uint64_t accesses = 0;  // demand lookups (one per line touched)
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t writebacks = 0;  // dirty lines that left: evicted or back-invalidated
  std::uint64_t back_invalidations =
      0;  // lines removed because an inclusive level below evicted them
  CacheStats operator-(const CacheStats& o) const {
    return {accesses - o.accesses, hits - o.hits, misses - o.misses, writebacks - o.writebacks,
            back_invalidations - o.back_invalidations};
  }
  CacheStats& operator+=(const CacheStats& o) {
    accesses += o.accesses, hits += o.hits, misses += o.misses, writebacks += o.writebacks;
    back_invalidations += o.back_invalidations;
    return *this;
  }
  bool operator==(const CacheStats& o) const {
    return accesses == o.accesses && hits == o.hits && misses == o.misses &&
           writebacks == o.writebacks && back_invalidations == o.back_invalidations;
  }
};

struct Victim {
  std::uint64_t unit = 0;  // unit number of the evicted line
  bool dirty = false;
};

class Cache {
 public:
  // sets * ways lines of unit_bytes each; unit_bytes a power of two. Sets need not be a power
  // of two (sliced last-level caches are not).
  Cache(std::uint64_t unit_bytes, std::uint32_t sets, std::uint32_t ways,
        std::unique_ptr<ReplacementPolicy> policy);

  std::uint64_t unit_bytes() const { return std::uint64_t{1} << shift_; }
  unsigned unit_shift() const { return shift_; }
  std::uint32_t sets() const { return sets_; }
  std::uint32_t ways() const { return ways_; }
  std::uint64_t unit_of(Addr addr) const { return addr >> shift_; }

  // Demand lookup of one unit: counts an access and a hit or miss; a hit updates the
  // replacement state and sets the dirty bit if make_dirty. Does not fill on a miss.
  bool lookup(std::uint64_t unit, bool make_dirty) {
    ++stats_.accesses;
    std::uint32_t set = set_of(unit);
    std::uint64_t* tags = &tags_[std::size_t{set} * ways_];
    for (std::uint32_t w = 0; w < ways_; ++w) {
      if (tags[w] == unit) {
        ++stats_.hits;
        policy_->on_hit(set, w);
        if (make_dirty) dirty_[std::size_t{set} * ways_ + w] = 1;
        return true;
      }
    }
    ++stats_.misses;
    return false;
  }
  bool contains_unit(std::uint64_t unit) const { return find(unit) >= 0; }
  bool is_dirty_unit(std::uint64_t unit) const;
  // Sets the dirty bit of a present unit (a writeback arriving from above); false if absent.
  bool mark_dirty(std::uint64_t unit);
  // Inserts a unit that is not present; returns the valid line it displaced, if any, and
  // counts a writeback when that line was dirty.
  std::optional<Victim> insert(std::uint64_t unit, bool dirty);
  // Removes a unit; nullopt if absent, else whether it was dirty. Counts nothing.
  std::optional<bool> invalidate(std::uint64_t unit);

  // Stand-alone use (tests): write-back, write-allocate access of the line holding addr.
  // Returns true on a hit.
  bool access(Addr addr, Op op);
  bool contains(Addr addr) const { return contains_unit(unit_of(addr)); }

  const CacheStats& stats() const { return stats_; }
  CacheStats& stats() { return stats_; }
  // Valid lines, for state dumps and tests.
  std::uint64_t occupancy() const;
  // Calls f(unit, dirty) for every valid line (final flush, dumps).
  template <class F>
  void for_each_line(F&& f) const {
    for (std::size_t i = 0; i < tags_.size(); ++i)
      if (tags_[i] != kInvalid) f(tags_[i], dirty_[i] != 0);
  }

 private:
  static constexpr std::uint64_t kInvalid = ~std::uint64_t{0};
  std::uint32_t set_of(std::uint64_t unit) const {
    return sets_pow2_ ? static_cast<std::uint32_t>(unit & set_mask_)
                      : static_cast<std::uint32_t>(unit % sets_);
  }
  int find(std::uint64_t unit) const {
    std::uint32_t set = set_of(unit);
    const std::uint64_t* tags = &tags_[std::size_t{set} * ways_];
    for (std::uint32_t w = 0; w < ways_; ++w)
      if (tags[w] == unit) return static_cast<int>(w);
    return -1;
  }

  unsigned shift_;
  std::uint32_t sets_, ways_;
  bool sets_pow2_;
  std::uint64_t set_mask_;
  std::vector<std::uint64_t> tags_;  // unit number, kInvalid when empty
  std::vector<std::uint8_t> dirty_;
  std::unique_ptr<ReplacementPolicy> policy_;
  CacheStats stats_;
};

}  // namespace fusim::cache
