#pragma once
// The per-op cost model: what one schedule op asks of the machine. Compute demand comes
// from the op's FLOPs (computed from the trace's shapes by the schedule layer); memory
// demand is an *access program*: per memory pass, the address ranges the kernel streams
// through together. The executor issues each pass in chunks through the cache hierarchy,
// so which of these bytes reach DRAM is decided by the simulated caches, not here.
//
// Streaming ops (elementwise, norms, pools, optimizer updates, the loss): each tensor of a
// pass is read and/or written once per pass (the schedule's passes say how many passes a
// loop / foreach / fused optimizer makes).
//
// GEMM-like ops (linear, conv2d: F, Bx, Bw) use a blocked model. Every GEMM of the op is
// C[m x n] += A[m x k] B[k x n] (conv2d as implicit GEMM: m = N*Ho*Wo, n = Cout/groups,
// k = Cin/groups*kh*kw per group, A read from the input tensor itself). A unit (core/SM)
// computes a T x T tile of C and streams the A row panel and B column panel through its
// blocking cache (the largest private level: L2 on CPUs as oneDNN blocks, the L1/shared
// memory on GPUs), so A is re-read once per column of tiles (ceil(n/T) times) and B once
// per row of tiles (ceil(m/T) times) (Goto & van de Geijn, "Anatomy of high-performance
// matrix multiplication", ACM TOMS 2008). An operand that fits in half the blocking cache
// stays resident and is read once. T: on CPUs the largest multiple of 8 with
// 3*T*T*elem <= blocking bytes (C tile and one T x T slab of A and B); on GPUs the
// machine's threadblock tile (128). The re-reads are issued as extra streams over the
// operand's addresses: when the operand fits in the shared LLC/L2 they hit there, else they
// go to DRAM; the traffic therefore lies between the compulsory bound |A|+|B|+|C| and the
// no-reuse bound 2*m*n*k*elem + |C| (tested).
//
// GPU GEMMs: those re-reads are the threadblocks' reads through their L1/shared memory;
// which of them reach DRAM is decided by the wave (gpu_gemm_wave below), not by the
// operand's size alone: the SMs run a wave of tiles at once (SMs x blocks per SM), in the
// rasterized order of CUTLASS's threadblock swizzle (GemmIdentityThreadblockSwizzle<N>:
// consecutive blocks walk down a group of N = 1, 2, 4 or 8 tile columns, or rows), so the
// A row panels and B column panels of the tiles in flight are read from DRAM once and
// shared through the L2 (NVIDIA, "Matrix Multiplication Background User's Guide", Sec. 2.1
// and 3.2, waves of tiles). The rest of the re-reads hit the L2.
#include <cstdint>
#include <vector>

#include "compute/compute_config.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::compute {

struct StreamRange {
  std::uint64_t addr = 0;
  std::int64_t bytes = 0;
  bool write = false;
  std::int64_t repeats = 1;  // the range is streamed this many times (GEMM re-reads)
  // Of the repeats - 1 re-reads, the bytes that miss the last cache level (GPU GEMMs: the
  // wave model); the rest hit it. -1: all of them are served by the level that holds the
  // whole operand (exec/gemm_rereads.h, level_for).
  std::int64_t memory_rereads = -1;
  std::int64_t streamed_bytes() const { return bytes * repeats; }
};

struct ProgramPass {
  std::vector<StreamRange> ranges;  // streamed together, interleaved in chunks
  std::int64_t flops = 0;
  int max_threads = 0;  // CPU: the most of the op's cores the pass keeps busy (0: all)
  Tick compute = -1;    // compute time of the pass when set (calibrated or profiled), else
                        // flops at the op class's rate
  std::int64_t streamed_bytes() const;
};

