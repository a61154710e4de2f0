#include "mem/residency/range_stack.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace fusim::residency {

RangeStack::RangeStack(std::uint64_t capacity, SetGeometry geometry)
    : capacity_(capacity),
      geometry_(geometry),
      keep_(keep_depth(capacity, geometry)),
      sums_(geometry.ways > 0 ? 1024 : 1),
      quantum_(
          std::max<std::uint64_t>(geometry.unit, capacity / 64 / geometry.unit * geometry.unit)) {
  FUSIM_ASSERT(capacity > 0, "a range stack holds at least one unit");
  FUSIM_ASSERT(geometry.ways == 0 || (geometry.span > 0 && geometry.unit > 0),
               "a set-associative stack has sets and a unit");
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
  g.written = 0;
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
  if (geometry_.ways > 0) {  // the same slot (and place on the stack), its share of the run
    Segment& l = seg(low);
    l.slot = copy.slot;
    l.written = copy.written;
    l.run = copy.run - (copy.hi - addr);
    l.var = copy.var * static_cast<double>(addr - copy.lo) / static_cast<double>(copy.hi - copy.lo);
    seg(s).var = copy.var - l.var;
  }
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
  if (geometry_.ways > 0) sums_.add(g.slot, -static_cast<std::int64_t>(g.hi - g.lo), -g.var);
  unlink(s);
  free_segment(s);
}

void RangeStack::push_range(Addr lo, Addr hi, const Owner& owner, bool dirty) {
  resident_ += hi - lo;
  pushed_ += hi - lo;
  if (head_ != kNone) {
    Segment& top = seg(head_);
    // The new range continues the top segment upwards: one run of ascending recency.
    if (top.hi == lo && top.dirty == dirty && top.owner == owner && top.written == 0) {
      // Its key (the end) grows past nobody of its owner: [lo, hi) was not held.
      auto it = index_.iterator_to(top);
      auto next = std::next(it);
      index_.erase(it);
      top.hi = hi;
      index_.insert(next, top);
      if (geometry_.ways > 0) {
        const double before = run_variance(top.run, geometry_.span);
        top.run += hi - lo;
        const double more = run_variance(top.run, geometry_.span) - before;
        top.var += more;
        sums_.add(top.slot, static_cast<std::int64_t>(hi - lo), more);
      }
      return;
    }
  }
  std::int32_t s = new_segment(lo, hi, owner, dirty);
  if (geometry_.ways > 0) start_run(s);
  index_.insert(seg(s));
  push_top(s);
}

void RangeStack::start_run(std::int32_t s) {
  Segment& g = seg(s);
  const std::uint64_t bytes = g.hi - g.lo;
  // The owner's segment ending where this one starts, if still held: the same run.
  auto it = index_.find(key(g.owner, g.lo));
  const std::uint64_t before = it != index_.end() ? it->run : 0;
  g.run = before + bytes;
  g.var = run_variance(g.run, geometry_.span) - run_variance(before, geometry_.span);
  g.slot = next_slot();
  sums_.add(g.slot, static_cast<std::int64_t>(bytes), g.var);
}

std::uint32_t RangeStack::next_slot() {
  if (next_slot_ > sums_.slots()) renumber();
  return next_slot_++;
}

// Slots 1, 2, ... from the least recently used group up (a slot's segments are adjacent on
// the stack: a split puts the cut part just below), in a table at least twice the groups.
void RangeStack::renumber() {
  std::uint32_t groups = 0, last = 0;
  for (std::int32_t s = tail_; s != kNone; s = seg(s).prev) {
    if (groups == 0 || seg(s).slot != last) ++groups;
    last = seg(s).slot;
  }
  std::uint32_t size = std::max<std::uint32_t>(sums_.slots(), 1024);
  while (size < 2 * (groups + 1)) size *= 2;
  sums_.reset(size);
  std::uint32_t slot = 0;
  for (std::int32_t s = tail_; s != kNone; s = seg(s).prev) {
    Segment& g = seg(s);
    if (slot == 0 || g.slot != last) ++slot;
    last = g.slot;
    g.slot = slot;
    sums_.add(slot, static_cast<std::int64_t>(g.hi - g.lo), g.var);
  }
  next_slot_ = slot + 1;
}

std::uint64_t RangeStack::hit_bytes(std::int32_t s) {
  const Segment& g = seg(s);
  const std::uint64_t bytes = g.hi - g.lo;
  if (geometry_.ways == 0) return bytes;
  const SetGeometry& geo = geometry_;
  // Held for sure when even the whole stack above it would not fill a set (6 sigma).
  const double margin = static_cast<double>(geo.ways) - 0.5 -
                        static_cast<double>(resident_) / static_cast<double>(geo.span);
  if (margin > 0 && margin * margin > 36.0 * std::max(0.0, sums_.total_var())) return bytes;
  // Its own run since its last use: itself and the more recent parts of its slot.
  const std::uint64_t own = own_run(s);
  const auto above =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, sums_.bytes_above(g.slot)));
  const double hit = hit_probability(own, above, sums_.var_above(g.slot), geo);
  if (hit >= 1.0) return bytes;
  const double units = static_cast<double>(bytes / geo.unit) * hit + carry_;
  const double whole = std::floor(units);
  carry_ = units - whole;
  return std::min(bytes, static_cast<std::uint64_t>(whole) * geo.unit);
}

