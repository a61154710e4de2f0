// The blocked GEMM model: traffic between the compulsory and the no-reuse bound, exact
// re-read factors, and the tile edge the machine's caches give; the GPU wave model of the
// re-reads that reach DRAM.
#include <catch2/catch.hpp>

#include "builders/machine_builder.h"
#include "compute/access_program.h"
#include "exec/machine.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using compute::gemm_traffic;

TEST_CASE("blocked GEMM traffic worked out by hand") {
  // C[256x256] += A[256x64] B[64x256], fp32, 64x64 tiles, nothing resident:
  // |A| = |B| = 64 KiB, |C| = 256 KiB; A re-read 256/64 = 4 times, B 4 times.
  auto g = gemm_traffic(256, 256, 64, 4, 64, 0);
  CHECK(g.reads_a == 4);
  CHECK(g.reads_b == 4);
  CHECK(g.compulsory == 65536 + 65536 + 262144);
  CHECK(g.predicted == 4 * 65536 + 4 * 65536 + 262144);
  CHECK(g.no_reuse == 2LL * 256 * 256 * 64 * 4 + 262144);
  // B (64 KiB) fits in a 128 KiB resident budget: read once.
  auto r = gemm_traffic(256, 256, 64, 4, 64, 128 * 1024);
  CHECK(r.reads_a == 1);
  CHECK(r.reads_b == 1);
  CHECK(r.predicted == r.compulsory);
}

TEST_CASE("blocked GEMM traffic lies between compulsory and no-reuse bounds") {
  for (std::int64_t m : {1, 7, 64, 1000, 100352})
    for (std::int64_t n : {1, 10, 64, 513, 4096})
      for (std::int64_t k : {1, 9, 576, 4608})
        for (std::int64_t tile : {1, 8, 128, 328}) {
          auto g = gemm_traffic(m, n, k, 4, tile, 0);
          INFO(m << "x" << n << "x" << k << " tile " << tile);
          CHECK(g.compulsory <= g.predicted);
          CHECK(g.predicted <= g.no_reuse);
        }
  // A tile of 1 re-reads every operand element per MAC: the no-reuse bound exactly.
  auto worst = gemm_traffic(32, 48, 16, 4, 1, 0);
  CHECK(worst.predicted == worst.no_reuse);
}

TEST_CASE("tile edge follows the machine's private cache (CPU) or threadblock tile (GPU)") {
  auto cpu = exec::load_machine("xeon-8380-ddr4");
  // 3 * T^2 * 4 B <= 1280 KiB -> T = 330, rounded down to a multiple of 8.
  CHECK(compute::gemm_tile_edge(cpu.compute, 4) == 328);
  auto bigger = exec::load_machine("xeon-8380-ddr4", {{"caches.L2.size", "5MiB"}});
  CHECK(compute::gemm_tile_edge(bigger.compute, 4) == 656);  // sqrt(5 MiB / 12) = 661
  auto gpu = exec::load_machine("h100-sxm5");
  CHECK(compute::gemm_tile_edge(gpu.compute, 2) == 128);
  auto tiny = test::defaults::tiny_cpu().build();
  CHECK(compute::gemm_tile_edge(tiny.compute, 4) == 8);  // the minimum
}

// The GPU wave model (compute/access_program.h, gpu_gemm_wave).
TEST_CASE("GPU GEMM whose operands fit the L2 budget together: each read once") {
  // 4 x 4 tiles, |A| = |B| = 1 MiB, budget 20 MiB: 2 MiB fits.
  auto w = compute::gpu_gemm_wave(4, 4, 512, 1 << 20, 1 << 20, 108, 20 << 20, 128);
  CHECK(w.fits);
  CHECK(w.dram_a == 1 << 20);
  CHECK(w.dram_b == 1 << 20);
}

