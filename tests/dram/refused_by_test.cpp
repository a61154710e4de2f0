// DramSystem::refused_by names the channel whose queue keeps a request out, and
// room_freed counts that channel's freed entries, so that a sender may skip asking about
// a refused request again until that count moves (mem/refused_queues.h). On the HBM3
// preset a 128 B line is four 32 B atoms in two 64 B interleave units, and RoRaBaCoBgCh
// puts the channel bits lowest: two atoms in each of two channels.
#include <catch2/catch.hpp>

#include "dram_test_util.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

TEST_CASE("a line over two HBM channels is refused by the full one, until it frees an entry") {
  const DramSpec spec = preset("hbm3");
  Rig rig(spec);
  mem::MemRequest line;
  line.addr = 0;
  line.bytes = 128;
  const AddressMapping mapping(spec);
  const int first = mapping.channel_of(0), second = mapping.channel_of(64);
  REQUIRE(first != second);
  CHECK(rig.dram->refused_by(line) == -1);
  CHECK(rig.dram->destination(line) == first);

  // Fill the second channel's read queue with one-atom reads (other rows of its banks).
  const auto capacity = static_cast<std::size_t>(spec.ctrl.read_queue);
  mem::MemRequest filler;
  filler.bytes = 32;
  std::size_t sent = 0;
  for (mem::Addr a = 64; sent < capacity; a += std::uint64_t{1} << 20) {
    filler.addr = a;
    if (mapping.channel_of(a) != second) continue;
    REQUIRE(rig.dram->will_accept(filler));
    rig.dram->send(filler);
    ++sent;
  }
  CHECK(rig.dram->refused_by(line) == second);
  CHECK_FALSE(rig.dram->will_accept(line));
  // A one-atom read of the first channel still fits: only the full channel refuses.
  filler.addr = 0;
  CHECK(rig.dram->refused_by(filler) == -1);

  const std::uint64_t freed = rig.dram->room_freed(second);
  const std::uint64_t other = rig.dram->room_freed(first);
  while (rig.dram->room_freed(second) == freed && rig.queue.step()) {
    CHECK(rig.dram->refused_by(line) == second);  // still full while nothing left it
  }
  CHECK(rig.dram->room_freed(second) == freed + 1);
  CHECK(rig.dram->room_freed(first) == other);
  // Two of the line's atoms go to that channel: one free entry is not room yet.
  CHECK(rig.dram->refused_by(line) == second);
  while (rig.dram->room_freed(second) == freed + 1 && rig.queue.step()) {
  }
  CHECK(rig.dram->room_freed(second) == freed + 2);
  CHECK(rig.dram->refused_by(line) == -1);
}
