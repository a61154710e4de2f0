// The hierarchy's contents: lookups, fills, evictions, inclusion and writebacks (the timed
// path on top of them is timed_path.cpp).
// Every access is one unit walking down the levels by recursion (at most kMaxLevels deep);
// the hit path touches only flat tag arrays and counters.
#include "mem/cache/hierarchy.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "core/int_math.h"
#include "core/units.h"
#include "mem/cache/timed_path.h"

namespace fusim::cache {

Fidelity parse_fidelity(const std::string& name) {
  if (name == "line") return Fidelity::Line;
  if (name == "block") return Fidelity::Block;
  throw InputError(fmt::format("fidelity: expected \"line\" or \"block\", got \"{}\"", name));
}

const char* to_string(Fidelity fidelity) {
  return fidelity == Fidelity::Line ? "line" : "block";
}

Hierarchy::Hierarchy(const HierarchyConfig& config, Fidelity fidelity, int cores)
    : cores_(cores), fidelity_(fidelity), file_(config.file) {
  FUSIM_ASSERT(cores >= 1, "a hierarchy needs at least one core");
  FUSIM_ASSERT(!config.levels.empty() && config.levels.size() <= kMaxLevels, "1..8 levels");
  std::uint64_t line = static_cast<std::uint64_t>(config.levels[0].line_bytes);
  std::uint64_t unit =
      fidelity == Fidelity::Line ? line : static_cast<std::uint64_t>(config.block_bytes);
  shift_ = 0;
  while ((std::uint64_t{1} << shift_) < unit) ++shift_;
  Tick total = 0;
  for (const LevelConfig& c : config.levels) {
    // Block fidelity keeps the bytes: size / unit units, associativity capped at that count
    // (a level of 12 blocks with 12 ways becomes one fully associative set).
    std::uint64_t units = static_cast<std::uint64_t>(c.size_bytes) / unit;
    if (units == 0)
      throw InputError(
          file_, c.json_path + ".size",
          fmt::format("at least one {} block in block fidelity, got {}",
                      format_bytes(static_cast<std::int64_t>(unit)), format_bytes(c.size_bytes)));
    auto ways = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(static_cast<std::uint64_t>(c.assoc), units));
    if (units % ways != 0) ways = static_cast<std::uint32_t>(units);
    auto sets = static_cast<std::uint32_t>(units / ways);
    std::string problem = policy_geometry_problem(c.policy, ways);
    if (!problem.empty())
      throw InputError(
          file_, c.json_path + ".policy",
          fmt::format("{} (in {} fidelity this level has {} ways of {})", problem,
                      to_string(fidelity), ways, format_bytes(static_cast<std::int64_t>(unit))));
    Level level;
    level.config = c;
    level.exclusive = c.inclusion == Inclusion::Exclusive;
    level.inclusive = c.inclusion == Inclusion::Inclusive;
    level.write_back = c.write_policy == WritePolicy::WriteBack;
    level.write_allocate = c.write_allocate;
    // A port moves its bytes a cycle (`ports` lines by default); a block of k lines
    // occupies it k x line / that cycles.
    level.port_occupancy = c.port_time(unit / line);
    int instances = c.shared ? 1 : cores;
    for (int i = 0; i < instances; ++i)
      level.instances.emplace_back(
          unit, sets, ways,
          make_policy(c.policy, PolicyParams{sets, ways, c.seed + static_cast<std::uint64_t>(i)}));
    total += c.latency_cycles * c.clock_period;
    path_latency_.push_back(total);
    levels_.push_back(std::move(level));
  }
  timing_ = std::make_unique<TimedPath>(*this);
}

Hierarchy::~Hierarchy() = default;

const std::string& Hierarchy::level_name(int level) const {
  return levels_[static_cast<std::size_t>(level)].config.name;
}

const Cache& Hierarchy::cache(int level, int core) const {
  const Level& l = levels_[static_cast<std::size_t>(level)];
  return l.instances[l.config.shared ? 0 : static_cast<std::size_t>(core)];
}

