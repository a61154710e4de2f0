// Functional behaviour of the hierarchy: inclusion, exclusion, writebacks, write policies,
// streaming stores and the two fidelities. Counts worked out by hand in the comments.
#include <catch2/catch.hpp>

#include "builders/hierarchy_builder.h"
#include "core/stats.h"
#include "mem/cache/hierarchy.h"

using namespace fusim;
using namespace fusim::cache;
using test::HierarchyBuilder;
namespace defaults = test::defaults;

namespace {
constexpr Addr A = 0x000, B = 0x040, C = 0x080, D = 0x0c0, E = 0x100;

// L1: one set of 4 ways; L2: one set of 4 ways with the given inclusion.
HierarchyConfig two_levels(const char* inclusion) {
  return HierarchyBuilder{}
      .level(defaults::tiny_l1())
      .level(defaults::tiny_l2().inclusion(inclusion))
      .build();
}

// A private 256 B L1 above a shared 4 KiB LLC (30-cycle lookups).
HierarchyConfig l1_and_shared_llc() {
  return HierarchyBuilder{}
      .level(defaults::tiny_l1())
      .level(test::LevelBuilder("LLC").size(4096).assoc(4).line(64).latency(30).shared())
      .build();
}
}  // namespace

TEST_CASE("an inclusive L2 back-invalidates the L1 copy of the line it evicts") {
  Hierarchy h(two_levels("inclusive"), Fidelity::Line, 1);
  for (Addr a : {A, B, C, D}) CHECK(h.access(0, a, AccessKind::Read) == 2);  // from memory
  CHECK(h.access(0, A, AccessKind::Write) == 0);  // L1 hit: A is now L1's MRU and dirty;
                                                  // L2 never saw it, so A is L2's LRU
  // E: L2 fills first and evicts A (its LRU), taking A out of L1 too; A was dirty in L1, so
  // it is written back to memory. L1 then fills E into A's freed way and keeps B.
  CHECK(h.access(0, E, AccessKind::Read) == 2);
  CHECK_FALSE(h.cache(0, 0).contains(A));
  CHECK(h.cache(0, 0).contains(B));
  // The line that was L1's MRU now misses everywhere; refilling it makes L2 evict B, which
  // is back-invalidated from L1 as well.
  CHECK(h.access(0, A, AccessKind::Read) == 2);
  CHECK_FALSE(h.cache(0, 0).contains(B));
  HierarchyStats s = h.stats();
  CHECK(s.levels[0].total.back_invalidations == 2);
  CHECK(s.levels[0].total.writebacks == 1);  // only A was dirty
  CHECK(s.levels[0].total.misses == 6);
  CHECK(s.levels[1].total.misses == 6);
  CHECK(s.memory.reads == 6);
  CHECK(s.memory.writes == 1);
}

TEST_CASE("a non-inclusive L2 leaves the L1 copy alone") {
  Hierarchy h(two_levels("non-inclusive"), Fidelity::Line, 1);
  for (Addr a : {A, B, C, D}) h.access(0, a, AccessKind::Read);
  h.access(0, A, AccessKind::Write);
  h.access(0, E, AccessKind::Read);  // L2 evicts A, L1 keeps it
  CHECK(h.access(0, A, AccessKind::Read) == 0);
  HierarchyStats s = h.stats();
  CHECK(s.levels[0].total.back_invalidations == 0);
  CHECK(s.memory.reads == 5);
  CHECK(s.memory.writes == 0);  // A is still dirty in L1
}

TEST_CASE("an exclusive L2 is a victim cache: L1 + L2 hold twice the lines") {
  // L1 and L2 are one set of 2 ways each.
  auto make = [&](const char* inclusion) {
    return HierarchyBuilder{}
        .level(defaults::tiny_l1().size(128).assoc(2))
        .level(defaults::tiny_l2().size(128).assoc(2).inclusion(inclusion))
        .build();
  };
  // Exclusive: round 1 misses 4 times; L1 ends with C D, L2 with the victims A B. Round 2:
  // A hits L2 and moves up (C drops into L2), B likewise (D drops), then C and D hit L2.
  Hierarchy ex(make("exclusive"), Fidelity::Line, 1);
  for (int round = 0; round < 2; ++round)
    for (Addr a : {A, B, C, D}) ex.access(0, a, AccessKind::Read);
  HierarchyStats s = ex.stats();
  CHECK(s.memory.reads == 4);
  CHECK(s.levels[1].total.hits == 4);
  CHECK(ex.cache(0, 0).contains(C));
  CHECK(ex.cache(0, 0).contains(D));
  CHECK_FALSE(ex.cache(1, 0).contains(C));  // never in both
  CHECK(ex.cache(1, 0).contains(A));
  // Non-inclusive, same sizes: L2 holds only C D after round 1 (it was filled with all four),
  // and round 2 misses everywhere again.
  Hierarchy ni(make("non-inclusive"), Fidelity::Line, 1);
  for (int round = 0; round < 2; ++round)
    for (Addr a : {A, B, C, D}) ni.access(0, a, AccessKind::Read);
  CHECK(ni.stats().memory.reads == 8);
}

