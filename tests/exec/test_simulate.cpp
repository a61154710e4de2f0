// The simulated executor on machines small enough to check by hand, and the properties
// that make its predictions meaningful (inter-op cache reuse, steady state).
#include <catch2/catch.hpp>

#include "builders/machine_builder.h"
#include "core/error.h"
#include "exec/simulate.h"
#include "networks/networks.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using schedule::AccessMode;

namespace {
// The 2-layer MLP of traces/SCHEMA.md: fc1 (4 -> 8, bias), relu, fc2 (8 -> 3), loss.
workload::Trace schema_mlp() {
  return workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"mlp","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,4]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[2,8],
    "params":[{"name":"fc1.weight","shape":[8,4]},{"name":"fc1.bias","shape":[8]}]},
   {"id":1,"name":"act","op":"relu","attrs":{},"inputs":[0],"output":[2,8]},
   {"id":2,"name":"fc2","op":"linear","attrs":{"bias":false},"inputs":[1],"output":[2,3],
    "params":[{"name":"fc2.weight","shape":[3,8]}]},
   {"id":3,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[2,"target"],"output":[]}]})"),
                               "mlp.json");
}

int add_tensor(schedule::Schedule& s, const std::string& name, std::int64_t bytes,
               std::uint64_t address) {
  schedule::Tensor t;
  t.id = static_cast<int>(s.tensors.size());
  t.name = name;
  t.bytes = bytes;
  t.address = address;
  s.tensors.push_back(t);
  return t.id;
}

void add_op(schedule::Schedule& s, int layer, workload::OpKind layer_op, std::vector<int> deps,
            std::vector<schedule::TensorAccess> accesses, std::int64_t flops) {
  schedule::Op op;
  op.id = static_cast<int>(s.ops.size());
  op.kind = schedule::OpKind::Forward;
  op.layer = layer;
  op.layer_op = layer_op;
  op.deps = std::move(deps);
  op.flops = flops;
  op.passes.push_back({std::move(accesses), flops});
  s.ops.push_back(std::move(op));
}

exec::RunResult run(const workload::Trace& trace, schedule::Ordering ordering,
                    const exec::Machine& m, int steps = 3,
                    exec::Fidelity fidelity = exec::Fidelity::Line,
                    const std::string& optimizer = "sgd") {
  schedule::ScheduleOptions so;
  so.ordering = ordering;
  so.optimizer = optimizer;
  so.impl = schedule::OptimizerImpl::Foreach;
  so.steps = steps;
  so.gpu_streams = m.kind == compute::UnitKind::Gpu;
  so.device = so.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  exec::SimOptions o;
  o.fidelity = fidelity;
  return exec::simulate(trace, schedule::build_schedule(trace, so), m, o);
}
}  // namespace