Tick Hierarchy::port_occupancy(int level) const {
  return levels_[static_cast<std::size_t>(level)].port_occupancy;
}

int Hierarchy::access(int core, Addr addr, AccessKind kind) {
  return access_unit(core, addr >> shift_, kind, false);  // the extent is unknown: partial
}

RangeResult Hierarchy::access_range(int core, Addr addr, std::uint64_t bytes, AccessKind kind) {
  RangeResult r;
  if (bytes == 0) return r;
  std::uint64_t first = addr >> shift_, last = (addr + bytes - 1) >> shift_;
  r.units = last - first + 1;
  // Fast path for the common case, a first-level hit: one inlined tag scan, no recursion.
  // Write-through first levels and streaming stores take the general path.
  Cache& l1 = instance(0, core);
  const bool fast = kind != AccessKind::StreamingWrite && levels_[0].write_back;
  const bool write = kind == AccessKind::Write;
  for (std::uint64_t u = first; u <= last; ++u) {
    const bool whole = (u << shift_) >= addr && ((u + 1) << shift_) <= addr + bytes;
    if (fast && l1.lookup(u, write)) {
      ++r.served[0];
      continue;
    }
    int served;
    if (!fast) {
      served = access_unit(core, u, kind, whole);
    } else if (write) {
      served = write_after_miss(0, core, u, whole);
    } else {
      bool dirty = false;
      served = read_after_miss(0, core, u, dirty);
    }
    ++r.served[static_cast<std::size_t>(served)];
  }
  return r;
}

int Hierarchy::access_unit(int core, std::uint64_t unit, AccessKind kind, bool whole) {
  switch (kind) {
    case AccessKind::Read: {
      bool dirty = false;
      return read_from(0, core, unit, dirty);
    }
    case AccessKind::Write:
      return write_at(0, core, unit, whole);
    case AccessKind::StreamingWrite:
      streaming_write(core, unit);
      return levels();
  }
  return levels();
}

// Demand read at `level`; fills the non-exclusive levels on the way back up. `dirty` comes
// back true when the data is a dirty line moved up out of an exclusive level.
int Hierarchy::read_from(int k, int core, std::uint64_t unit, bool& dirty) {
  if (k == levels()) {
    memory_request(core, unit, false, true);
    dirty = false;
    return k;
  }
  Level& level = levels_[static_cast<std::size_t>(k)];
  Cache& c = instance(k, core);
  if (c.lookup(unit, false)) {
    dirty = level.exclusive ? *c.invalidate(unit) : false;  // exclusive: the line moves up
    return k;
  }
  return read_after_miss(k, core, unit, dirty);
}

// The rest of read_from once `level` missed (its lookup already counted).
int Hierarchy::read_after_miss(int k, int core, std::uint64_t unit, bool& dirty) {
  Level& level = levels_[static_cast<std::size_t>(k)];
  int served = read_from(k + 1, core, unit, dirty);
  if (level.exclusive) return served;  // a victim cache is not filled by misses
  fill(k, core, unit, dirty);
  dirty = false;  // this level now owns the dirty data
  return served;
}

// Demand write at `level`: write-back levels keep the data dirty; write-through levels pass
// the write down; write-allocate levels fetch the line first (read for ownership), except
// write-validate levels when the write covers the whole unit (nothing of the old data
// survives, so nothing is read).
int Hierarchy::write_at(int k, int core, std::uint64_t unit, bool whole) {
  if (k == levels()) {
    memory_request(core, unit, true, true);
    return k;
  }
  Level& level = levels_[static_cast<std::size_t>(k)];
  Cache& c = instance(k, core);
  if (c.lookup(unit, level.write_back)) {
    if (!level.write_back) write_at(k + 1, core, unit, whole);
    return k;
  }
  return write_after_miss(k, core, unit, whole);
}

