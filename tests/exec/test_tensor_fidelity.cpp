// Tensor fidelity (range residency, bandwidth pipes, DRAM curves: exec/tensor_side.h)
// against line fidelity (every 64 B line, the reference) on the CI-sized cases of
// test_fidelity.cpp, eager SGD, 3 steps (the first excluded), and the cases where it holds
// the 2% of issue 17.
// Every ordering, step time / DRAM bytes, tensor against line, 3 steps, SGD (the MLP Adam),
// measured 2026-12-04 after a chunk's DRAM streams became its ranges still reading averaged
// over the bytes read (tensor_memory.h: streaming_regions) and the curves' dirty victims a
// stream per core, paced by that core's misses (dram_probe.cpp) (commands: `fusim simulate
// --ordering all --steps 3 --fidelity line|tensor --json` on `trace gen resnet18 --batch 1
// --resolution 32`, gpt2-small --batch 2 --seq 32 --layers 2 --hidden 128 --heads 4,
// traces/mlp.json; the 4-core Xeon is `--machine xeon-8380-ddr4 --set compute.cores=4
// --set compute.threads_per_op=4 --set caches.LLC.size=6MiB --set caches.LLC.mshrs=192`):
//   resnet18 A100      eager +0.19/+1.7%   backward-fused 0.00/+8.9%   forward-fused 0.00/+1.1%
//   gpt2-small A100    eager +0.17/+2.1%   bf -2.19/-2.3%              ff -0.88/+2.9%
//   MLP (Adam) A100    0.00% in every ordering (dispatch-bound: 0.33 ms); DRAM 0-18 MB
//   resnet18 4-core    eager -0.12/0.0%    bf -1.34/+0.8%              ff -0.58/+0.3%
//   gpt2-small 4-core  eager -0.59/0.0%    bf -0.96/0.0%               ff -0.23/0.0%
//   MLP 40-core Xeon   eager +0.12%        bf +0.12%                   ff +0.09%, DRAM equal
// Before those two changes (2026-12-03): resnet18 4-core +3.16 / +2.54 / +3.26% (each
// 512-channel conv's weight read on the 3-region curve, 192 B input and output slices
// beside it counting as streams: +14% on those convs), gpt2-small A100 -0.65 / -1.94 /
// -2.20%, resnet50 batch 32 on the H100 (Adam, default 4 steps) 19.02 / 19.28 ms eager /
// backward-fused against block fidelity's 17.99 / 18.14 (+5.7 / +6.3%); now 17.52 / 17.79
// (-2.6 / -1.9%; block measured again on this tree: 17.99 / 18.14 ms, 20 minutes:
// `fusim simulate --trace resnet50 --batch 32 --machine h100-sxm5 --optimizer adam
// --ordering eager,backward-fused --fidelity block|tensor`).
// With the first change alone resnet18 4-core was -3.53 / -3.94 / -4.43% (the backward
// convs, 40% of their bytes dirty victims, read 8-18% faster than in line: the victims were
// one sequential stream) and resnet50 on the H100 18.63 / 18.91 ms. The other rows moved by
// under 0.5 point. Not in the table, resnet18 on the whole 40-core Xeon (60 MiB LLC):
// +10.23 / -7.89 / +4.23% before, now -1.33 / -7.89 / -5.75% (DRAM +15.9 / -100 / +0.3%:
// there the residency differs, tensor keeping backward-fused's step in the LLC). And
// resnet50 batch 32 on it (Adam, eager, `--steps 1`): block 407.2 ms, tensor 427.4 before
// (+5.0%), 427.7 with the first change alone, 384.6 now (-5.6%): as `active` streams the
// victims spread over bank groups (a lone sequential write stream is held to tCCD_L: the
// DDR4 write-only curve peaked at 126 GB/s of 205, now 194), which line's 40 cores' victims
// may not do as fully; not settled. Since a plateau ends a curve only with the controller
// full (dram_probe.cpp: the 1-region write-only curve had stopped at 4 cores' 97 GB/s,
// where 8 cores move 193; the 1-region half-write curve now also reaches 40 cores, peak 145
// -> 149 GB/s), 384.0 ms (-5.7%; `fusim simulate --trace resnet50 --batch 32 --machine
// xeon-8380-ddr4 --optimizer adam --ordering eager --steps 1 --fidelity tensor`, DRAM
// 35.99 GB both): those curves decide little of its time. The table above is unchanged by
// that rule to the last bit (re-measured 2026-12-04: the 4-core curves end at 4 cores, and
// the A100's each at a doubling that gained under 2% with its controller full, as before),
// and so is resnet50 batch 32 on the H100 (17.559 ms, eager, Adam, 1 step). The first
// change alone also took gpt2-small on the 4-core Xeon to -2.75 / -2.95 / -2.25%: the
// over-counted regions had hidden the victims' error there too.
// Before the DRAM curves' loads became ops on that many cores (2026-12-03), gpt2-small
// A100 was +6.20 / +3.29 / +5.01% (the HBM's curves capped at 59% of its bus, each chunk's
// tail at the loaded latency) and resnet50 batch 32 on the H100 26.30 / 24.95 ms.
// (Before the ports, the single L2/LLC port bound every stream in both fidelities and hid
// their differences in it: gpt2-small A100 eager was +3.5%, the 40-core MLP +8.5%.)
// Not yet within 2%, so not checked: resnet18 A100 backward-fused DRAM (+8.9%: mostly the
// L2's 16 ways. Line fidelity with `--set caches.L2.assoc=256`, near the fully associative
// LRU the stacks are, moves 126.25 MB a step against 118.41, and tensor's 128.94 is +2.1%
// of that; eager +1.7% -> +0.4%. Per op, step 3: layer4.0.conv2's Bx, re-reading its 9.4 MB
// weight once fc's and layer4.1's new gradients have pushed it down the 40 MiB L2, moves
// 5.3 MB with 16 ways, 13.0 with 256 and 18.9 in tensor (LRU's scan past the capacity: a
// set cache keeps the lines of its less loaded sets). The rest is in which op DRAM bytes
// fall: fc's Bw 8.5 MB in tensor (line 0.5), layer4.1.conv2's update 14.2 (line 25.0 /
// 25.5), dirty victims leaving earlier; not settled. The set-conflict model, meant for the
// 16 ways, moved it the wrong way: +10.7%) and
// gpt2-small A100 (backward-fused -2.2%, DRAM +2.1 / -2.3 / +2.9%: the loss's re-scan past
// an LRU L1, cross entropy over 64 x 50257 logits: line's 4-way L1s keep part of it; per
// op kind, eager, the linear layers' updates are +31%, the loss +31%, the forward
// embedding +23% and the token embedding's weight gradient -83%: the step agrees by
// cancellation).
// The set-conflict model (SimOptions::tensor_set_conflicts, set_conflicts.h) stays off: it
// fixed gpt2 and the A100 MLP by 2-3% before the ports, and made resnet18 A100
// backward-fused DRAM +10.7%.
#include <catch2/catch.hpp>

