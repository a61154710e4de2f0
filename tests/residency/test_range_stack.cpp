// One level of the tensor fidelity on its own: LRU over address ranges, exact by the
// stack argument of range_stack.h, checked on cases worked out by hand.
#include <catch2/catch.hpp>

#include "mem/residency/range_stack.h"

using namespace fusim::residency;

namespace {
constexpr Addr KiB = 1024;

struct Tally {
  std::uint64_t hit = 0, miss = 0;
};

Tally touch(RangeStack& s, Addr lo, Addr hi, std::vector<Piece>& victims,
            AccessMode mode = AccessMode{}, Owner owner = Owner{}) {
  Tally t;
  s.access(
      lo, hi, owner, mode, [&](Addr a, Addr b, bool hit, bool) { (hit ? t.hit : t.miss) += b - a; },
      victims);
  return t;
}
}  // namespace

TEST_CASE("a range that fits is found again; one larger than the cache is not") {
  RangeStack s(64 * KiB);
  std::vector<Piece> victims;
  CHECK(touch(s, 0, 48 * KiB, victims).miss == 48 * KiB);
  CHECK(touch(s, 0, 48 * KiB, victims).hit == 48 * KiB);
  CHECK(victims.empty());
  // A 128 KiB scan leaves its last 64 KiB; scanning it again from the start, each miss
  // pushes out the oldest byte still there, which is the next one the scan wants: true LRU
  // finds nothing (Mattson's stack: every byte is at depth 128 KiB > 64 KiB).
  RangeStack big(64 * KiB);
  CHECK(touch(big, 0, 128 * KiB, victims).miss == 128 * KiB);
  CHECK(big.resident_bytes() == 64 * KiB);
  CHECK(big.held_bytes(64 * KiB, 128 * KiB, Owner{}) == 64 * KiB);
  Tally again = touch(big, 0, 128 * KiB, victims);
  CHECK(again.hit == 0);
  CHECK(again.miss == 128 * KiB);
}

TEST_CASE("two tensors interleaved in chunks behave as one LRU stream") {
  // A = [0, 40K) and B = [1M, 1M + 40K) read together in 8 chunks of 5 KiB each (A's
  // slice, then B's): 80 KiB per pass through a 64 KiB cache. Pass 1 leaves the newest
  // 64 KiB: B7 A7 ... B2 A2 (60 KiB) and the top 4 KiB of B1. Pass 2 in the same order
  // misses everything (cyclic reuse distance 80 KiB > 64 KiB: each miss pushes out the
  // oldest bytes, which are the next ones the pass wants) and leaves the same state.
  RangeStack s(64 * KiB);
  std::vector<Piece> victims;
  const Addr A = 0, B = 1 << 20, chunk = 5 * KiB;
  for (int pass = 0; pass < 2; ++pass) {
    std::uint64_t hits = 0;
    for (Addr c = 0; c < 8; ++c) {
      hits += touch(s, A + c * chunk, A + (c + 1) * chunk, victims).hit;
      hits += touch(s, B + c * chunk, B + (c + 1) * chunk, victims).hit;
    }
    CHECK(hits == 0);
  }
  CHECK(s.held_bytes(A, A + 40 * KiB, Owner{}) == 30 * KiB);
  CHECK(s.held_bytes(A + 10 * KiB, A + 40 * KiB, Owner{}) == 30 * KiB);
  CHECK(s.held_bytes(B, B + 40 * KiB, Owner{}) == 34 * KiB);
  // A alone: byte x of A's chunk c was last used before B_c and both tensors' chunks
  // c+1..7, and the scan re-reads A below x first: stack distance 5 KiB x (16 - c),
  // under 64 KiB for c >= 4 only. So A[20K, 40K) hits and A[0, 20K) misses, pushing out
  // the oldest 20 KiB: B1's 4 KiB, A2, B2, A3 and 1 KiB of B3.
  Tally a = touch(s, A, A + 40 * KiB, victims);
  CHECK(a.hit == 20 * KiB);
  CHECK(a.miss == 20 * KiB);
  CHECK(s.held_bytes(B, B + 40 * KiB, Owner{}) == 24 * KiB);
  CHECK(s.resident_bytes() == 64 * KiB);
}

