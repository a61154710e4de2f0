// Channel counts that are no power of two (a 6- or 12-channel DDR5 server, a 3-channel
// board) interleave cache lines by modulo: line k goes to channel k mod C and the fields
// above the channel are decoded from k / C, so the mapping stays a bijection.
#include <catch2/catch.hpp>
#include <map>

#include "dram_test_util.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

TEST_CASE("three DDR4 channels: line k on channel k mod 3, the rest from k / 3") {
  DramSpec spec = preset("ddr4-3200");  // RoRaBaCoBgCh, 64 B lines, 4 bank groups
  spec.org.channels = 3;
  const AddressMapping m(spec);
  for (int k = 0; k < 24; ++k) {
    const DramAddress a = m.decode(static_cast<mem::Addr>(k) * 64);
    INFO("line " << k);
    CHECK(a.channel == k % 3);
    // Above Ch sits Bg (2 bits), then the column: quotient q = k / 3.
    CHECK(a.bankgroup == (k / 3) % 4);
    CHECK(a.column == (k / 3) / 4);
    CHECK(a.row == 0);
  }
  // Byte offsets inside a line do not move it.
  CHECK(m.decode(5 * 64 + 63).channel == 2);
  // encode is the inverse, over addresses spread through the whole capacity.
  std::uint64_t state = 7;
  for (int i = 0; i < 2000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const mem::Addr line = (state >> 11) % (3ULL << 27);  // 3 channels x 8 GiB / 64 B
    const mem::Addr addr = line * 64;
    REQUIRE(m.encode(m.decode(addr)) == addr);
  }
}

TEST_CASE("twelve channels keep each channel's share and the protocol") {
  DramSpec spec = preset("ddr5-4800");
  spec.org.channels = 12;
  const int logical = spec.org.logical_channels();
  Rig rig(spec);
  REQUIRE(rig.dram->mapping().decode(static_cast<mem::Addr>(logical) * 64).channel == 0);
  // 12 x 100 consecutive 64-byte line reads: exactly 100 column reads on every channel.
  for (int i = 0; i < logical * 100; ++i) {
    rig.queue.schedule(i * spec.tCK, Priority::Compute, [&rig, i] {
      mem::MemRequest r;
      r.addr = static_cast<mem::Addr>(i) * 64;
      if (rig.dram->will_accept(r)) rig.dram->send(r);
    });
  }
  rig.queue.run();
  std::map<int, int> reads;
  for (const IssuedCommand& c : rig.log)
    if (c.command == Command::RD) ++reads[c.channel];
  REQUIRE(static_cast<int>(reads.size()) == logical);
  for (const auto& [channel, n] : reads) {
    INFO("channel " << channel);
    CHECK(n == 100 * 64 / spec.org.atom_bytes());
  }
  CHECK(rig.completed == static_cast<std::uint64_t>(logical) * 100);
  CHECK(rig.checker.violations().empty());
}
