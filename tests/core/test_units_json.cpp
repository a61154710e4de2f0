#include <catch2/catch.hpp>

#include "core/compare.h"
#include "core/error.h"
#include "core/json_view.h"
#include "core/preset.h"
#include "core/table.h"
#include "core/time.h"
#include "core/units.h"

using namespace fusim;

TEST_CASE("byte sizes parse with binary units and reject junk") {
  CHECK(parse_bytes("48KiB") == 48 * 1024);
  CHECK(parse_bytes("2MiB") == 2 * 1024 * 1024);
  CHECK(parse_bytes("1.5MiB") == 1536 * 1024);
  CHECK(parse_bytes("64") == 64);
  CHECK(parse_bytes("64B") == 64);
  CHECK(parse_bytes("1GiB") == 1073741824);
  CHECK_FALSE(parse_bytes("-4KiB"));
  CHECK_FALSE(parse_bytes("12parsecs"));
  CHECK_FALSE(parse_bytes(""));
  CHECK_FALSE(parse_bytes("0.3B"));  // fractional bytes
  CHECK_FALSE(parse_bytes("99999999999TiB"));
  CHECK(format_bytes(49152) == "48KiB");
  CHECK(format_bytes(1000) == "1000B");
}

TEST_CASE("a clock converts cycles to picoseconds exactly") {
  auto clock = Clock::from_mhz(1600);  // 625 ps
  CHECK(clock.period() == 625);
  CHECK(clock.cycles(8) == 5000);
  CHECK(clock.next_edge(626) == 1250);
  CHECK(clock.next_edge(1250) == 1250);
  CHECK(ns(1.5) == 1500);
}

TEST_CASE("json errors name the file, the path and the expectation") {
  auto doc =
      parse_json_text(R"({"layers":[{"attrs":{"stride":0}}], "size":"12parsecs"})", "t.json");
  JsonView root(doc, "t.json");
  auto stride = root.at("layers")[0].at("attrs").at("stride");
  CHECK(stride.path() == "layers[0].attrs.stride");
  CHECK_THROWS_WITH(stride.as_positive_int(),
                    "t.json: layers[0].attrs.stride: expected a positive integer, got 0");
  CHECK_THROWS_WITH(root.at("size").as_bytes(),
                    Catch::Contains("size: expected a size such as 4096"));
  CHECK_THROWS_WITH(root.at("model"), "t.json: model: expected a member \"model\" (missing)");
  CHECK_THROWS_WITH(root.at("layers")[3], Catch::Contains("layers[3]"));
  CHECK_THROWS_WITH(parse_json_text("{\"a\":\n [1,}", "bad.json"),
                    Catch::StartsWith("bad.json: line 2 column"));
  CHECK_THROWS_WITH(parse_json_text("  \n", "empty.json"), Catch::Contains("empty file"));
  CHECK_THROWS_WITH(load_json_file("/nonexistent/x.json"), Catch::Contains("a readable file"));
}

TEST_CASE("an input error stays one line when the input's own text holds control characters") {
  // Found by fuzz_dram_config: a JSON key "b\nks_per_group" was echoed into the message.
  auto doc = parse_json_text("{\"b\\nks\\u001b[2J\": 1}", "t.json");
  JsonView root(doc, "t.json");
  CHECK_THROWS_WITH(root.reject_unknown_keys({"banks"}),
                    "t.json: b\\nks\\x1b[2J: expected one of the known members (banks)");
  CHECK_THROWS_WITH(throw InputError("--out: no such folder 'a\tb'"),
                    "--out: no such folder 'a\\tb'");
}

TEST_CASE("tables align numeric columns to the right and quote CSV") {
  Table t({"name", "ms"});
  t.add_row({"eager", "12.5"});
  t.add_row({"backward-fused", "9"});
  CHECK(t.to_text() ==
        "name              ms\n"
        "--------------------\n"
        "eager           12.5\n"
        "backward-fused     9\n");
  Table c({"a", "b"});
  c.add_row({"x,y", "say \"hi\""});
  CHECK(c.to_csv() == "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST_CASE("one rule tells preset names from paths, and resolves names in preset folders") {
  CHECK(fusim::looks_like_path("my/box"));
  CHECK(fusim::looks_like_path("box.json"));
  CHECK_FALSE(fusim::looks_like_path("h100-sxm5"));
  const std::string dir = FUSIM_SOURCE_DIR "/models/machines";
  CHECK(fusim::resolve_preset("box.json", {dir}, "machine") == "box.json");
  CHECK(fusim::resolve_preset("h100-sxm5", {"/nonexistent", dir}, "machine") ==
        dir + "/h100-sxm5.json");
  CHECK_THROWS_WITH(fusim::resolve_preset("h1000", {dir}, "machine"),
                    Catch::Contains("unknown machine \"h1000\": expected a preset name (") &&
                        Catch::Contains("h100-sxm5, ") &&
                        Catch::Contains(") or a path to a machine JSON file"));
}

TEST_CASE("speedup, error and their mean, as validate, simulate and sweep report them") {
  CHECK(fusim::speedup(Tick{300}, Tick{200}) == Approx(1.5));  // 1.5x faster
  CHECK(fusim::speedup(Tick{300}, Tick{0}) == 0);              // nothing to compare
  CHECK(fusim::speedup(2.0, 4.0) == Approx(0.5));
  CHECK(fusim::error_pct(11.0, 10.0) == Approx(10.0));  // predicted 10% too slow
  CHECK(fusim::error_pct(8.0, 10.0) == Approx(-20.0));
  // MAPE of +10% and -20%: (10 + 20) / 2.
  CHECK(fusim::mean_absolute({10.0, -20.0}) == Approx(15.0));
  CHECK(fusim::mean_absolute({}) == 0);
}

TEST_CASE("one size parser for size options") {
  CHECK(fusim::parse_size_option("--block", "4KiB") == 4096);
  CHECK(fusim::parse_size_option("--chunk", "64") == 64);
  CHECK_THROWS_WITH(
      fusim::parse_size_option("--block", "0"),
      Catch::Contains("--block: expected a size such as 64, 4KiB or 1GiB, got \"0\""));
  CHECK_THROWS_WITH(fusim::parse_size_option("--footprint", "lots"),
                    Catch::Contains("--footprint: expected a size such as 64, 4KiB or 1GiB"));
}
