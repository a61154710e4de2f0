#pragma once
// The compute side of a machine model: CPU cores or GPU SMs, their peak FLOP rates per
// dtype, per-op-class efficiency and dispatch/launch costs. Misses in flight (MSHRs) belong
// to the cache levels ("caches" section), not here.
// Read strictly from the machine JSON's "compute" section (models/machines/SCHEMA.md).
#include <array>
#include <cstdint>

#include "compute/model_context.h"
#include "compute/op_cost_model.h"
#include "core/json_view.h"
#include "core/time.h"
#include "workload/trace.h"

namespace fusim::compute {

enum class UnitKind { Cpu, Gpu };

// Classes of work that reach different fractions of peak (cuDNN/oneDNN GEMM vs a
// bandwidth-bound elementwise kernel); each gets its own efficiency in the machine file.
enum class OpClass { Gemm, Conv, Elementwise, Norm, Reduction, Pool, Attention, Count };
constexpr std::size_t kOpClasses = static_cast<std::size_t>(OpClass::Count);
std::string_view to_string(OpClass op_class);
OpClass classify(workload::OpKind layer_op);

// How an op's memory time meets its compute on a CPU (the machine's "memory_overlap", a name
// for every op class or an object of them; the engine is exec/simulator.cpp's advance()):
//  - DoubleBuffered ("double-buffered", the default): chunk j's data loads while chunk j-1
//    computes, so the slower of the two sets the pace.
//  - Serial ("serial"): a chunk loads only after the previous chunk's compute, so memory
//    time adds to compute, as the ECM model has it for x86 cores (Hofmann, Hager, Wellein
//    and Fey, "An analysis of core- and chip-level architectural features in four
//    generations of Intel server processors", ISC 2017: transfers through the cache
//    hierarchy do not overlap the core's work on the same data). Measured on a 2-core EPYC
//    VM: an 8 x 1024 x 1024 forward took 388 us with W cached, 540 us evicted (+152 us =
//    4 MiB at 26 GB/s, whole).
//  - SerialReads ("serial-reads"): serial for what the op reads, while its stores are
//    posted: a chunk's write misses (read-for-ownership fills, write-backs) go on while
//    later chunks load and compute, two chunks' worth at most, and the op ends when they are
//    all in. Stores retire into the store buffer and the fill buffers fetch their lines
//    behind the core's work; loads stall it. Measured on the same VM, one thread (README,
//    one-thread MLP): a batch-1 Linear weight gradient (a 4 MiB rank-1 product) took the
//    same 0.70 ms per layer whether or not its output buffer was cached, while the forward
//    reading the same 4 MiB W ran 19-22% faster with W cached.
enum class MemoryOverlap { DoubleBuffered, Serial, SerialReads };

// Peak FLOP per cycle per unit (core or SM) for the floating dtypes the traces use.
struct FlopRates {
  double float32 = 0, float16 = 0, bfloat16 = 0;
  double of(workload::DType dtype) const;
};

struct ComputeConfig {
  UnitKind kind = UnitKind::Cpu;
  int units = 1;                    // cores (CPU) or SMs (GPU)
  double clock_mhz = 1000;          // sustained clock under load
  FlopRates vector;                 // SIMD / CUDA-core FLOP per cycle per unit
  FlopRates matrix;                 // tensor cores / AMX per unit; 0 where the unit has none
  bool matrix_for_float32 = false;  // fp32 GEMM/conv on TF32 tensor cores (cuDNN default)
  std::array<double, kOpClasses> efficiency{};  // achieved fraction of peak, in (0, 1]
  Tick dispatch_overhead = 0;                   // host time per kernel launch / per op dispatch
  Tick launch_latency = 0;                      // GPU: dispatch to first instruction; CPU: 0
  int threads_per_op = 1;                       // CPU: cores one op runs on (intra-op threads)
  // CPU "memory_overlap", per op class (overlap_of). Names in parse_memory_overlap.
  std::array<MemoryOverlap, kOpClasses> memory_overlap{};
  MemoryOverlap overlap_of(OpClass c) const { return memory_overlap[static_cast<std::size_t>(c)]; }
  int max_concurrent_kernels = 1;       // GPU: kernels resident at once (streams that overlap)
  int threads_per_block = 256;          // GPU: CUDA block size of streaming kernels
  int elements_per_thread = 4;          // GPU: elements one thread handles (vectorised loads)
  int gemm_tile = 128;                  // GPU: threadblock output tile edge (CUTLASS 128x128)
  int gemm_blocks_per_sm = 1;           // GPU: GEMM threadblocks resident per SM (the wave)
  std::int64_t blocking_bytes = 0;      // cache bytes one unit's GEMM tiles are sized for
  std::int64_t shared_cache_bytes = 0;  // the largest level all units share (GPU: the L2)
  // Calibrated per-family costs ("op_costs", op_cost_model.h); families it lacks use
  // `efficiency` and `dispatch_overhead` above.
  OpCostModel op_costs;
  // CPU: the calibrated model context term ("model_context", model_context.h): what ops pay in a
  // model's step over calibrate's warm probe steps; absent: nothing.
  ModelContext model_context;

  Clock clock() const { return Clock::from_mhz(clock_mhz); }
  // Peak FLOP/s of `units` units for an op class and dtype (vector or matrix pipes).
  double peak_flops_per_second(OpClass op_class, workload::DType dtype, int units) const;
  // The same with the class's efficiency applied.
  double flops_per_second(OpClass op_class, workload::DType dtype, int units) const;
};

// The same machine with every compute time `ratio` times as long (ratio > 0): dispatch and
// launch costs, the calibrated families' fixed, per-kernel, per-channel, per-plane and
// switch costs, the model context term's base and cold parts, and every efficiency (class and
// family) divided by it; memory untouched. For `validate --host-speed run`: a host measured to run
// small ops `ratio` times slower than when it was calibrated (backend/speed_probe.h).
ComputeConfig with_compute_time_scaled(ComputeConfig c, double ratio);

// Strict reading of the "compute" section; `kind` comes from the machine's top level.
ComputeConfig parse_compute_config(const JsonView& section, UnitKind kind);
// A "memory_overlap" value: one name for every op class, or an object of op class names
// (and "default" for the classes it does not name) to names.
std::array<MemoryOverlap, kOpClasses> parse_memory_overlap(const JsonView& value);

}  // namespace fusim::compute