TEST_CASE("GPU GEMM wave traffic worked out by hand (gpt-22b fc1 forward, tp 8, A100)") {
  // C[8192 x 3072] = A[8192 x 6144] B[6144 x 3072], fp16, 128 x 128 tiles: mt = 64,
  // nt = 24, K = 6144; |A| = 100,663,296 B, |B| = 37,748,736 B, both panels 1,572,864 B,
  // live over a 128-element K window: 32,768 B. A100: 108 tiles in flight (one block per
  // SM), budget 40 MiB / 2 = 20,971,520 B (640 live panels: the budget does not bind).
  // Rectangles (side = swizzle group g, other side = min(tiles along it, 108 / g)),
  // traffic = |A| ceil(24 / cols) + |B| ceil(64 / rows):
  //   g=1 cols: 64 x 1 -> 24|A| + |B|    g=1 rows: 1 x 24 -> |A| + 64|B|
  //   g=2 cols: 54 x 2 -> 12|A| + 2|B|   g=2 rows: 2 x 24 -> |A| + 32|B|
  //   g=4 cols: 27 x 4 ->  6|A| + 3|B|   g=4 rows: 4 x 24 -> |A| + 16|B|
  //   g=8 cols: 13 x 8 ->  3|A| + 5|B|   g=8 rows: 8 x 13 -> 2|A| + 8|B|
  // Least: 13 x 8, 3|A| + 5|B| = 301,989,888 + 188,743,680 B (blocked: 24|A| + 64|B|,
  // 4,831,838,208 B).
  const std::int64_t a = 8192LL * 6144 * 2, b = 6144LL * 3072 * 2;
  auto w = compute::gpu_gemm_wave(64, 24, 6144, a, b, 108, 20971520, 128);
  CHECK(w.fits);
  CHECK(w.rows == 13);
  CHECK(w.cols == 8);
  CHECK(w.dram_a == 301989888);
  CHECK(w.dram_b == 188743680);
  // Two blocks per SM (216 in flight): g=8 rows gives 8 x 24 -> |A| + 8|B| (g=8 cols:
  // 27 x 8 -> 3|A| + 3|B|, more), 402,653,184 B.
  auto two = compute::gpu_gemm_wave(64, 24, 6144, a, b, 216, 20971520, 128);
  CHECK(two.rows == 8);
  CHECK(two.cols == 24);
  CHECK(two.dram_a == a);
  CHECK(two.dram_b == 8 * b);
  // A wave of 8 tiles: 8 x 1 -> 24|A| + 8|B| and 1 x 8 -> 3|A| + 64|B| (2,717,908,992 B);
  // 4 x 2 -> 12|A| + 16|B| and 2 x 4 -> 6|A| + 32|B| (1,811,939,328 B, the least; the first
  // found, g = 2 columns, is kept).
  auto small = compute::gpu_gemm_wave(64, 24, 6144, a, b, 8, 20971520, 128);
  CHECK(small.rows == 4);
  CHECK(small.cols == 2);
  CHECK(small.dram_a == 12 * a);
  CHECK(small.dram_b == 16 * b);
}

TEST_CASE("GPU GEMM wave whose live panels the budget limits (a whole-K window)") {
  // The case above with the whole K live: 13.3 panels of 1,572,864 B fit. Rectangles
  // (other side = min(tiles along it, 108 / g, (budget - g panels) / panel)):
  //   g=1 cols: 12 x 1 -> 24|A| + 6|B|    g=1 rows: 1 x 12 -> 2|A| + 64|B|
  //   g=2 cols: 11 x 2 -> 12|A| + 6|B|    g=2 rows: 2 x 11 -> 3|A| + 32|B|
  //   g=4 cols:  9 x 4 ->  6|A| + 8|B|    g=4 rows: 4 x 9  -> 3|A| + 16|B|
  //   g=8 cols:  5 x 8 ->  3|A| + 13|B|   g=8 rows: 8 x 5  -> 5|A| + 8|B|
  // Least: 5 x 8, 3|A| + 13|B| = 301,989,888 + 490,733,568 B.
  const std::int64_t a = 8192LL * 6144 * 2, b = 6144LL * 3072 * 2;
  auto w = compute::gpu_gemm_wave(64, 24, 6144, a, b, 108, 20971520, 6144);
  CHECK(w.fits);
  CHECK(w.rows == 5);
  CHECK(w.cols == 8);
  CHECK(w.dram_a == 301989888);
  CHECK(w.dram_b == 490733568);
}

