#include "mem/cache/cache.h"

#include <fmt/format.h>

#include "core/error.h"

namespace fusim::cache {
namespace {
unsigned log2_exact(std::uint64_t v) {
  FUSIM_ASSERT(v != 0 && (v & (v - 1)) == 0, fmt::format("{} is not a power of two", v));
  unsigned s = 0;
  while ((std::uint64_t{1} << s) < v) ++s;
  return s;
}
}  // namespace

Cache::Cache(std::uint64_t unit_bytes, std::uint32_t sets, std::uint32_t ways,
             std::unique_ptr<ReplacementPolicy> policy)
    : shift_(log2_exact(unit_bytes)),
      sets_(sets),
      ways_(ways),
      sets_pow2_((sets & (sets - 1)) == 0),
      set_mask_(sets - 1),
      tags_(std::size_t{sets} * ways, kInvalid),
      dirty_(std::size_t{sets} * ways, 0),
      policy_(std::move(policy)) {
  FUSIM_ASSERT(sets >= 1 && ways >= 1, "a cache needs at least one set and one way");
}

bool Cache::is_dirty_unit(std::uint64_t unit) const {
  int w = find(unit);
  return w >= 0 && dirty_[std::size_t{set_of(unit)} * ways_ + static_cast<std::size_t>(w)] != 0;
}

bool Cache::mark_dirty(std::uint64_t unit) {
  int w = find(unit);
  if (w < 0) return false;
  dirty_[std::size_t{set_of(unit)} * ways_ + static_cast<std::size_t>(w)] = 1;
  return true;
}

std::optional<Victim> Cache::insert(std::uint64_t unit, bool dirty) {
  std::uint32_t set = set_of(unit);
  std::size_t base = std::size_t{set} * ways_;
  std::optional<Victim> victim;
  std::uint32_t way = ways_;
#ifndef NDEBUG
  FUSIM_ASSERT(find(unit) < 0, "inserting a line that is already present");
#endif
  for (std::uint32_t w = 0; w < ways_; ++w) {
    if (tags_[base + w] == kInvalid) {
      way = w;
      break;
    }
  }
  if (way == ways_) {
    way = policy_->victim(set);
    victim = Victim{tags_[base + way], dirty_[base + way] != 0};
    if (victim->dirty) ++stats_.writebacks;
  }
  tags_[base + way] = unit;
  dirty_[base + way] = dirty ? 1 : 0;
  policy_->on_fill(set, way);
  return victim;
}

std::optional<bool> Cache::invalidate(std::uint64_t unit) {
  int w = find(unit);
  if (w < 0) return std::nullopt;
  std::uint32_t set = set_of(unit);
  std::size_t i = std::size_t{set} * ways_ + static_cast<std::size_t>(w);
  bool was_dirty = dirty_[i] != 0;
  tags_[i] = kInvalid;
  dirty_[i] = 0;
  policy_->on_invalidate(set, static_cast<std::uint32_t>(w));
  return was_dirty;
}

bool Cache::access(Addr addr, Op op) {
  std::uint64_t unit = unit_of(addr);
  if (lookup(unit, op == Op::Write)) return true;
  insert(unit, op == Op::Write);
  return false;
}

std::uint64_t Cache::occupancy() const {
  std::uint64_t n = 0;
  for (auto t : tags_) n += t != kInvalid;
  return n;
}

}  // namespace fusim::cache
