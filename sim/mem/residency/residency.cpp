// The walks of the tensor-fidelity hierarchy (residency.h): each level takes the pieces the
// level above missed, in address order, as the line model's per-unit recursion does for
// each unit; the victims of a level are handled once its misses have been served below
// (the line model interleaves them unit by unit: the only difference is when a writeback
// marks a lower level's copy dirty, not whether it does).
#include "mem/residency/residency.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "core/units.h"

namespace fusim::residency {

Served& Served::operator+=(const Served& o) {
  units += o.units;
  for (std::size_t k = 0; k < lookups.size(); ++k) {
    lookups[k] += o.lookups[k];
    served[k] += o.served[k];
  }
  served[kMaxLevels] += o.served[kMaxLevels];
  memory_read_bytes += o.memory_read_bytes;
  memory_write_bytes += o.memory_write_bytes;
  writeback_bytes += o.writeback_bytes;
  unpaced_writeback_bytes += o.unpaced_writeback_bytes;
  return *this;
}

ResidencyHierarchy::ResidencyHierarchy(const cache::HierarchyConfig& config,
                                       const std::vector<int>& bin_cores, Associativity assoc)
    : bin_cores_(bin_cores), file_(config.file) {
  FUSIM_ASSERT(!config.levels.empty() && config.levels.size() <= kMaxLevels, "1..8 levels");
  FUSIM_ASSERT(!bin_cores.empty(), "at least one bin of cores");
  unit_ = static_cast<std::uint64_t>(config.levels[0].line_bytes);
  shift_ = 0;
  while ((std::uint64_t{1} << shift_) < unit_) ++shift_;
  for (std::size_t k = 0; k < config.levels.size(); ++k) {
    const cache::LevelConfig& c = config.levels[k];
    const std::uint64_t size = static_cast<std::uint64_t>(c.size_bytes) / unit_ * unit_;
    if (size == 0)
      throw InputError(
          file_, c.json_path + ".size",
          fmt::format("at least one {} line, got {}",
                      format_bytes(static_cast<std::int64_t>(unit_)), format_bytes(c.size_bytes)));
    Level level;
    level.config = c;
    level.exclusive = c.inclusion == cache::Inclusion::Exclusive;
    level.inclusive = c.inclusion == cache::Inclusion::Inclusive;
    level.write_back = c.write_policy == cache::WritePolicy::WriteBack;
    // Sets of `assoc` ways (set_conflicts.h) where there is more than one set and the
    // level's victims go nowhere but to the writebacks: not for inclusive levels (whose
    // evictions take copies out above) nor around exclusive ones (filled by victims).
    const bool below_exclusive = k + 1 < config.levels.size() &&
                                 config.levels[k + 1].inclusion == cache::Inclusion::Exclusive;
    level.sets = assoc == Associativity::SetConflicts && c.assoc > 0 &&
                 c.assoc < c.size_bytes / c.line_bytes &&
                 c.inclusion == cache::Inclusion::NonInclusive && !below_exclusive;
    level.size = size;
    if (c.shared) {
      level.stacks.emplace_back(size, geometry(level, size));
    } else {
      for (int cores : bin_cores) {
        FUSIM_ASSERT(cores >= 1, "a bin has at least one core");
        const std::uint64_t capacity = size * static_cast<std::uint64_t>(cores);
        level.stacks.emplace_back(capacity, geometry(level, capacity));
      }
    }
    levels_.push_back(std::move(level));
  }
  set_of_bin_.assign(bin_cores.size(), -1);
}

SetGeometry ResidencyHierarchy::geometry(const Level& level, std::uint64_t capacity) const {
  SetGeometry g;
  if (!level.sets) return g;
  g.ways = static_cast<std::uint32_t>(level.config.assoc);
  g.span = capacity / g.ways;
  g.unit = unit_;
  return g;
}

int ResidencyHierarchy::add_bin(const std::vector<int>& cores) {
  if (!shared_) {
    int all = 0;
    for (int n : bin_cores_) all += n;
    shared_ = std::make_unique<SharedCores>(levels(), all);
  }
  const int bin = bins();
  bin_cores_.push_back(static_cast<int>(cores.size()));
  set_of_bin_.push_back(shared_->add(cores));
  for (Level& level : levels_)
    if (!level.config.shared) {
      const std::uint64_t capacity = level.size * cores.size();
      level.stacks.emplace_back(capacity, geometry(level, capacity));
    }
  return bin;
}

void ResidencyHierarchy::age(const Context& c, int set) {
  for (int k = 0; k < levels(); ++k) {
    if (level_shared(k)) continue;
    const std::uint64_t bytes = shared_->take_foreign(k, set, unit_);
    if (bytes == 0) continue;
    std::vector<Piece>& victims = victims_[static_cast<std::size_t>(k)];
    victims.clear();
    stack_of(k, c.bin).age(bytes, victims);
    victims_of(k, c, victims);  // nobody's bytes dropped there; ours written back if dirty
  }
}

void ResidencyHierarchy::count_fills(const Context& c, int set,
                                     const std::array<std::uint64_t, kMaxLevels>& before) {
  for (int k = 0; k < levels(); ++k)
    if (!level_shared(k))
      shared_->filled(k, set, stack_of(k, c.bin).filled() - before[static_cast<std::size_t>(k)]);
}

const std::string& ResidencyHierarchy::level_name(int level) const {
  return levels_[static_cast<std::size_t>(level)].config.name;
}

bool ResidencyHierarchy::level_shared(int level) const {
  return levels_[static_cast<std::size_t>(level)].config.shared;
}

const RangeStack& ResidencyHierarchy::stack(int level, int bin) const {
  const Level& l = levels_[static_cast<std::size_t>(level)];
  return l.stacks[l.config.shared ? 0 : static_cast<std::size_t>(bin)];
}

RangeStack& ResidencyHierarchy::stack_of(int level, int bin) {
  Level& l = levels_[static_cast<std::size_t>(level)];
  return l.stacks[l.config.shared ? 0 : static_cast<std::size_t>(bin)];
}

Owner ResidencyHierarchy::owner_at(int level, const Context& c) const {
  return levels_[static_cast<std::size_t>(level)].config.shared ? Owner{} : c.owner;
}

// The top of the hierarchy: the core takes what it read, nothing is filled above it.
class ResidencyHierarchy::Discard final : public Upward {
 public:
  void served(Addr, Addr, bool, bool) override {}
};

void ResidencyHierarchy::access(const AccessRequest& r, Served& served) {
  if (r.bytes == 0) return;
  FUSIM_ASSERT(r.bin >= 0 && r.bin < bins(), fmt::format("bin {} out of range", r.bin));
  const Addr lo = r.addr >> shift_ << shift_;
  const Addr hi = ((r.addr + r.bytes - 1) >> shift_ << shift_) + unit_;
  Context c;
  c.bin = r.bin;
  c.owner = r.owner;
  c.served = &served;
  if (r.addr != lo) c.partial_first = lo;
  if (r.addr + r.bytes != hi) c.partial_last = hi - unit_;
  served.units += units(lo, hi);
  // In steps of at most half the smallest stack on the way: a level's victims are then
  // never bytes of the same step, so writing them back after the step's misses were served
  // below finds the lower copies where the line model, unit by unit, finds them.
  const Addr step = std::max<Addr>(unit_, step_limit(r.bin) / 2 >> shift_ << shift_);
  const int set = set_of_bin_[static_cast<std::size_t>(r.bin)];
  std::array<std::uint64_t, kMaxLevels> filled{};
  if (set >= 0) {
    age(c, set);
    for (int k = 0; k < levels(); ++k)
      filled[static_cast<std::size_t>(k)] = stack(k, r.bin).filled();
  }
  for (Addr a = lo; a < hi; a += std::min(step, hi - a)) {
    const Addr b = a + std::min(step, hi - a);
    if (r.write) {
      write_at(0, c, a, b);
    } else {
      Discard nowhere;
      read_at(0, c, a, b, nowhere);
    }
  }
  if (set >= 0) count_fills(c, set, filled);
}

Addr ResidencyHierarchy::step_limit(int bin) const {
  Addr least = ~Addr{0};
  for (int k = 0; k < levels(); ++k) least = std::min(least, stack(k, bin).capacity());
  return least;
}

// Level k served [lo, hi) of a read from above (dirty: the bytes moved up out of an
// exclusive level); the level above fills them now, as the line model fills a level
// when the read below returns, before the next unit is looked up.
class ResidencyHierarchy::FillAbove final : public Upward {
 public:
  // Fills level k (unless it is a victim cache) with what the levels below serve, dirty
  // when `dirty` (a write-allocate fill of a write-back level), then passes the pieces on.
  FillAbove(ResidencyHierarchy& h, int k, const Context& c, Upward& up, bool write)
      : h_(h), k_(k), c_(c), up_(up), write_(write) {}
  void served(Addr lo, Addr hi, bool dirty, bool from_memory) override {
    h_.fill(k_, c_, lo, hi, dirty, write_, from_memory, up_);
  }

