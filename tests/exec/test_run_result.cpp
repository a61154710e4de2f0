// The one RunResult: the step-time summary both executors use, the header and per-op
// fillers, unknown values in JSON, and the timeline writer shared by simulate and run.
#include <catch2/catch.hpp>

#include "builders/machine_builder.h"
#include "exec/run_result.h"
#include "exec/run_result_json.h"
#include "exec/simulate.h"
#include "exec/timeline.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;

TEST_CASE("Quantiles interpolate between closest ranks like numpy.percentile") {
  // Sorted 1 2 3 4: q = 0.25 sits at rank 0.75, between 1 and 2; the median between 2 and 3.
  CHECK(exec::quantile({4, 1, 3, 2}, 0.25) == Approx(1.75));
  CHECK(exec::quantile({4, 1, 3, 2}, 0.5) == Approx(2.5));
  CHECK(exec::quantile({7}, 0.75) == 7);
}

TEST_CASE("The step summary: median and quartiles, linear interpolation, nearest ps") {
  auto odd = exec::summarize_steps({10, 30, 20});
  CHECK(odd.median == 20);
  CHECK(odd.p25 == 15);  // rank 0.5 between 10 and 20
  CHECK(odd.p75 == 25);
  // Two measured steps: the median is their mean (a nearest-rank rule took the faster one).
  auto two = exec::summarize_steps({1000, 2001});
  CHECK(two.median == 1501);  // 1500.5 rounds half away from zero
  CHECK(two.p25 == 1250);     // 1000 + 0.25 * 1001 = 1250.25
  CHECK(two.p75 == 1751);     // 1000 + 0.75 * 1001 = 1750.75
  exec::RunResult r;
  exec::set_step_times(r, {10, 30, 20});
  CHECK(r.steps_measured == 3);
  CHECK(r.step_times == std::vector<Tick>{10, 30, 20});  // in measured order
  CHECK(r.step_time == 20);
  CHECK(r.step_time_p25 == 15);
  CHECK(r.step_time_p75 == 25);
}

namespace {
schedule::Schedule mlp_schedule(int steps) {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
  schedule::ScheduleOptions so;
  so.ordering = schedule::Ordering::Eager;
  so.optimizer = "adam";
  so.steps = steps;
  return schedule::build_schedule(trace, so);
}
}  // namespace

TEST_CASE("A simulated run's step time is summarize_steps of its measured steps") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/mlp.json");
  schedule::ScheduleOptions so;
  so.ordering = schedule::Ordering::Eager;
  so.optimizer = "adam";
  so.steps = 5;  // warm-up step 0, measured steps 1, 2, 3 (4 trails the last boundary)
  const auto s = schedule::build_schedule(trace, so);
  exec::SimOptions o;
  o.fidelity = exec::Fidelity::Block;
  const auto r = exec::simulate(trace, s, exec::load_machine("xeon-8380-ddr4"), o);
  REQUIRE(r.steps_measured == 3);
  const auto summary = exec::summarize_steps(r.step_times);
  CHECK(r.step_time == summary.median);
  CHECK(r.step_time_p25 == summary.p25);
  CHECK(r.step_time_p75 == summary.p75);
  // Step s is b_{s+1} - b_s, b_s the start of step s's first forward op (step_openers).
  const auto openers = schedule::step_openers(s);
  REQUIRE(openers.size() == 5);
  for (int k = 0; k < 3; ++k) {
    const auto& from = r.per_op[static_cast<std::size_t>(openers[std::size_t(k + 1)])];
    const auto& to = r.per_op[static_cast<std::size_t>(openers[std::size_t(k + 2)])];
    CHECK(r.step_times[std::size_t(k)] == to.start - from.start);
  }
}

TEST_CASE("Steps open at their first forward op in issue order") {
  const auto s = mlp_schedule(3);
  const auto openers = schedule::step_openers(s);
  REQUIRE(openers.size() == 3);
  for (int step = 0; step < 3; ++step) {
    const int id = openers[std::size_t(step)];
    REQUIRE(id >= 0);
    CHECK(s.ops[std::size_t(id)].kind == schedule::OpKind::Forward);
    CHECK(s.ops[std::size_t(id)].step == step);
    for (int i = 0; i < id; ++i)  // no earlier forward op of the same step
      CHECK_FALSE((s.ops[std::size_t(i)].step == step &&
                   s.ops[std::size_t(i)].kind == schedule::OpKind::Forward));
  }
}

