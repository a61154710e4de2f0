// The Dinero-style trace reader of `fusim cache`: accepted forms and line-numbered errors.
#include <catch2/catch.hpp>
#include <sstream>
#include <vector>

#include "builders/hierarchy_builder.h"
#include "core/error.h"
#include "mem/cache/address_trace.h"
#include "mem/cache/hierarchy.h"

using namespace fusim;
using namespace fusim::cache;

namespace {
std::vector<TraceAccess> read(const std::string& text) {
  std::istringstream in(text);
  std::vector<TraceAccess> out;
  read_address_trace(in, "t.trace", [&](const TraceAccess& a) { out.push_back(a); });
  return out;
}
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("trace lines: R|W 0xADDR [BYTES], comments and blank lines skipped") {
  auto v = read("# header\nR 0x1000\n\nW 0X7ffd0040 16\r\n  R 0x0 1\n");
  REQUIRE(v.size() == 3);
  CHECK(v[0].addr == 0x1000);
  CHECK(v[0].bytes == 8);  // the default
  CHECK_FALSE(v[0].is_write);
  CHECK(v[1].addr == 0x7ffd0040);
  CHECK(v[1].bytes == 16);
  CHECK(v[1].is_write);
  CHECK(v[2].bytes == 1);
}

TEST_CASE("bad trace lines name the file and the line number") {
  CHECK(error_of("R 0x10\nX 0x20\n") ==
        "t.trace: line 2: expected \"R|W 0xADDR [BYTES]\" (the access must be R or W), got \"X "
        "0x20\"");
  CHECK(error_of("R 4096\n")
            .find("line 1: expected \"R|W 0xADDR [BYTES]\" (the address must be "
                  "hexadecimal with 0x)") != std::string::npos);
  CHECK(error_of("R 0x10g\n").find("line 1") != std::string::npos);
  CHECK(error_of("\nR 0x10 0\n")
            .find("line 2: expected \"R|W 0xADDR [BYTES]\" (BYTES must be a "
                  "positive decimal integer)") != std::string::npos);
  CHECK(error_of("R 0x10 -8\n").find("BYTES must be a positive") != std::string::npos);
  CHECK(error_of("W 0x10 8 9\n").find("nothing may follow BYTES") != std::string::npos);
  CHECK(error_of("R 0xffffffffffffffff 16\n").find("past the end of the address space") !=
        std::string::npos);
  CHECK(error_of("R 0x1ffffffffffffffff\n").find("at most 64 bits") != std::string::npos);
}

TEST_CASE("a replayed trace counts line touches: a spanning access touches both lines") {
  Hierarchy h(test::HierarchyBuilder{}
                  .level(test::LevelBuilder("L1").size("32KiB").assoc(8).line(64).latency(4))
                  .build(),
              Fidelity::Line, 1);
  for (const TraceAccess& a : read("R 0x1000\nW 0x1038 16\nR 0x1000 4\nR 0x2000 64\n"))
    h.access_range(0, a.addr, a.bytes, a.is_write ? AccessKind::Write : AccessKind::Read);
  // 0x1000 miss; 0x1038+16 spans 0x1000 (hit) and 0x1040 (miss); 0x1000 hit; 0x2000 miss.
  CacheStats s = h.stats().levels[0].total;
  CHECK(s.accesses == 5);
  CHECK(s.hits == 2);
  CHECK(s.misses == 3);
}
