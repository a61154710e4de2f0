// Replacement policies on single-set caches, with every victim worked out by hand.
#include <catch2/catch.hpp>

#include "builders/cache_builder.h"
#include "mem/cache/cache.h"

using namespace fusim::cache;
using fusim::test::CacheBuilder;

namespace {
// One set of four 64 B ways: lines 0x000, 0x040, ... all land in set 0.
Cache one_set(const char* policy, std::uint64_t seed = 1) {
  return CacheBuilder{}.size(4 * 64).assoc(4).line(64).policy(policy).seed(seed).build();
}
constexpr Addr A = 0x000, B = 0x040, C = 0x080, D = 0x0c0, E = 0x100, F = 0x140, G = 0x180,
               H = 0x1c0, I = 0x200, J = 0x240, K = 0x280;
}  // namespace

TEST_CASE("LRU evicts the least recently used line of a full set") {
  auto cache = CacheBuilder{}.size(4 * 64).assoc(4).line(64).policy("lru").build();
  for (Addr a : {0x000, 0x100, 0x200, 0x300}) cache.access(a, Op::Read);  // fill set 0
  cache.access(0x000, Op::Read);                                          // 0x000 becomes MRU
  cache.access(0x400, Op::Read);                                          // evicts 0x100
  CHECK(cache.contains(0x000));
  CHECK_FALSE(cache.contains(0x100));
  CHECK(cache.stats().misses == 5);
  CHECK(cache.stats().hits == 1);
}

TEST_CASE("LRU hits exactly the reuses whose stack distance is below the associativity") {
  auto cache = one_set("lru");
  // A B C D A: A's stack distance is 3 (B, C, D in between) < 4 ways -> hit.
  for (Addr a : {A, B, C, D}) CHECK_FALSE(cache.access(a, Op::Read));
  CHECK(cache.access(A, Op::Read));
  // E evicts B (LRU); B now has stack distance 4 (C, D, A, E) -> miss, evicting C.
  CHECK_FALSE(cache.access(E, Op::Read));
  CHECK_FALSE(cache.access(B, Op::Read));
  CHECK_FALSE(cache.contains(C));
  CHECK(cache.stats().hits == 1);
  CHECK(cache.stats().misses == 6);

  // A cyclic sweep of 5 lines through 4 ways: every access has stack distance 4 -> all miss.
  auto thrash = one_set("lru");
  for (int round = 0; round < 3; ++round)
    for (Addr a : {A, B, C, D, E}) thrash.access(a, Op::Read);
  CHECK(thrash.stats().misses == 15);
  CHECK(thrash.stats().hits == 0);
}

TEST_CASE("tree-PLRU follows its tree bits, not the true LRU order") {
  auto cache = one_set("tree-plru");
  for (Addr a : {A, B, C, D}) cache.access(a, Op::Read);  // ways 0..3 in fill order
  // Bits after D (way 3): root -> left half, left node -> way 0. A hit on way 0 flips the
  // root to the right half, whose node still points at way 2 (C was used before D).
  CHECK(cache.access(A, Op::Read));
  CHECK_FALSE(cache.access(E, Op::Read));  // evicts C; true LRU would have evicted B
  CHECK(cache.contains(B));
  CHECK_FALSE(cache.contains(C));
  // E in way 2 flips the root to the left half, whose node points at way 1 (B).
  CHECK_FALSE(cache.access(F, Op::Read));
  CHECK_FALSE(cache.contains(B));
  CHECK(cache.contains(A));
  CHECK(cache.contains(D));
  CHECK(cache.stats().misses == 6);
}