// The rest of write_at once `level` missed (its lookup already counted).
int Hierarchy::write_after_miss(int k, int core, std::uint64_t unit, bool whole) {
  Level& level = levels_[static_cast<std::size_t>(k)];
  if (!level.write_allocate || level.exclusive) return write_at(k + 1, core, unit, whole);
  if (whole && level.config.write_validate) {
    fill(k, core, unit, level.write_back);
    if (!level.write_back) write_at(k + 1, core, unit, whole);
    return k;
  }
  bool dirty = false;
  int served = read_from(k + 1, core, unit, dirty);
  fill(k, core, unit, dirty || level.write_back);
  if (!level.write_back) write_at(k + 1, core, unit, whole);
  return served;
}

void Hierarchy::fill(int k, int core, std::uint64_t unit, bool dirty) {
  fill_log_[fills_ % kFillLog] = unit;
  ++fills_;
  if (auto victim = instance(k, core).insert(unit, dirty)) evicted(k, core, *victim);
}

// A line left level k. Inclusive levels first take back every copy above them (dirty copies
// make the victim dirty); then the victim goes into an exclusive level below, or, if dirty,
// is written back to the nearest level below that holds it (memory if none does).
void Hierarchy::evicted(int k, int core, Victim victim) {
  Level& level = levels_[static_cast<std::size_t>(k)];
  if (level.inclusive) {
    int first = level.config.shared ? 0 : core, last = level.config.shared ? cores_ - 1 : core;
    for (int i = 0; i < k; ++i) {
      bool shared_above = levels_[static_cast<std::size_t>(i)].config.shared;
      for (int c = first; c <= (shared_above ? first : last); ++c) {
        Cache& up = instance(i, c);
        if (auto was_dirty = up.invalidate(victim.unit)) {
          ++up.stats().back_invalidations;
          if (*was_dirty) {
            ++up.stats().writebacks;
            victim.dirty = true;
          }
        }
      }
    }
  }
  int below = k + 1;
  if (below < levels() && levels_[static_cast<std::size_t>(below)].exclusive) {
    Cache& c = instance(below, core);
    if (c.contains_unit(victim.unit)) {
      if (victim.dirty) c.mark_dirty(victim.unit);
    } else {
      fill(below, core, victim.unit, victim.dirty);
    }
    return;
  }
  if (victim.dirty) write_back_into(below, core, victim.unit);
}

void Hierarchy::write_back_into(int k, int core, std::uint64_t unit) {
  if (k == levels()) {
    memory_request(core, unit, true, false);
    return;
  }
  Level& level = levels_[static_cast<std::size_t>(k)];
  Cache& c = instance(k, core);
  if (c.contains_unit(unit) && level.write_back) {
    c.mark_dirty(unit);
    return;
  }
  write_back_into(k + 1, core, unit);  // not held here (non-inclusive), or written through
}

// A non-temporal store overwrites the whole unit: cached copies are dropped, not written
// back. Private copies of other cores are not tracked (no coherence protocol is modelled).
void Hierarchy::streaming_write(int core, std::uint64_t unit) {
  for (int k = 0; k < levels(); ++k) instance(k, core).invalidate(unit);
  memory_request(core, unit, true, true);
}

bool Hierarchy::misses_everywhere(int core, std::uint64_t unit) const {
  for (int k = 0; k < levels(); ++k)
    if (cache(k, core).contains_unit(unit)) return false;
  return true;
}

void Hierarchy::memory_request(int core, std::uint64_t unit, bool is_write, bool demand) {
  std::uint64_t bytes = unit_bytes();
  if (is_write) {
    ++memory_.writes;
    memory_.write_bytes += bytes;
  } else {
    ++memory_.reads;
    memory_.read_bytes += bytes;
  }
  mem::MemRequest request;
  request.addr = unit << shift_;
  request.bytes = static_cast<std::uint32_t>(bytes);
  request.is_write = is_write;
  request.requester = core;
  if (demand && capture_ && capture_->count < static_cast<int>(capture_->requests.size())) {
    capture_->requests[static_cast<std::size_t>(capture_->count++)] = request;
    return;
  }
  if (!demand && capture_ &&
      capture_->writeback_count < static_cast<int>(capture_->writebacks.size())) {
    capture_->writebacks[static_cast<std::size_t>(capture_->writeback_count++)] = request;
    return;
  }
  timing_->post(request);
}