TEST_CASE("2-layer MLP forward on a tiny machine: traffic and times by hand") {
  auto trace = schema_mlp();
  schedule::Schedule s;
  s.steps = 1;
  // Nine 64 B lines, consecutive, so the 4-set L1 never evicts (at most 3 per set).
  int x = add_tensor(s, "input", 32, 0x000), w1 = add_tensor(s, "fc1.weight", 128, 0x040),
      b1 = add_tensor(s, "fc1.bias", 32, 0x0c0), h = add_tensor(s, "fc1.out", 64, 0x100),
      a = add_tensor(s, "act.out", 64, 0x140), w2 = add_tensor(s, "fc2.weight", 96, 0x180),
      y = add_tensor(s, "fc2.out", 24, 0x200);
  using K = workload::OpKind;
  add_op(s, 0, K::Linear, {},
         {{x, AccessMode::Read},
          {w1, AccessMode::Read},
          {b1, AccessMode::Read},
          {h, AccessMode::Write}},
         2000);
  add_op(s, 1, K::Relu, {0}, {{h, AccessMode::Read}, {a, AccessMode::Write}}, 200);
  add_op(s, 2, K::Linear, {1},
         {{a, AccessMode::Read}, {w2, AccessMode::Read}, {y, AccessMode::Write}}, 1000);
  auto m = test::defaults::tiny_cpu().build();  // L1 1 KiB, LLC 4 KiB, memory 10 ns
  exec::SimOptions o;
  o.warmup_steps = 0;
  auto r = exec::simulate(trace, s, m, o);
  // Traffic: every first touch of a line misses both levels and reads 64 B (writes
  // allocate): fc1 x, W1 (2 lines), b1, h = 5 lines; relu: h hits, a misses = 1 line;
  // fc2: a hits, W2 (2 lines), y = 3 lines. Nothing is evicted, so nothing is written back.
  REQUIRE(r.per_op.size() == 3);
  CHECK(r.per_op[0].dram_bytes == 5 * 64);
  CHECK(r.per_op[1].dram_bytes == 1 * 64);
  CHECK(r.per_op[2].dram_bytes == 3 * 64);
  CHECK(r.dram_bytes == 9 * 64);
  // Times (ns): one L1 port issues a line per cycle (1 ns); a miss reaches memory after the
  // L1 and LLC lookups (1 + 1 ns) and returns 10 ns later, so the k-th line issued at
  // t0 + k completes at t0 + k + 12; compute (2 FLOP/ns) starts when the chunk's data is in.
  //   fc1: lines at 0..4, data in at 16, 2000 FLOP = 1000 ns -> ends 1016
  //   relu: h hits at 1016 (done 1017), a issued 1017 -> in at 1029, +100 ns -> 1129
  //   fc2: a hits, W2 lines at 1130, 1131, y at 1132 -> in at 1144, +500 ns -> 1644
  CHECK(r.per_op[0].start == 0);
  CHECK(r.per_op[0].end == ns(1016));
  CHECK(r.per_op[1].end == ns(1129));
  CHECK(r.per_op[2].end == ns(1644));
  CHECK(r.step_time == ns(1644));
  CHECK(r.llc_hit_rate == 0.0);  // every LLC lookup was a first touch
  // L1: 11 line accesses (fc1 5, relu 2, fc2 4), of which h in relu and a in fc2 hit.
  REQUIRE(r.hit_rates.size() == 2);
  CHECK(r.hit_rates[0].level == "L1");
  CHECK(r.hit_rates[0].hit_rate == Approx(2.0 / 11.0));
  CHECK(r.hit_rates[1].level == "LLC");
  CHECK(r.hit_rates[1].hit_rate == 0.0);
}

TEST_CASE("a CPU op pays its dispatch overhead before its work") {
  auto trace = schema_mlp();
  schedule::Schedule s;
  s.steps = 1;
  int h = add_tensor(s, "h", 64, 0x0), a = add_tensor(s, "a", 64, 0x40);
  add_op(s, 1, workload::OpKind::Relu, {}, {{h, AccessMode::Read}, {a, AccessMode::Write}}, 0);
  exec::SimOptions o;
  o.warmup_steps = 0;
  auto r = exec::simulate(trace, s, test::defaults::tiny_cpu().dispatch_ns(5000).build(), o);
  // 5 us dispatch, then h issued at 5000, a at 5001 -> a's data at 5013 ns.
  CHECK(r.per_op[0].end == ns(5013));
}

TEST_CASE("backward-fused reads grads from the LLC: fewer DRAM bytes than eager") {
  networks::NetworkOptions no;
  no.batch = 8;
  no.hidden = 256;
  no.layers = 2;
  auto trace = networks::make_network("mlp", no);
  // Each layer's grad (<= 784 KiB) fits in a 2 MiB LLC; the model's weights, grads and
  // momentum (~3.9 MiB) do not.
  // 64 FLOP/cycle so that memory, not compute, sets the step time.
  auto fits_machine =
      test::defaults::tiny_cpu().l1("32KiB").llc("2MiB").memory(80, 25).flops_per_cycle(64);
  auto fits = fits_machine.build();
  auto eager = run(trace, schedule::Ordering::Eager, fits, 3, exec::Fidelity::Line, "momentum");
  auto fused =
      run(trace, schedule::Ordering::BackwardFused, fits, 3, exec::Fidelity::Line, "momentum");
  CHECK(fused.dram_bytes < eager.dram_bytes);
  CHECK(fused.llc_hit_rate > eager.llc_hit_rate);
  // Step time is not checked on this machine, and backward-fused is 0.4% slower here: 16
  // MSHRs x 64 B per 80 ns is 12.8 GB/s < 25 GB/s, so the step is latency bound and pays
  // per demand miss on the critical path, not per byte. DRAM bytes include posted dirty
  // writebacks (free in time); backward-fused saves those and U's reads (-3.0 MB over the
  // run) but its updates evict the next forward's weights and B's activations (F +1.1 MB,
  // Bw +1.0 MB demand misses). When memory bandwidth is the limit (256 MSHRs, 5 GB/s),
  // time follows bytes and fewer bytes must mean a step that is not slower.
  auto bw = fits_machine.mshrs(256).memory(80, 5).build();
  auto eager_bw = run(trace, schedule::Ordering::Eager, bw, 3, exec::Fidelity::Line, "momentum");
  auto fused_bw =
      run(trace, schedule::Ordering::BackwardFused, bw, 3, exec::Fidelity::Line, "momentum");
  REQUIRE(fused_bw.dram_bytes < eager_bw.dram_bytes);
  CHECK(fused_bw.step_time <= eager_bw.step_time);

  // Without an LLC (and a 4-line L1) no grad survives from B_i to U_i in either ordering.
  auto none = test::defaults::tiny_cpu().l1("256B").llc("0").memory(80, 25).build();
  auto eager0 = run(trace, schedule::Ordering::Eager, none, 3, exec::Fidelity::Line, "momentum");
  auto fused0 =
      run(trace, schedule::Ordering::BackwardFused, none, 3, exec::Fidelity::Line, "momentum");
  CHECK(fused0.dram_bytes == eager0.dram_bytes);
  CHECK(eager0.dram_bytes > eager.dram_bytes);
}

