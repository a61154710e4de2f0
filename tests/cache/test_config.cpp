// Strict reading of the hierarchy configuration: every error names the JSON path.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/json_view.h"
#include "mem/cache/cache_config.h"
#include "mem/cache/hierarchy.h"

using namespace fusim;
using namespace fusim::cache;

namespace {
// The JSON text is what these tests are about: read it as a machine file's "caches".
HierarchyConfig config_from(const std::string& json_text) {
  nlohmann::json doc = parse_json_text(json_text, "test.json");
  return parse_hierarchy_config(JsonView(doc, "test.json"));
}
std::string error_of(const std::string& json) {
  try {
    config_from(json);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
std::string level(const std::string& extra) {
  return R"({"levels":[{"name":"L1","size":"48KiB","assoc":12,"line":64,"latency_cycles":5)" +
         extra + "}]}";
}
}  // namespace

TEST_CASE("the issue's example configuration reads with its stated defaults") {
  HierarchyConfig c = config_from(R"({"levels":[
    {"name":"L1","size":"48KiB","assoc":12,"line":64,"policy":"lru","latency_cycles":5,"shared":false},
    {"name":"L2","size":"2MiB","assoc":16,"line":64,"policy":"srrip","latency_cycles":16,
     "inclusion":"inclusive","mshrs":48,"ports":2,"clock":"2400MHz"},
    {"name":"LLC","size":"30MiB","assoc":15,"line":64,"latency_cycles":60,"shared":true,
     "inclusion":"exclusive","write_policy":"write-through","write_allocate":false}]})");
  REQUIRE(c.levels.size() == 3);
  CHECK(c.levels[0].size_bytes == 49152);
  CHECK(c.levels[0].mshrs == 16);
  CHECK(c.levels[0].ports == 1);
  CHECK(c.levels[0].clock_period == 1000);  // 1 GHz default
  CHECK(c.levels[1].clock_period == 417);   // 1e12 / 2.4e9 = 416.7 ps
  CHECK(c.levels[1].inclusion == Inclusion::Inclusive);
  CHECK(c.levels[2].inclusion == Inclusion::Exclusive);
  CHECK(c.levels[2].write_policy == WritePolicy::WriteThrough);
  CHECK_FALSE(c.levels[2].write_allocate);
  CHECK(c.block_bytes == 4096);
  // 30 MiB / 64 / 15 = 32768 sets: not every set count is a power of two, and that is fine.
  Hierarchy h(c, Fidelity::Line, 2);
  CHECK(h.cache(2, 1).sets() == 32768);
  CHECK(&h.cache(2, 0) == &h.cache(2, 1));
  CHECK(&h.cache(0, 0) != &h.cache(0, 1));
}

TEST_CASE("bytes_per_cycle: a port's width in bytes, instead of ports, not with them") {
  HierarchyConfig c = config_from(R"({"levels":[
    {"name":"L1","size":"32KiB","assoc":8,"line":64,"latency_cycles":4},
    {"name":"L3","size":"8MiB","assoc":16,"line":64,"latency_cycles":40,"shared":true,
     "bytes_per_cycle":32}]})");
  CHECK(c.levels[0].port_bytes_per_cycle() == 64);  // one port of one line
  CHECK(c.levels[1].port_bytes_per_cycle() == 32);
  CHECK(c.levels[1].port_time(1) == 2000);  // a 64 B line at 32 B a cycle of 1 ns
  CHECK(c.levels[1].port_time(64) == 128000);
  const std::string e = error_of(R"({"levels":[{"name":"L1","size":"32KiB","assoc":8,
    "line":64,"latency_cycles":4,"ports":2,"bytes_per_cycle":32}]})");
  CHECK_THAT(e, Catch::Contains("levels[0].bytes_per_cycle: expected either \"ports\""));
}

