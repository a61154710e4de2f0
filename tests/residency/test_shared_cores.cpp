// Private stacks of core sets that overlap (shared_cores.h, ResidencyHierarchy::add_bin):
// a set holds its cores' worth of a private level, and what other sets fill into its
// cores pushes its bytes out, by fill counts per core. Hand-computed sizes on one 4 KiB
// private L1 (64 B lines) per core above a large shared level.
#include <catch2/catch.hpp>

#include "core/json_view.h"
#include "mem/residency/residency.h"
#include "mem/residency/shared_cores.h"

using namespace fusim;
using namespace fusim::residency;

namespace {
cache::HierarchyConfig config() {
  nlohmann::json doc = parse_json_text(R"({"levels":[
    {"name":"L1","size":"4KiB","assoc":64,"line":64,"latency_cycles":1},
    {"name":"L2","size":"1MiB","assoc":16384,"line":64,"latency_cycles":1,"shared":true}]})",
                                       "test.json");
  return cache::parse_hierarchy_config(JsonView(doc, "test.json"));
}

// Reads [addr, addr + bytes) on bin `bin` as group `group` of `cores` cores (one slice).
Served read(ResidencyHierarchy& h, int bin, int group, int cores, Addr addr, std::uint64_t bytes) {
  AccessRequest r;
  r.bin = bin;
  r.owner = Owner{group, addr, addr + bytes, cores == 1};
  r.addr = addr;
  r.bytes = bytes;
  Served s;
  h.access(r, s);
  return s;
}
}  // namespace

TEST_CASE("shared cores: a set takes what others filled into its cores, in whole units") {
  SharedCores s(1, 8);
  const int a = s.add({0, 1});
  const int b = s.add({1, 2, 3, 4});
  s.filled(0, b, 4096);  // 1 KiB into each of cores 1-4: 1 KiB of it into a's core 1
  CHECK(s.take_foreign(0, a, 64) == 1024);
  CHECK(s.take_foreign(0, a, 64) == 0);  // taken
  CHECK(s.take_foreign(0, b, 64) == 0);  // its own fills
  s.filled(0, a, 100);                   // 50 B into cores 0 and 1: b's share 50 B, < a unit
  CHECK(s.take_foreign(0, b, 64) == 0);
  s.filled(0, a, 100);  // 100 B in all now: one unit, 36 B left for later
  CHECK(s.take_foreign(0, b, 64) == 64);
  const int c = s.add({1});  // a new set owes nothing for what came before it
  CHECK(s.take_foreign(0, c, 64) == 0);
}

TEST_CASE("own bins: an op on 2 of 8 cores holds 2 cores' worth of L1, not 8") {
  ResidencyHierarchy h(config(), {8});
  const int two = h.add_bin({0, 1});  // 8 KiB of L1
  // 6 KiB fits in the bin's 8 KiB: read again, all L1 hits (96 units).
  read(h, two, 1, 2, 0, 6144);
  CHECK(read(h, two, 1, 2, 0, 6144).served[0] == 96);
  // 12 KiB does not: an LRU re-scan of more than its capacity finds nothing in L1
  // (the bin of all 8 cores, 32 KiB, would have held it all).
  read(h, two, 1, 2, 65536, 12288);
  const Served again = read(h, two, 1, 2, 65536, 12288);
  CHECK(again.served[0] == 0);
  CHECK(again.served[1] == 192);
  read(h, 0, 0, 8, 1 << 20, 12288);
  CHECK(read(h, 0, 0, 8, 1 << 20, 12288).served[0] == 192);
}

TEST_CASE("own bins: other sets' fills on shared cores push a set's bytes out") {
  ResidencyHierarchy h(config(), {8});
  const int a = h.add_bin({0, 1});        // 8 KiB
  const int b = h.add_bin({0, 1, 2, 3});  // shares cores 0 and 1 with a
  const int d = h.add_bin({4, 5, 6, 7});  // shares none
  read(h, a, 1, 2, 0, 4096);              // a holds 4 KiB, 4 KiB free
  // d fills 16 KiB into cores a does not use: a keeps everything.
  read(h, d, 3, 4, 1 << 20, 16384);
  CHECK(read(h, a, 1, 2, 0, 4096).served[0] == 64);
  // b fills 8 KiB over 4 cores: 4 KiB of it into cores 0 and 1, which then hold a's 4 KiB
  // and those 4 KiB: still all of a's.
  read(h, b, 2, 4, 2 << 20, 8192);
  CHECK(read(h, a, 1, 2, 0, 4096).served[0] == 64);
  // That read moved a's 4 KiB above the 4 KiB b had put there. 16 KiB more from b: 8 KiB
  // more into a's cores, which push out b's older 4 KiB and then all of a's.
  read(h, b, 2, 4, 3 << 20, 16384);
  const Served gone = read(h, a, 1, 2, 0, 4096);
  CHECK(gone.served[0] == 0);
  CHECK(gone.served[1] == 64);
}
