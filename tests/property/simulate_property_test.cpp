// The simulator over random small traces on random small CPU machines (1-4 cores, random
// clock, FLOP rate, efficiencies, dispatch cost, 1-3 cache levels, a fixed-latency memory
// or a random DRAM), one random ordering and optimizer each, both fidelities:
//  - each measured step takes at least its forward + backward FLOPs at the machine's peak
//    (cores x FLOP/cycle x clock: efficiencies are <= 1), and on average at least the DRAM
//    bytes of a step at the memory's peak bandwidth;
//  - the same inputs give the same result twice (step times, DRAM bytes, every op's times).
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <variant>

#include "exec/machine.h"
#include "exec/run_result_json.h"
#include "exec/simulate.h"
#include "random_configs.h"
#include "schedule/optimizer.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using fusim::property::Rng;

namespace {

// The least FLOPs of one step's forward, loss and backward ops (updates may move between
// steps: forward-fused runs step s's in step s+1).
std::int64_t least_step_flops(const schedule::Schedule& s) {
  std::vector<std::int64_t> per_step(static_cast<std::size_t>(s.steps), 0);
  for (const schedule::Op& op : s.ops) {
    if (op.kind == schedule::OpKind::Update) continue;
    for (const schedule::MemoryPass& p : op.passes)
      per_step[static_cast<std::size_t>(op.step)] += p.flops;
  }
  return *std::min_element(per_step.begin(), per_step.end());
}

double peak_memory_bandwidth(const exec::Machine& m) {
  if (const auto* spec = std::get_if<dram::DramSpec>(&m.memory))
    return spec->peak_bandwidth_bytes_per_s();
  const auto& fixed = std::get<exec::FixedLatency>(m.memory);
  return fixed.bandwidth_gbps * 1e9;  // 0: unlimited
}

}  // namespace

TEST_CASE("random machines and traces: step time >= compute and DRAM bounds, reruns equal") {
  const int n = property::cases(1000);
  std::vector<std::string> optimizers;
  for (const auto& o : schedule::optimizer_table()) optimizers.emplace_back(o.name);
  for (int seed = 1; seed <= n; ++seed) {
    Rng rng(static_cast<std::uint64_t>(seed));
    const nlohmann::json trace_doc = property::random_trace(rng);
    const nlohmann::json machine_doc = property::random_machine(rng);
    const workload::Trace trace = workload::parse_trace(trace_doc, "random-trace.json");
    const exec::Machine machine = exec::parse_machine(machine_doc, "random-machine.json");
    schedule::ScheduleOptions o;
    o.ordering = rng.pick(std::vector<schedule::Ordering>{schedule::Ordering::Eager,
                                                          schedule::Ordering::BackwardFused,
                                                          schedule::Ordering::ForwardFused});
    o.optimizer = rng.pick(optimizers);
    o.steps = static_cast<int>(rng.in(3, 4));
    const schedule::Schedule schedule = schedule::build_schedule(trace, o);
    exec::SimOptions sim;
    sim.fidelity = rng.chance(50) ? exec::Fidelity::Line : exec::Fidelity::Block;
    sim.block_bytes = 1024;  // within the smallest generated L1 (2 KiB)
    INFO("seed " << seed << ": " << to_string(o.ordering) << " " << o.optimizer << " "
                 << (sim.fidelity == exec::Fidelity::Line ? "line" : "block")
                 << "\nmachine: " << machine_doc.dump() << "\ntrace: " << trace_doc.dump());
    const exec::RunResult r = exec::simulate(trace, schedule, machine, sim);
    REQUIRE(r.steps_measured >= 1);

    const auto& c = machine.compute;
    const double peak_flops = c.units * c.vector.float32 * c.clock_mhz * 1e6;
    const double compute_bound_ps =
        static_cast<double>(least_step_flops(schedule)) / peak_flops * 1e12;
    for (Tick t : r.step_times) CHECK(static_cast<double>(t) >= compute_bound_ps * (1 - 1e-12));

    const double bandwidth = peak_memory_bandwidth(machine);
    if (bandwidth > 0 && r.dram_bytes > 0) {
      const double mean_ps =
          static_cast<double>(std::accumulate(r.step_times.begin(), r.step_times.end(), Tick{0})) /
          static_cast<double>(r.step_times.size());
      CHECK(mean_ps >= static_cast<double>(r.dram_bytes) / bandwidth * 1e12 * (1 - 1e-12));
    }

    if (seed % 10 == 0) {  // determinism: a second run gives the same numbers, op by op
      const exec::RunResult again = exec::simulate(trace, schedule, machine, sim);
      CHECK(exec::to_json(again).dump() == exec::to_json(r).dump());
    }
  }
}