void Hierarchy::attach_memory(EventQueue& queue, mem::MemoryPort& port) {
  timing_->attach(queue, port);
}

void Hierarchy::start_range(int core, Addr addr, std::uint64_t bytes, AccessKind kind, Done done) {
  std::uint64_t first = addr >> shift_;
  std::uint64_t end = bytes == 0 ? first : ((addr + bytes - 1) >> shift_) + 1;
  const std::uint64_t mask = unit_bytes() - 1;
  timing_->start(core, first, end, (addr & mask) == 0, ((addr + bytes) & mask) == 0, kind,
                 std::move(done));
}

bool Hierarchy::busy() const {
  return timing_->busy();
}
std::string Hierarchy::describe_state() const {
  return timing_->describe();
}

void Hierarchy::flush() {
  for (int k = 0; k < levels(); ++k) {
    Level& level = levels_[static_cast<std::size_t>(k)];
    for (Cache& c : level.instances) {
      std::vector<std::uint64_t> dirty;
      c.for_each_line([&](std::uint64_t unit, bool d) {
        if (d) dirty.push_back(unit);
      });
      for (std::uint64_t unit : dirty) {
        c.invalidate(unit);
        ++c.stats().writebacks;
        memory_request(0, unit, true, false);
      }
      std::vector<std::uint64_t> clean;
      c.for_each_line([&](std::uint64_t unit, bool) { clean.push_back(unit); });
      for (std::uint64_t unit : clean) c.invalidate(unit);
    }
  }
}

LevelStats LevelStats::operator-(const LevelStats& o) const {
  LevelStats r{name, shared, total - o.total, {}};
  for (std::size_t i = 0; i < per_core.size() && i < o.per_core.size(); ++i)
    r.per_core.push_back(per_core[i] - o.per_core[i]);
  return r;
}

HierarchyStats HierarchyStats::operator-(const HierarchyStats& o) const {
  HierarchyStats r;
  for (std::size_t i = 0; i < levels.size() && i < o.levels.size(); ++i)
    r.levels.push_back(levels[i] - o.levels[i]);
  r.memory = memory - o.memory;
  return r;
}

HierarchyStats Hierarchy::stats() const {
  HierarchyStats s;
  for (const Level& level : levels_) {
    LevelStats ls;
    ls.name = level.config.name;
    ls.shared = level.config.shared;
    for (const Cache& c : level.instances) {
      ls.total += c.stats();
      if (!level.config.shared) ls.per_core.push_back(c.stats());
    }
    s.levels.push_back(std::move(ls));
  }
  s.memory = memory_;
  return s;
}

namespace {
StatsNode cache_node(std::string name, const CacheStats& s) {
  StatsNode n{std::move(name), {}, {}};
  n.add("accesses", s.accesses).add("hits", s.hits).add("misses", s.misses);
  n.add("writebacks", s.writebacks).add("back_invalidations", s.back_invalidations);
  return n;
}
}  // namespace

StatsNode to_stats_node(const HierarchyStats& stats) {
  StatsNode root{"caches", {}, {}};
  for (const LevelStats& level : stats.levels) {
    StatsNode& n = root.child(cache_node(level.name, level.total));
    if (level.per_core.size() > 1)
      for (std::size_t c = 0; c < level.per_core.size(); ++c)
        n.child(cache_node(fmt::format("core{}", c), level.per_core[c]));
  }
  StatsNode memory{"memory", {}, {}};
  memory.add("reads", stats.memory.reads).add("writes", stats.memory.writes);
  memory.add("read_bytes", stats.memory.read_bytes).add("write_bytes", stats.memory.write_bytes);
  root.child(std::move(memory));
  return root;
}

}  // namespace fusim::cache