TEST_CASE("dirty lines are written back one level down, and to memory from the last level") {
  Hierarchy h(two_levels("non-inclusive"), Fidelity::Line, 1);
  // Write 8 lines: L1 (4 lines) evicts 4 dirty lines into L2; L2 (4 lines) got all 8 on fill
  // and evicts its 4 oldest (A..D) clean copies first -> the L1 victims A..D find no copy in
  // L2 and go to memory.
  for (Addr i = 0; i < 8; ++i) h.access(0, i * 64, AccessKind::Write);
  HierarchyStats s = h.stats();
  CHECK(s.levels[0].total.writebacks == 4);
  CHECK(s.levels[1].total.writebacks == 0);
  CHECK(s.memory.writes == 4);
  CHECK(s.memory.reads == 8);  // write-allocate: each line is read for ownership
  h.flush();                   // the 4 dirty lines left in L1 go to memory
  CHECK(h.stats().memory.writes == 8);
}

TEST_CASE("write-through, no-write-allocate L1 passes writes down without filling") {
  Hierarchy h(HierarchyBuilder{}
                  .level(defaults::tiny_l1().write_through().write_allocate(false))
                  .level(defaults::tiny_l2().size(1024))
                  .build(),
              Fidelity::Line, 1);
  CHECK(h.access(0, A, AccessKind::Write) == 2);  // L1 miss, L2 miss: RFO from memory
  CHECK_FALSE(h.cache(0, 0).contains(A));
  CHECK(h.cache(1, 0).contains(A));
  CHECK(h.access(0, A, AccessKind::Read) == 1);   // now L1 fills (reads allocate)
  CHECK(h.access(0, A, AccessKind::Write) == 0);  // L1 hit, written through to L2
  HierarchyStats s = h.stats();
  CHECK(s.levels[1].total.accesses == 3);
  CHECK(s.levels[1].total.hits == 2);
  CHECK(s.levels[0].total.writebacks == 0);  // write-through lines are never dirty
}

TEST_CASE("a streaming store bypasses the caches and drops cached copies") {
  Hierarchy h(two_levels("non-inclusive"), Fidelity::Line, 1);
  h.access(0, A, AccessKind::Write);  // A dirty in L1
  RangeResult r = h.access_range(0, 0, 256, AccessKind::StreamingWrite);
  CHECK(r.units == 4);
  CHECK(r.served[2] == 4);
  CHECK_FALSE(h.cache(0, 0).contains(A));
  CHECK_FALSE(h.cache(1, 0).contains(A));
  HierarchyStats s = h.stats();
  CHECK(s.memory.writes == 4);  // the stores, not a writeback of A's stale data
  CHECK(s.levels[0].total.writebacks == 0);
}

TEST_CASE("private levels are per core, shared levels are one") {
  Hierarchy h(l1_and_shared_llc(), Fidelity::Line, 2);
  CHECK(h.access(0, A, AccessKind::Read) == 2);
  CHECK(h.access(1, A, AccessKind::Read) == 1);  // core 1 misses its L1, hits the shared LLC
  CHECK(h.access(1, A, AccessKind::Read) == 0);
  HierarchyStats s = h.stats();
  REQUIRE(s.levels[0].per_core.size() == 2);
  CHECK(s.levels[0].per_core[0].misses == 1);
  CHECK(s.levels[0].per_core[1].misses == 1);
  CHECK(s.levels[0].per_core[1].hits == 1);
  CHECK(s.levels[1].total.accesses == 2);
  // Warm-up is excluded by subtraction.
  HierarchyStats warm = h.stats();
  h.access(0, A, AccessKind::Read);
  HierarchyStats steady = h.stats() - warm;
  CHECK(steady.levels[0].total.accesses == 1);
  CHECK(steady.levels[0].total.hits == 1);
  CHECK(steady.levels[1].total.accesses == 0);
  CHECK(steady.memory.reads == 0);
}

