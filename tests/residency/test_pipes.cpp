// The tensor fidelity's bandwidth pipes on cases worked out by hand: one resource binds
// at a time (ports, MSHRs by Little's law, memory bandwidth), and flows that share a
// resource split it evenly.
#include <catch2/catch.hpp>

#include "mem/residency/pipes.h"
#include "mem/residency/tensor_memory.h"

using namespace fusim;
using namespace fusim::residency;

namespace {
// L1 private (1 ns per unit, 4 MSHRs, hit after 2 ns), LLC shared (0.5 ns per unit,
// 1000 MSHRs, hit after 2 + 8 ns); the miss path is 10 ns.
PipeConfig two_levels() {
  PipeConfig c;
  c.levels = {{false, 1000, 4, 2000}, {true, 500, 1000, 10000}};
  c.miss_path_latency = 10000;
  c.unit_bytes = 64;
  return c;
}

struct Run {
  EventQueue queue;
  FixedMemoryCurve memory;
  Pipes pipes;
  Run(Tick latency, double bandwidth, PipeConfig c = two_levels())
      : memory(latency, bandwidth), pipes(queue, c, memory) {}
};
// 8 cores read 64 KiB from memory, a line per unit through L1 and LLC.
FlowWork eight_cores_reading_64kib() {
  FlowWork w;
  w.cores = 8;
  w.units = 1024;
  w.lookups[0] = 1024;
  w.lookups[1] = 1024;
  w.memory_reads = 1024;
  w.memory_read_bytes = 65536;
  w.deepest = 2;
  return w;
}
// One core reads 400 lines that miss L1 and the LLC.
FlowWork one_core_missing_400() {
  FlowWork w;
  w.cores = 1;
  w.units = 400;
  w.lookups[0] = 400;
  w.lookups[1] = 400;
  w.memory_reads = 400;
  w.memory_read_bytes = 400 * 64;
  w.deepest = 2;
  return w;
}
}  // namespace

TEST_CASE("a flow that hits L1 takes its units' port time plus the L1 latency") {
  Run r(0, 0);
  FlowWork w;
  w.cores = 4;
  w.units = 400;
  w.lookups[0] = 400;  // 100 units per core at 1 ns each
  Tick done = -1;
  r.pipes.start(w, [&](Tick t) { done = t; });
  r.queue.run();
  CHECK(done == 100'000 + 2'000);
}

TEST_CASE("two flows on the same cores split the port evenly") {
  Run r(0, 0);
  FlowWork w;
  w.cores = 1;
  w.units = 100;
  w.lookups[0] = 100;
  Tick a = -1, b = -1;
  r.pipes.start(w, [&](Tick t) { a = t; });
  r.pipes.start(w, [&](Tick t) { b = t; });
  r.queue.run();
  // 200 units through one 1 ns port: both finish their work at 200 ns.
  CHECK(a == 200'000 + 2'000);
  CHECK(b == 200'000 + 2'000);
}

