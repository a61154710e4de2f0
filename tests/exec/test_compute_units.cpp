// The compute units the simulator drives (compute/units.h): lanes, units per kernel and the
// GPU launch model, on hand-sized machines.
#include <catch2/catch.hpp>

#include "compute/units.h"

using namespace fusim;
using compute::ComputeUnits;

namespace {
schedule::Schedule ops(const std::vector<std::pair<int, int>>& stream_kernels) {
  schedule::Schedule s;
  for (const auto& [stream, kernels] : stream_kernels) {
    schedule::Op op;
    op.id = static_cast<int>(s.ops.size());
    op.stream = stream;
    op.kernels = kernels;
    s.ops.push_back(op);
  }
  return s;
}
}  // namespace

TEST_CASE("CPU lanes are core groups, stream s on group s mod groups") {
  compute::ComputeConfig c;
  c.kind = compute::UnitKind::Cpu;
  c.units = 8;
  c.threads_per_op = 4;  // 2 groups: cores 0-3 and 4-7
  c.dispatch_overhead = ns(10);
  const auto s = ops({{0, 1}, {1, 2}, {2, 1}});
  ComputeUnits u(c, s);
  REQUIRE(u.lanes() == 2);  // three streams on two groups
  CHECK(u.lane_of(0) == 0);
  CHECK(u.lane_of(1) == 1);
  CHECK(u.lane_of(2) == 0);  // 2 mod 2
  CHECK(u.next(0) == 0);
  u.start(s.ops[0]);
  CHECK(u.next(0) == -1);  // busy until op 0 finishes
  CHECK(u.take_units(s.ops[1], 1, false) == std::vector<int>{4, 5, 6, 7});
  CHECK(u.dispatch_time(s.ops[1]) == ns(20));  // 2 kernels x 10 ns on the host
  CHECK(u.earliest_start(1) == 0);
  // A pass whose grain keeps 1 thread busy works on 1 of the 4 cores; 0 = no limit.
  CHECK(u.working_units(4, 1) == 1);
  CHECK(u.working_units(4, 0) == 4);
  CHECK(u.working_units(4, 6) == 4);
  u.finish(s.ops[0], {0, 1, 2, 3});
  CHECK(u.next(0) == 2);
  CHECK(u.busy());
}

TEST_CASE("GPU: asynchronous launches, SMs from a pool, at most max_concurrent_kernels") {
  compute::ComputeConfig c;
  c.kind = compute::UnitKind::Gpu;
  c.units = 4;
  c.max_concurrent_kernels = 2;
  c.dispatch_overhead = us(1);
  c.launch_latency = us(2);
  const auto s = ops({{0, 3}, {1, 1}, {0, 0}});
  ComputeUnits u(c, s);
  REQUIRE(u.lanes() == 2);
  // Op 0: first launch at 1 us, +2 us latency; its 3 launches end at 3 us, +2 us.
  CHECK(u.earliest_start(0) == us(3));
  CHECK(u.earliest_end(0) == us(5));
  // Op 1 is launched after op 0's three: 3 + 1 + 2 = 6 us; ends at 4 + 2 = 6 us.
  CHECK(u.earliest_start(1) == us(6));
  CHECK(u.earliest_end(1) == us(6));
  CHECK(u.earliest_start(2) == 0);  // a view launches nothing
  CHECK(u.dispatch_time(s.ops[0]) == 0);
  u.start(s.ops[0]);
  // 8 grid blocks want 4 SMs; with another lane's kernel ready, half of the free ones.
  CHECK(u.take_units(s.ops[0], 8, true) == std::vector<int>{0, 1});
  u.start(s.ops[1]);
  CHECK(u.take_units(s.ops[1], 8, false) == std::vector<int>{2, 3});
  CHECK_FALSE(u.can_place(s.ops[1]));  // no SM free (and 2 kernels running)
  CHECK(u.can_place(s.ops[2]));        // a view needs none
  CHECK(u.working_units(2, 1) == 2);   // a kernel works on every SM it holds
  u.finish(s.ops[0], {0, 1});
  CHECK(u.next(0) == 2);
  CHECK(u.describe().find("SMs free 2 of 4, kernels running 1") != std::string::npos);
}

TEST_CASE("compute time is FLOPs at the op class's achieved rate on the op's units") {
  compute::ComputeConfig c;
  c.units = 2;
  c.clock_mhz = 1000;
  c.vector.float32 = 2;  // 2 FLOP/cycle: 2 GFLOP/s per unit at 1 GHz
  c.efficiency.fill(0.5);
  ComputeUnits u(c, ops({{0, 1}}));
  // 2 units x 2 GFLOP/s x 0.5 = 2 GFLOP/s: 2000 FLOP take 1 us.
  CHECK(u.compute_time(compute::OpClass::Elementwise, workload::DType::Float32, 2, 2000) == us(1));
  CHECK(u.compute_time(compute::OpClass::Elementwise, workload::DType::Float32, 2, 0) == 0);
}