TEST_CASE("dirty bytes leave as victims in LRU order, trimmed from a segment's low end") {
  RangeStack s(16 * KiB);
  std::vector<Piece> victims;
  AccessMode write;
  write.hit_dirty = true;
  write.miss_dirty = true;
  touch(s, 0, 8 * KiB, victims, write);     // dirty [0, 8K)
  touch(s, 100 * KiB, 108 * KiB, victims);  // clean [100K, 108K): full
  touch(s, 0, 2 * KiB, victims);            // re-read [0, 2K): now newest
  touch(s, 200 * KiB, 204 * KiB, victims);  // 4 KiB more: evicts [2K, 6K)
  REQUIRE(victims.size() == 1);
  CHECK(victims[0].lo == 2 * KiB);
  CHECK(victims[0].hi == 6 * KiB);
  CHECK(victims[0].dirty);
  CHECK(s.held_bytes(0, 2 * KiB, Owner{}) == 2 * KiB);  // the re-read part stayed
}

TEST_CASE("a private copy hits only for its owner; other owners' copies coexist") {
  RangeStack s(64 * KiB);
  std::vector<Piece> victims;
  const Owner split_a{1, 0, 32 * KiB, false}, split_b{1, 0, 16 * KiB, false};
  const Owner solo{2, 0, 32 * KiB, true}, solo_other_slice{2, 8 * KiB, 9 * KiB, true};
  AccessMode write;
  write.miss_dirty = true;
  touch(s, 0, 32 * KiB, victims, write, split_a);
  CHECK(touch(s, 0, 32 * KiB, victims, AccessMode{}, split_a).hit == 32 * KiB);
  // Split differently over the same cores: each core wants bytes another one holds, and
  // loads its own copy beside it (the first split's copies stay, with their recency).
  Tally t = touch(s, 0, 16 * KiB, victims, AccessMode{}, split_b);
  CHECK(t.miss == 16 * KiB);
  CHECK(victims.empty());
  CHECK(s.resident_bytes() == 48 * KiB);
  CHECK(s.held_bytes(0, 32 * KiB, split_a) == 32 * KiB);
  CHECK(s.held_bytes(0, 32 * KiB, split_b) == 16 * KiB);
  // 32 KiB more push out the 16 KiB oldest: split_a's [0, 16K) (dirty), not split_b's.
  touch(s, 1 << 20, (1 << 20) + 32 * KiB, victims);
  REQUIRE(victims.size() == 1);
  CHECK(victims[0].dirty);
  CHECK(victims[0].owner == split_a);
  CHECK(victims[0].hi - victims[0].lo == 16 * KiB);
  CHECK(s.held_bytes(0, 16 * KiB, split_b) == 16 * KiB);
  // A group of one core owns everything it loaded, however the slices were cut.
  touch(s, 40 * KiB, 48 * KiB, victims, AccessMode{}, solo);
  CHECK(touch(s, 40 * KiB, 48 * KiB, victims, AccessMode{}, solo_other_slice).hit == 8 * KiB);
}

TEST_CASE("mark_dirty keeps recency and reports what is not held") {
  RangeStack s(16 * KiB);
  std::vector<Piece> victims, missing;
  touch(s, 0, 8 * KiB, victims);
  touch(s, 8 * KiB, 16 * KiB, victims);
  s.mark_dirty(4 * KiB, 20 * KiB, Owner{}, missing);
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].lo == 16 * KiB);
  CHECK(missing[0].hi == 20 * KiB);
  touch(s, 64 * KiB, 72 * KiB, victims);  // pushes out the oldest 8 KiB: [0, 8K)
  REQUIRE(victims.size() == 2);           // [0, 4K) clean, then [4K, 8K) dirty
  CHECK(!victims[0].dirty);
  CHECK(victims[0].hi == 4 * KiB);
  CHECK(victims[1].dirty);
  CHECK(victims[1].lo == 4 * KiB);
  CHECK(victims[1].hi == 8 * KiB);
}
