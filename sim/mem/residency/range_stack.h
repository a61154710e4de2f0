#pragma once
// One cache array of the `tensor` fidelity: the bytes it holds as address segments on an
// LRU stack, exact for a fully associative LRU cache of whole units (lines) whatever the
// sizes of the accesses, in O(segments touched) per access instead of O(lines).
//
// Why it is exact (Mattson et al., "Evaluation techniques for storage hierarchies", IBM
// Systems Journal 1970: LRU holds the top `capacity` of the stack of distinct units): a
// range accessed in ascending order leaves its units on the stack with the highest address
// on top, so a segment is a run of units of one recency order, and a re-access of any part
// of it, again ascending, finds every unit at the same depth (each moved unit pushes the
// next one down by exactly one). So a piece of an access either hits entirely or misses
// entirely; the walk below takes the pieces in address order, fills each miss at the top
// at once and evicts from the bottom as it goes, so that a later piece of the same access
// that the fill pushed out misses (a re-scan of a range larger than the cache finds
// nothing, as in true LRU).
//
// Private copies. A private cache level of the tensor fidelity is one stack per group of
// cores (its capacity the sum of theirs, sim/mem/residency/residency.h), whose segments say
// which core of the group holds each byte: `Owner`, the cores and the chunk slice whose
// even split gave each core its part. A byte hits only for an access with the same owner
// (the same core loaded it). Copies of one byte under different owners are different
// cores' copies: they coexist, each with its own recency, and leave by LRU like any other
// (no coherence is modelled, as in the line model: a core keeps a copy other cores have
// since rewritten, and hits it when a later split gives it those bytes again). Segments of
// one owner never overlap. Shared levels use one Owner for everything.
//
// Set-associative arrays (SetGeometry, set_conflicts.h). A stack given a geometry keeps
// bytes below its capacity too, down to keep_depth(): a piece found at reuse distance d
// (the bytes above it, its own run's and other runs') hits in the fraction
// hit_probability() gives, the lowest addresses of the piece first (the split is in units,
// its rounding carried from piece to piece), and the rest misses as if it had left the
// array earlier. Dirty bytes are written back when the array loses them, as a cache writes a
// dirty line back when it evicts it: each time another 1/64 of the capacity has been pushed,
// the dirty pieces lose what held_fraction() says they lost since (the newest-addressed
// bytes of each piece first), returned as dirty victims although the stack still holds them
// for the hit model (a piece records the share of it already written back); a re-read then
// reports as was_dirty = true only the lost bytes not yet written back (those its own fills
// push out: the caller writes them back now), and a piece leaving past the keep depth is
// dirty only for what it did not write back yet. The depth of a
// piece comes from sums by recency slot (a slot per pushed run: the pieces a split cuts
// out of one keep its slot and their address order), the variance of the set counts from
// the runs' lengths (a range pushed just after the one ending where it starts continues
// its run: the variances telescope to that of the whole run). Without a geometry (ways 0:
// one set) the stack is the exact fully associative LRU above, and costs nothing more.
//
// Not thread-safe; no global state.
#include <cstdint>
#include <vector>

#include <deque>

#include <boost/intrusive/set.hpp>

#include "mem/residency/set_conflicts.h"

namespace fusim::residency {

using Addr = std::uint64_t;

// Which core of a group holds a private copy of a byte: core c of the group's list got
// part c of an even split of [slice_lo, slice_hi) (the executor's aligned_slice), so two
// accesses agree on every byte's core when they name the same group and the same slice,
// or when the group is one core.
struct Owner {
  std::int32_t group = 0;
  Addr slice_lo = 0, slice_hi = 0;
  bool solo = true;  // a group of one core owns every byte
  bool operator==(const Owner& o) const {
    return group == o.group && solo == o.solo &&
           (solo || (slice_lo == o.slice_lo && slice_hi == o.slice_hi));
  }
  bool operator!=(const Owner& o) const { return !(*this == o); }
};

// The owner of the bytes RangeStack::age() pushes: no access names it.
constexpr std::int32_t kNobody = -1;

// A run of bytes, [lo, hi), as the walk reports it or as it leaves the array.
struct Piece {
  Addr lo = 0, hi = 0;
  bool dirty = false;
  Owner owner;
};

// What an access does to the pieces it finds and to those it does not.
struct AccessMode {
  bool hit_dirty = false;   // a hit marks the bytes dirty (a write-back write)
  bool hit_remove = false;  // a hit takes the bytes out (an exclusive level: they move up)
  bool miss_fill = true;    // a miss is inserted at the top (false: no allocation)
  bool miss_dirty = false;  // ... dirty (a write-allocate write)
};

class RangeStack {
 public:
  // capacity: bytes, a multiple of the unit of the addresses it is given; geometry: see
  // the header comment (default: fully associative, exact).
  explicit RangeStack(std::uint64_t capacity, SetGeometry geometry = {});

