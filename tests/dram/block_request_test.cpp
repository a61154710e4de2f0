// Block fidelity sends 4 KiB requests: on a one-channel DDR4 (32-entry queues) a block has
// 64 atoms for one channel, more than its queue holds. It must be admitted whole into an
// empty queue rather than refused forever (the hang of `--set dram.channels=1`).
#include <catch2/catch.hpp>

#include "dram_test_util.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

TEST_CASE("a block larger than a channel's queue is admitted whole into an empty queue") {
  DramSpec spec = preset("ddr4-3200");
  spec.org.channels = 1;
  REQUIRE(spec.ctrl.read_queue < 64);
  Rig rig(spec);
  mem::MemRequest block;
  block.addr = 0;
  block.bytes = 4096;  // 64 atoms of 64 B, all on channel 0
  CHECK(rig.dram->will_accept(block));
  rig.dram->send(block);
  // A second block waits until the queue has drained completely.
  mem::MemRequest second = block;
  second.addr = 1 << 20;
  CHECK_FALSE(rig.dram->will_accept(second));
  while (rig.completed == 0 && rig.queue.step()) {
  }
  CHECK(rig.completed == 1);
  CHECK(rig.commands[static_cast<int>(Command::RD)] == 64);  // one burst per atom
  CHECK(rig.checker.violations().empty());
  CHECK(rig.dram->will_accept(second));
}
