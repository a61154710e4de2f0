// Op order, dependencies, streams and peak memory of every ordering on the 3-layer MLP,
// against values worked out by hand (sizes in mlp_fixture.h).
#include <catch2/catch.hpp>

#include "mlp_fixture.h"

using namespace fusim::schedule;
using namespace fusim::schedule::testing;

namespace {
constexpr std::int64_t kWeights = 36352;           // 16384 + 512 + 16384 + 512 + 2560
constexpr std::int64_t kAdamState = 2 * kWeights;  // exp_avg + exp_avg_sq
}  // namespace

TEST_CASE("eager: all F, L, B in reverse (Bx before Bw), then U in layer order") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  CHECK(op_order(trace, s) ==
        "F:fc1 F:relu1 F:fc2 F:relu2 F:fc3 L:loss Bx:fc3 Bw:fc3 Bx:relu2 Bx:fc2 Bw:fc2 "
        "Bx:relu1 Bw:fc1 U:fc1 U:fc2 U:fc3");
  CHECK(s.steps == 1);
  // fc1's input is the data: no input gradient. U fc1 (#13): grads (Bw fc1 #12) and the
  // control edge from the last backward op (#12, the same op here).
  CHECK(s.ops[13].deps == std::vector<int>{12});
  // U fc2 (#14): Bw fc2 #10, Bx fc2 #9 (write-after-read on w), control from #12.
  CHECK(s.ops[14].deps == std::vector<int>{10, 9, 12});
  CHECK(s.ops[14].dep_kinds ==
        std::vector<DepKind>{DepKind::Data, DepKind::Data, DepKind::Control});
  // Bx relu2 (#8): its forward #3 and the gradient from Bx fc3 #6.
  CHECK(s.ops[8].deps == std::vector<int>{3, 6});
  for (const auto& op : s.ops) CHECK(op.stream == 0);
  CHECK(check_schedule(trace, s).empty());
}

TEST_CASE("eager adam foreach: peak at U fc1's third temporary, hand-computed") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "adam");
  // After Bw fc1 every activation is gone and all grads (36352) are live. U fc1 (foreach:
  // op by op over {weight, bias}) allocates sqrt results t0 (16384, 512), then at the div
  // pass denom t1 of the weight (16384) before t0 of the weight dies: temporaries 33280.
  CHECK(s.peak.weights == kWeights);
  CHECK(s.peak.optimizer_state == kAdamState);
  CHECK(s.peak.grads == 36352);
  CHECK(s.peak.temporaries == 33280);
  CHECK(s.peak.activations == 0);
  CHECK(s.peak.inputs == 0);
  CHECK(s.peak.total == kWeights + kAdamState + 36352 + 33280);  // 178688
  CHECK(s.peak.max_grads == 36352);
}

TEST_CASE("backward-fused: U_i right after Bw_i; grads freed at once") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::BackwardFused, "adam");
  CHECK(op_order(trace, s) ==
        "F:fc1 F:relu1 F:fc2 F:relu2 F:fc3 L:loss Bx:fc3 Bw:fc3 U:fc3 Bx:relu2 Bx:fc2 Bw:fc2 "
        "U:fc2 Bx:relu1 Bw:fc1 U:fc1");
  // No control edge: U fc2 (#12) waits only for Bw fc2 #11 and Bx fc2 #10.
  CHECK(s.ops[12].deps == std::vector<int>{11, 10});
  CHECK(check_schedule(trace, s).empty());
  // Peak inside U fc2 (#12): fc2 grads 16896 (fc3's were freed after U fc3), its
  // temporaries 33280 + relu1.out.grad 2048, relu1.out 2048, the input 2048.
  CHECK(s.peak.grads == 16896);
  CHECK(s.peak.temporaries == 33280 + 2048);
  CHECK(s.peak.activations == 2048);
  CHECK(s.peak.inputs == 2048);
  CHECK(s.peak.total == kWeights + kAdamState + 56320);  // 165376 < eager's 178688
  CHECK(s.peak.max_grads == 16896);                      // eager: 36352
}

TEST_CASE("backward-fused with GPU streams puts U on stream 1") {
  auto trace = mlp3();
  ScheduleOptions o;
  o.ordering = Ordering::BackwardFused;
  o.optimizer = "sgd";
  o.gpu_streams = true;
  auto s = build_schedule(trace, o);
  for (const auto& op : s.ops) CHECK(op.stream == (op.kind == OpKind::Update ? 1 : 0));
  CHECK(check_schedule(trace, s).empty());
}