TEST_CASE("a shared port serves flows of different cores together") {
  Run r(0, 0);
  FlowWork w;
  w.cores = 1;
  w.units = 1000;
  w.lookups[0] = 1000;
  w.lookups[1] = 1000;  // every unit also goes to the LLC (0.5 ns per unit there)
  w.deepest = 1;
  Tick a = -1, b = -1;
  w.group = 0;
  r.pipes.start(w, [&](Tick t) { a = t; });
  w.group = 1;
  r.pipes.start(w, [&](Tick t) { b = t; });
  r.queue.run();
  // Each core's own L1 port needs 1000 ns; the shared LLC port 2 x 1000 x 0.5 = 1000 ns:
  // both are full at 1 unit/ns per flow, so each ends at 1000 ns, + the LLC hit latency.
  CHECK(a == 1'000'000 + 10'000);
  CHECK(b == 1'000'000 + 10'000);
}

TEST_CASE("misses are bound by MSHRs x line / latency (Little's law)") {
  // One core, 4 MSHRs, 400 misses, each held 10 ns (path) + 40 ns (memory): 100 batches
  // of 4 misses, 50 ns each = 5000 ns (the port would take only 400 ns).
  Run r(40'000, 0);
  const FlowWork w = one_core_missing_400();
  Tick done = -1;
  r.pipes.start(w, [&](Tick t) { done = t; });
  r.queue.run();
  CHECK(done == 5'000'000);
}

TEST_CASE("memory bandwidth binds when cores have MSHRs to spare") {
  // 8 cores x 4 MSHRs at 50 ns could move 8 x 4 x 64 B / 50 ns = 41 GB/s; memory gives
  // 6.4 GB/s: 64 KiB take 10240 ns, then the last miss's path and latency (50 ns).
  Run r(40'000, 6.4e9);
  FlowWork w = eight_cores_reading_64kib();
  Tick done = -1;
  r.pipes.start(w, [&](Tick t) { done = t; });
  r.queue.run();
  CHECK(done == 10'240'000 + 50'000);
}

TEST_CASE("a flow that starts later takes its share from then on") {
  Run r(0, 0);
  FlowWork w;
  w.cores = 1;
  w.units = 100;
  w.lookups[0] = 100;
  Tick a = -1, b = -1;
  r.pipes.start(w, [&](Tick t) { a = t; });
  // At 50 ns the first has 50 units left; from then on both get 0.5 unit/ns: the first
  // ends at 150 ns, the second has 50 left and ends at 200 ns alone.
  r.queue.schedule(50'000, Priority::Compute, [&] { r.pipes.start(w, [&](Tick t) { b = t; }); });
  r.queue.run();
  CHECK(a == 150'000 + 2'000);
  CHECK(b == 200'000 + 2'000);
}

TEST_CASE("a flow's posted victims move at its pace when it uses memory anyway") {
  // 8 cores read 64 KiB from memory (6.4 GB/s) and post as many bytes of dirty victims
  // (fills from the LLC evicting dirty lines). Both go through memory's one FIFO, so the
  // flow moves 128 KiB at 6.4 GB/s: 20480 ns, then the last miss's path and latency. (Posted
  // bytes reserved ahead of the flows at its unthrottled rate, 128 GB/s through the LLC
  // port, blocked memory and let the flow's reads through at no cost: 1.6 us.)
  Run r(40'000, 6.4e9);
  FlowWork w = eight_cores_reading_64kib();
  w.posted_bytes = 65536;
  Tick done = -1;
  r.pipes.start(w, [&](Tick t) { done = t; });
  r.queue.run();
  CHECK(done == 20'480'000 + 50'000);
}

namespace {
// Memory whose read latency rises with the load: 40 ns idle, 140 ns at its 6.4 GB/s.
class RisingMemory final : public MemoryCurve {
 public:
  double peak_bandwidth(int, double, double) override { return 6.4e9; }
  Tick read_latency(int, double, double, double bandwidth) override {
    return 40'000 + static_cast<Tick>(100'000 * bandwidth / 6.4e9 + 0.5);
  }
};
}  // namespace

TEST_CASE("a flow's last miss waits the latency of the others' load, not of its own queue") {
  // Alone, 8 cores read 64 KiB at memory's 6.4 GB/s (their 32 MSHRs could move 13.7 GB/s at
  // the loaded 150 ns): 10240 ns of work, then the path (10 ns) and the idle latency
  // (40 ns): its own queue is what held it to 6.4 GB/s. (At the whole load's 140 ns it paid
  // that queue twice: 10390 ns.)
  {
    EventQueue queue;
    RisingMemory memory;
    Pipes pipes(queue, two_levels(), memory);
    Tick done = -1;
    pipes.start(eight_cores_reading_64kib(), [&](Tick t) { done = t; });
    queue.run();
    CHECK(done == 10'240'000 + 10'000 + 40'000);
  }
  // Two such flows on other cores share the 6.4 GB/s: both end their work at 20480 ns, and
  // each last miss waits behind the other's 3.2 GB/s: 40 + 50 ns.
  {
    EventQueue queue;
    RisingMemory memory;
    Pipes pipes(queue, two_levels(), memory);
    FlowWork w = eight_cores_reading_64kib();
    Tick a = -1, b = -1;
    pipes.start(w, [&](Tick t) { a = t; });
    w.group = 1;
    pipes.start(w, [&](Tick t) { b = t; });
    queue.run();
    CHECK(a == 20'480'000 + 10'000 + 90'000);
    CHECK(b == 20'480'000 + 10'000 + 90'000);
  }
}

// A chunk's ranges advance at equal rates (tensor_memory.h), so memory sees the ranges
// still reading, averaged over the bytes read.
TEST_CASE("a chunk's memory streams are the ranges still reading averaged over the bytes read") {
  CHECK(streaming_regions({}) == 0);
  CHECK(streaming_regions({0, 0}) == 0);
  CHECK(streaming_regions({4096}) == 1);
  CHECK(streaming_regions({4096, 0, 4096, 4096}) == Approx(3));
  // {1, 2}: 2 bytes read while both stream, 1 while the longer one is alone: (2x2 + 1) / 3.
  CHECK(streaming_regions({2, 1}) == Approx(5.0 / 3.0));
  // resnet18's 512-channel 3x3 conv at 1x1 pixels: a 943 KB weight slice beside a 192 B
  // input slice and a 192 B output slice (read for ownership) is one stream, not three.
  CHECK(streaming_regions({192, 943680, 192}) == Approx(1).epsilon(0.002));
}

TEST_CASE("a flow started while its cores' MSHRs are held waits for them like any later miss") {
  // One core, 4 MSHRs, misses held 50 ns: two chunks of 400 misses take 800 / 4 x 50 ns =
  // 10000 ns however they overlap, as the line model's core issues into each MSHR as it
  // frees. Each chunk's first batch in its tail would give 9950 ns: a latency per chunk.
  const FlowWork w = one_core_missing_400();
  SECTION("started together (double buffered)") {
    Run r(40'000, 0);
    Tick a = -1, b = -1;
    r.pipes.start(w, [&](Tick t) { a = t; });
    r.pipes.start(w, [&](Tick t) { b = t; });
    r.queue.run();
    CHECK(a == 10'000'000);
    CHECK(b == 10'000'000);
  }
  SECTION("the second started halfway through the first's tail") {
    // The first alone: 396 queued misses, work done at 4950 ns, its last batch answered
    // by 5000 ns. At 4975 ns half that batch is back: the second's first 2 misses go at
    // once, its other 398 queue: 4975 + 398 / 4 x 50 + 50 = 10000 ns.
    Run r(40'000, 0);
    Tick a = -1, b = -1;
    r.pipes.start(w, [&](Tick t) { a = t; });
    r.queue.schedule(4'975'000, Priority::Compute,
                     [&] { r.pipes.start(w, [&](Tick t) { b = t; }); });
    r.queue.run();
    CHECK(a == 5'000'000);
    CHECK(b == 10'000'000);
  }
  SECTION("started after the first's last miss is answered: a whole first batch at once") {
    Run r(40'000, 0);
    Tick b = -1;
    r.pipes.start(w, [](Tick) {});
    r.queue.schedule(6'000'000, Priority::Compute,
                     [&] { r.pipes.start(w, [&](Tick t) { b = t; }); });
    r.queue.run();
    CHECK(b == 11'000'000);
  }
  SECTION("flows of other cores do not hold this core's MSHRs") {
    Run r(40'000, 0);
    FlowWork other = w;
    other.group = 1;
    Tick a = -1, b = -1;
    r.pipes.start(w, [&](Tick t) { a = t; });
    r.pipes.start(other, [&](Tick t) { b = t; });
    r.queue.run();
    CHECK(a == 5'000'000);
    CHECK(b == 5'000'000);
  }
}

TEST_CASE(
    "a chunk's aligned share: reads of equal slices at the same offset from a 2 MiB boundary") {
  const Addr mib = Addr{1} << 20;
  // Two 512 KiB slices of tensors at 2 MiB boundaries, chunk 3 of each: aligned.
  std::vector<TensorRange> r{{6 * mib + 3 * mib / 2, mib / 2, false},
                             {40 * mib + 3 * mib / 2, mib / 2, true}};
  CHECK(aligned_share(r, {512.0 * 1024, 512.0 * 1024}) == 1.0);
  // One of them a page further: another bank run, as random bases are.
  r[1].addr += 4096;
  CHECK(aligned_share(r, {512.0 * 1024, 512.0 * 1024}) == 0.0);
  r[1].addr -= 4096;
  // Slices of other sizes drift apart (an 80 MB weight's beside a 128 MB input's).
  r[1].bytes = 320 * 1024;
  CHECK(aligned_share(r, {512.0 * 1024, 320.0 * 1024}) == 0.0);
  r[1].bytes = mib / 2;
  // A third range elsewhere: the aligned pair's share of the bytes read from memory.
  r.push_back({100 * mib + 12345 * 64, mib / 2, false});
  CHECK(aligned_share(r, {300.0, 100.0, 200.0}) == Approx(400.0 / 600.0));
  // A range found in cache (no memory reads) aligns with nothing.
  CHECK(aligned_share(r, {300.0, 0.0, 200.0}) == 0.0);
  CHECK(aligned_share({}, {}) == 0.0);
}
