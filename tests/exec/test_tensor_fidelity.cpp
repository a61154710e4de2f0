// Tensor fidelity (range residency, bandwidth pipes, DRAM curves: exec/tensor_side.h)
// against line fidelity (every 64 B line, the reference) on the CI-sized cases of
// test_fidelity.cpp, eager SGD, 3 steps (the first excluded), and the cases where it holds
// the 2% of issue 17.
// Measured (line / tensor, this tree): resnet18 (batch 1, 32x32) on the A100 1.3082 /
// 1.3080 ms (-0.01%), DRAM 222.3 / 225.8 MB (+1.6%); gpt2-small (2 blocks, hidden 128) on
// the 4-core Xeon 13.200 / 13.106 ms (-0.71%), DRAM 481.33 / 481.28 MB (-0.01%).
// Not yet within 2%, so not checked here (each would be one more line run in CI), with
// where the difference is (per op kind, one measured step, line / tensor):
//  - resnet18 on the 4-core Xeon 8.3683 / 8.6413 ms (+3.3%), DRAM within 0.01%: a DRAM
//    timing difference, not residency. U +6.0% (the SGD updates of the 512-channel 3x3
//    convs, 28 MB streams each: tensor 590 us for each, line 521-568 us for the same work,
//    depending on what ran before), Bw +6.2%, F +3.8%, Bx -4.4%: the curves' latency for
//    4 cores x 12 L1 MSHRs of streaming misses is up to ~12% above what the line model's
//    controller gives these streams (not yet checked why; a candidate: the request order,
//    64-line windows per range in the line model, a line per region in turn in the probe).
//  - gpt2-small on the A100 2.0566 / 2.1283 ms (+3.5%), DRAM +2.1%: the loss (cross
//    entropy over 64 x 50257 logits, 12.9 MB) 107 / 149 us, DRAM 35.9 / 48.5 MB: writing
//    log_probs after reading the logits is 25.8 MB through 20.7 MB of L1s, a re-scan past
//    an LRU's capacity that finds nothing (line's 4-way L1s keep part of it; with the set
//    model 128 us and the step +2.0%); the rest DRAM timing of streams (+2-4% per op).
//  - the bundled MLP (Adam) on the full 40-core Xeon: eager 1.1998 / 1.3022 ms (+8.5%),
//    backward-fused +8.7%, forward-fused +5.9%, no DRAM traffic (all in the LLC); L2 hit
//    rate 38.2% / 27.7%, F +39%, Bw +47%. A layer's weights come back to a core one step
//    later at a per-core reuse distance just above its 1.25 MiB L2 (the copies other
//    splits of the same bytes left there included): fully associative LRU (tensor) keeps
//    none of them (the LRU cliff of a cyclic footprint above capacity), the line model's
//    20-way sets keep those of the sets that hold fewer than 20 lines of the footprint.
//    That set model now exists (residency::Associativity::SetConflicts, set_conflicts.h:
//    expected set counts by reuse distance, within 1% of the line model's set-associative
//    caches on random tensor accesses, tests/residency/test_set_conflicts.cpp) but does
//    not close this case: with it tensor's L2 hit rate is 27.9% (eager 1.3005 ms). Line
//    with a 320-way L2 (64 sets, nearly fully associative) gives 31.9% and 1.2527 ms:
//    associativity is ~60% of the L2 gap, and in tensor the weights come back at a reuse
//    distance well past the L2, not just above it, because each other split of the same
//    bytes (Owner, range_stack.h) loads a second copy instead of finding the ~1/cores
//    that the line model finds on the same core. Next: cross-owner hits (the bytes two
//    even splits give the same core, O(cores) intervals) before the set model.
// Every ordering (SGD; the MLP Adam), step time / DRAM bytes against line, tensor as it is
// | with the set model (SimOptions::tensor_set_conflicts, dirty bytes written back as they
// are evicted), measured 2026-12-02 at load ~6 (the figures are simulated, not timed);
// GPU rows with a stack per SM set (shared_cores.h) and curves bounded by their reads:
//   resnet18 A100     eager -0.01/+1.7% | +0.04/+1.4%   backward-fused +0.01/+3.7% | +0.01/+10.7%
//                     forward-fused +0.95/+1.1% | +3.4/+0.4%
//   gpt2-small A100   eager +3.5/+2.1% | +2.0/+1.0%   bf +4.1/+2.3% | +2.7/+1.5%
//                     ff +3.0/+2.9% | +2.2/+2.3%
//   MLP A100          eager -7.4% | -2.7%   bf -8.5% | -3.3%   ff -7.4/+5.5% | -2.9/+8.4%
//                     (DRAM: line 0.05 / 2.4 / 18.1 MB per step; tensor 2.0 / 4.8 / 19.1 MB)
//   (before those two: resnet18 A100 bf +2.2/+13.1%, ff +6.9/+1.6%; gpt2-small A100 eager
//   +9.6/+2.0%, bf +16.8/+3.5%, ff +12.1/+3.3%; MLP A100 -11.4%, -12.6%, -11.2%)
//   resnet18 4-core   eager +3.0/0.0% | +3.1/0.0%   bf +3.0/+0.9% | +3.3/+1.3%   ff +3.6/+0.3% |
//                     +3.6/+0.4%
//   gpt2-small 4-core eager -0.6/0.0% | -0.6/-0.3%   bf -0.4/0.0% | -0.3/-0.3%   ff +0.0/0.0% |
//                     +0.0/-0.3%
//   MLP 40-core Xeon  eager +8.5% | +8.4%   bf +8.7% | +8.7%   ff +5.9/0.0% | +6.2/0.0% (no DRAM
//                     traffic in eager and bf)
// (The set model's CPU and MLP rows at an earlier look interval, 1/16 of the capacity.) So the set
// model is better on some cases and worse on others, and stays off by default. Before its
// dirty bytes were written back as they were evicted, it made A100 resnet18 56% slower
// than line for the same DRAM bytes: a dirty tensor kept past the L2's capacity was
// written back all at once when the next step re-read it.
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
                         exec::Fidelity fidelity, bool set_conflicts = false,
                         schedule::Ordering ordering = schedule::Ordering::Eager) {
  schedule::ScheduleOptions so;
  so.ordering = ordering;
  so.optimizer = "sgd";
  so.steps = 3;
  so.gpu_streams = m.kind == compute::UnitKind::Gpu;
  exec::SimOptions o;
  o.fidelity = fidelity;
  o.tensor_set_conflicts = set_conflicts;
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

// Forward-fused runs each layer's SGD update just before its next forward, on the SMs free
// then: kernels of 1 to 108 SMs. One stack of all 108 SMs' L1s kept for an op on a few SMs
// what their L1s cannot (shared_cores.h): +6.9% against line; with a stack per SM set,
// aged by the other sets' fills on its SMs, +0.95% (DRAM +1.1%).
TEST_CASE("tensor vs line fidelity on resnet18 (batch 1, 32x32), A100, forward-fused: 2%") {
  const auto trace = small_resnet18();
  const auto m = exec::load_machine("a100-sxm4-80gb", {});
  const auto ff = schedule::Ordering::ForwardFused;
  const exec::RunResult line = simulate(trace, m, exec::Fidelity::Line, false, ff);
  const exec::RunResult tensor = simulate(trace, m, exec::Fidelity::Tensor, false, ff);
  INFO("line " << to_ms(line.step_time) << " ms, " << line.dram_bytes << " B; tensor "
               << to_ms(tensor.step_time) << " ms, " << tensor.dram_bytes << " B");
  CHECK(static_cast<double>(tensor.step_time) ==
        Approx(static_cast<double>(line.step_time)).epsilon(0.02));
  CHECK(static_cast<double>(tensor.dram_bytes) ==
        Approx(static_cast<double>(line.dram_bytes)).epsilon(0.02));
}

// The set model's dirty bytes leave as the fills that evict them go on (range_stack.h): the
// A100's 16-way L2 keeps part of resnet18's SGD weights (46.8 MB) from step to step, and
// what it loses of them is written back while the update ops stream, as in the line model
// (+0.11% / +1.3% DRAM; written back when found gone at the next step's re-read: +56%).
TEST_CASE("tensor fidelity with set conflicts vs line on resnet18 (batch 1, 32x32), A100: 2%") {
  const auto trace = small_resnet18();
  const auto m = exec::load_machine("a100-sxm4-80gb", {});
  const exec::RunResult line = simulate(trace, m, exec::Fidelity::Line);
  const exec::RunResult sets = simulate(trace, m, exec::Fidelity::Tensor, true);
  INFO("line " << to_ms(line.step_time) << " ms, " << line.dram_bytes << " B; tensor with sets "
               << to_ms(sets.step_time) << " ms, " << sets.dram_bytes << " B");
  CHECK(static_cast<double>(sets.step_time) ==
        Approx(static_cast<double>(line.step_time)).epsilon(0.02));
  CHECK(static_cast<double>(sets.dram_bytes) ==
        Approx(static_cast<double>(line.dram_bytes)).epsilon(0.02));
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