struct AccessProgram {
  OpClass op_class = OpClass::Elementwise;
  workload::DType dtype = workload::DType::Float32;
  int kernels = 1;               // launches/dispatches (0: a view, nothing runs)
  std::int64_t grid_blocks = 1;  // GPU: threadblocks of its largest kernel (SMs it can use)
  // CPU: host time before the op's work when set (op_cost_model.h), else kernels x the
  // machine's dispatch overhead.
  Tick serial = -1;
  std::vector<ProgramPass> passes;
  std::int64_t flops() const;
  std::int64_t streamed_bytes() const;
};

// The implicit-GEMM view of a linear or conv2d layer, per group (conv2d: m = N*Ho*Wo,
// n = Cout/groups, k = Cin/groups*kh*kw; linear: rows, out features, in features).
struct GemmDims {
  std::int64_t rows_out = 0;  // N*Ho*Wo (conv) or numel(y)/out (linear)
  std::int64_t rows_in = 0;   // N*H*W (conv) or the same rows (linear)
  std::int64_t cin_g = 0;     // input channels per group (linear: in features)
  std::int64_t cout_g = 0;    // output channels per group (linear: out features)
  std::int64_t kc = 0;        // reduction of the forward GEMM: cin_g * kh * kw
  std::int64_t groups = 1;
};
GemmDims gemm_dims(const workload::Trace& trace, const workload::Layer& layer);

// Tile edge of the blocked GEMM model for this machine and element size.
std::int64_t gemm_tile_edge(const ComputeConfig& compute, int elem_bytes);

// Traffic of one blocked GEMM C[m x n] += A[m x k] B[k x n] at the blocking level.
struct GemmTraffic {
  std::int64_t compulsory = 0;  // |A| + |B| + |C|
  std::int64_t predicted = 0;   // reads_a*|A| + reads_b*|B| + |C|
  std::int64_t no_reuse = 0;    // 2*m*n*k*elem + |C|: every operand element per MAC
  std::int64_t reads_a = 1, reads_b = 1;
};
GemmTraffic gemm_traffic(std::int64_t m, std::int64_t n, std::int64_t k, int elem_bytes,
                         std::int64_t tile, std::int64_t resident_bytes);

// DRAM reads of a GPU GEMM's operands under the wave model (see the top): C's mt x nt tiles
// run `tiles_in_flight` at a time; A (the operand re-read per tile column, `a_bytes`, mt row
// panels) and B (re-read per tile row, `b_bytes`, nt column panels). When A and B fit in
// `l2_budget` together, each is read once (they stay for every wave). Else the tiles in
// flight share their panels within a wave: a rectangle of rows x cols tiles (rows x cols <=
// tiles in flight, one side a swizzle width 1, 2, 4 or 8) reads each of its A and B panels
// once, so A is read once per rectangle column (ceil(nt / cols) times) and B once per
// rectangle row (ceil(mt / rows) times); of those rectangles, the one with the least
// traffic whose live panels fit the budget. Live: the blocks of a wave start together and
// run the same K loop, so the L2 must hold their panels over a window of `k_window` of the
// K elements (the slabs a block's pipeline has in flight), not the whole panels; a later
// wave starts again at k = 0, so nothing carries over between waves. When not even one A
// and one B panel fit, there is no L2 reuse (rows = cols = 1: A read nt times, B mt times,
// the per-tile re-reads of the blocked model): fits = false.
struct GemmWave {
  std::int64_t rows = 1, cols = 1;
  std::int64_t dram_a = 0, dram_b = 0;  // bytes read from DRAM, the first reads included
  bool fits = false;
};
GemmWave gpu_gemm_wave(std::int64_t mt, std::int64_t nt, std::int64_t k, std::int64_t a_bytes,
                       std::int64_t b_bytes, std::int64_t tiles_in_flight, std::int64_t l2_budget,
                       std::int64_t k_window);

// Gives the program a compute time of its own: `compute` spread over its passes in
// proportion to their FLOPs (their streamed bytes when no pass has FLOPs, evenly when none
// streams anything), each pass's share rounded so that the shares sum to `compute`.
void set_compute_time(AccessProgram& program, Tick compute);

AccessProgram build_access_program(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const schedule::Op& op, const ComputeConfig& compute);

}  // namespace fusim::compute