  // Walks [lo, hi) in ascending order (see the header comment); for each maximal piece
  // calls visit(lo, hi, hit, was_dirty) (a miss with was_dirty: bytes lost to set
  // conflicts, to be written back). Bytes pushed out by fills are appended to `victims`,
  // dirty or clean, in eviction order.
  template <class Visit>
  void access(Addr lo, Addr hi, const Owner& owner, const AccessMode& mode, Visit&& visit,
              std::vector<Piece>& victims);

  // Sets the dirty bit of the bytes of [lo, hi) held for `owner`, leaving their recency
  // (a writeback arriving from above); appends the parts not held to `missing`.
  void mark_dirty(Addr lo, Addr hi, const Owner& owner, std::vector<Piece>& missing);
  // Takes every byte of [lo, hi) out, whoever holds it; appends what was there to `removed`.
  // (Linear in the segments when several owners share the stack: only inclusive levels
  // back-invalidating private ones do this.)
  void invalidate(Addr lo, Addr hi, std::vector<Piece>& removed);
  // Inserts a victim from above (exclusive levels), or a piece just served from below: held
  // parts only become dirty if it is; the rest goes on top, evicting into `victims`.
  void insert(const Piece& piece, std::vector<Piece>& victims);
  // Puts `bytes` of nobody's data on top (Owner kNobody, addresses of their own), evicting
  // into `victims`: what other stacks filled into the same cores' caches since this one's
  // last access (shared_cores.h). They hit for no access; as victims they are clean, with
  // owner kNobody, for the caller to drop.
  void age(std::uint64_t bytes, std::vector<Piece>& victims);
  // Bytes put in by misses (access with miss_fill, insert), not by hits nor age().
  std::uint64_t filled() const { return filled_; }

  std::uint64_t capacity() const { return capacity_; }
  // Bytes held, those kept beyond the capacity by a set-associative stack included.
  std::uint64_t resident_bytes() const { return resident_; }
  std::uint64_t keep_bytes() const { return keep_; }
  const SetGeometry& geometry() const { return geometry_; }
  std::size_t segments() const { return index_.size(); }
  // Resident bytes of [lo, hi) held for `owner` (tests, dumps).
  std::uint64_t held_bytes(Addr lo, Addr hi, const Owner& owner) const;
  // Calls f(piece) from the most to the least recently used segment.
  template <class F>
  void for_each_mru(F&& f) const {
    for (std::int32_t s = head_; s >= 0; s = segs_[static_cast<std::size_t>(s)].next)
      f(piece_of(s));
  }

 private:
  // A segment is a node of the address index (an intrusive red-black tree: no allocation
  // per insert, O(log segments)) and of the recency list. Nodes live in a deque, which
  // never moves them.
  struct Segment : boost::intrusive::set_base_hook<boost::intrusive::optimize_size<true>> {
    Addr lo = 0, hi = 0;
    Owner owner;
    bool dirty = false;
    std::int32_t prev = -1, next = -1;  // towards the top (MRU) / the bottom (LRU)
    std::int32_t id = -1;               // its index in segs_
    // Set model only (see the header comment): its recency slot, its share of its run's
    // set-count variance, and the length of its run up to hi when it was pushed.
    std::uint32_t slot = 0;
    double var = 0;
    std::uint64_t run = 0;
    double written = 0;  // dirty: the share of its bytes lost to set conflicts, written back
  };
  static constexpr std::int32_t kNone = -1;
  static std::int32_t id_of(const Segment& g) { return g.id; }

  Segment& seg(std::int32_t s) { return segs_[static_cast<std::size_t>(s)]; }
  const Segment& seg(std::int32_t s) const { return segs_[static_cast<std::size_t>(s)]; }
  Piece piece_of(std::int32_t s) const;
  // The segment holding addr, or kNone; *next_lo: start of the first segment above addr
  // (or `limit` if none starts before it).
  std::int32_t find(const Owner& owner, Addr addr, Addr limit, Addr* next_lo) const;
  std::int32_t new_segment(Addr lo, Addr hi, const Owner& owner, bool dirty);
  void free_segment(std::int32_t s);
  void unlink(std::int32_t s);
  void push_top(std::int32_t s);
  // Cuts segment s at addr (lo < addr < hi); returns the new lower part [lo, addr), placed
  // just below s on the stack (higher addresses of a segment are the more recent).
  std::int32_t split(std::int32_t s, Addr addr);
  // Isolates [lo, hi) inside segment s; returns the segment that is exactly that part.
  std::int32_t carve(std::int32_t s, Addr lo, Addr hi);
  // Removes segment s entirely (it leaves the index and the stack).
  void erase(std::int32_t s);
  // Puts [lo, hi) on top, merged into the top segment when it continues it.
  void push_range(Addr lo, Addr hi, const Owner& owner, bool dirty);
  void evict_to_capacity(std::vector<Piece>& victims);
  // Set model: [lo, lo + bytes) of segment g leaves the array (dirty for what g did not
  // write back yet).
  void leave(const Segment& g, Addr lo, Addr bytes, std::vector<Piece>& victims) const;
  // Set model: the dirty bytes lost since the last look (the header comment), as victims.
  void write_back_lost(std::vector<Piece>& victims);
  // Set model: the bytes of segment s written back already (its share, in whole units).
  Addr written_bytes(std::int32_t s) const;
  // Set model: the share of segment s its sets still hold (held_fraction); *surely: all of
  // it for certain (6 sigma), and so of every segment above it. 1 without a geometry.
  double held_share(std::int32_t s, bool* surely) const;
  // Set model: s and the more recent parts of its run's slot.
  std::uint64_t own_run(std::int32_t s) const;
  // Set model: the bytes of piece s (a whole segment) that hit; a new segment s (not yet
  // in the index) joins or starts a run and takes a slot; slots renumbered from the oldest.
  std::uint64_t hit_bytes(std::int32_t s);
  void start_run(std::int32_t s);
  std::uint32_t next_slot();
  void renumber();

