// The checker rejects hand-made wrong schedules, naming the violated edge or op.
#include <algorithm>
#include <catch2/catch.hpp>

#include "mlp_fixture.h"

using namespace fusim::schedule;
using namespace fusim::schedule::testing;
using Catch::Matchers::Contains;

namespace {
std::string all(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

void remove_dep(Op& op, int dep) {
  auto it = std::find(op.deps.begin(), op.deps.end(), dep);
  REQUIRE(it != op.deps.end());
  op.dep_kinds.erase(op.dep_kinds.begin() + (it - op.deps.begin()));
  op.deps.erase(it);
}

// Moves op `from` to position `to` of the issue order, renumbering ids and deps.
void move_op(Schedule& s, int from, int to) {
  std::vector<int> order(s.ops.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  order.erase(order.begin() + from);
  order.insert(order.begin() + to, from);
  std::vector<int> new_id(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) new_id[std::size_t(order[i])] = int(i);
  std::vector<Op> ops;
  for (int old : order) {
    Op op = s.ops[std::size_t(old)];
    op.id = new_id[std::size_t(old)];
    for (auto& d : op.deps) d = new_id[std::size_t(d)];
    ops.push_back(op);
  }
  s.ops = ops;
}
}  // namespace

TEST_CASE("checker: the built schedules of the MLP are valid") {
  auto trace = mlp3();
  for (auto o : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused})
    CHECK(all(check_schedule(trace, build(trace, o, "adam"))).empty());
}

TEST_CASE("checker 1: an update issued before the Bw it depends on") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  move_op(s, 13, 12);  // U fc1 before Bw fc1
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("edge Bw#13 (Bw fc1, step 0) -> U#12 (U fc1, step 0) points backwards "
                      "in the issue order"));
}

TEST_CASE("checker 2: a forward without the edge from its producer") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  remove_dep(s.ops[1], 0);
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("missing edge F#0 (F fc1, step 0) -> F#1 (F relu1, step 0): it reads "
                      "fc1.out before its producer ran"));
}

TEST_CASE("checker 3: an update that does not wait for its final grads") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::BackwardFused, "adam");
  remove_dep(s.ops[12], 11);  // U fc2 without Bw fc2
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("missing edge Bw#11 (Bw fc2, step 0) -> U#12 (U fc2, step 0): the grads "
                      "of fc2 are not final before U reads them"));
}

TEST_CASE("checker 4: an update overwriting weights Bx still has to read") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::BackwardFused, "adam");
  remove_dep(s.ops[12], 10);  // U fc2 without Bx fc2
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("missing edge Bx#10 (Bx fc2, step 0) -> U#12 (U fc2, step 0): Bx reads "
                      "the step-0 weights of fc2 that U overwrites"));
}

TEST_CASE("checker 5: a param never updated") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  s.ops.pop_back();  // U fc3
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("missing op U fc3 (step 0): each param is updated exactly once per step"));
}

TEST_CASE("checker 6: a param updated twice in one step") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  Op copy = s.ops[13];
  copy.id = int(s.ops.size());
  s.ops.push_back(copy);
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("U fc1 (step 0) issued 2 times (U#13 (U fc1, step 0) and U#16 (U fc1, "
                      "step 0)): each param is updated exactly once per step"));
}

TEST_CASE("checker 7: forward-fused forward reading weights with an update pending") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::ForwardFused, "adam");
  remove_dep(s.ops[14], 13);  // F fc1 of step 1 without U fc1 of step 0
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("missing edge U#13 (U fc1, step 0) -> F#14 (F fc1, step 1): F reads the "
                      "params of fc1 while their update from step 0 is pending"));
}

TEST_CASE("checker 8: a dependency cycle") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  s.ops[0].deps.push_back(5);  // F fc1 after L, which needs F fc1
  s.ops[0].dep_kinds.push_back(DepKind::Control);
  CHECK_THAT(all(check_schedule(trace, s)), Contains("dependency cycle: F#0 (F fc1, step 0) -> "));
}

TEST_CASE("checker 9: an update of a layer without params") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  s.ops[15].layer = 3;  // U relu2
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("U#15 (U relu2, step 0): layer relu2 (relu) has no such op"));
}

TEST_CASE("checker 10: updates that apply to the wrong params") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  std::swap(s.ops[14].passes, s.ops[15].passes);  // U fc2 runs fc3's math and back
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("U#14 (U fc2, step 0) writes params {fc3.weight}, layer fc2 trains "
                      "{fc2.bias, fc2.weight}"));
}

TEST_CASE("checker 11: a gradient read before any op wrote it") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  s.ops[6].passes.clear();  // Bx fc3 no longer writes relu2.out.grad
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("Bx#8 (Bx relu2, step 0) reads relu2.out.grad (step 0) before any op "
                      "wrote it"));
}

TEST_CASE("checker 12: an op outside the steps of the schedule") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "sgd");
  s.ops[15].step = 1;
  auto errors = all(check_schedule(trace, s));
  CHECK_THAT(errors, Contains("U#15 (U fc3, step 1): step outside 0..0"));
}

TEST_CASE("checker 13: an update reading the grads of another step") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::ForwardFused, "sgd");
  // U fc1 of step 0 (#13) made to read fc1's grads of step 1 (those of U fc1@1, the 30th op).
  REQUIRE(s.ops[29].kind == OpKind::Update);
  REQUIRE(s.ops[29].layer == 0);
  s.ops[13].passes = s.ops[29].passes;
  CHECK_THAT(all(check_schedule(trace, s)),
             Contains("U#13 (U fc1, step 0) reads fc1.weight.grad of step 1: the update of "
                      "step 0 must use that step's grads"));
}
