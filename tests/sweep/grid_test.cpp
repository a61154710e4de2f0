#include <catch2/catch.hpp>

#include "core/error.h"
#include "sweep/grid.h"

using namespace fusim;
using namespace fusim::sweep;
using Catch::Matchers::Contains;

TEST_CASE("values are typed: sizes become bytes, numbers stay numbers, names stay strings") {
  CHECK(parse_value("8MiB", "--set x") == 8 * 1024 * 1024);
  CHECK(parse_value("48KiB", "--set x") == 49152);
  CHECK(parse_value("1.5MiB", "--set x") == 1572864);
  CHECK(parse_value("2GiB", "--set x") == 2147483648LL);
  CHECK(parse_value("16", "--set x") == 16);
  CHECK(parse_value("-3", "--set x") == -3);  // the machine model judges the range
  CHECK(parse_value("0.75", "--set x") == 0.75);
  CHECK(parse_value("true", "--set x") == true);
  CHECK(parse_value("ddr5-5600", "--set x") == "ddr5-5600");
  CHECK(parse_value("frfcfs", "--set x") == "frfcfs");
  CHECK(parse_value("hbm3", "--set x") == "hbm3");
  CHECK_THROWS_WITH(parse_value("", "--set a=1,,2"), Contains("--set a=1,,2") && Contains("empty"));
  CHECK_THROWS_WITH(parse_value("-8MiB", "--set a=-8MiB"), Contains("a size >= 0, got -8MiB"));
}

TEST_CASE("option --set parses a dotted path and its comma list") {
  Axis a = parse_axis("caches.LLC.size=8MiB,32MiB,128MiB");
  CHECK(a.path == "caches.LLC.size");
  REQUIRE(a.values.size() == 3);
  CHECK(a.values[0] == 8388608);
  CHECK(a.values[1] == 33554432);
  CHECK(a.values[2] == 134217728);

  Axis d = parse_axis("dram.preset=ddr4-3200,ddr5-5600,hbm3");
  CHECK(d.values == std::vector<nlohmann::json>{"ddr4-3200", "ddr5-5600", "hbm3"});
  CHECK(parse_axis("batch=32,64").values == std::vector<nlohmann::json>{32, 64});
}

TEST_CASE("option --set rejects malformed specs naming the option") {
  CHECK_THROWS_AS(parse_axis("caches.L2.size"), InputError);
  CHECK_THROWS_WITH(parse_axis("caches.L2.size"),
                    Contains("--set caches.L2.size") && Contains("no '='"));
  CHECK_THROWS_WITH(parse_axis("caches..size=1"),
                    Contains("dotted path") && Contains("'caches..size'"));
  CHECK_THROWS_WITH(parse_axis("=1,2"), Contains("dotted path"));
  CHECK_THROWS_WITH(parse_axis("caches.L2 size=1"), Contains("dotted path"));
  CHECK_THROWS_WITH(parse_axis("dram.channels=1,2,2"), Contains("each value once, got 2 twice"));
  CHECK_THROWS_WITH(parse_axis("caches.L2.size=8MiB,8192KiB"), Contains("twice"));  // same bytes
  CHECK_THROWS_WITH(parse_axis("dram.channels="), Contains("empty"));
  CHECK_THROWS_WITH(parse_axis("batch=32,0"), Contains("positive integer, got 0"));
  CHECK_THROWS_WITH(parse_axis("batch=32,big"), Contains("positive integer, got big"));
  CHECK_THROWS_WITH(parse_axis("batch=1.5"), Contains("positive integer, got 1.5"));
}

