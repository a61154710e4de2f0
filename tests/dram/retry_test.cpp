// will_accept only asks; a refused sender that waits says so with request_retry, and the
// retry then runs once, at the tick of the next column command (its queue entry is free).
#include <catch2/catch.hpp>

#include "dram_test_util.h"
#include "mem/dram/address_mapping.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {
// DDR4-3200, one channel, 32-entry read queue: 32 reads of one row of bank group 0 bank 0
// at tick 0 fill it. ACT at cycle 0, the first RD at tRCD = 22 cycles = 13750 ps
// (tCK 625 ps): the first entry frees then.
struct Full {
  Full() : rig(preset("ddr4-3200")), mapping(rig.dram->spec()) {
    for (int i = 0; i < 32; ++i) {
      DramAddress a;
      a.column = i;
      mem::MemRequest r;
      r.addr = mapping.encode(a);
      REQUIRE(rig.dram->will_accept(r));
      rig.dram->send(r);
    }
    DramAddress a;
    a.column = 40;
    extra.addr = mapping.encode(a);
  }
  Rig rig;
  AddressMapping mapping;
  mem::MemRequest extra;
  std::vector<Tick> retries;
};
}  // namespace

TEST_CASE("a refusal asked with will_accept alone arms no retry") {
  Full f;
  f.rig.dram->set_retry([&f] { f.retries.push_back(f.rig.queue.now()); });
  CHECK_FALSE(f.rig.dram->will_accept(f.extra));
  CHECK_FALSE(f.rig.dram->will_accept(f.extra));  // asking again changes nothing either
  f.rig.queue.run();
  CHECK(f.rig.completed == 32);
  CHECK(f.retries.empty());
}

TEST_CASE("request_retry: the retry runs once, at the first column command") {
  Full f;
  f.rig.dram->set_retry([&f] {
    f.retries.push_back(f.rig.queue.now());
    REQUIRE(f.rig.dram->will_accept(f.extra));
    f.rig.dram->send(f.extra);
  });
  REQUIRE_FALSE(f.rig.dram->will_accept(f.extra));
  f.rig.dram->request_retry();
  f.rig.queue.run();
  REQUIRE(f.retries.size() == 1);
  CHECK(f.retries[0] == 22 * 625);
  CHECK(f.rig.completed == 33);
  CHECK(f.rig.checker.violations().empty());
}