TEST_CASE("configuration errors name the file, the JSON path and what was expected") {
  std::string e = error_of(
      R"({"levels":[{"name":"L1","size":"48KiB","assoc":7,"line":64,"latency_cycles":5}]})");
  CHECK(e ==
        "test.json: levels[0].assoc: expected an associativity that divides the 768 lines of "
        "48KiB into whole sets, got 7");
  e = error_of(level(R"(,"policy":"lfu")"));
  CHECK(e ==
        "test.json: levels[0].policy: expected one of lru, tree-plru, random, srrip, got \"lfu\"");
  e = error_of(
      R"({"levels":[{"name":"L1","size":"48KiB","assoc":12,"line":48,"latency_cycles":5}]})");
  CHECK(e == "test.json: levels[0].line: expected a power-of-two line size in bytes, got 48");
  e = error_of(
      R"({"levels":[{"name":"L1","size":"48KB!","assoc":12,"line":64,"latency_cycles":5}]})");
  CHECK(e.find("test.json: levels[0].size: expected") == 0);
  e = error_of(
      R"({"levels":[{"name":"L1","size":-4096,"assoc":12,"line":64,"latency_cycles":5}]})");
  CHECK(e.find("test.json: levels[0].size: expected") == 0);
  e = error_of(level(R"(,"asoc":12)"));
  CHECK(e.find("levels[0]") != std::string::npos);
  CHECK(e.find("asoc") != std::string::npos);
  e = error_of(level(R"(,"policy":"tree-plru")"));
  CHECK(e ==
        "test.json: levels[0].assoc: expected a power-of-two associativity for tree-plru (a "
        "binary tree over the ways), got 12");
  e = error_of(level(R"(,"inclusion":"inclusive")"));
  CHECK(e.find("test.json: levels[0].inclusion: expected no inclusion on the first level") == 0);
  e = error_of(level(R"(,"clock":"fast")"));
  CHECK(e ==
        "test.json: levels[0].clock: expected a clock frequency such as \"3GHz\" or "
        "\"2400MHz\", got \"fast\"");
  e = error_of(level(R"(,"write_policy":"write-around")"));
  CHECK(e.find("levels[0].write_policy: expected \"write-back\" or \"write-through\"") !=
        std::string::npos);
  e = error_of(level(R"(,"mshrs":0)"));
  CHECK(e.find("levels[0].mshrs: expected") != std::string::npos);
  // Bounds that keep cycles x clock period inside 64 bits (a fuzzer found 5555555555555555555
  // cycles x 435 ps overflowing in the hierarchy's path latency).
  CHECK(error_of(R"({"levels":[{"name":"L1","size":"48KiB","assoc":12,"line":64,)"
                 R"("latency_cycles":5555555555555555555}]})") ==
        "test.json: levels[0].latency_cycles: expected a latency in cycles from 1 to 100000, got "
        "5555555555555555555");
  CHECK(error_of(level(R"(,"mshrs":20000000)")) ==
        "test.json: levels[0].mshrs: expected an MSHR count from 1 to 16777216, got 20000000");
  CHECK(error_of(level(R"(,"ports":4294967297)")) ==
        "test.json: levels[0].ports: expected a port count from 1 to 65536, got 4294967297");
  CHECK(error_of(level(R"(,"bytes_per_cycle":2000000)")) ==
        "test.json: levels[0].bytes_per_cycle: expected bytes a cycle from 1 to 1048576, got "
        "2000000");
  e = error_of(R"({"levels":[
    {"name":"LLC","size":"1MiB","assoc":16,"line":64,"latency_cycles":40,"shared":true},
    {"name":"L4","size":"8MiB","assoc":16,"line":64,"latency_cycles":80}]})");
  CHECK(e ==
        "test.json: levels[1]: expected \"shared\": true (a private level cannot sit below a "
        "shared one)");
  e = error_of(R"({"levels":[
    {"name":"L1","size":"32KiB","assoc":8,"line":64,"latency_cycles":4},
    {"name":"L1","size":"1MiB","assoc":16,"line":128,"latency_cycles":14}]})");
  CHECK(e ==
        "test.json: levels[1].line: expected the same line size as levels[0] (64 B), got 128 B");
  CHECK(error_of(R"({"levels":[]})") == "test.json: levels: expected at least one level");
  CHECK(error_of(R"({"level":[]})").find("level") != std::string::npos);
}

TEST_CASE("a level smaller than one block is an error in block fidelity only") {
  auto c = config_from(R"({"block":"4KiB","levels":[
    {"name":"L0","size":"2KiB","assoc":2,"line":64,"latency_cycles":1}]})");
  CHECK_NOTHROW(Hierarchy(c, Fidelity::Line, 1));
  try {
    Hierarchy h(c, Fidelity::Block, 1);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(
        std::string(e.what()) ==
        "test.json: levels[0].size: expected at least one 4KiB block in block fidelity, got 2KiB");
  }
  CHECK_THROWS_AS(parse_fidelity("page"), InputError);
  CHECK(parse_fidelity("block") == Fidelity::Block);
}