TEST_CASE("SRRIP keeps a reused line through a short scan and ages it out after a long one") {
  auto cache = one_set("srrip");
  for (Addr a : {A, B, C, D}) cache.access(a, Op::Read);  // RRPV 2 2 2 2
  CHECK(cache.access(A, Op::Read));                       // A -> 0
  // E: no RRPV 3, age all (A1 B3 C3 D3), evict B (first 3); E=2.
  cache.access(E, Op::Read);
  CHECK_FALSE(cache.contains(B));
  // F: evicts C (A1 E2 C3 D3 -> first 3 is way 2).
  cache.access(F, Op::Read);
  CHECK_FALSE(cache.contains(C));
  // G evicts D; H ages (A2 E3 F3 G3) and evicts E; I evicts F; J evicts G.
  for (Addr a : {G, H, I, J}) cache.access(a, Op::Read);
  CHECK(cache.contains(A));  // survived a scan of six new lines
  for (Addr a : {D, E, F, G}) CHECK_FALSE(cache.contains(a));
  // K: A2 H2 I2 J2 -> age to all 3 -> evicts way 0, A.
  cache.access(K, Op::Read);
  CHECK_FALSE(cache.contains(A));
  CHECK(cache.stats().hits == 1);
  CHECK(cache.stats().misses == 11);
}

TEST_CASE("random replacement is reproducible per seed and uses every way") {
  auto run = [](std::uint64_t seed) {
    auto cache = CacheBuilder{}.size(4 * 64).assoc(4).line(64).policy("random").seed(seed).build();
    for (int i = 0; i < 4000; ++i) cache.access(static_cast<Addr>(i % 5) * 64, Op::Read);
    return cache.stats();
  };
  CHECK(run(7) == run(7));
  CacheStats s = run(7);
  CHECK(s.accesses == 4000);
  CHECK(s.hits + s.misses == 4000);
  // With 5 lines cycling through 4 ways, LRU misses every time; random keeps about half of
  // them (each access hits unless its line was the one evicted since its last use).
  CHECK(s.misses > 5);
  CHECK(s.misses < 4000);
  // Every way gets chosen: a 4-line set filled then swept by 400 new lines holds 4 of the
  // last lines, and a policy stuck on one way would keep 3 of the first 4.
  auto c = one_set("random", 3);
  for (Addr a : {A, B, C, D}) c.access(a, Op::Read);
  for (int i = 0; i < 400; ++i) c.access(0x10000 + static_cast<Addr>(i) * 64, Op::Read);
  int first_kept = 0;
  for (Addr a : {A, B, C, D}) first_kept += c.contains(a);
  CHECK(first_kept == 0);
}

TEST_CASE("streaming and strided patterns give the same exact counts under every policy") {
  for (const char* policy : {"lru", "tree-plru", "random", "srrip"}) {
    INFO(policy);
    // 32 KiB, 8 ways, 64 sets. Streaming reads of 1 MiB in 8-byte steps: 16384 lines, each
    // missed once, 7 hits per line after its miss.
    auto stream = CacheBuilder{}.size(32 * 1024).assoc(8).line(64).policy(policy).build();
    for (Addr a = 0; a < (1u << 20); a += 8) stream.access(a, Op::Read);
    CHECK(stream.stats().misses == 16384);
    CHECK(stream.stats().hits == 131072 - 16384);
    CHECK(stream.stats().writebacks == 0);

    // Streaming writes: every line dirty; once the 512 lines are full, each miss evicts one
    // dirty line: 16384 - 512 writebacks.
    auto writes = CacheBuilder{}.size(32 * 1024).assoc(8).line(64).policy(policy).build();
    for (Addr a = 0; a < (1u << 20); a += 64) writes.access(a, Op::Write);
    CHECK(writes.stats().writebacks == 16384 - 512);

    // Stride 4 KiB = 64 lines = 64 sets: every address maps to set 0. Eight of them fit the
    // 8 ways: 8 compulsory misses, then two more rounds of hits.
    auto strided = CacheBuilder{}.size(32 * 1024).assoc(8).line(64).policy(policy).build();
    for (int round = 0; round < 3; ++round)
      for (Addr i = 0; i < 8; ++i) strided.access(i * 4096, Op::Read);
    CHECK(strided.stats().misses == 8);
    CHECK(strided.stats().hits == 16);
  }
  // Nine addresses in that set under LRU: a cyclic sweep one longer than the ways misses
  // every time.
  auto lru = CacheBuilder{}.size(32 * 1024).assoc(8).line(64).policy("lru").build();
  for (int round = 0; round < 3; ++round)
    for (Addr i = 0; i < 9; ++i) lru.access(i * 4096, Op::Read);
  CHECK(lru.stats().misses == 27);
}