void RangeStack::evict_to_capacity(std::vector<Piece>& victims) {
  while (resident_ > keep_) {
    const std::int32_t t = tail_;
    Segment& g = seg(t);
    const std::uint64_t excess = resident_ - keep_;
    if (g.hi - g.lo <= excess) {
      leave(g, g.lo, g.hi - g.lo, victims);
      erase(t);
    } else {
      // The oldest bytes of a segment are its lowest addresses.
      leave(g, g.lo, excess, victims);
      if (geometry_.ways > 0) {
        const double gone = g.var * static_cast<double>(excess) / static_cast<double>(g.hi - g.lo);
        g.var -= gone;
        sums_.add(g.slot, -static_cast<std::int64_t>(excess), -gone);
      }
      g.lo += excess;
      resident_ -= excess;
    }
  }
  write_back_lost(victims);
}

void RangeStack::leave(const Segment& g, Addr lo, Addr bytes, std::vector<Piece>& victims) const {
  if (!g.dirty || g.written == 0) {
    victims.push_back({lo, lo + bytes, g.dirty, g.owner});
    return;
  }
  const std::uint64_t units = bytes / geometry_.unit;
  const auto written =
      static_cast<std::uint64_t>(std::llround(g.written * static_cast<double>(units)));
  const Addr dirty = (units - std::min(units, written)) * geometry_.unit;
  if (dirty > 0) victims.push_back({lo, lo + dirty, true, g.owner});
  if (dirty < bytes) victims.push_back({lo + dirty, lo + bytes, false, g.owner});
}

Addr RangeStack::written_bytes(std::int32_t s) const {
  const Segment& g = seg(s);
  if (g.written == 0) return 0;
  const std::uint64_t units = (g.hi - g.lo) / geometry_.unit;
  const auto written =
      static_cast<std::uint64_t>(std::llround(g.written * static_cast<double>(units)));
  return std::min(units, written) * geometry_.unit;
}

std::uint64_t RangeStack::own_run(std::int32_t s) const {
  const Segment& g = seg(s);
  std::uint64_t own = g.hi - g.lo;
  for (std::int32_t p = g.prev; p != kNone && seg(p).slot == g.slot; p = seg(p).prev)
    own += seg(p).hi - seg(p).lo;
  return own;
}

double RangeStack::held_share(std::int32_t s, bool* surely) const {
  *surely = false;
  if (geometry_.ways == 0) {
    *surely = true;
    return 1.0;
  }
  const Segment& g = seg(s);
  const std::uint64_t own = own_run(s);
  const auto above =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, sums_.bytes_above(g.slot)));
  const double var = sums_.var_above(g.slot);
  // Its whole depth (its own run and everything above) cannot fill a set, 6 sigma.
  const double margin = static_cast<double>(geometry_.ways) - 0.5 -
                        static_cast<double>(above + own) / static_cast<double>(geometry_.span);
  if (margin > 0 && margin * margin > 36.0 * var) {
    *surely = true;
    return 1.0;
  }
  return held_fraction(own, g.hi - g.lo, above, var, geometry_);
}

void RangeStack::write_back_lost(std::vector<Piece>& victims) {
  if (geometry_.ways == 0 || pushed_ < quantum_) return;
  pushed_ = 0;
  const SetGeometry& geo = geometry_;
  // From the least recently used piece up, while any line of a piece may be gone (held_share:
  // a piece that surely holds everything has only such pieces above it).
  for (std::int32_t s = tail_; s != kNone;) {
    Segment& g = seg(s);
    const std::int32_t up = g.prev;
    bool surely = false;
    const double kept = held_share(s, &surely);
    if (surely) break;
    if (g.dirty) {
      const std::uint64_t bytes = g.hi - g.lo;
      const double lost = 1.0 - kept;
      if (lost > g.written) {
        const auto units = static_cast<double>(bytes / geo.unit);
        const auto before = static_cast<Addr>(std::llround(g.written * units)) * geo.unit;
        const auto after = static_cast<Addr>(std::llround(lost * units)) * geo.unit;
        if (after > before) victims.push_back({g.hi - after, g.hi - before, true, g.owner});
        g.written = lost;
        if (after >= bytes) {  // all of it written back: the rest of its life it is clean
          g.dirty = false;
          g.written = 0;
        }
      }
    }
    s = up;
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
    filled_ += next_lo - cur;
    push_range(cur, next_lo, piece.owner, piece.dirty);
    evict_to_capacity(victims);
    cur = next_lo;
  }
}

void RangeStack::age(std::uint64_t bytes, std::vector<Piece>& victims) {
  if (bytes == 0) return;
  // Consecutive addresses: a run of ages merges into one segment while nothing comes between.
  push_range(aged_, aged_ + bytes, Owner{kNobody, 0, 0, true}, false);
  aged_ += bytes;
  evict_to_capacity(victims);
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
