#include "mem/residency/range_stack.h"

#include <algorithm>

#include "core/error.h"

namespace fusim::residency {

RangeStack::RangeStack(std::uint64_t capacity) : capacity_(capacity) {
  FUSIM_ASSERT(capacity > 0, "a range stack holds at least one unit");
}

Piece RangeStack::piece_of(std::int32_t s) const {
  const Segment& g = seg(s);
  return {g.lo, g.hi, g.dirty, g.owner};
}

std::int32_t RangeStack::find(const Owner& owner, Addr addr, Addr limit, Addr* next_lo) const {
  const Key k = key(owner, addr);
  auto it = index_.upper_bound(k);  // the owner's first segment ending after addr
  if (it == index_.end() || !same_owner(KeyOf()(*it), k)) {
    *next_lo = limit;
    return kNone;
  }
  const Segment& g = *it;
  if (g.lo <= addr) return id_of(g);
  *next_lo = std::min(g.lo, limit);
  return kNone;
}

std::int32_t RangeStack::new_segment(Addr lo, Addr hi, const Owner& owner, bool dirty) {
  std::int32_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<std::int32_t>(segs_.size());
    segs_.emplace_back();
  }
  Segment& g = seg(s);
  g.lo = lo;
  g.hi = hi;
  g.owner = owner;
  g.dirty = dirty;
  g.prev = g.next = kNone;
  g.id = s;
  return s;
}

void RangeStack::free_segment(std::int32_t s) {
  free_.push_back(s);
}

void RangeStack::unlink(std::int32_t s) {
  Segment& g = seg(s);
  if (g.prev != kNone) {
    seg(g.prev).next = g.next;
  } else {
    head_ = g.next;
  }
  if (g.next != kNone) {
    seg(g.next).prev = g.prev;
  } else {
    tail_ = g.prev;
  }
  g.prev = g.next = kNone;
}

void RangeStack::push_top(std::int32_t s) {
  Segment& g = seg(s);
  g.prev = kNone;
  g.next = head_;
  if (head_ != kNone) seg(head_).prev = s;
  head_ = s;
  if (tail_ == kNone) tail_ = s;
}

std::int32_t RangeStack::split(std::int32_t s, Addr addr) {
  const Segment copy = seg(s);
  FUSIM_ASSERT(copy.lo < addr && addr < copy.hi, "a split inside the segment");
  std::int32_t low = new_segment(copy.lo, addr, copy.owner, copy.dirty);
  seg(s).lo = addr;
  index_.insert(seg(low));
  // Just below s: older than s's higher addresses, newer than whatever was below s.
  Segment& l = seg(low);
  l.prev = s;
  l.next = copy.next;
  if (copy.next != kNone) {
    seg(copy.next).prev = low;
  } else {
    tail_ = low;
  }
  seg(s).next = low;
  return low;
}

std::int32_t RangeStack::carve(std::int32_t s, Addr lo, Addr hi) {
  if (seg(s).lo < lo) split(s, lo);  // s keeps [lo, old hi)
  if (hi < seg(s).hi) return split(s, hi);
  return s;
}

void RangeStack::erase(std::int32_t s) {
  Segment& g = seg(s);
  index_.erase(index_.iterator_to(g));
  resident_ -= g.hi - g.lo;
  unlink(s);
  free_segment(s);
}

void RangeStack::push_range(Addr lo, Addr hi, const Owner& owner, bool dirty) {
  resident_ += hi - lo;
  if (head_ != kNone) {
    Segment& top = seg(head_);
    // The new range continues the top segment upwards: one run of ascending recency.
    if (top.hi == lo && top.dirty == dirty && top.owner == owner) {
      // Its key (the end) grows past nobody of its owner: [lo, hi) was not held.
      auto it = index_.iterator_to(top);
      auto next = std::next(it);
      index_.erase(it);
      top.hi = hi;
      index_.insert(next, top);
      return;
    }
  }
  std::int32_t s = new_segment(lo, hi, owner, dirty);
  index_.insert(seg(s));
  push_top(s);
}

void RangeStack::evict_to_capacity(std::vector<Piece>& victims) {
  while (resident_ > capacity_) {
    const std::int32_t t = tail_;
    Segment& g = seg(t);
    const std::uint64_t excess = resident_ - capacity_;
    if (g.hi - g.lo <= excess) {
      victims.push_back(piece_of(t));
      erase(t);
    } else {
      // The oldest bytes of a segment are its lowest addresses.
      victims.push_back({g.lo, g.lo + excess, g.dirty, g.owner});
      g.lo += excess;
      resident_ -= excess;
    }
  }
}

void RangeStack::mark_dirty(Addr lo, Addr hi, const Owner& owner, std::vector<Piece>& missing) {
  Addr cur = lo;
  while (cur < hi) {
    Addr next_lo = hi;
    const std::int32_t s = find(owner, cur, hi, &next_lo);
    if (s == kNone) {
      missing.push_back({cur, next_lo, true, owner});
      cur = next_lo;
      continue;
    }
    const Addr end = std::min(seg(s).hi, hi);
    if (!seg(s).dirty) seg(carve(s, cur, end)).dirty = true;
    cur = end;
  }
}

void RangeStack::invalidate(Addr lo, Addr hi, std::vector<Piece>& removed) {
  // Every owner's copies: gather the segments overlapping [lo, hi), then cut them out.
  std::vector<std::int32_t> hit;
  for (std::int32_t s = head_; s != kNone; s = seg(s).next)
    if (seg(s).lo < hi && seg(s).hi > lo) hit.push_back(s);
  for (std::int32_t s : hit) {
    const Addr a = std::max(seg(s).lo, lo), b = std::min(seg(s).hi, hi);
    const std::int32_t m = carve(s, a, b);
    removed.push_back(piece_of(m));
    erase(m);
  }
}

void RangeStack::insert(const Piece& piece, std::vector<Piece>& victims) {
  Addr cur = piece.lo;
  while (cur < piece.hi) {
    Addr next_lo = piece.hi;
    const std::int32_t s = find(piece.owner, cur, piece.hi, &next_lo);
    if (s != kNone) {
      const Addr end = std::min(seg(s).hi, piece.hi);
      if (piece.dirty && !seg(s).dirty) seg(carve(s, cur, end)).dirty = true;
      cur = end;
      continue;
    }
    push_range(cur, next_lo, piece.owner, piece.dirty);
    evict_to_capacity(victims);
    cur = next_lo;
  }
}

std::uint64_t RangeStack::held_bytes(Addr lo, Addr hi, const Owner& owner) const {
  std::uint64_t held = 0;
  Addr cur = lo;
  while (cur < hi) {
    Addr next_lo = hi;
    const std::int32_t s = find(owner, cur, hi, &next_lo);
    if (s == kNone) {
      cur = next_lo;
      continue;
    }
    const Addr end = std::min(seg(s).hi, hi);
    held += end - cur;
    cur = end;
  }
  return held;
}

}  // namespace fusim::residency