TEST_CASE("GPU GEMM wave: no panel pair fits, the blocked model's per-tile re-reads") {
  // Panels of 1 MiB each, all live, budget 1.5 MiB: A read nt = 5 times, B mt = 7 times.
  auto w = compute::gpu_gemm_wave(7, 5, 64, 7 << 20, 5 << 20, 108, 3 << 19, 64);
  CHECK_FALSE(w.fits);
  CHECK(w.dram_a == 5 * (7LL << 20));
  CHECK(w.dram_b == 7 * (5LL << 20));
}

TEST_CASE("GPU GEMM wave traffic lies between the compulsory reads and the blocked model's") {
  for (std::int64_t mt : {1, 3, 16, 64, 700})
    for (std::int64_t nt : {1, 5, 24, 48})
      for (std::int64_t panel : {1 << 10, 1 << 20, 3 << 20, 64 << 20})
        for (std::int64_t wave : {1, 108, 132})
          for (std::int64_t window : {32, 128, 4096}) {
            const std::int64_t a = mt * panel, b = nt * panel;
            auto w = compute::gpu_gemm_wave(mt, nt, 4096, a, b, wave, 20 << 20, window);
            INFO(mt << " x " << nt << " tiles, panel " << panel << ", wave " << wave << ", window "
                    << window);
            CHECK(w.rows * w.cols <= std::max<std::int64_t>(wave, mt * nt));
            CHECK(a <= w.dram_a);
            CHECK(w.dram_a <= a * nt);
            CHECK(b <= w.dram_b);
            CHECK(w.dram_b <= b * mt);
          }
}

namespace {
// One bias-free linear layer, C[8192 x 3072] = x[8192 x 6144] W^T, fp16, and its loss.
workload::Trace fc1_trace() {
  return workload::parse_trace(
      nlohmann::json::parse(
          R"({"format":"fusim-trace","version":1,"model":"fc1","batch":8192,"source":"hand-written, test_gemm_traffic.cpp",
        "dtype":"float16",
        "inputs":[{"name":"input","shape":[8192,6144]},
                  {"name":"target","shape":[8192],"dtype":"int64"}],
        "layers":[
          {"id":0,"name":"fc1","op":"linear","attrs":{"bias":false},"inputs":["input"],
           "output":[8192,3072],"params":[{"name":"fc1.weight","shape":[3072,6144]}]},
          {"id":1,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[0,"target"],
           "output":[]}]})"),
      "fc1");
}

compute::AccessProgram fc1_forward(const exec::Machine& m) {
  auto trace = fc1_trace();
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.gpu_streams = m.kind == compute::UnitKind::Gpu;
  so.device = so.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  auto s = schedule::build_schedule(trace, so);
  for (const auto& op : s.ops)
    if (op.kind == schedule::OpKind::Forward && op.layer == 0)
      return compute::build_access_program(trace, s, op, m.compute);
  FAIL("no forward of fc1");
  return {};
}
}  // namespace

TEST_CASE("an A100 linear forward: the wave's DRAM re-reads, the rest from the L2") {
  auto p = fc1_forward(exec::load_machine("a100-sxm4-80gb"));
  REQUIRE(p.passes.size() == 1);
  std::vector<compute::StreamRange> reads;
  for (const auto& r : p.passes[0].ranges)
    if (!r.write) reads.push_back(r);
  REQUIRE(reads.size() == 2);
  // x: re-read per tile column (24), 3|A| from DRAM (the hand-worked case above); W: per
  // tile row (64), 5|B| from DRAM.
  CHECK(reads[0].bytes == 100663296);
  CHECK(reads[0].repeats == 24);
  CHECK(reads[0].memory_rereads == 2 * 100663296LL);
  CHECK(reads[1].bytes == 37748736);
  CHECK(reads[1].repeats == 64);
  CHECK(reads[1].memory_rereads == 4 * 37748736LL);
}

TEST_CASE("CPU GEMMs keep the blocked model (re-reads served by the level holding them)") {
  auto p = fc1_forward(exec::load_machine("xeon-8380-ddr4"));
  for (const auto& r : p.passes.at(0).ranges) CHECK(r.memory_rereads == -1);
}