TEST_CASE("grid points run trace-major with the last --set fastest") {
  Grid grid({"a.json", "b.json"},
            {parse_axis("caches.L2.size=1MiB,2MiB,4MiB"), parse_axis("dram.channels=1,2")});
  REQUIRE(grid.size() == 12);  // 2 traces x 3 sizes x 2 channel counts
  GridPoint p = grid.point(0);
  CHECK(p.trace == 0);
  CHECK(p.choice == std::vector<std::size_t>{0, 0});
  p = grid.point(1);
  CHECK(p.choice == std::vector<std::size_t>{0, 1});
  p = grid.point(5);  // 5 = 0*6 + 2*2 + 1
  CHECK(p.trace == 0);
  CHECK(p.choice == std::vector<std::size_t>{2, 1});
  p = grid.point(7);  // 7 = 1*6 + 0*2 + 1
  CHECK(p.trace == 1);
  CHECK(p.choice == std::vector<std::size_t>{0, 1});
  CHECK(grid.value(p, 0) == 1048576);
  CHECK(grid.value(p, 1) == 2);
  auto overrides = grid.machine_overrides(grid.point(11));
  REQUIRE(overrides.size() == 2);
  CHECK(overrides[0].first == "caches.L2.size");
  CHECK(overrides[0].second == 4194304);
  CHECK(overrides[1].first == "dram.channels");
  CHECK(overrides[1].second == 2);
  CHECK_FALSE(grid.batch_axis());
}

TEST_CASE("batch is a trace axis, not a machine override") {
  Grid grid({"zoo:resnet50"}, {parse_axis("batch=16,32"), parse_axis("dram.channels=4")});
  CHECK(grid.size() == 2);
  REQUIRE(grid.batch_axis());
  CHECK(*grid.batch_axis() == 0);
  auto overrides = grid.machine_overrides(grid.point(1));
  REQUIRE(overrides.size() == 1);
  CHECK(overrides[0].first == "dram.channels");
}

TEST_CASE("a grid without an axis has one point per trace") {
  Grid grid({"a.json", "b.json", "c.json"}, {});
  CHECK(grid.size() == 3);
  CHECK(grid.point(2).trace == 2);
}

TEST_CASE("grid errors: no trace, repeated trace or path, too many points") {
  CHECK_THROWS_WITH(Grid({}, {}), Contains("--trace") && Contains("at least one trace"));
  CHECK_THROWS_WITH(Grid({"a.json", "a.json"}, {}), Contains("a.json twice"));
  CHECK_THROWS_WITH(
      Grid({"a.json"}, {parse_axis("dram.channels=1,2"), parse_axis("dram.channels=4")}),
      Contains("each path once, got dram.channels"));
  std::string many = "x=";
  for (int i = 0; i < 1000; ++i) many += (i ? "," : "") + std::to_string(i);
  std::string many_y = "y" + many.substr(1), many_z = "z" + many.substr(1);
  // 1000 x 1000 x 1000 points > 1e6
  CHECK_THROWS_WITH(Grid({"a.json"}, {parse_axis(many), parse_axis(many_y), parse_axis(many_z)}),
                    Contains("at most 1000000 points"));
}

TEST_CASE("value_text writes cells the same way every time") {
  CHECK(value_text(nlohmann::json(8388608)) == "8388608");
  CHECK(value_text(nlohmann::json(0.75)) == "0.75");
  CHECK(value_text(nlohmann::json(12.345678901)) == "12.345678901");
  CHECK(value_text(nlohmann::json("hbm3")) == "hbm3");
  CHECK(value_text(nlohmann::json(false)) == "false");
}

TEST_CASE("parallel.* paths are plan axes (issue 19), not machine overrides") {
  Grid grid({"gpt2"}, {parse_axis("parallel.tp=1,2"), parse_axis("dram.channels=4"),
                       parse_axis("parallel.pipeline_schedule=1f1b,zb-v")});
  CHECK(grid.size() == 4);
  CHECK(grid.has_plan_axis());
  CHECK_FALSE(Grid({"gpt2"}, {parse_axis("dram.channels=4")}).has_plan_axis());
  const auto machine = grid.machine_overrides(grid.point(3));
  REQUIRE(machine.size() == 1);
  CHECK(machine[0].first == "dram.channels");
  const auto plan = grid.plan_overrides(grid.point(3));  // 3 = tp 2, zb-v
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].first == "parallel.tp");
  CHECK(plan[0].second == 2);
  CHECK(plan[1].first == "parallel.pipeline_schedule");
  CHECK(plan[1].second == "zb-v");
}
