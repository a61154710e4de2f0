// Block fidelity (4 KiB units, for sweeps) agrees with line fidelity (every 64 B line, the
// reference) in step time and DRAM bytes on the MLP, a CNN and a transformer, on a CPU and
// a GPU machine.
#include <catch2/catch.hpp>

#include "compute/access_program.h"
#include "exec/simulate.h"
#include "networks/networks.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;

namespace {
exec::RunResult simulate(const workload::Trace& trace, const exec::Machine& m,
                         schedule::Ordering ordering, exec::Fidelity fidelity,
                         const std::string& optimizer = "adam") {
  schedule::ScheduleOptions so;
  so.ordering = ordering;
  so.optimizer = optimizer;
  so.steps = 3;
  so.gpu_streams = m.kind == compute::UnitKind::Gpu;
  so.device = so.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  exec::SimOptions o;
  o.fidelity = fidelity;
  return exec::simulate(trace, schedule::build_schedule(trace, so), m, o);
}

}  // namespace

// CI-time agreement on the bundled MLP trace (traces/mlp.json: 784-1024-1024-10 class, Adam)
// on the Xeon 8380 preset, every ordering. Measured: eager line 0.8481 ms / block 0.8505 ms
// (+0.3%), backward-fused 0.8421 / 0.8449 (+0.3%), forward-fused 0.8563 / 0.8617 (+0.6%).
// (Before block misses took line MSHRs and chunks were cut on whole units: +2.2%.)
TEST_CASE("block vs line fidelity on the bundled MLP trace, every ordering") {
  auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/mlp.json");
  auto m = exec::load_machine("xeon-8380-ddr4", {});
  for (auto ordering : {schedule::Ordering::Eager, schedule::Ordering::BackwardFused,
                        schedule::Ordering::ForwardFused}) {
    auto line = simulate(trace, m, ordering, exec::Fidelity::Line);
    auto block = simulate(trace, m, ordering, exec::Fidelity::Block);
    INFO(schedule::to_string(ordering)
         << ": line " << to_ms(line.step_time) << " ms, block " << to_ms(block.step_time) << " ms");
    CHECK(static_cast<double>(block.step_time) ==
          Approx(static_cast<double>(line.step_time)).epsilon(0.02));
  }
}

namespace {
// resnet18 and the gpt2-small structure, sized for CI: batch 1 at 32x32 (resnet18 keeps its
// 11.7M parameters), gpt2-small with 2 blocks of hidden 128 (its 50257 x 128 embedding
// dominates); plain SGD and eager so that one step is a few hundred MB of traffic.
// CPU: the Xeon 8380 cut to 4 cores (4 x 12 L1 fill buffers = 48 lines in flight: the
// streams are latency bound, where block fidelity used to be 2x too fast: one MSHR per
// 4 KiB block). GPU: the A100 preset as is.
// Measured (line / block ms, 3 steps, the first excluded): resnet18 CPU 8.1666 / 8.2577
// (+1.12%), GPU 1.3082 / 1.3083 (+0.01%); gpt2 CPU 12.9446 / 12.9772 (+0.25%), GPU
// 2.0565 / 2.0592 (+0.13%). Before a block's dirty victim was written back with the pieces
// of the miss that evicted it (sim/mem/cache/hierarchy.h) the CPU was -3.6% / -4.0%: a
// 4 KiB writeback reached the DRAM as one burst of 8 same-row writes per channel, drained
// as row hits, where line fidelity's writebacks trickle in between the reads and each
// drain costs the read stream's row (twice the activates). The pieces also take the ports
// below L1 as they issue (without that, the full 40-core preset on resnet18/Adam was
// -6.2%: the shared LLC port, one line per cycle, was booked for a block's 64 lines at
// once; now line 10.8438 / block 10.7472 ms, -0.9%; not run here, 2 minutes of line).
exec::Machine small_xeon() {
  return exec::load_machine("xeon-8380-ddr4", {{"compute.cores", "4"},
                                               {"compute.threads_per_op", "4"},
                                               {"caches.LLC.size", "6MiB"},
                                               {"caches.LLC.mshrs", "192"}});
}

void check_eager_sgd(const workload::Trace& trace, const exec::Machine& m, double step_tolerance) {
  auto line = simulate(trace, m, schedule::Ordering::Eager, exec::Fidelity::Line, "sgd");
  auto block = simulate(trace, m, schedule::Ordering::Eager, exec::Fidelity::Block, "sgd");
  INFO(trace.model << " on " << m.name << ": line " << to_ms(line.step_time) << " ms, "
                   << line.dram_bytes << " B; block " << to_ms(block.step_time) << " ms, "
                   << block.dram_bytes << " B");
  CHECK(static_cast<double>(block.step_time) ==
        Approx(static_cast<double>(line.step_time)).epsilon(step_tolerance));
  // Same bytes from DRAM: block units only round tensor edges (512 B aligned) up to 4 KiB.
  CHECK(static_cast<double>(block.dram_bytes) ==
        Approx(static_cast<double>(line.dram_bytes)).epsilon(0.005));
}

workload::Trace small_resnet18() {
  networks::NetworkOptions no;
  no.batch = 1;
  no.resolution = 32;
  return networks::make_network("resnet18", no);
}

workload::Trace small_gpt2() {
  networks::NetworkOptions no;
  no.batch = 2;
  no.seq = 32;
  no.layers = 2;
  no.hidden = 128;
  no.heads = 4;
  return networks::make_network("gpt2-small", no);
}
}  // namespace

TEST_CASE("block vs line fidelity on resnet18 (batch 1, 32x32), 4-core Xeon 8380") {
  check_eager_sgd(small_resnet18(), small_xeon(), 0.02);
}

TEST_CASE("block vs line fidelity on resnet18 (batch 1, 32x32), A100") {
  check_eager_sgd(small_resnet18(), exec::load_machine("a100-sxm4-80gb", {}), 0.02);
}

TEST_CASE("block vs line fidelity on gpt2-small (2 blocks, hidden 128, seq 32), 4-core Xeon") {
  check_eager_sgd(small_gpt2(), small_xeon(), 0.02);
}

TEST_CASE("block vs line fidelity on gpt2-small (2 blocks, hidden 128, seq 32), A100") {
  // This step is DRAM-bound in its embedding and lm_head updates (the A100's L2 has its
  // measured 30 ports). Block 1.2753 ms, line 1.2792 ms (-0.3%). It was -2.4% (line 1.3065)
  // while the shared L2 port served units in the order they were booked, not the order
  // they arrived, and -3.3% (1.3182) with ports in arrival order but one queue in front of
  // the DRAM: a burst of ~2,000 misses and writebacks then waited behind one full channel
  // (the A100's 128 B lines span two HBM channels), and small ops after a large one took
  // 2 us longer. Now refused lines wait per channel (mem/cache/timed_path.h).
  check_eager_sgd(small_gpt2(), exec::load_machine("a100-sxm4-80gb", {}), 0.02);
}
