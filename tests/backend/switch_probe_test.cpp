// calibrate's switch probes (backend/switch_probe.h): valid traces whose backward-fused
// schedule puts every layer's update right after a backward op, and whose eager schedule
// runs the updates back to back, so that their difference is what crossing the update
// boundary costs, per layer op.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "backend/switch_probe.h"
#include "schedule/schedule.h"

using namespace fusim;

namespace {
// Updates whose previous op on their stream is not an update, by their layer's op.
std::map<std::string, int> updates_at_a_switch(const schedule::Schedule& s) {
  std::map<std::string, int> out;
  std::map<int, const schedule::Op*> last;
  for (const auto& op : s.ops) {
    const bool update = op.kind == schedule::OpKind::Update;
    auto it = last.find(op.stream);
    if (update && it != last.end() && it->second->kind != schedule::OpKind::Update)
      ++out[std::string(workload::to_string(op.layer_op))];
    last[op.stream] = &op;
  }
  return out;
}

schedule::Schedule one_step(const workload::Trace& trace, schedule::Ordering ordering) {
  schedule::ScheduleOptions so;
  so.optimizer = "adam";
  so.impl = schedule::OptimizerImpl::Foreach;
  so.ordering = ordering;
  so.steps = 1;
  return schedule::build_schedule(trace, so);
}
}  // namespace

TEST_CASE("switch probes: every CNN update of backward-fused sits at a switch, eager's one") {
  const auto cnn = backend::switch_probe_cnn();
  // 12 blocks of conv, batch norm, relu, then flatten, the head and the loss.
  CHECK(cnn.layers.size() == 12 * 3 + 3);
  const auto fused = updates_at_a_switch(one_step(cnn, schedule::Ordering::BackwardFused));
  // Each conv's and batch norm's update right after its own backward op, and the head's.
  CHECK(fused.at("conv2d") == 12);
  CHECK(fused.at("batch_norm") == 12);
  CHECK(fused.at("linear") == 1);
  // Eager: the updates back to back after the whole backward: only the first at a switch.
  int eager = 0;
  for (const auto& [op, n] : updates_at_a_switch(one_step(cnn, schedule::Ordering::Eager)))
    eager += n;
  CHECK(eager == 1);

  const auto mlp = backend::switch_probe_mlp(256);
  CHECK(mlp.layers.size() == 12 * 2 + 2);
  CHECK(updates_at_a_switch(one_step(mlp, schedule::Ordering::BackwardFused)).at("linear") == 13);
}
