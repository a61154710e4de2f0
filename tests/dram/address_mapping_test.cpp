// Address decoding: the field layout of a scheme worked out by hand, and decode as the
// inverse of encode on every preset and scheme family (with and without XOR bank hashing).
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "dram_test_util.h"
#include "mem/dram/address_mapping.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

// DDR4-3200 preset, RoRaBaCoBgCh: 64 B atoms (6 offset bits), one channel, 4 bank groups
// (Bg, 2 bits) above the channel, then the column above the 64 B line (1024 columns / BL 8
// = 128 atoms per row: 7 bits), banks per group (Ba, 2 bits), one rank, 16 row bits.
// Address = row << 17 | ba << 15 | col << 8 | bg << 6.
TEST_CASE("RoRaBaCoBgCh on DDR4-3200: the fields by hand") {
  DramSpec spec = preset("ddr4-3200");
  spec.ctrl.mapping = "RoRaBaCoBgCh";
  const AddressMapping m(spec);
  const mem::Addr addr = (mem::Addr{0x1234} << 17) | (2u << 15) | (77u << 8) | (3u << 6) | 0x15;
  const DramAddress a = m.decode(addr);
  CHECK(a.channel == 0);
  CHECK(a.rank == 0);
  CHECK(a.row == 0x1234);
  CHECK(a.bank == 2);
  CHECK(a.column == 77);
  CHECK(a.bankgroup == 3);
  CHECK(a.flat_bank == 3 * 4 + 2);
  CHECK(m.encode(a) == addr - 0x15);
}

TEST_CASE("decode inverts encode on every preset and scheme") {
  for (const char* name : kPresets) {
    for (const char* scheme : {"", "RoBaRaCoCh", "RoRaBaChCo", "RoCoBaBgRaCh", "ChRaBaRoCo"}) {
      for (const bool xor_hash : {false, true}) {
        DramSpec spec = preset(name);
        if (*scheme) spec.ctrl.mapping = scheme;
        spec.ctrl.xor_bank_hash = xor_hash;
        if (spec.org.ranks == 1) spec.org.ranks = 2;
        const AddressMapping m(spec);
        INFO(fmt::format("{} {} xor {}", name, spec.ctrl.mapping, xor_hash));
        // The bytes the mapping covers: every field's range.
        const auto& o = spec.org;
        const mem::Addr capacity = mem::Addr(o.logical_channels()) * o.ranks * o.bankgroups *
                                   o.banks_per_group * o.rows * (o.columns / o.burst_length) *
                                   o.atom_bytes();
        std::uint64_t state = 12345;
        for (int i = 0; i < 2000; ++i) {
          state = state * 6364136223846793005ULL + 1442695040888963407ULL;
          const mem::Addr addr =
              ((state >> 8) % capacity) & ~(static_cast<mem::Addr>(o.atom_bytes()) - 1);
          const DramAddress a = m.decode(addr);
          REQUIRE(a.channel < spec.org.logical_channels());
          REQUIRE(a.rank < spec.org.ranks);
          REQUIRE(a.bankgroup < spec.org.bankgroups);
          REQUIRE(a.bank < spec.org.banks_per_group);
          REQUIRE(a.flat_bank ==
                  (a.rank * spec.org.bankgroups + a.bankgroup) * spec.org.banks_per_group + a.bank);
          REQUIRE(m.channel_of(addr) == a.channel);
          REQUIRE(m.encode(a) == addr);
        }
      }
    }
  }
}