TEST_CASE("line and block fidelity keep the same bytes in the same caches") {
  // L1 48 KiB 12-way: 768 lines in 64 sets, or twelve 4 KiB blocks in one set.
  auto config = HierarchyBuilder{}
                    .block(4096)
                    .level(test::LevelBuilder("L1").size("48KiB").assoc(12).line(64).latency(5))
                    .build();
  for (auto fidelity : {Fidelity::Line, Fidelity::Block}) {
    Hierarchy fits(config, fidelity, 1);
    std::uint64_t units = fidelity == Fidelity::Line ? 768 : 12;
    RangeResult first = fits.access_range(0, 0, 48 * 1024, AccessKind::Read);
    RangeResult second = fits.access_range(0, 0, 48 * 1024, AccessKind::Read);
    CHECK(first.units == units);
    CHECK(first.served[1] == units);
    CHECK(second.served[0] == units);
    // 64 KiB swept twice does not fit: 16 lines per set (or 16 blocks) cycle through 12 ways.
    Hierarchy thrash(config, fidelity, 1);
    thrash.access_range(0, 0, 64 * 1024, AccessKind::Read);
    thrash.access_range(0, 0, 64 * 1024, AccessKind::Read);
    CHECK(thrash.stats().levels[0].total.misses == 2 * units * 16 / 12);
  }
  // An unaligned range touches every unit it overlaps.
  Hierarchy h(config, Fidelity::Line, 1);
  CHECK(h.access_range(0, 60, 8, AccessKind::Read).units == 2);
  CHECK(h.access_range(0, 64, 64, AccessKind::Read).units == 1);
  CHECK(h.access_range(0, 64, 0, AccessKind::Read).units == 0);
}

TEST_CASE("stats print as a tree: table rows by path, JSON by name") {
  Hierarchy h(l1_and_shared_llc(), Fidelity::Line, 2);
  h.access(1, A, AccessKind::Read);
  StatsNode tree = to_stats_node(h.stats());
  nlohmann::json j = stats_to_json(tree);
  CHECK(j["children"][0]["name"] == "L1");
  CHECK(j["children"][0]["misses"] == 1);
  CHECK(j["children"][0]["children"][1]["name"] == "core1");
  CHECK(j["children"][0]["children"][1]["misses"] == 1);
  CHECK(j["children"][2]["name"] == "memory");
  CHECK(j["children"][2]["reads"] == 1);
  std::string text = stats_to_table(tree, "level").to_text();
  CHECK(text.find("L1/core1") != std::string::npos);
  CHECK(text.find("LLC") != std::string::npos);
}

TEST_CASE("maybe_filled_since: no for a unit none of the logged fills inserted, yes otherwise") {
  Hierarchy h(two_levels("inclusive"), Fidelity::Line, 1);
  const auto unit = [](Addr a) { return a / 64; };
  CHECK(h.access(0, A, AccessKind::Read) == 2);  // fills L2 then L1: two fills
  const std::uint64_t since = h.fills();
  CHECK(since == 2);
  CHECK_FALSE(h.maybe_filled_since(unit(B), since));  // nothing filled since
  CHECK(h.access(0, B, AccessKind::Read) == 2);       // two more fills, both of B
  CHECK(h.maybe_filled_since(unit(B), since));
  CHECK_FALSE(h.maybe_filled_since(unit(C), since));  // B's fills are not C's
  CHECK(h.maybe_filled_since(unit(A), 0));            // A was filled in that stretch
  CHECK(h.maybe_filled_since(unit(C), UINT64_MAX));   // never parked: must look
  // Beyond the log's reach the answer is "maybe": 20 lines, 40 fills, none of them C...
  for (Addr a = 0x1000; a < 0x1000 + 20 * 64; a += 64) h.access(0, a, AccessKind::Read);
  CHECK(h.maybe_filled_since(unit(C), since));
  // ...while the last 16 fills, checked from 8 fills back, hold no C.
  CHECK_FALSE(h.maybe_filled_since(unit(C), h.fills() - 8));
}
