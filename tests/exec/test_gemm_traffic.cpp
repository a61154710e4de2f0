// The blocked GEMM model: traffic between the compulsory and the no-reuse bound, exact
// re-read factors, and the tile edge the machine's caches give.
#include <catch2/catch.hpp>

#include "builders/machine_builder.h"
#include "compute/access_program.h"
#include "exec/machine.h"

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