TEST_CASE("forward-fused: U_i(t-1) right before F_i(t), flush at the end, grads kept") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::ForwardFused, "adam");
  CHECK(s.steps == 2);
  CHECK(op_order(trace, s) ==
        "F:fc1 F:relu1 F:fc2 F:relu2 F:fc3 L:loss Bx:fc3 Bw:fc3 Bx:relu2 Bx:fc2 Bw:fc2 "
        "Bx:relu1 Bw:fc1 "
        "U:fc1 F:fc1@1 F:relu1@1 U:fc2 F:fc2@1 F:relu2@1 U:fc3 F:fc3@1 L:loss@1 Bx:fc3@1 "
        "Bw:fc3@1 Bx:relu2@1 Bx:fc2@1 Bw:fc2@1 Bx:relu1@1 Bw:fc1@1 U:fc1@1 U:fc2@1 U:fc3@1");
  // F fc1 of step 1 (#14) reads w after U fc1 of step 0 (#13).
  CHECK(s.ops[14].deps == std::vector<int>{13});
  CHECK(s.ops[13].step == 0);
  CHECK(check_schedule(trace, s).empty());
  // Every grad of step 0 (36352) is alive when step 1 starts.
  CHECK(s.peak.grads_at_step_boundary == 36352);
  CHECK(s.peak.total == kWeights + kAdamState + 36352 + 33280);
}

TEST_CASE("eager over 2 steps frees every grad before the step boundary") {
  auto trace = mlp3();
  auto s = build(trace, Ordering::Eager, "sgd", OptimizerImpl::Foreach, 2);
  CHECK(s.ops.size() == 32);
  CHECK(s.peak.grads_at_step_boundary == 0);
  CHECK(check_schedule(trace, s).empty());
}

TEST_CASE("sgd peaks, hand-computed: eager at Bw fc1, backward-fused at Bw fc2") {
  auto trace = mlp3();
  // eager: after Bw fc1 allocates its grads: all grads 36352 + fc1.out.grad 2048 + input.
  auto e = build(trace, Ordering::Eager, "sgd");
  CHECK(e.peak.total == kWeights + 36352 + 2048 + 2048);  // 76800
  CHECK(e.peak.temporaries == 2048);
  CHECK(e.peak.inputs == 2048);
  // backward-fused: at Bw fc2 fc3's grad is gone: fc2 grads 16896, fc2.out.grad and
  // relu1.out.grad, relu1.out, input.
  auto b = build(trace, Ordering::BackwardFused, "sgd");
  CHECK(b.peak.total == kWeights + 16896 + 4096 + 2048 + 2048);  // 61440
  CHECK(b.peak.grads == 16896);
  CHECK(b.peak.temporaries == 4096);
  CHECK(b.peak.activations == 2048);
  // forward-fused: the same peak as eager (step 1's backward repeats step 0's).
  auto f = build(trace, Ordering::ForwardFused, "sgd");
  CHECK(f.peak.total == e.peak.total);
  CHECK(f.peak.grads_at_step_boundary == 36352);
}

TEST_CASE("mixed: per-layer placements from a JSON spec") {
  auto trace = mlp3();
  const char* text = R"({"layers": {"fc1": "forward", "fc3": "backward"}, "default": "eager"})";
  ScheduleOptions o;
  o.ordering = Ordering::Mixed;
  o.optimizer = "sgd";
  o.mixed = parse_mixed_ordering(fusim::parse_json_text(text, "mixed.json"), "mixed.json", trace);
  auto s = build_schedule(trace, o);
  CHECK(s.steps == 2);
  CHECK(op_order(trace, s) ==
        "F:fc1 F:relu1 F:fc2 F:relu2 F:fc3 L:loss Bx:fc3 Bw:fc3 U:fc3 Bx:relu2 Bx:fc2 Bw:fc2 "
        "Bx:relu1 Bw:fc1 U:fc2 "
        "U:fc1 F:fc1@1 F:relu1@1 F:fc2@1 F:relu2@1 F:fc3@1 L:loss@1 Bx:fc3@1 Bw:fc3@1 "
        "U:fc3@1 Bx:relu2@1 Bx:fc2@1 Bw:fc2@1 Bx:relu1@1 Bw:fc1@1 U:fc2@1 U:fc1@1");
  CHECK(check_schedule(trace, s).empty());
}