TEST_CASE("forward-fused steady state excludes warm-up and the final flush") {
  networks::NetworkOptions no;
  no.batch = 4;
  no.hidden = 128;
  no.layers = 2;
  auto trace = networks::make_network("mlp", no);
  auto m = test::defaults::tiny_cpu().l1("32KiB").llc("1MiB").memory(80, 25).build();
  auto r = run(trace, schedule::Ordering::ForwardFused, m, 3);
  // Boundaries: the first forward op of each step starts it.
  std::vector<Tick> first_f(3, -1);
  Tick end = 0;
  for (const auto& op : r.per_op) {
    if (op.kind == "F" && first_f[std::size_t(op.step)] < 0)
      first_f[std::size_t(op.step)] = op.start;
    end = std::max(end, op.end);
  }
  REQUIRE(r.steps_measured == 1);
  CHECK(r.step_time == first_f[2] - first_f[1]);
  // The last step also runs the flush of step 2's updates: it is longer, and left out.
  CHECK(end - first_f[2] > r.step_time);
  // Two steps cannot give a steady-state forward-fused step.
  CHECK_THROWS_WITH(run(trace, schedule::Ordering::ForwardFused, m, 2),
                    Catch::Contains("forward-fused needs at least 3 steps"));
}

TEST_CASE("same inputs, same result (determinism)") {
  networks::NetworkOptions no;
  no.batch = 4;
  no.hidden = 128;
  no.layers = 2;
  auto trace = networks::make_network("mlp", no);
  auto m = test::defaults::tiny_cpu().l1("32KiB").llc("1MiB").memory(80, 25).build();
  auto a = run(trace, schedule::Ordering::BackwardFused, m);
  auto b = run(trace, schedule::Ordering::BackwardFused, m);
  CHECK(a.step_time == b.step_time);
  CHECK(a.dram_bytes == b.dram_bytes);
  REQUIRE(a.per_op.size() == b.per_op.size());
  for (std::size_t i = 0; i < a.per_op.size(); ++i) CHECK(a.per_op[i].end == b.per_op[i].end);
}

TEST_CASE("chunk 0 is the machine's default chunk; another chunk is another result") {
  networks::NetworkOptions no;
  no.batch = 256;
  no.hidden = 1024;
  no.layers = 2;
  auto trace = networks::make_network("mlp", no);  // 1 MiB activations, 4 MiB weights
  // One core x 16 MSHRs x 64 B = 1 KiB: the default is the 1 MiB floor.
  auto m = test::defaults::tiny_cpu().l1("32KiB").llc("1MiB").memory(80, 25).build();
  REQUIRE(m.default_chunk_bytes() == 1 << 20);
  schedule::ScheduleOptions so;
  so.steps = 3;
  const auto schedule = schedule::build_schedule(trace, so);
  exec::SimOptions o;
  o.fidelity = exec::Fidelity::Tensor;
  const auto by_default = exec::simulate(trace, schedule, m, o);
  o.chunk_bytes = 1 << 20;
  const auto given = exec::simulate(trace, schedule, m, o);
  CHECK(by_default.step_time == given.step_time);
  CHECK(by_default.dram_bytes == given.dram_bytes);
  o.chunk_bytes = 64 << 10;
  CHECK(exec::simulate(trace, schedule, m, o).step_time != given.step_time);
}

