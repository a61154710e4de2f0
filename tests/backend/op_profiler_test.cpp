// `fusim profile`'s measurement (backend/op_profiler.h): ops repeated from a restored step
// state compute what one run computes, and a profile covers every op of every ordering.
#include <catch2/catch.hpp>

#include "backend/op_profiler.h"
#include "backend/optimizer_config.h"
#include "backend/training_state.h"
#include "compute/op_signature.h"
#include "exec/op_profile.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

using namespace fusim;
using backend::TrainingState;
using schedule::Ordering;

namespace {
// tiny_convnet with its dropout at p = 0 (the identity): a repeated forward then draws no
// random numbers, so a repeated op cannot change what the step computes.
workload::Trace convnet_without_dropout() {
  auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/tiny_convnet.json");
  for (auto& l : trace.layers)
    if (l.op == workload::OpKind::Dropout) l.attrs.p = 0;
  return trace;
}

schedule::Schedule eager(const workload::Trace& trace, const std::string& optimizer, int steps) {
  schedule::ScheduleOptions so;
  so.optimizer = optimizer;
  so.steps = steps;
  return schedule::build_schedule(trace, so);
}
}  // namespace

TEST_CASE("an op repeated from its restored step state computes what one run does") {
  const auto trace = convnet_without_dropout();
  const auto s = eager(trace, "adam", 2);
  const auto config = backend::optimizer_config("adam");
  TrainingState once(trace, s, config, at::kCPU, 3), repeated(trace, s, config, at::kCPU, 3);
  for (const auto& op : s.ops) {
    once.execute(op);
    // Every op but the update three times (an update repeated is another update).
    const int runs = op.kind == schedule::OpKind::Update ? 1 : 3;
    const auto before = repeated.step_state();
    for (int r = 0; r < runs; ++r) {
      repeated.restore(before);
      repeated.execute(op);
    }
  }
  const auto a = once.parameters(), b = repeated.parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(at::equal(a[i], b[i]));
}

TEST_CASE("a profile covers every op of every ordering, each measured once per signature") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/tiny_convnet.json");
  schedule::ScheduleRequest request;
  request.optimizer = "sgd";
  request.steps = 4;
  const auto schedules = schedule::build_schedules(
      trace, {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}, request);
  backend::ProfileOptions o;
  o.threads = 1;
  o.min_repeats = 3;
  o.max_repeats = 3;
  int progress_calls = 0;
  o.progress = [&](int, int, const std::string&) { ++progress_calls; };
  const exec::OpProfile p =
      backend::profile_ops(trace, schedules, backend::optimizer_config("sgd"), o);
  CHECK(p.optimizer == "sgd");
  CHECK(p.impl == "foreach");
  CHECK(p.threads == 1);
  REQUIRE_FALSE(p.ops.empty());
  int per_step = 0;
  for (const auto& op : p.ops) {
    INFO(op.description);
    CHECK(op.repeats == 3);
    CHECK(op.median > 0);
    CHECK(op.p25 <= op.median);
    CHECK(op.median <= op.p75);
    per_step += op.per_step;
  }
  // Each non-view op of an eager step has exactly one entry's signature.
  int ops_in_step = 0;
  for (const auto& op : schedules[0].ops)
    if (op.step == 1 && op.kernels > 0 && op.layer >= 0) ++ops_in_step;
  CHECK(per_step == ops_in_step);
  CHECK(progress_calls >= 1);
  CHECK(progress_calls <= int(p.ops.size()));
  // Round trip through the file format, then every ordering's ops are found in it.
  const auto back = exec::parse_op_profile(exec::op_profile_json(p), "p.json");
  for (const auto& s : schedules)
    for (const auto& op : s.ops) {
      if (op.kernels == 0 || op.layer < 0) continue;
      CHECK(back.find(compute::op_signature(trace, s, op).key) != nullptr);
    }
}