 private:
  ResidencyHierarchy& h_;
  int k_;
  const Context& c_;
  Upward& up_;
  bool write_;
};

void ResidencyHierarchy::fill(int k, const Context& c, Addr lo, Addr hi, bool dirty, bool write,
                              bool from_memory, Upward& up) {
  Level& level = levels_[static_cast<std::size_t>(k)];
  if (level.exclusive) {  // a victim cache is filled only by victims: the data goes on up
    up.served(lo, hi, dirty, from_memory);
    return;
  }
  std::vector<Piece>& victims = victims_[static_cast<std::size_t>(k)];
  victims.clear();
  // Written data is dirty in a write-back level; read data is dirty here when it came up
  // dirty from an exclusive level (this level owns it now).
  stack_of(k, c.bin).insert({lo, hi, dirty || (write && level.write_back), owner_at(k, c)},
                            victims);
  const bool outer = paced_;
  paced_ = from_memory;
  victims_of(k, c, victims);
  paced_ = outer;
  if (write && !level.write_back) write_below(k + 1, c, lo, hi, false);
  up.served(lo, hi, false, from_memory);
}

// A demand read of [lo, hi) at level k; what it finds, and what the levels below find for
// its misses, goes to `up` piece by piece in address order (see FillAbove).
void ResidencyHierarchy::read_at(int k, const Context& c, Addr lo, Addr hi, Upward& up) {
  if (k == levels()) {
    if (c.primary) c.served->served[static_cast<std::size_t>(k)] += units(lo, hi);
    c.served->memory_read_bytes += hi - lo;
    memory_.reads += units(lo, hi);
    memory_.read_bytes += hi - lo;
    up.served(lo, hi, false, true);
    return;
  }
  Level& level = levels_[static_cast<std::size_t>(k)];
  const auto lk = static_cast<std::size_t>(k);
  const std::uint64_t n = units(lo, hi);
  c.served->lookups[lk] += n;
  level.stats.accesses += n;
  AccessMode mode;
  mode.hit_remove = level.exclusive;  // a victim cache hands the line up
  mode.miss_fill = false;             // filled when the levels below have served it
  std::vector<Piece> unused;
  stack_of(k, c.bin).access(
      lo, hi, owner_at(k, c), mode,
      [&](Addr a, Addr b, bool hit, bool was_dirty) {
        if (hit) {
          const std::uint64_t h = units(a, b);
          if (c.primary) c.served->served[lk] += h;
          level.stats.hits += h;
          up.served(a, b, level.exclusive && was_dirty, false);
          return;
        }
        level.stats.misses += units(a, b);
        if (was_dirty) lost_dirty(k, c, a, b);
        FillAbove here(*this, k, c, up, false);
        read_at(k + 1, c, a, b, here);
      },
      unused);
}

// A demand write of [lo, hi) at level k (see the header for the policies).
void ResidencyHierarchy::write_at(int k, const Context& c, Addr lo, Addr hi) {
  if (k == levels()) {
    if (c.primary) c.served->served[static_cast<std::size_t>(k)] += units(lo, hi);
    c.served->memory_write_bytes += hi - lo;
    memory_.writes += units(lo, hi);
    memory_.write_bytes += hi - lo;
    return;
  }
  Level& level = levels_[static_cast<std::size_t>(k)];
  const auto lk = static_cast<std::size_t>(k);
  const std::uint64_t n = units(lo, hi);
  c.served->lookups[lk] += n;
  level.stats.accesses += n;
  const bool allocate = level.config.write_allocate && !level.exclusive;
  AccessMode mode;
  mode.hit_dirty = level.write_back;
  mode.miss_fill = false;  // filled after the read for ownership (see FillAbove)
  std::vector<Piece> unused;
  Discard nowhere;
  stack_of(k, c.bin).access(
      lo, hi, owner_at(k, c), mode,
      [&](Addr a, Addr b, bool hit, bool was_dirty) {
        if (hit) {
          const std::uint64_t h = units(a, b);
          if (c.primary) c.served->served[lk] += h;
          level.stats.hits += h;
          if (!level.write_back) write_below(k + 1, c, a, b, false);  // served here, written on
          return;
        }
        level.stats.misses += units(a, b);
        if (was_dirty) lost_dirty(k, c, a, b);
        if (!allocate) {  // not kept here: the level below takes (and serves) the write
          write_below(k + 1, c, a, b, c.primary);
          return;
        }
        FillAbove here(*this, k, c, nowhere, true);
        if (!level.config.write_validate) {  // read for ownership, then fill dirty
          read_at(k + 1, c, a, b, here);
          return;
        }
        // Write-validate: a unit the write covers whole is taken without a fetch (nothing
        // of its old data survives); the range's partial first and last units are read.
        Addr mid_lo = a, mid_hi = b;
        const bool first = c.partial_first == a, last = c.partial_last + unit_ == b;
        if (first) {
          read_at(k + 1, c, a, a + unit_, here);
          mid_lo = a + unit_;
        }
        if (last && b - unit_ >= mid_lo) mid_hi = b - unit_;
        if (mid_hi > mid_lo) {
          if (c.primary) c.served->served[lk] += units(mid_lo, mid_hi);
          here.served(mid_lo, mid_hi, false, false);
        }
        if (last && mid_hi < b) read_at(k + 1, c, mid_hi, b, here);
      },
      unused);
}

void ResidencyHierarchy::write_below(int k, const Context& c, Addr lo, Addr hi, bool primary) {
  Context below = c;
  below.primary = primary;
  write_at(k, below, lo, hi);
}

// Bytes that left level k: inclusive levels first take back the copies above (dirty ones
// make the victim's bytes dirty), then the victim goes into an exclusive level below, or,
// where dirty, is written back to the nearest level below that holds it.
void ResidencyHierarchy::victims_of(int k, const Context& c, std::vector<Piece>& victims) {
  Level& level = levels_[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < victims.size(); ++i) {
    const Piece v = victims[i];
    if (v.owner.group == kNobody) continue;  // other sets' fills (RangeStack::age)
    if (v.dirty) level.stats.writebacks += units(v.lo, v.hi);
    if (!level.inclusive || v.dirty) {
      if (level.inclusive) back_invalidate(k, c, v, dirty_parts_);
      victim_below(k, c, v);
      continue;
    }
    // Clean here, but the copies above may be dirty: those bytes leave dirty (the line
    // model makes each such line's victim dirty), the rest clean.
    std::vector<Piece> parts;
    back_invalidate(k, c, v, parts);
    Addr cur = v.lo;
    for (const Piece& d : parts) {
      if (d.lo > cur) victim_below(k, c, {cur, d.lo, false, v.owner});
      victim_below(k, c, {d.lo, d.hi, true, v.owner});
      cur = d.hi;
    }
    if (cur < v.hi) victim_below(k, c, {cur, v.hi, false, v.owner});
  }
}

// Bytes level k held dirty and lost to set conflicts (range_stack.h): written back now.
void ResidencyHierarchy::lost_dirty(int k, const Context& c, Addr lo, Addr hi) {
  levels_[static_cast<std::size_t>(k)].stats.writebacks += units(lo, hi);
  victim_below(k, c, {lo, hi, true, owner_at(k, c)});
}

// A victim of level k goes into an exclusive level below, or, if dirty, back to the
// nearest level below that holds it (memory if none does).
void ResidencyHierarchy::victim_below(int k, const Context& c, const Piece& v) {
  const int below = k + 1;
  if (below < levels() && levels_[static_cast<std::size_t>(below)].exclusive) {
    Piece in = v;
    in.owner = levels_[static_cast<std::size_t>(below)].config.shared ? Owner{} : v.owner;
    std::vector<Piece> out;
    stack_of(below, c.bin).insert(in, out);
    victims_of(below, c, out);
  } else if (v.dirty) {
    write_back_into(below, c, v);
  }
}

void ResidencyHierarchy::write_back_into(int k, const Context& c, const Piece& piece) {
  if (k == levels()) {
    c.served->writeback_bytes += piece.hi - piece.lo;
    if (!paced_) c.served->unpaced_writeback_bytes += piece.hi - piece.lo;
    memory_.writes += units(piece.lo, piece.hi);
    memory_.write_bytes += piece.hi - piece.lo;
    return;
  }
  Level& level = levels_[static_cast<std::size_t>(k)];
  if (!level.write_back) {
    write_back_into(k + 1, c, piece);
    return;
  }
  const auto lk = static_cast<std::size_t>(k);
  std::vector<Piece>& missing = missing_[lk];
  missing.clear();
  const Owner owner = level.config.shared ? Owner{} : piece.owner;
  stack_of(k, c.bin).mark_dirty(piece.lo, piece.hi, owner, missing);
  // Not held here (non-inclusive, or held for another core): further down. (Copied: the
  // recursion reuses the scratch of the levels below only.)
  for (std::size_t i = 0; i < missing.size(); ++i) {
    Piece m = missing[i];
    m.owner = piece.owner;
    write_back_into(k + 1, c, m);
  }
}

// Takes the copies of victim's bytes out of the levels above k (every bin when k is
// shared); returns the dirty ones in `dirty`, sorted and merged.
void ResidencyHierarchy::back_invalidate(int k, const Context& c, const Piece& victim,
                                         std::vector<Piece>& dirty) {
  dirty.clear();
  const bool shared = levels_[static_cast<std::size_t>(k)].config.shared;
  for (int i = 0; i < k; ++i) {
    Level& up = levels_[static_cast<std::size_t>(i)];
    const bool up_shared = up.config.shared;
    const std::size_t first = up_shared || shared ? 0 : static_cast<std::size_t>(c.bin);
    const std::size_t last = up_shared ? 1 : shared ? up.stacks.size() : first + 1;
    for (std::size_t b = first; b < last; ++b) {
      removed_.clear();
      up.stacks[b].invalidate(victim.lo, victim.hi, removed_);
      for (const Piece& r : removed_) {
        up.stats.back_invalidations += units(r.lo, r.hi);
        if (r.dirty) {
          up.stats.writebacks += units(r.lo, r.hi);
          dirty.push_back(r);
        }
      }
    }
  }
  std::sort(dirty.begin(), dirty.end(), [](const Piece& a, const Piece& b) { return a.lo < b.lo; });
  std::size_t out = 0;
  for (const Piece& d : dirty) {
    if (out > 0 && d.lo <= dirty[out - 1].hi) {
      dirty[out - 1].hi = std::max(dirty[out - 1].hi, d.hi);
    } else {
      dirty[out++] = d;
    }
  }
  dirty.resize(out);
}

cache::HierarchyStats ResidencyHierarchy::stats() const {
  cache::HierarchyStats s;
  for (const Level& level : levels_) {
    cache::LevelStats ls;
    ls.name = level.config.name;
    ls.shared = level.config.shared;
    ls.total = level.stats;
    s.levels.push_back(std::move(ls));
  }
  s.memory = memory_;
  return s;
}

}  // namespace fusim::residency