  std::uint64_t capacity_;
  SetGeometry geometry_;
  std::uint64_t keep_;
  RecencySums sums_;
  std::uint32_t next_slot_ = 1;
  double carry_ = 0;          // the fraction of a unit a split rounded off
  std::uint64_t pushed_ = 0;  // bytes pushed since the dirty pieces' last look
  // Bytes between two looks: 1/64 of the capacity. A look's writebacks all go with the
  // chunk that makes it: at 1/16 (2.5 chunks' bytes of a 40 MiB L2) A100 resnet18 batch 1
  // 32x32 eager SGD was +3.6% against line, at 1/64 +0.1%. More looks cost time, and
  // wrote back more than line on the random accesses of test_set_conflicts.cpp (1/16:
  // +0.4-0.6%, 1/64: +0.6-1.0%, 1/128: +0.7-1.1%; fully associative +0.8-1.1%).
  std::uint64_t quantum_ = 0;
  std::uint64_t resident_ = 0;
  std::uint64_t filled_ = 0;
  Addr aged_ = Addr{1} << 63;  // the next address of nobody's bytes (above any real one)
  std::deque<Segment> segs_;
  std::vector<std::int32_t> free_;
  // Segments by owner, then by their end address (hi): trimming a segment's low end, which
  // eviction does, keeps its key. A solo owner's slice is not part of its key.
  struct Key {
    std::int32_t group;
    Addr slice_lo, slice_hi, hi;
    bool operator<(const Key& o) const {
      if (group != o.group) return group < o.group;
      if (slice_lo != o.slice_lo) return slice_lo < o.slice_lo;
      if (slice_hi != o.slice_hi) return slice_hi < o.slice_hi;
      return hi < o.hi;
    }
  };
  static Key key(const Owner& owner, Addr hi) {
    return owner.solo ? Key{owner.group, 0, 0, hi}
                      : Key{owner.group, owner.slice_lo, owner.slice_hi, hi};
  }
  static bool same_owner(const Key& a, const Key& b) {
    return a.group == b.group && a.slice_lo == b.slice_lo && a.slice_hi == b.slice_hi;
  }
  struct KeyOf {
    using type = Key;
    Key operator()(const Segment& s) const { return key(s.owner, s.hi); }
  };
  boost::intrusive::set<Segment, boost::intrusive::key_of_value<KeyOf>,
                        boost::intrusive::constant_time_size<true>>
      index_;
  std::int32_t head_ = kNone, tail_ = kNone;
};

template <class Visit>
void RangeStack::access(Addr lo, Addr hi, const Owner& owner, const AccessMode& mode, Visit&& visit,
                        std::vector<Piece>& victims) {
  Addr cur = lo;
  while (cur < hi) {
    Addr next_lo = hi;
    const std::int32_t s = find(owner, cur, hi, &next_lo);
    if (s != kNone) {
      const Addr end = seg(s).hi < hi ? seg(s).hi : hi;
      const std::int32_t m = carve(s, cur, end);
      const bool was_dirty = seg(m).dirty;
      const Addr written = was_dirty ? written_bytes(m) : 0;
      const Addr held = cur + hit_bytes(m);  // the rest was lost to set conflicts
      erase(m);
      if (held > cur) {
        if (!mode.hit_remove) push_range(cur, held, owner, was_dirty || mode.hit_dirty);
        visit(cur, held, true, was_dirty);
      }
      if (held < end) {
        if (mode.miss_fill) {
          filled_ += end - held;
          push_range(held, end, owner, mode.miss_dirty);
          evict_to_capacity(victims);
        }
        // The lost bytes' newest addresses were written back when they were lost.
        const Addr unwritten = end - std::min(written, end - held);
        if (unwritten > held) visit(held, unwritten, false, was_dirty);
        if (unwritten < end) visit(unwritten, end, false, false);
      }
      cur = end;
      continue;
    }
    const Addr end = next_lo;
    if (mode.miss_fill) {
      filled_ += end - cur;
      push_range(cur, end, owner, mode.miss_dirty);
      evict_to_capacity(victims);
    }
    visit(cur, end, false, false);
    cur = end;
  }
}

}  // namespace fusim::residency
