// Tensor fidelity (range residency, bandwidth pipes, DRAM curves: exec/tensor_side.h)
// against line fidelity (every 64 B line, the reference) on the CI-sized cases of
// test_fidelity.cpp, eager SGD, 3 steps (the first excluded), and the cases where it holds
// the 2% of issue 17.
// Measured (line / tensor, this tree): resnet18 (batch 1, 32x32) on the A100 1.3082 /
// 1.3080 ms (-0.01%), DRAM 222.3 / 225.8 MB (+1.6%); gpt2-small (2 blocks, hidden 128) on
// the 4-core Xeon 13.200 / 13.108 ms (-0.69%), DRAM 481.33 / 481.28 MB (-0.01%).
// Not yet within 2%, so not checked here (each would be one more line run in CI):
// resnet18 on the 4-core Xeon 8.368 / 8.641 ms (+3.3%: the large conv layers' DRAM
// streams, 4 cores x 12 L1 MSHRs, run ~15% slower in the pipes than in the line model;
// DRAM bytes within 0.01%); gpt2-small on the A100 2.0566 / 2.2528 ms (+9.5%, DRAM
// +2.0%). The bundled MLP on the full 40-core Xeon is +13%: its 36 MB fit in the 40 x
// 1.25 MiB of L2, where the line model's 20-way sets keep a third of a layer's weights in
// L2 from one step to the next and fully associative LRU (tensor) keeps none (the LRU
// cliff of a cyclic footprint just above capacity).
#include <catch2/catch.hpp>

#include <memory>

#include "core/error.h"
#include "exec/simulate.h"
#include "mem/residency/dram_curve.h"
#include "networks/networks.h"
#include "schedule/schedule.h"

using namespace fusim;

namespace {
exec::RunResult simulate(const workload::Trace& trace, const exec::Machine& m,
                         exec::Fidelity fidelity) {
  schedule::ScheduleOptions so;
  so.ordering = schedule::Ordering::Eager;
  so.optimizer = "sgd";
  so.steps = 3;
  so.gpu_streams = m.kind == compute::UnitKind::Gpu;
  exec::SimOptions o;
  o.fidelity = fidelity;
  // No curve cache folder: every test measures its curves (hermetic).
  o.dram_curves = std::make_shared<residency::DramCurveStore>("");
  return exec::simulate(trace, schedule::build_schedule(trace, so), m, o);
}

workload::Trace small_resnet18() {
  networks::NetworkOptions no;
  no.batch = 1;
  no.resolution = 32;
  return networks::make_network("resnet18", no);
}

// test_fidelity.cpp's 4-core Xeon 8380 (48 L1 misses in flight: latency-bound streams).
exec::Machine small_xeon() {
  return exec::load_machine("xeon-8380-ddr4", {{"compute.cores", "4"},
                                               {"compute.threads_per_op", "4"},
                                               {"caches.LLC.size", "6MiB"},
                                               {"caches.LLC.mshrs", "192"}});
}

struct Pair {
  exec::RunResult line, tensor;
};

Pair run_both(const workload::Trace& trace, const exec::Machine& m) {
  Pair p{simulate(trace, m, exec::Fidelity::Line), simulate(trace, m, exec::Fidelity::Tensor)};
  INFO(trace.model << " on " << m.name << ": line " << to_ms(p.line.step_time) << " ms, "
                   << p.line.dram_bytes << " B; tensor " << to_ms(p.tensor.step_time) << " ms, "
                   << p.tensor.dram_bytes << " B");
  return p;
}
}  // namespace

TEST_CASE("tensor vs line fidelity on resnet18 (batch 1, 32x32), A100: step and DRAM within 2%") {
  const Pair p = run_both(small_resnet18(), exec::load_machine("a100-sxm4-80gb", {}));
  CHECK(static_cast<double>(p.tensor.step_time) ==
        Approx(static_cast<double>(p.line.step_time)).epsilon(0.02));
  CHECK(static_cast<double>(p.tensor.dram_bytes) ==
        Approx(static_cast<double>(p.line.dram_bytes)).epsilon(0.02));
}

TEST_CASE("tensor vs line fidelity on gpt2-small (2 blocks, hidden 128), 4-core Xeon: 2%") {
  networks::NetworkOptions no;
  no.batch = 2;
  no.seq = 32;
  no.layers = 2;
  no.hidden = 128;
  no.heads = 4;
  const Pair p = run_both(networks::make_network("gpt2-small", no), small_xeon());
  CHECK(static_cast<double>(p.tensor.step_time) ==
        Approx(static_cast<double>(p.line.step_time)).epsilon(0.02));
  CHECK(static_cast<double>(p.tensor.dram_bytes) ==
        Approx(static_cast<double>(p.line.dram_bytes)).epsilon(0.02));
}

TEST_CASE("fidelity names: tensor is among the choices, a typo is an input error") {
  CHECK(exec::parse_fidelity_name("tensor") == exec::Fidelity::Tensor);
  CHECK(std::string(exec::to_string(exec::Fidelity::Tensor)) == "tensor");
  try {
    exec::parse_fidelity_name("tensors");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "--fidelity: expected \"line\", \"block\" or \"tensor\", got \"tensors\"");
  }
}
