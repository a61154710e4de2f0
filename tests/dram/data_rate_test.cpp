// A machine's dram object may run its preset at another data rate ("data_rate_mts"): tCK
// follows the rate, timings the preset gives in ns stay those ns (JEDEC rounding at the new
// tCK), timings given in cycles stay those cycles, and the peak bandwidth scales.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "dram_test_util.h"

using namespace fusim;
using namespace fusim::dram;

namespace {

DramSpec machine_dram(const nlohmann::json& section) {
  return load_dram_spec(JsonView(section, "machine.json", "dram"));
}

std::string error_of(const nlohmann::json& section) {
  try {
    machine_dram(section);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("data_rate_mts runs a DDR4-3200 preset as DDR4-2400") {
  const std::string preset = std::string(FUSIM_SOURCE_DIR) + "/models/machines/dram/ddr4-3200.json";
  const DramSpec base = machine_dram({{"preset", preset}});
  // DDR4-2400R (17-17-17): the preset gives CL/tRCD/tRP in cycles of its own speed bin
  // (22 at 3200), so the slower bin says its own (JESD79-4B Table 135, DDR4-2400R).
  const DramSpec slow = machine_dram(
      {{"preset", preset},
       {"data_rate_mts", 2400},
       {"timing", {{"tCL", 17}, {"tRCD", "13.75ns"}, {"tRP", "13.75ns"}, {"tCWL", 12}}}});
  CHECK(base.tCK == 625);
  CHECK(base.t.tRAS == 52);  // 32 ns: (32000 * 1000 / 625 + 974) / 1000 = 52
  // tCK = (2e6 + 1200) / 2400 = 833 ps (integer division).
  CHECK(slow.data_rate_mts == 2400);
  CHECK(slow.tCK == 833);
  // 32 ns at 833 ps: (32000000 / 833 = 38415, + 974) / 1000 = 39 cycles.
  CHECK(slow.t.tRAS == 39);
  // tRFC 350 ns: (350000000 / 833 = 420168, + 974) / 1000 = 421.
  CHECK(slow.t.tRFC == 421);
  // tREFI 7800 ns: (7800000000 / 833 = 9363745, + 974) / 1000 = 9364.
  CHECK(slow.t.tREFI == 9364);
  // 13.75 ns: (13750000 / 833 = 16506, + 974) / 1000 = 17.
  CHECK(slow.t.tRCD == 17);
  CHECK(slow.t.tRP == 17);
  CHECK(slow.t.tCL == 17);
  // Given in cycles and not overridden: stays 4 cycles (tRRD_S, tCCD_S).
  CHECK(slow.t.tRRD_S == 4);
  CHECK(slow.t.tCCD_S == 4);
  // 8 bytes x 2400 MT/s.
  CHECK(slow.peak_bandwidth_bytes_per_s() == Approx(19.2e9));
  CHECK(base.peak_bandwidth_bytes_per_s() == Approx(25.6e9));
}

TEST_CASE("a bad data_rate_mts override names file, path and expectation") {
  const std::string preset = std::string(FUSIM_SOURCE_DIR) + "/models/machines/dram/ddr4-3200.json";
  const std::string low = error_of({{"preset", preset}, {"data_rate_mts", 50}});
  CHECK(low.find("machine.json") != std::string::npos);
  CHECK(low.find("dram.data_rate_mts") != std::string::npos);
  const std::string high = error_of({{"preset", preset}, {"data_rate_mts", 5000000}});
  CHECK(high.find("dram.data_rate_mts") != std::string::npos);
  CHECK(high.find("100 to 100000 MT/s") != std::string::npos);
  const std::string text = error_of({{"preset", preset}, {"data_rate_mts", "fast"}});
  CHECK(text.find("dram.data_rate_mts") != std::string::npos);
  // The 3200 bin's 22-cycle tRP with 32 ns tRAS at 833 ps exceeds 45.75 ns tRC: the
  // machine's dram section is blamed, not the preset file.
  const std::string bin = error_of({{"preset", preset}, {"data_rate_mts", 2400}});
  CHECK(bin.find("machine.json") != std::string::npos);
  CHECK(bin.find("tRC (55) >= tRAS + tRP (61)") != std::string::npos);
}