TEST_CASE("The header and per-op fillers copy the schedule's identity") {
  const auto s = mlp_schedule(1);
  const auto r = exec::result_header(s, "cpu");
  CHECK(r.executor == "cpu");
  CHECK(r.ordering == "eager");
  CHECK(r.optimizer == "adam");
  CHECK(r.impl == "foreach");
  const auto& op = s.ops.back();  // eager: the last op is U of the last layer with params
  const auto t = exec::op_timing(op, 5, 9);
  CHECK(t.id == op.id);
  CHECK(t.kind == "U");
  CHECK(t.layer == op.layer);
  CHECK(t.step == 0);
  CHECK(t.stream == op.stream);
  CHECK(t.start == 5);
  CHECK(t.end == 9);
  CHECK(t.dram_bytes == exec::kUnknown);
  CHECK(t.units == -1);
}

TEST_CASE("Unknown values are null in a RunResult's JSON, not -1") {
  const auto s = mlp_schedule(1);
  exec::RunResult r = exec::result_header(s, "cpu");
  exec::set_step_times(r, {us(1000), us(3000)});
  r.per_op.push_back(exec::op_timing(s.ops[0], 0, 1000));
  const auto j = exec::to_json(r);
  CHECK(j["dram_bytes"].is_null());
  CHECK(j["llc_hit_rate"].is_null());
  CHECK(j["peak_memory_bytes"].is_null());
  CHECK(j["per_op"][0]["dram_bytes"].is_null());
  CHECK(j["step_time_ms"] == 2.0);  // the mean of 1 ms and 3 ms
  r.dram_bytes = 0;
  r.peak_memory_bytes = 4096;
  const auto known = exec::to_json(r);
  CHECK(known["dram_bytes"] == 0);
  CHECK(known["peak_memory_bytes"] == 4096);
}

TEST_CASE("A simulated and a measured run of one schedule give the same timeline shape") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");
  const auto s = mlp_schedule(2);
  exec::SimOptions o;
  o.dram_series = true;  // the timeline's DRAM counter track
  o.warmup_steps = 0;
  const auto sim = exec::simulate_detailed(trace, s, test::defaults::tiny_cpu().build(), o);
  // A measured run of the same ops: every op 1 us long, back to back, step 1 only.
  exec::RunResult measured = exec::result_header(s, "cpu");
  Tick t = 0;
  for (const auto& op : s.ops) {
    if (op.step != 1) continue;
    measured.per_op.push_back(exec::op_timing(op, t, t + us(1)));
    t += us(1);
  }
  nlohmann::json a = nlohmann::json::array(), b = nlohmann::json::array();
  exec::append_timeline(a, 1, trace, {"sim", &sim.result, &s, &sim.dram});
  exec::append_timeline(b, 1, trace, {"run", &measured, &s, nullptr});
  auto slices = [](const nlohmann::json& events, int step) {
    std::vector<std::string> names;
    for (const auto& e : events)
      if (e["ph"] == "X" && e["args"]["step"] == step) {
        names.push_back(e["name"].get<std::string>() + " tid " + e["tid"].dump());
        CHECK(e["args"].size() == 7);  // op step stream units kernels flops dram_bytes
      }
    return names;
  };
  CHECK(slices(a, 1) == slices(b, 1));
  CHECK(slices(b, 1).front() == "F fc1 tid 0");
  auto threads = [](const nlohmann::json& events) {
    std::vector<std::string> names;
    for (const auto& e : events)
      if (e["name"] == "thread_name") names.push_back(e["args"]["name"]);
    return names;
  };
  CHECK(threads(a) == std::vector<std::string>{"stream 0"});
  CHECK(threads(b) == threads(a));
  // Units: microseconds (each measured op lasted 1 us).
  for (const auto& e : b)
    if (e["ph"] == "X") {
      CHECK(e["dur"] == 1.0);
      CHECK(e["args"]["dram_bytes"].is_null());
      CHECK(e["args"]["units"].is_null());
    }
  // Only the simulated run has the DRAM counter; its slices know their units and bytes.
  bool counter = false;
  for (const auto& e : a) counter = counter || e["ph"] == "C";
  CHECK(counter);
  for (const auto& e : a)
    if (e["ph"] == "X") CHECK(e["args"]["units"] == 1);
  const auto doc = exec::timeline_document(b, "fusim run", "cpu", "mlp_tiny.json");
  CHECK(doc["displayTimeUnit"] == "ns");
}
