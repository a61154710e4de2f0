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

namespace {
// A result with every op of `s` taking `base` us, and `update_extra` / `after_extra` us
// more where the op is an update after a non-update op / a non-update op after an update.
exec::RunResult timed(const schedule::Schedule& s, double base, double update_extra,
                      double after_extra) {
  exec::RunResult r;
  Tick t = 0;
  const schedule::Op* last = nullptr;
  for (const auto& op : s.ops) {
    double time_us = base;
    const bool update = op.kind == schedule::OpKind::Update;
    if (last && (last->kind == schedule::OpKind::Update) != update)
      time_us += update ? update_extra : after_extra;
    exec::OpTiming o;
    o.id = op.id;
    o.kind = std::string(schedule::to_string(op.kind));
    o.layer = op.layer;
    o.step = op.step;
    o.start = t;
    o.end = t + us(time_us);
    t = o.end;
    r.per_op.push_back(o);
    last = &op;
  }
  return r;
}
}  // namespace

TEST_CASE("switch samples: a fused op's extra time less the simulated difference") {
  // The 256-wide MLP, one step: measured, every backward-fused update at a switch takes 3 us
  // more than eager's (which sit at none but the first), and every op after one 1 us more.
  // The model simulates those updates 2 us faster (their gradients cached) and the ops after
  // them unchanged: what the model lacks is 3 - (-2) = 5 us an update, 1 us after one.
  const auto mlp = backend::switch_probe_mlp(256);
  const auto eager = one_step(mlp, schedule::Ordering::Eager);
  const auto fused = one_step(mlp, schedule::Ordering::BackwardFused);
  const auto eager_measured = timed(eager, 10, 3, 1);
  const auto fused_measured = timed(fused, 10, 3, 1);
  const auto eager_simulated = timed(eager, 10, -2, 0);
  const auto fused_simulated = timed(fused, 10, -2, 0);
  const auto raw = backend::switch_samples(eager, fused, eager_measured, fused_measured);
  REQUIRE(raw.count("") == 1);
  CHECK(raw.at("").update_ns == Approx(3000));
  CHECK(raw.at("").after_ns == Approx(1000));
  CHECK(raw.at("").simulated_update_ns == Approx(0));
  // Eager's first update is at a switch too, so its layer is left out: 12 of 13 updates.
  CHECK(raw.at("").updates == 12);
  CHECK(raw.at("linear").updates == 12);
  const auto net = backend::switch_samples(eager, fused, eager_measured, fused_measured,
                                           &eager_simulated, &fused_simulated);
  CHECK(net.at("").update_ns == Approx(5000));
  CHECK(net.at("").simulated_update_ns == Approx(-2000));
  CHECK(net.at("").after_ns == Approx(1000));
  CHECK(net.at("linear").update_ns == Approx(5000));
}
