// Bad options and bad mixed-ordering files are InputErrors naming the file and JSON path.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "mlp_fixture.h"

using namespace fusim::schedule;
using namespace fusim::schedule::testing;
using Catch::Matchers::Contains;

namespace {
MixedOrdering mixed(const std::string& text) {
  auto trace = mlp3();
  return parse_mixed_ordering(fusim::parse_json_text(text, "m.json"), "m.json", trace);
}
}  // namespace

TEST_CASE("option errors") {
  auto trace = mlp3();
  CHECK_THROWS_WITH(build(trace, Ordering::ForwardFused, "adam", OptimizerImpl::Foreach, 1),
                    Contains("--steps: expected >= 2 for forward-fused"));
  CHECK_THROWS_WITH(build(trace, Ordering::Eager, "adam", OptimizerImpl::Foreach, -3),
                    Contains("--steps: expected an integer >= 1, got -3"));
  CHECK_THROWS_WITH(build(trace, Ordering::Eager, "adamax"),
                    Contains("unknown optimizer \"adamax\": expected one of sgd, momentum"));
  CHECK_THROWS_WITH(build(trace, Ordering::Mixed, "sgd"), Contains("needs a per-layer file"));
  ScheduleOptions o;
  o.ordering = Ordering::Mixed;
  o.mixed_file = "/nonexistent/mixed.json";
  CHECK_THROWS_AS(build_schedule(trace, o), fusim::InputError);
}

TEST_CASE("mixed ordering files are read strictly") {
  auto m = mixed(R"({"layers": {"fc2": "backward"}, "default": "forward"})");
  CHECK(m.layers.at("fc2") == LayerMode::Backward);
  CHECK(m.fallback == LayerMode::Forward);
  CHECK_THROWS_WITH(mixed(R"({"layers": {"fc9": "eager"}, "default": "eager"})"),
                    Contains("m.json: layers.fc9: expected a layer name of trace mlp3"));
  CHECK_THROWS_WITH(mixed(R"({"layers": {"relu1": "eager"}, "default": "eager"})"),
                    Contains("layers.relu1: expected a layer with trained params"));
  CHECK_THROWS_WITH(mixed(R"({"layers": {"fc1": "later"}, "default": "eager"})"),
                    Contains("layers.fc1: expected one of \"eager\", \"backward\", \"forward\""));
  CHECK_THROWS_WITH(mixed(R"({"layers": {}, "defualt": "eager"})"), Contains("defualt"));
  CHECK_THROWS_WITH(mixed(R"({"layers": {}})"), Contains("default"));
  CHECK_THROWS_WITH(mixed(R"([1, 2])"), Contains("m.json"));
}

TEST_CASE("ordering and implementation names round-trip") {
  for (auto o : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused, Ordering::Mixed})
    CHECK(parse_ordering(to_string(o)) == o);
  for (auto i : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused})
    CHECK(parse_optimizer_impl(to_string(i)) == i);
  CHECK_FALSE(parse_ordering("sideways"));
}