TEST_CASE("forward-fused: the step that first touches the optimizer state is warm-up") {
  // Everything (weights, grads, activations, Adam state) fits in the 8 MiB LLC: in steady
  // state no ordering sends a byte to DRAM. Step 0 of forward-fused runs no update (U_i of
  // step 0 runs in step 1, before F_i); with 4 steps, steps 0 and 1 are warm-up and step 2
  // is measured, so its DRAM bytes are 0 like eager's.
  networks::NetworkOptions no;
  no.batch = 4;
  no.hidden = 128;
  no.layers = 2;
  auto trace = networks::make_network("mlp", no);
  auto m = test::defaults::tiny_cpu().l1("32KiB").llc("8MiB").memory(80, 25).build();
  auto eager = run(trace, schedule::Ordering::Eager, m, 4, exec::Fidelity::Line, "adam");
  auto fused = run(trace, schedule::Ordering::ForwardFused, m, 4, exec::Fidelity::Line, "adam");
  CHECK(eager.dram_bytes == 0);
  CHECK(fused.steps_measured == 1);
  CHECK(fused.dram_bytes == 0);
  // With only 3 steps the measured step is step 1, which first touches the Adam state:
  // exp_avg and exp_avg_sq of every parameter but layer 0's (U_0 of step 0 runs before the
  // step-1 boundary), each read as compulsory misses.
  auto short_run = run(trace, schedule::Ordering::ForwardFused, m, 3, exec::Fidelity::Line, "adam");
  CHECK(short_run.dram_bytes > 0);
}

TEST_CASE("the DRAM's reads per requester over the measured steps") {
  auto trace = schema_mlp();
  // No cache keeps a line (a 4-line L1, no LLC): every line read goes to one DDR4-3200
  // channel (tRCD = tCL = 22, tBL = 4 cycles of 0.625 ns).
  auto machine = test::defaults::tiny_cpu().l1("256B").llc("0").dram("ddr4-3200");
  exec::SimOptions o;
  o.warmup_steps = 0;
  {
    // One 64 B read of a closed bank: ACT, RD tRCD later, data tCL + tBL after the RD.
    schedule::Schedule s;
    s.steps = 1;
    const int x = add_tensor(s, "x", 64, 0x0);
    add_op(s, 0, workload::OpKind::Relu, {}, {{x, AccessMode::Read}}, 0);
    const auto d = exec::simulate_detailed(trace, s, machine.build(), o);
    REQUIRE(d.dram_requesters.size() == 1);
    CHECK(d.dram_requesters[0].requester == 0);
    CHECK(d.dram_requesters[0].reads == 1);
    CHECK(d.dram_requesters[0].latency == ps((22 + 22 + 4) * 625));
  }
  {
    // An op on two cores splits its 8 KiB read evenly: 64 lines each, every read at least
    // tCL + tBL (a row hit).
    schedule::Schedule s;
    s.steps = 1;
    const int x = add_tensor(s, "x", 8192, 0x0);
    add_op(s, 0, workload::OpKind::Relu, {}, {{x, AccessMode::Read}}, 0);
    const auto d = exec::simulate_detailed(trace, s, machine.cores(2).threads_per_op(2).build(), o);
    REQUIRE(d.dram_requesters.size() == 2);
    for (int q = 0; q < 2; ++q) {
      CHECK(d.dram_requesters[q].requester == q);
      CHECK(d.dram_requesters[q].reads == 64);
      CHECK(d.dram_requesters[q].latency >= 64 * ps((22 + 4) * 625));
    }
  }
  {
    // Three steps each reading the same 4 KiB (64 lines); with one warm-up step the
    // measured step is step 1 (the last is left out), so 64 reads, not the run's 192.
    schedule::Schedule s;
    s.steps = 3;
    const int x = add_tensor(s, "x", 4096, 0x0);
    for (int step = 0; step < 3; ++step) {
      add_op(s, 0, workload::OpKind::Relu, step ? std::vector<int>{step - 1} : std::vector<int>{},
             {{x, AccessMode::Read}}, 0);
      s.ops.back().step = step;
    }
    exec::SimOptions w = o;
    w.warmup_steps = 1;
    const auto d = exec::simulate_detailed(trace, s, machine.cores(1).threads_per_op(1).build(), w);
    REQUIRE(d.result.steps_measured == 1);
    REQUIRE(d.dram_requesters.size() == 1);
    CHECK(d.dram_requesters[0].reads == 64);
  }
  // Fixed-latency memory has no controller to measure.
  schedule::Schedule s;
  s.steps = 1;
  const int x = add_tensor(s, "x", 64, 0x0);
  add_op(s, 0, workload::OpKind::Relu, {}, {{x, AccessMode::Read}}, 0);
  CHECK(exec::simulate_detailed(trace, s, test::defaults::tiny_cpu().build(), o)
            .dram_requesters.empty());
}