#include <memory>

#include "core/error.h"
#include "exec/simulate.h"
#include "mem/residency/dram_curve.h"
#include "networks/networks.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;

namespace {
exec::RunResult simulate(const workload::Trace& trace, const exec::Machine& m,
                         exec::Fidelity fidelity, bool set_conflicts = false,
                         schedule::Ordering ordering = schedule::Ordering::Eager,
                         const std::string& optimizer = "sgd") {
  schedule::ScheduleOptions so;
  so.ordering = ordering;
  so.optimizer = optimizer;
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

// 4 cores x 12 L1 MSHRs of streaming misses: latency-bound, so each op's time is its DRAM
// read latency at the load. It was +3.2 / +2.5 / +3.3% (eager / backward-fused /
// forward-fused), DRAM equal: a range reading a few lines beside a megabyte counted as a
// stream of its own (the 512-channel convs' weights read on the curves of 3-4 regions), and
// the curves' dirty victims were one sequential stream where an LRU LLC evicts what an op
// on as many cores wrote, a stream per core (tensor_memory.h, dram_curve.h).
TEST_CASE(
    "tensor vs line fidelity on resnet18 (batch 1, 32x32), 4-core Xeon in every ordering: 2%") {
  const auto trace = small_resnet18();
  const auto m = small_xeon();
  for (const auto ordering : {schedule::Ordering::Eager, schedule::Ordering::BackwardFused,
                              schedule::Ordering::ForwardFused}) {
    const exec::RunResult line = simulate(trace, m, exec::Fidelity::Line, false, ordering);
    const exec::RunResult tensor = simulate(trace, m, exec::Fidelity::Tensor, false, ordering);
    INFO(schedule::to_string(ordering)
         << ": line " << to_ms(line.step_time) << " ms, " << line.dram_bytes << " B; tensor "
         << to_ms(tensor.step_time) << " ms, " << tensor.dram_bytes << " B");
    CHECK(static_cast<double>(tensor.step_time) ==
          Approx(static_cast<double>(line.step_time)).epsilon(0.02));
    CHECK(static_cast<double>(tensor.dram_bytes) ==
          Approx(static_cast<double>(line.dram_bytes)).epsilon(0.02));
  }
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

// The bundled MLP (Adam) on the whole 40-core Xeon 8380: everything stays in the LLC, so
// this is the caches' agreement alone. It was +8.5% (eager) while the LLC had one port (147
// GB/s for 40 cores: every L2 miss queued there); with its 40 slices, line 0.7485 / tensor
// 0.7494 ms eager, 0.7486 / 0.7495 backward-fused (+0.12%), no DRAM traffic.
TEST_CASE("tensor vs line fidelity on the bundled MLP (Adam), 40-core Xeon 8380: 2%") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/mlp.json");
  const auto m = exec::load_machine("xeon-8380-ddr4", {});
  for (const auto ordering : {schedule::Ordering::Eager, schedule::Ordering::BackwardFused}) {
    const exec::RunResult line = simulate(trace, m, exec::Fidelity::Line, false, ordering, "adam");
    const exec::RunResult tensor =
        simulate(trace, m, exec::Fidelity::Tensor, false, ordering, "adam");
    INFO(schedule::to_string(ordering)
         << ": line " << to_ms(line.step_time) << " ms, " << line.dram_bytes << " B; tensor "
         << to_ms(tensor.step_time) << " ms, " << tensor.dram_bytes << " B");
    CHECK(static_cast<double>(tensor.step_time) ==
          Approx(static_cast<double>(line.step_time)).epsilon(0.02));
    // Both keep the step in the LLC: a few KiB of DRAM at most, never megabytes.
    CHECK(tensor.dram_bytes <= line.dram_bytes + (1 << 20));
  }
}
