// Bad options and bad mixed-ordering files are InputErrors naming the file and JSON path.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "mlp_fixture.h"
#include "schedule/request.h"

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

TEST_CASE("one --ordering grammar: all, or a comma list with mixed, each name once") {
  CHECK(ordering_names(parse_orderings("all")) ==
        std::vector<std::string>{"eager", "backward-fused", "forward-fused"});
  CHECK(ordering_names(parse_orderings("eager,mixed")) ==
        std::vector<std::string>{"eager", "mixed"});
  CHECK(ordering_names(parse_orderings("forward-fused")) ==
        std::vector<std::string>{"forward-fused"});
  CHECK_THROWS_WITH(parse_orderings("eager,fused"),
                    Contains("--ordering: expected all or a comma-separated list of eager, "
                             "backward-fused, forward-fused, mixed, got \"fused\""));
  CHECK_THROWS_WITH(parse_orderings("eager,eager"), Contains("each ordering once"));
  CHECK_THROWS_WITH(parse_orderings(""), Contains("at least one ordering"));
  // simulate and sweep add eager, the speedup baseline, in front.
  CHECK(ordering_names(with_eager_baseline(parse_orderings("forward-fused,eager"))) ==
        std::vector<std::string>{"eager", "forward-fused"});
  CHECK(parse_impl_option("fused") == OptimizerImpl::Fused);
  CHECK_THROWS_WITH(parse_impl_option("vector"),
                    Contains("--impl: expected loop, foreach or fused, got \"vector\""));
}

TEST_CASE("one execution grammar: layers, graph, both, or a comma list, each once") {
  CHECK(parse_executions("layers") == std::vector<Execution>{Execution::Layers});
  CHECK(parse_executions("both") == std::vector<Execution>{Execution::Layers, Execution::Graph});
  CHECK(parse_executions("graph,layers") ==
        std::vector<Execution>{Execution::Graph, Execution::Layers});
  CHECK_THROWS_WITH(parse_executions("layers,tape"),
                    Contains("--execution: expected layers, graph, both or a comma-separated "
                             "list of layers, graph, got \"tape\""));
  CHECK_THROWS_WITH(parse_executions("graph,graph"), Contains("each execution once"));
  CHECK_THROWS_WITH(parse_executions(""), Contains("at least one execution"));
}

TEST_CASE("one schedule-options builder: the request plus the ordering") {
  ScheduleRequest r;
  r.optimizer = "sgd";
  r.impl = OptimizerImpl::Loop;
  r.steps = 3;
  r.mixed_file = "m.json";
  r.gpu_streams = true;
  const auto eager = schedule_options(Ordering::Eager, r);
  CHECK(eager.ordering == Ordering::Eager);
  CHECK(eager.optimizer == "sgd");
  CHECK(eager.impl == OptimizerImpl::Loop);
  CHECK(eager.steps == 3);
  CHECK(eager.gpu_streams);
  CHECK(eager.mixed_file.empty());  // the file belongs to mixed only
  CHECK(schedule_options(Ordering::Mixed, r).mixed_file == "m.json");
  CHECK_THROWS_WITH(check_mixed_option({Ordering::Eager}, "m.json"),
                    Contains("--mixed: only with --ordering mixed"));
  CHECK_NOTHROW(check_mixed_option({Ordering::Eager, Ordering::Mixed}, "m.json"));
  auto trace = mlp3();
  r.mixed_file.clear();
  const auto schedules = build_schedules(trace, parse_orderings("all"), r);
  REQUIRE(schedules.size() == 3);
  CHECK(schedules[2].ordering == Ordering::ForwardFused);
  CHECK(schedules[2].steps == 3);
  CHECK(schedules[1].optimizer == "sgd");
}
